"""Fixtures shared by the tree explainer's tests."""

import pytest

from skshapley.trees import _interventional


@pytest.fixture
def forbid_table_builds(monkeypatch):
    """A call that makes any later build of interventional tables fail the test.

    For the paths that must build none: pair walks.
    """

    def built(*args, **kwargs):
        raise AssertionError("a pair walk builds no tables")

    def forbid():
        monkeypatch.setattr(_interventional.Background, "_built", built)

    return forbid
