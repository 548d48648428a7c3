"""The tree kernel's schedule does not change a single bit.

A row's values are the same whatever the threads, the rows explained with
it, and the path the kernel takes: a block of rows walked through every
tree, one row walked alone (its own code), or chunks of trees spread over
threads when there are fewer blocks than threads. Each model here has
several chunks of trees (checked), so every path is taken; edge rows (on
thresholds, missing values, unknown categories) go through the public
explainer.
"""

import os
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given
from hypothesis import strategies as st
from naive import path_dependent_shapley, rows_on_thresholds
from schedule_models import MODELS, ROW_COUNTS, data, forest
from skshapley.trees._tree_core import row_blocks

from skshapley import TreeExplainer
from skshapley.trees._schedule import tree_chunks


@pytest.fixture(scope="module", params=list(MODELS))
def fitted(request):
    build, missing = MODELS[request.param]
    model, X = build()
    explainer = TreeExplainer(model, n_jobs=1).fit()
    # Several chunks of trees, or the chunked paths would not be tested.
    assert len(explainer._path_dependent.chunk_start) > 2
    edge = rows_on_thresholds(explainer.ensemble_, X[:50])
    rows = np.vstack([data(100 - 10, 3), edge[:5], np.full((2, 6), np.nan)])
    rows[-3, 0] = 7.0  # an unknown category (a plain value for the others)
    rows[-1, 0] = 2.0
    if not missing:
        rows[np.isnan(rows)] = 0.5
    return model, explainer, rows


def test_values_do_not_depend_on_threads_or_rows(fitted):
    model, one_thread, rows = fitted
    two_threads = TreeExplainer(model, n_jobs=2).fit()
    every = one_thread.explain(rows).to_numpy()
    for n in ROW_COUNTS:
        for explainer in (one_thread, two_threads):
            part = explainer.explain(rows[:n]).to_numpy()
            np.testing.assert_array_equal(part, every[:n])
    for i in [*range(0, len(rows), 9), *range(len(rows) - 8, len(rows))]:
        for explainer in (one_thread, two_threads):
            alone = explainer.explain(rows[i : i + 1]).to_numpy()
            np.testing.assert_array_equal(alone, every[i : i + 1])


def test_one_row_equals_the_enumerated_game(fitted):
    # The independent oracle: the path-dependent game's value of every
    # coalition, walked in NumPy, and Shapley's formula over them.
    _, explainer, rows = fitted
    for i in (0, len(rows) - 7, len(rows) - 3, len(rows) - 1):
        phi = explainer.explain(rows[i : i + 1]).to_numpy().reshape(-1, 6)
        expected = path_dependent_shapley(explainer.ensemble_, rows[i]).T
        np.testing.assert_allclose(phi, expected, rtol=0, atol=1e-12)


def test_nodes_are_packed_by_the_first_block_of_one_row():
    # The one-row walk's packed records (32 bytes per node) are built by the
    # first call with a block of one row: a row alone, or the last of 993
    # rows (31 blocks of 32 and one of 1 on one thread); never for batches
    # without one.
    model, _ = forest()
    rows = data(993, 5)
    explainer = TreeExplainer(model, n_jobs=1).fit()
    block, n_blocks = row_blocks(len(rows), explainer._path_dependent.block_rows, 1)
    assert (block, n_blocks) == (32, 32)
    first_100 = explainer.explain(rows[:100]).to_numpy()
    assert not explainer._path_dependent.forest().has_row_nodes
    every = explainer.explain(rows).to_numpy()
    assert explainer._path_dependent.forest().has_row_nodes
    np.testing.assert_array_equal(every[:100], first_100)
    alone = TreeExplainer(model, n_jobs=1).fit()
    np.testing.assert_array_equal(alone.explain(rows[-1:]).to_numpy(), every[-1:])
    assert alone._path_dependent.forest().has_row_nodes


def test_one_row_equals_shap():
    shap = pytest.importorskip("shap")
    model, _ = forest()
    row = data(1, 4)
    phi = TreeExplainer(model, n_jobs=2).fit().explain(row).to_numpy()
    expected = shap.TreeExplainer(model).shap_values(row)
    np.testing.assert_allclose(phi, expected, rtol=0, atol=1e-12)


@given(
    n_samples=st.integers(1, 5000),
    block_rows=st.integers(1, 64),
    n_threads=st.integers(1, 16),
)
def test_row_blocks_cover_the_rows_evenly(n_samples, block_rows, n_threads):
    block, n_blocks = row_blocks(n_samples, block_rows, n_threads)
    assert 1 <= block <= block_rows
    # Exactly the rows: every block but the last is full, the last not empty.
    assert (n_blocks - 1) * block < n_samples <= n_blocks * block


def test_row_blocks_share_100_rows_on_two_threads():
    # Four equal blocks, not 32, 32, 32 and 4 rows; many blocks stay full.
    assert row_blocks(100, 32, 2) == (25, 4)
    assert row_blocks(33, 32, 2) == (17, 2)
    assert row_blocks(1, 32, 2) == (1, 1)
    assert row_blocks(1000, 32, 2) == (32, 32)


def test_interactions_do_not_depend_on_threads_or_rows(fitted):
    model, one_thread, rows = fitted
    two_threads = TreeExplainer(model, n_jobs=2).fit()
    rows = rows[-40:]  # edge rows included
    every = one_thread.explain_interactions(rows).to_numpy()
    for n in (1, 2, 33):
        for explainer in (one_thread, two_threads):
            part = explainer.explain_interactions(rows[:n]).to_numpy()
            np.testing.assert_array_equal(part, every[: len(part)])
    for i in (0, len(rows) - 3, len(rows) - 1):
        alone = two_threads.explain_interactions(rows[i : i + 1]).to_numpy()
        rows_of_i = slice(len(alone) * i, len(alone) * (i + 1))
        np.testing.assert_array_equal(alone, every[rows_of_i])


