"""The user guide's runnable snippets (``>>>``) run and print what they show."""

import doctest
from pathlib import Path

import pytest

GUIDE = Path(__file__).resolve().parents[1] / "docs" / "user_guide"
PAGES = sorted(path for path in GUIDE.glob("*.rst") if ">>>" in path.read_text())


def test_the_guide_has_snippets():
    assert {path.stem for path in PAGES} >= {
        "pipelines",
        "kernels",
        "trees",
        "value_functions",
    }


@pytest.mark.parametrize("page", PAGES, ids=[path.stem for path in PAGES])
def test_snippets_run(page):
    failures, tried = doctest.testfile(
        str(page),
        module_relative=False,
        optionflags=doctest.ELLIPSIS | doctest.NORMALIZE_WHITESPACE,
        verbose=False,
    )
    assert tried > 0
    assert failures == 0
