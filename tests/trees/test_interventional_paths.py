"""Interventional values: one result whatever the path that computes it.

Leaves with few players use tables built at ``fit`` (or rebuilt batch by
batch when they exceed the budget); leaves with many use the background's
failure masks (multi-word bitsets beyond 64 players). All sum the same exact
integer counts in the same order, so they agree bit for bit, as threads and
blocks of rows do. On depth-100 trees the values keep efficiency and
symmetry at rounding level, and interactions are exact too.
"""

import pickle

import numpy as np
import pytest
from crafted_trees import regressor_from_arrays
from naive import interventional_interactions
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import GradientBoostingClassifier, RandomForestRegressor

from skshapley import TreeExplainer
from skshapley.trees import _interventional, _table_plan

# Sums over ~100 leaves of products of Beta values times the leaf values: a
# few hundred roundings of the output's scale.
RTOL = 1e-12


def forest_and_data():
    X, y = make_regression(300, 8, n_informative=8, random_state=0)
    model = RandomForestRegressor(n_estimators=6, max_depth=7, random_state=0)
    return model.fit(X, y), X


def values(model, background, rows, n_jobs=1):
    explainer = TreeExplainer(
        model, feature_perturbation="interventional", n_jobs=n_jobs
    )
    return explainer.fit(background).explain(rows).to_numpy()


@pytest.mark.parametrize(
    ("budget", "table_bits", "block"),
    [(0, 14, 512), (2**28, -1, 512), (2**28, 3, 512), (2**28, 14, 3)],
    ids=["rebuilt-per-tree", "masks-only", "mixed", "blocks-of-3"],
)
def test_every_path_gives_the_same_bits(monkeypatch, budget, table_bits, block):
    # One chunk of trees: values summed tree after tree, however batches cut
    # them (a chunk's sums are cut where a batch ends). Rows walk every tree:
    # row covers add each count node's leaves first, to the walks' rounding
    # (test_interventional_cover.py).
    monkeypatch.setattr(_interventional, "_ROW_COVER_BITS", -1)
    monkeypatch.setattr(
        _table_plan,
        "tree_chunks",
        lambda ensemble, *_: np.array([0, ensemble.n_trees]),
    )
    model, X = forest_and_data()
    background, rows = X[:60], X[100:140]
    kept = values(model, background, rows)  # tables kept from fit
    monkeypatch.setattr(_interventional, "_TABLE_BUDGET_BYTES", budget)
    monkeypatch.setattr(_interventional, "_MAX_TABLE_BITS", table_bits)
    monkeypatch.setattr(_interventional, "_BLOCK_ROWS", block)
    other = values(model, background, rows)
    np.testing.assert_array_equal(other, kept)


def test_threads_give_the_same_bits():
    model, X = forest_and_data()
    background, rows = X[:60], X[100:200]
    np.testing.assert_array_equal(
        values(model, background, rows, n_jobs=2),
        values(model, background, rows, n_jobs=1),
    )


def test_budget_is_respected(monkeypatch):
    # Tables beyond the budget are not kept: built again at each explain,
    # one batch of trees at a time, each within the budget (or one tree).
    model, X = forest_and_data()
    monkeypatch.setattr(_interventional, "_TABLE_BUDGET_BYTES", 20_000)
    explainer = TreeExplainer(model, feature_perturbation="interventional")
    background = explainer.fit(X[:60])._background
    assert background._kept is None
    batches = background._plan.batches
    assert len(batches) > 1
    for first_tree, end_tree, first, end, first_mask, end_mask in batches:
        size = 8 * (end - first + end_mask - first_mask)
        assert size <= 20_000 or end_tree == first_tree + 1


