"""skshapley.plotting's public names, docs, lazy matplotlib and shared checks."""

import doctest
import inspect
import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

import skshapley.plotting
from skshapley.plotting import (
    BeeswarmDisplay,
    DecisionDisplay,
    DependenceDisplay,
    HeatmapDisplay,
    ImportanceDisplay,
    InteractionDisplay,
    OutputImportanceDisplay,
    WaterfallDisplay,
)

DISPLAYS = [
    BeeswarmDisplay,
    DecisionDisplay,
    DependenceDisplay,
    HeatmapDisplay,
    ImportanceDisplay,
    InteractionDisplay,
    OutputImportanceDisplay,
    WaterfallDisplay,
]
METHODS = [
    getattr(display, name)
    for display in DISPLAYS
    for name in ("plot", "from_values", "from_explainer")
    if hasattr(display, name)
]


def test_all_lists_the_displays():
    assert sorted(skshapley.plotting.__all__) == [d.__name__ for d in DISPLAYS]


def test_importing_the_module_does_not_import_matplotlib():
    code = (
        "import sys, skshapley, skshapley.plotting; print('matplotlib' in sys.modules)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip() == "False"


@pytest.mark.parametrize(
    "build",
    [
        lambda: ImportanceDisplay.from_values(np.ones((2, 2))),
        lambda: BeeswarmDisplay.from_values(np.ones((2, 2))),
        lambda: DependenceDisplay.from_values(np.ones((2, 2)), np.ones((2, 2)), "x0"),
        lambda: WaterfallDisplay.from_values(np.ones(2), 0.0),
        lambda: InteractionDisplay.from_values(np.ones((2, 2))),
        lambda: OutputImportanceDisplay.from_values(np.ones((2, 2))),
        lambda: HeatmapDisplay.from_values(np.ones((2, 2))),
        lambda: DecisionDisplay.from_values(np.ones((2, 2)), 0.0),
        lambda: WaterfallDisplay(pd.Series({"a": 1.0}), 0.0).plot(),
    ],
)
def test_without_matplotlib_the_error_says_how_to_install_it(monkeypatch, build):
    for name in ("matplotlib", "matplotlib.pyplot"):
        monkeypatch.setitem(sys.modules, name, None)  # import fails
    with pytest.raises(ImportError, match=r'pip install "skshapley\[plot\]"'):
        build()


@pytest.mark.parametrize("phi", [np.ones(3), np.ones((2, 2, 2)), pd.Series([1.0])])
def test_phi_must_be_a_table(phi):
    pytest.importorskip("matplotlib")
    with pytest.raises(ValueError, match="phi must be the DataFrame"):
        ImportanceDisplay.from_values(phi)


def test_phi_checks():
    pytest.importorskip("matplotlib")
    with pytest.raises(ValueError, match="phi contains NaN"):
        ImportanceDisplay.from_values(pd.DataFrame({"a": [np.nan]}))
    with pytest.raises(ValueError, match="phi is empty"):
        ImportanceDisplay.from_values(pd.DataFrame({"a": []}))
    with pytest.raises(ValueError, match="phi must hold numbers"):
        ImportanceDisplay.from_values(pd.DataFrame({"a": ["high"]}))
    with pytest.raises(ValueError, match="feature_names has 1 names for 2"):
        ImportanceDisplay.from_values(np.ones((2, 2)), feature_names=["a"])
    with pytest.raises(ValueError, match="feature_names is for an array phi"):
        ImportanceDisplay.from_values(pd.DataFrame({"a": [1.0]}), feature_names=["a"])
    with pytest.raises(ValueError, match=r"names a feature twice: \['a'\]"):
        ImportanceDisplay.from_values(pd.DataFrame([[1.0, 2.0]], columns=["a", "a"]))
    three_levels = pd.MultiIndex.from_tuples([("o", "a", "b")])
    with pytest.raises(ValueError, match="3 column levels"):
        ImportanceDisplay.from_values(pd.DataFrame([[1.0]], columns=three_levels))


@pytest.mark.parametrize(
    ("max_display", "error"),
    [
        (0, ValueError),
        (-1, ValueError),
        ("5", TypeError),
        (2.0, TypeError),
        (True, TypeError),
    ],
)
def test_max_display_must_be_a_positive_int(max_display, error):
    pytest.importorskip("matplotlib")
    with pytest.raises(error, match="max_display must be"):
        ImportanceDisplay.from_values(np.ones((2, 3)), max_display=max_display)


@pytest.mark.parametrize("display", DISPLAYS, ids=lambda display: display.__name__)
def test_docstring_examples_run(display):
    pytest.importorskip("matplotlib")
    finder = doctest.DocTestFinder(recurse=False)
    runner = doctest.DocTestRunner(optionflags=doctest.NORMALIZE_WHITESPACE)
    tests = finder.find(display, display.__name__, globs={})
    assert tests[0].examples, f"{display.__name__} has no Examples section"
    for test in tests:
        runner.run(test)
    assert runner.failures == 0


@pytest.mark.parametrize("obj", DISPLAYS + METHODS, ids=lambda obj: obj.__qualname__)
def test_numpydoc_matches_the_signature(obj):
    validate = pytest.importorskip("numpydoc.validate").validate
    # The checks of tests/test_public_api.py.
    checked = {
        "GL01",
        "GL02",
        "GL03",
        "GL06",
        "GL07",
        "PR01",
        "PR02",
        "PR03",
        "PR04",
        "PR10",
        "RT01",
        "EX01",
        "SS01",
        "SS02",
        "SS03",
    }
    name = f"{obj.__module__}.{obj.__qualname__}"
    errors = [
        f"{code}: {message}"
        for code, message in validate(name)["errors"]
        if code in checked
    ]
    if "." in obj.__qualname__:  # methods: examples live on their class
        errors = [error for error in errors if not error.startswith("EX01")]
    if inspect.isclass(obj):  # classes return nothing
        errors = [error for error in errors if not error.startswith("RT01")]
    assert errors == []
