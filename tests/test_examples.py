"""Every example script runs and passes its own checks."""

import runpy
from pathlib import Path

import pytest

EXAMPLES = sorted((Path(__file__).parents[1] / "examples").glob("*.py"))


def test_examples_exist():
    assert len(EXAMPLES) >= 2


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda path: path.stem)
def test_example_runs(path, capsys):
    # The examples draw figures for the gallery: off screen here, and closed
    # after each script so that none outlives it.
    matplotlib = pytest.importorskip("matplotlib")
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    try:
        runpy.run_path(str(path), run_name="__main__")
    finally:
        plt.close("all")
    assert capsys.readouterr().out  # each example prints what it shows