def test_interaction_tables_are_kept_from_the_first_call(monkeypatch):
    # Built once, at the first call: later calls, rows alone and pickles
    # (which leave them out and build them again) give the same bits.
    model, X = forest_and_data()
    built = []
    build = _interventional.Background._built

    def counting(self, plan, *args, **kwargs):
        built.append(plan.gains)
        return build(self, plan, *args, **kwargs)

    monkeypatch.setattr(_interventional.Background, "_built", counting)
    explainer = TreeExplainer(model, feature_perturbation="interventional")
    explainer.fit(X[:60])
    assert built == [True]  # the values' tables, at fit
    rows = X[100:120]
    first = explainer.explain_interactions(rows).to_numpy()
    again = explainer.explain_interactions(rows).to_numpy()
    alone = explainer.explain_interactions(rows[:1]).to_numpy()
    assert built == [True, False]
    np.testing.assert_array_equal(again, first)
    np.testing.assert_array_equal(alone, first[: alone.shape[0]])
    copy = pickle.loads(pickle.dumps(explainer))
    assert copy._background._interaction_kept is None
    np.testing.assert_array_equal(copy.explain_interactions(rows).to_numpy(), first)
    assert built == [True, False, False]
    # Beyond the budget nothing is kept: every call builds its batches.
    monkeypatch.setattr(_interventional, "_TABLE_BUDGET_BYTES", 20_000)
    explainer.fit(X[:60])
    explainer.explain_interactions(rows[:1])
    explainer.explain_interactions(rows[:1])
    assert explainer._background._interaction_kept is None
    n_batches = len(explainer._background._interaction_plan.batches)
    assert n_batches > 1
    assert built[3:].count(False) == 2 * n_batches


def deep_symmetric_tree(depth=100, seed=0):
    """A spine of ``depth`` splits on distinct features 2, 3, ..., then an AND.

    Spine node k splits feature k + 2 at 0.5: rows at most 0.5 leave to a
    leaf of random value, the others go on. At the bottom, the model is
    ``c [x0 > 0.5 and x1 > 0.5]`` (else ``a``): symmetric in features 0
    and 1. The deepest paths have depth + 2 distinct players (two 64-bit
    words of masks).
    """
    rng = np.random.default_rng(seed)
    n_features = depth + 2
    spine = np.arange(0, 2 * depth, 2)
    n_nodes = 2 * depth + 5
    left, right = np.full(n_nodes, -1), np.full(n_nodes, -1)
    feature, threshold = np.full(n_nodes, -1), np.full(n_nodes, 0.5)
    left[spine], right[spine] = spine + 1, spine + 2
    feature[spine] = np.arange(depth) + 2
    bottom = 2 * depth  # splits on x0, then x1 on its right
    left[bottom], right[bottom], feature[bottom] = bottom + 1, bottom + 2, 0
    left[bottom + 2], right[bottom + 2] = bottom + 3, bottom + 4
    feature[bottom + 2] = 1
    value = rng.normal(size=n_nodes)
    value[[bottom + 1, bottom + 3]] = -0.7
    value[bottom + 4] = 2.5
    model = regressor_from_arrays(
        left, right, feature, threshold, np.ones(n_nodes), value, n_features
    )
    return model, n_features


def deep_rows_and_background(n_features, seed=0):
    """Rows that go deep (x0 = x1), and a background symmetric in x0, x1."""
    rng = np.random.default_rng(seed)
    background = (rng.uniform(size=(20, n_features)) < 0.9).astype(float)
    swapped = background.copy()
    swapped[:, [0, 1]] = background[:, [1, 0]]
    rows = np.ones((4, n_features))
    rows[1, :2] = 0.0
    rows[2, 60] = 0.0  # leaves the spine half way
    rows[3, 2:] = rng.uniform(size=n_features - 2) < 0.97
    return rows, np.vstack([background, swapped])


@pytest.mark.parametrize("table_bits", [14, -1])
def test_depth_100_efficiency_and_symmetry(monkeypatch, table_bits):
    monkeypatch.setattr(_interventional, "_MAX_TABLE_BITS", table_bits)
    model, n_features = deep_symmetric_tree()
    rows, background = deep_rows_and_background(n_features)
    explainer = TreeExplainer(model, feature_perturbation="interventional")
    phi = explainer.fit(background).explain(rows).to_numpy()
    assert explainer._background._words == 2  # masks of two 64-bit words
    raw = model.predict(rows)
    scale = np.abs(model.tree_.value).max()
    assert explainer.expected_value_ == pytest.approx(
        model.predict(background).mean(), rel=1e-14
    )
    np.testing.assert_allclose(
        phi.sum(axis=1) + explainer.expected_value_, raw, rtol=0, atol=RTOL * scale
    )
    # Players 0 and 1 are interchangeable in each row's game.
    np.testing.assert_allclose(phi[:, 0], phi[:, 1], rtol=0, atol=RTOL * scale)
    assert np.abs(phi[:, 0]).max() > 0.01  # the symmetry is not 0 = 0


