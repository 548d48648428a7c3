"""Optional libraries: imported on demand, or one message saying how to install."""

import sys

import pytest

from skshapley._runtime.optional import (
    MissingDependencyError,
    optional_import,
    require_matplotlib,
)


def test_an_installed_module_is_returned():
    assert optional_import("json", "reading") is sys.modules["json"]


def test_a_missing_module_says_what_needs_it_and_what_to_install(monkeypatch):
    for name in ("skops", "skops.io"):  # import fails, even if imported before
        monkeypatch.setitem(sys.modules, name, None)
    with pytest.raises(MissingDependencyError) as info:
        optional_import("skops.io", "reading model.skops")
    assert str(info.value) == (
        "reading model.skops needs skops, which is not installed: pip install skops"
    )
    assert isinstance(info.value, ImportError)  # what callers already catch


def test_matplotlib_is_installed_with_the_plot_extra(monkeypatch):
    monkeypatch.setitem(sys.modules, "matplotlib", None)
    with pytest.raises(MissingDependencyError) as info:
        require_matplotlib("the report")
    assert str(info.value) == (
        "the report needs matplotlib, which is not installed: "
        'pip install "skshapley[plot]"'
    )