def test_chunks_of_about_equal_work_fixed_by_the_model(fitted):
    model, explainer, _ = fitted
    ensemble = explainer.ensemble_
    start = explainer._path_dependent.chunk_start
    assert start[0] == 0
    assert start[-1] == ensemble.n_trees
    assert (np.diff(start) >= 1).all()
    assert len(start) - 1 <= 32
    nodes = np.diff(np.append(ensemble.roots, len(ensemble.feature)))
    work = nodes * explainer.n_quadrature_points_
    per_chunk = np.add.reduceat(work, start[:-1])
    # Each chunk ends at the tree that reaches its share: at most one tree over.
    assert per_chunk.max() <= work.sum() / (len(start) - 1) + work.max()
    # The same chunks whatever the threads: they depend on the model alone.
    again = TreeExplainer(model, n_jobs=2).fit()
    np.testing.assert_array_equal(again._path_dependent.chunk_start, start)


def test_one_tree_is_one_chunk():
    model, X = forest()
    model.estimators_ = model.estimators_[:1]
    model.n_estimators = 1
    explainer = TreeExplainer(model).fit()
    np.testing.assert_array_equal(explainer._path_dependent.chunk_start, [0, 1])
    np.testing.assert_array_equal(
        explainer.explain(X[:1]).to_numpy(), explainer.explain(X[:40]).to_numpy()[:1]
    )


def test_the_kept_kernel_view_follows_refits_copies_and_pickles():
    import copy
    import pickle

    model, X = forest()
    other, _ = MODELS["multiclass boosting"][0]()
    explainer = TreeExplainer(model).fit()
    first = explainer.explain(X[:3]).to_numpy()
    for twin in (pickle.loads(pickle.dumps(explainer)), copy.deepcopy(explainer)):
        np.testing.assert_array_equal(twin.explain(X[:3]).to_numpy(), first)
    explainer.model = other
    expected = TreeExplainer(other).fit().explain(X[:3]).to_numpy()
    np.testing.assert_array_equal(explainer.fit().explain(X[:3]).to_numpy(), expected)


def test_the_kernel_takes_each_call_s_quadrature_rules():
    """The kernel keeps a view of the rules it was last given: another
    rules object, even on the same forest, is read afresh."""
    model, X = forest()
    exact = TreeExplainer(model, n_jobs=1).fit()
    one_point = TreeExplainer(model, n_jobs=1, n_quadrature_points=1).fit()
    kernel = exact._path_dependent.forest()
    rows, _ = exact._prepared(X[:3])
    for explainer in (one_point, exact, one_point):
        out = np.zeros((3, 1, rows.shape[1]))
        kernel.shapley(
            rows,
            explainer._path_dependent.rules,
            explainer._path_dependent.max_depth,
            out,
            1,
            explainer._path_dependent.block_rows,
        )
        expected = explainer.explain(X[:3]).to_numpy()
        np.testing.assert_array_equal(out[:, 0], expected)
    assert np.abs(expected - exact.explain(X[:3]).to_numpy()).max() > 1e-6


def test_interaction_chunks_weigh_each_node_by_its_tree_s_players(fitted):
    """An interaction walk does about as much more per node as its paths
    have players: its chunks weigh each tree's nodes by its points times
    the most distinct players on one of its paths (counted here apart)."""
    _, explainer, _ = fitted
    ensemble = explainer.ensemble_
    n_players = len(explainer.player_names_)
    players = np.zeros(ensemble.n_trees, dtype=np.intp)
    for tree, root in enumerate(ensemble.roots):
        stack = [(root, frozenset())]
        while stack:
            node, above = stack.pop()
            if ensemble.left[node] < 0:
                players[tree] = max(players[tree], len(above))
                continue
            here = above | {explainer._node_player[node]}
            stack += [(ensemble.left[node], here), (ensemble.right[node], here)]
    expected = tree_chunks(
        ensemble, explainer.n_quadrature_points_ * np.maximum(players, 1),
        ensemble.n_outputs * n_players**2,
    )  # fmt: skip
    np.testing.assert_array_equal(
        explainer._path_dependent.interaction_chunk_start, expected
    )


SMALLER_TEAM_SCRIPT = """
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from schedule_models import forest
from skshapley import TreeExplainer
from skshapley._runtime import threads

threads.MIN_THREAD_WORK_NS = 1  # a team for any work
model, X = forest()
one = TreeExplainer(model, n_jobs=1).fit().explain(X[:1]).to_numpy()
two = TreeExplainer(model, n_jobs=2).fit()
assert len(two._path_dependent.chunk_start) > 2  # (block, chunk) items
np.testing.assert_array_equal(two.explain(X[:1]).to_numpy(), one)
print("same")
"""


def test_a_smaller_team_walks_every_share(tmp_path):
    # Two shares of (block, chunk) items, one thread to walk them
    # (OMP_THREAD_LIMIT=1): it walks its own, then takes the other's, as a
    # thread does when the other is scheduled late; the values of one thread.
    tests = Path(__file__).resolve().parents[1]
    result = subprocess.run(
        [sys.executable, "-c", SMALLER_TEAM_SCRIPT, str(tests)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env={**os.environ, "OMP_THREAD_LIMIT": "1"},
        timeout=300,
    )
    assert result.returncode == 0, result.stderr[-2000:]
    assert result.stdout.split() == ["same"]