def test_depth_100_interactions():
    model, n_features = deep_symmetric_tree()
    rows, background = deep_rows_and_background(n_features)
    explainer = TreeExplainer(model, feature_perturbation="interventional")
    explainer.fit(background)
    matrices = explainer.explain_interactions(rows).to_numpy()
    matrices = matrices.reshape(len(rows), n_features, n_features)
    phi = explainer.explain(rows).to_numpy()
    scale = np.abs(model.tree_.value).max()
    np.testing.assert_array_equal(matrices, matrices.transpose(0, 2, 1))
    np.testing.assert_allclose(matrices.sum(axis=2), phi, rtol=0, atol=RTOL * scale)
    # The AND's players: equal main effects, and the pair's interaction.
    np.testing.assert_allclose(
        matrices[:, 0, 0], matrices[:, 1, 1], rtol=0, atol=RTOL * scale
    )
    assert np.abs(matrices[:, 0, 1]).max() > 0.01


def test_interactions_equal_the_interaction_index():
    X, y = make_regression(200, 5, n_informative=5, random_state=1)
    model = RandomForestRegressor(n_estimators=4, max_depth=6, random_state=0)
    model.fit(X, y)
    background, rows = X[:25], X[100:103]
    explainer = TreeExplainer(model, feature_perturbation="interventional")
    matrices = explainer.fit(background).explain_interactions(rows).to_numpy()
    scale = np.abs(model.predict(background)).max()
    for r in range(len(rows)):
        expected = interventional_interactions(model.predict, rows[r], background)
        np.testing.assert_allclose(
            matrices[5 * r : 5 * r + 5], expected[0], rtol=0, atol=RTOL * scale
        )


def test_interactions_of_groups_and_outputs():
    X, y = make_classification(300, 6, n_informative=4, n_classes=3, random_state=0)
    model = GradientBoostingClassifier(n_estimators=6, max_depth=3, random_state=0)
    model.fit(X, y)
    background, rows = X[:20], X[100:102]
    groups = {"a": [0, 4], "b": [1, 2]}
    explainer = TreeExplainer(
        model, feature_perturbation="interventional", groups=groups
    ).fit(background)
    players = [[0, 4], [1, 2], [3], [5]]
    frame = explainer.explain_interactions(rows)
    # Columns (output, player); rows (row, player).
    matrices = frame.to_numpy().reshape(len(rows), 4, 3, 4).transpose(0, 2, 1, 3)
    scale = np.abs(model.decision_function(background)).max()
    for r in range(len(rows)):
        expected = interventional_interactions(
            model.decision_function, rows[r], background, players
        )
        np.testing.assert_allclose(matrices[r], expected, rtol=0, atol=RTOL * scale)


def interaction_matrices(model, background, rows, n_jobs=1):
    explainer = TreeExplainer(
        model, feature_perturbation="interventional", n_jobs=n_jobs
    )
    return explainer.fit(background).explain_interactions(rows).to_numpy()


@pytest.mark.parametrize(
    ("table_bits", "block", "n_jobs"),
    [(-1, 512, 1), (3, 512, 1), (14, 3, 1), (14, 512, 2)],
    ids=["distinct-masks", "mixed", "blocks-of-3", "threads"],
)
def test_interaction_paths_give_the_same_bits(monkeypatch, table_bits, block, n_jobs):
    # Counts of the 2**D masks, sorted distinct masks with their counts: the
    # same masks, weights and order, so the same bits, for any blocks and threads.
    model, X = forest_and_data()
    background, rows = X[:60], X[100:120]
    counted = interaction_matrices(model, background, rows)  # every leaf counted
    monkeypatch.setattr(_interventional, "_MAX_TABLE_BITS", table_bits)
    monkeypatch.setattr(_interventional, "_BLOCK_ROWS", block)
    other = interaction_matrices(model, background, rows, n_jobs)
    np.testing.assert_array_equal(other, counted)


@pytest.mark.parametrize("table_bits", [14, -1], ids=["counts", "distinct-masks"])
def test_repeated_background_rows_weigh_by_their_count(monkeypatch, table_bits):
    # Background rows repeated 1, 2 and 3 times: each distinct failure mask
    # is summed once, weighted by its count, as the brute-force index of the
    # game averaged over every background row (repeats included) says.
    monkeypatch.setattr(_interventional, "_MAX_TABLE_BITS", table_bits)
    X, y = make_regression(200, 5, n_informative=5, random_state=2)
    model = RandomForestRegressor(n_estimators=3, max_depth=5, random_state=0)
    model.fit(X, y)
    background = np.repeat(X[:12], np.tile([1, 2, 3], 4), axis=0)
    rows = X[100:102]
    matrices = interaction_matrices(model, background, rows)
    scale = np.abs(model.predict(background)).max()
    for r in range(len(rows)):
        expected = interventional_interactions(model.predict, rows[r], background)
        np.testing.assert_allclose(
            matrices[5 * r : 5 * r + 5], expected[0], rtol=0, atol=RTOL * scale
        )


