"""Fixtures shared by the tree explainer's tests."""

import numpy as np
import pytest

from skshapley.trees import _interventional, _interventional_core


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


@pytest.fixture
def count_by(monkeypatch):
    """A call that makes the interventional fit count by ``"walks"`` or ``"covers"``.

    Covers: every tree whose cover fits counts by it, every leaf keeps a
    table (a tree with a masked leaf would be walked), and each build
    checks that all its trees were covered, where they can be (at most
    ``COVER_MAX_NODES`` nodes, no leaf deeper than ``COVER_BITS``).
    """

    def count(how):
        if how == "walks":
            monkeypatch.setattr(_interventional, "_COVER_GAIN", -1.0)
            return
        monkeypatch.setattr(_interventional, "_COVER_GAIN", 0.0)
        monkeypatch.setattr(_interventional, "_table_bits", lambda n: 14)
        built = _interventional.Background._built

        def checked(self, plan, batch, *args, **kwargs):
            result = built(self, plan, batch, *args, **kwargs)
            assert result.covered == coverable_trees(self._ensemble, *batch[:2])
            return result

        monkeypatch.setattr(_interventional.Background, "_built", checked)

    return count


def coverable_trees(ensemble, first_tree, end_tree) -> int:
    """The trees a cover counts (see ``_cover.pxd``), found independently.

    Few nodes; count nodes (the highest nodes whose depth plus internal
    nodes below is at most a key's bits) above every leaf; their
    histograms within the limit.
    """
    key_bits, max_nodes, max_entries = _interventional_core.COVER_LIMITS
    roots = np.append(ensemble.roots, len(ensemble.left))
    left, right = ensemble.left, ensemble.right

    def internal(node):
        return 0 if left[node] < 0 else 1 + internal(left[node]) + internal(right[node])

    def entries(node, depth):  # the histograms' entries below node, or None
        bits = depth + internal(node)
        if bits <= key_bits:
            return 2**bits
        if left[node] < 0:
            return None
        below = [entries(child, depth + 1) for child in (left[node], right[node])]
        return None if None in below else sum(below)

    n_covered = 0
    for tree in range(first_tree, end_tree):
        total = entries(roots[tree], 0)
        n_covered += (
            roots[tree + 1] - roots[tree] <= max_nodes
            and total is not None
            and total <= max_entries
        )
    return n_covered