def test_leaves_keep_their_distinct_masks_sorted_with_counts(monkeypatch):
    # Paths of up to 12 players: masks sorted over two bytes. Each leaf
    # keeps u, its u distinct failure masks in increasing order, then
    # their counts, which add up to the background's size.
    monkeypatch.setattr(_interventional, "_MAX_TABLE_BITS", -1)
    X, y = make_regression(300, 16, n_informative=16, random_state=0)
    model = RandomForestRegressor(n_estimators=2, max_depth=12, random_state=0)
    model.fit(X, y)
    n_background = 80
    explainer = TreeExplainer(model, feature_perturbation="interventional")
    background = explainer.fit(X[:n_background])._background
    assert background._words == 1
    kept, offsets = background._kept.masks, background._plan.offset
    leaves = background._leaves
    assert background._bit[leaves].max() > 8  # more than one byte to sort
    for leaf in leaves:
        distinct = int(kept[offsets[leaf]])
        masks = kept[offsets[leaf] + 1 :][:distinct]
        counts = kept[offsets[leaf] + 1 + n_background :][:distinct]
        assert np.all(np.diff(masks.astype(float)) > 0)
        assert counts.sum() == n_background


def test_deeper_paths_give_the_same_interaction_bits(monkeypatch):
    # Up to 12 players per path: counts of 2**D masks and sorted masks agree.
    X, y = make_regression(300, 16, n_informative=16, random_state=0)
    model = RandomForestRegressor(n_estimators=2, max_depth=12, random_state=0)
    model.fit(X, y)
    background, rows = X[:80], X[100:110]
    counted = interaction_matrices(model, background, rows)
    monkeypatch.setattr(_interventional, "_MAX_TABLE_BITS", -1)
    np.testing.assert_array_equal(
        interaction_matrices(model, background, rows), counted
    )


def test_tables_only_where_they_pay():
    # A table of a leaf with D players costs O(2**D D**2); a row reads at most
    # min(2**D, n_background) distinct masks without one.
    assert _interventional._table_bits(1) == 1
    assert _interventional._table_bits(60) == 6
    assert _interventional._table_bits(1000) == 10
    assert _interventional._table_bits(10**6) == _interventional._MAX_TABLE_BITS
    model, X = forest_and_data()
    explainer = TreeExplainer(model, feature_perturbation="interventional")
    background = explainer.fit(X[:60])._background
    leaves = background._leaves
    players = background._bit[leaves]
    tabulated = background._plan.tabulated[leaves].astype(bool)
    assert (players > 6).any()
    assert (players <= 6).any()
    np.testing.assert_array_equal(tabulated, players <= 6)


@pytest.mark.parametrize("depth", [62, 100])
def test_deep_pair_walks(monkeypatch, depth):
    # Paths of 64 players, the most a pair walk's one-word masks hold, give
    # the bits of the masks; beyond, a few rows still take the masks.
    model, n_features = deep_symmetric_tree(depth)
    rows, background = deep_rows_and_background(n_features)
    monkeypatch.setattr(_interventional, "_PAIR_NODES", 0)
    explainer = TreeExplainer(model, feature_perturbation="interventional")
    explainer.fit(background)
    kept = explainer._background
    assert kept._max_bits == depth + 2
    kept._kept = None  # as if beyond the budget (one tree's always fit)
    kept._directions = kept._routed(kept._paths(), 1)
    takes_pairs = kept._pairs_pay(kept._plan, len(rows), n_features)
    assert takes_pairs == (depth + 2 <= 64)
    phi = explainer.explain(rows).to_numpy()
    monkeypatch.setattr(_interventional, "_MAX_PAIR_ROWS", 0)
    np.testing.assert_array_equal(explainer.explain(rows).to_numpy(), phi)
    scale = np.abs(model.tree_.value).max()
    np.testing.assert_allclose(
        phi.sum(axis=1) + explainer.expected_value_,
        model.predict(rows),
        rtol=0,
        atol=RTOL * scale,
    )
    np.testing.assert_allclose(phi[:, 0], phi[:, 1], rtol=0, atol=RTOL * scale)
