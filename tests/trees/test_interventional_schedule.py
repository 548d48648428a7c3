"""The interventional kernel's schedule does not change a single bit.

A row's interventional values (and interaction matrices) are the same
whatever the threads and the rows explained with it: many rows are split
into blocks that each thread walks through every chunk of trees; fewer
blocks than threads (a few rows) are spread over the threads chunk by
chunk, and the chunks' sums added in chunk order. Each model here has
several chunks of trees (checked), so every path is taken; edge rows (on
thresholds, missing values, unknown categories) go through the public
explainer, and one row's values are checked against the definition.
"""

import pickle

import numpy as np
import pytest
from naive import (
    interventional_interactions,
    interventional_shapley,
    rows_on_thresholds,
)

# The path-dependent schedule's models: several chunks of trees each.
from schedule_models import MODELS, ROW_COUNTS, data, forest

from skshapley import TreeExplainer
from skshapley.trees import _interventional

N_FEATURES = 6


def _raw(model):
    """The model's own raw output: margins of the boosted classifiers, the
    forest's probabilities."""
    for method in ("decision_function", "predict_proba"):
        if hasattr(model, method):
            return getattr(model, method)
    return model.predict


def _explainer(model, background, n_jobs):
    explainer = TreeExplainer(
        model, feature_perturbation="interventional", n_jobs=n_jobs
    )
    return explainer.fit(background)


def _interaction_chunks(explainer):
    background = explainer._background
    return background._planned(_interventional._MAX_TABLE_BITS, gains=False).chunks


@pytest.fixture(scope="module", params=list(MODELS))
def fitted(request):
    build, missing = MODELS[request.param]
    model, X = build()
    background = X[:60]
    one_thread = _explainer(model, background, 1)
    # Several chunks of trees, or the chunked paths would not be tested.
    assert len(one_thread._background._plan.chunks[0]) > 2
    assert len(_interaction_chunks(one_thread)[0]) > 2
    edge = rows_on_thresholds(one_thread.ensemble_, X[60:110])
    rows = np.vstack([data(90, 3), edge[:5], np.full((2, N_FEATURES), np.nan)])
    rows[-3, 0] = 7.0  # an unknown category (a plain value for the others)
    rows[-1, 0] = 2.0
    if not missing:  # the model has no rule for missing values
        rows[-2:] = np.nan_to_num(rows[-2:], nan=0.5)
    return model, background, one_thread, rows


def _same_values_alone_and_together(explain_one, explain_two, rows, per_row):
    """Every row count, and single rows, give the bits of all rows at once."""
    every = explain_one(rows)
    for n in ROW_COUNTS:
        for explain in (explain_one, explain_two):
            np.testing.assert_array_equal(explain(rows[:n]), every[: n * per_row])
    for i in [*range(0, len(rows), 9), *range(len(rows) - 8, len(rows))]:
        for explain in (explain_one, explain_two):
            alone = explain(rows[i : i + 1])
            np.testing.assert_array_equal(alone, every[i * per_row : (i + 1) * per_row])


@pytest.mark.parametrize("method", ["explain", "explain_interactions"])
def test_values_do_not_depend_on_threads_or_rows(fitted, method):
    model, background, one_thread, rows = fitted
    two_threads = _explainer(model, background, 2)
    _same_values_alone_and_together(
        lambda X: getattr(one_thread, method)(X).to_numpy(),
        lambda X: getattr(two_threads, method)(X).to_numpy(),
        rows,
        # Interactions: one row of the frame per (row, player).
        per_row=N_FEATURES if method == "explain_interactions" else 1,
    )


def _oracle_scale(model, background):
    # Sums over hundreds of leaves of Beta values times leaf values: a few
    # hundred roundings of the output's scale.
    return 1e-12 * np.abs(_raw(model)(background)).max()


def _rows_equal_the_definition(explainer, model, background, rows):
    # The independent oracle: the model's own predictions on every hybrid
    # of the row and each background row, and Shapley's formula over them.
    for i in (0, len(rows) - 7, len(rows) - 3, len(rows) - 1):
        phi = explainer.explain(rows[i : i + 1]).to_numpy()
        expected = interventional_shapley(_raw(model), rows[i], background)
        np.testing.assert_allclose(
            phi.reshape(-1, N_FEATURES),
            expected.T,
            rtol=0,
            atol=_oracle_scale(model, background),
        )


def test_one_row_equals_the_definition(fitted):
    model, background, _, rows = fitted
    two_threads = _explainer(model, background, 2)
    _rows_equal_the_definition(two_threads, model, background, rows)


def test_one_row_interactions_equal_the_definition(fitted):
    model, background, _, rows = fitted
    two_threads = _explainer(model, background, 2)
    for i in (0, len(rows) - 3):
        frame = two_threads.explain_interactions(rows[i : i + 1]).to_numpy()
        # Rows are players, columns (output, player).
        matrices = frame.reshape(N_FEATURES, -1, N_FEATURES).transpose(1, 0, 2)
        expected = interventional_interactions(_raw(model), rows[i], background)
        np.testing.assert_allclose(
            matrices, expected, rtol=0, atol=_oracle_scale(model, background)
        )


def test_one_row_equals_shap():
    shap = pytest.importorskip("shap")
    model, X = forest()
    # Float32 data: shap compares float32 features, and so routes rows as
    # the model does.
    X = X.astype(np.float32).astype(float)
    background, row = X[:100], X[200:201]
    phi = _explainer(model, background, 2).explain(row).to_numpy()
    masker = shap.maskers.Independent(background, max_samples=len(background))
    reference = shap.TreeExplainer(model, masker, feature_perturbation="interventional")
    expected = reference.shap_values(row, check_additivity=False)
    # shap sums in float32 in places: 1e-6 of the output scale.
    scale = np.abs(model.predict(background)).max()
    np.testing.assert_allclose(phi, expected, rtol=0, atol=1e-6 * scale)


@pytest.mark.parametrize("table_bits", [-1, 3], ids=["masks-only", "tables-and-masks"])
def test_every_leaf_kind_gives_the_same_bits_in_chunks(monkeypatch, table_bits):
    # Leaves that keep their distinct failure masks sum the same counts in
    # the same order as tables, chunk by chunk too (rows walk every tree:
    # row covers round apart, test_interventional_cover.py).
    monkeypatch.setattr(_interventional, "_ROW_COVER_BITS", -1)
    model, X = forest()
    background, rows = X[:60], X[100:131]
    tabulated = _explainer(model, background, 1)
    monkeypatch.setattr(_interventional, "_MAX_TABLE_BITS", table_bits)
    for n_jobs in (1, 2):
        explainer = _explainer(model, background, n_jobs)
        for n in (1, len(rows)):
            np.testing.assert_array_equal(
                explainer.explain(rows[:n]).to_numpy(),
                tabulated.explain(rows[:n]).to_numpy(),
            )


def test_batches_cut_the_chunks(monkeypatch):
    # Tables beyond the budget are built a batch of trees at a time: each
    # batch's chunks are the ensemble's, cut where the batch ends, so the
    # values still do not depend on the threads or the rows.
    model, X = forest()
    background, rows = X[:60], X[100:140]
    kept = _explainer(model, background, 1)._background._plan.chunks[0]
    monkeypatch.setattr(_interventional, "_TABLE_BUDGET_BYTES", 100_000)
    one_thread = _explainer(model, background, 1)
    plan = one_thread._background._plan
    assert len(plan.batches) > 1
    ends = [batch[1] for batch in plan.batches]
    for (first, end, *_), chunks in zip(plan.batches, plan.chunks, strict=True):
        expected = [first, *kept[(kept > first) & (kept < end)], end]
        np.testing.assert_array_equal(chunks, expected)
    assert any(len(chunks) > 2 for chunks in plan.chunks)
    assert set(ends) - set(kept)  # some batch ends inside a chunk
    two_threads = _explainer(model, background, 2)
    _same_values_alone_and_together(
        lambda X: one_thread.explain(X).to_numpy(),
        lambda X: two_threads.explain(X).to_numpy(),
        rows,
        per_row=1,
    )


class _Recording:
    """The kernel's paths, recording whether each call spread the chunks."""

    def __init__(self, paths, spread):
        self._paths = paths
        self._spread = spread

    def __getattr__(self, name):
        return getattr(self._paths, name)

    def explain(self, *args):
        partials = args[12]
        self._spread.append(partials is not None)
        return self._paths.explain(*args)


@pytest.fixture
def spread(monkeypatch):
    """Whether each batch's explain spread its chunks over the threads."""
    calls = []
    paths = _interventional.Background._paths
    monkeypatch.setattr(
        _interventional.Background,
        "_paths",
        lambda self: _Recording(paths(self), calls),
    )
    return calls


@pytest.mark.parametrize("interactions", [False, True], ids=["shapley", "interactions"])
def test_a_few_rows_spread_the_chunks(spread, interactions):
    model, X = forest()
    explainer = _explainer(model, X[:60], 2)
    explain = explainer.explain_interactions if interactions else explainer.explain
    explain(X[100:101])
    assert spread == [True]
    # Two rows are two blocks for two threads; one thread spreads nothing.
    explain(X[100:102])
    _explainer(model, X[:60], 1).explain(X[100:101])
    assert spread == [True, False, False]


def test_chunk_sums_beyond_the_scratch_fall_back_to_blocks(monkeypatch, spread):
    # With a scratch limit of a few rows, the chunks' sums of one row's
    # interaction matrices would take more than the threads' scratch: each
    # thread walks its blocks through every chunk instead, with the same bits.
    model, X = forest()
    explainer = _explainer(model, X[:60], 2)
    row = X[100:101]
    expected = explainer.explain_interactions(row).to_numpy()
    paths = explainer._background._paths()
    row_values = N_FEATURES**2
    limit = paths.scratch_bytes(0, row_values) + 2 * (
        paths.scratch_bytes(2, row_values) - paths.scratch_bytes(1, row_values)
    )
    monkeypatch.setattr(_interventional, "MAX_SCRATCH_BYTES_PER_THREAD", limit)
    spread.clear()
    np.testing.assert_array_equal(
        explainer.explain_interactions(row).to_numpy(), expected
    )
    assert spread == [False]


def test_pair_walks_give_the_bits_of_the_tables(
    fitted, monkeypatch, forbid_table_builds
):
    # Tables beyond the budget are rebuilt at each call, a tree at a time
    # (chunks of one tree: partial sums everywhere). A few rows then walk
    # each tree with each background row instead: the same exact counts,
    # served in the same order, so the same bits, on every model's edge rows
    # (thresholds, missing values, unknown categories, several outputs).
    model, background, _, rows = fitted
    monkeypatch.setattr(_interventional, "_TABLE_BUDGET_BYTES", 0)
    one, two = (_explainer(model, background, n_jobs) for n_jobs in (1, 2))
    assert one._background._kept is None
    assert len(one._background._plan.chunks) > 1
    monkeypatch.setattr(_interventional, "_MAX_PAIR_ROWS", 0)
    tables = one.explain(rows).to_numpy()
    monkeypatch.setattr(_interventional, "_MAX_PAIR_ROWS", len(rows))
    monkeypatch.setattr(_interventional, "_PAIR_NODES", 0)
    forbid_table_builds()
    np.testing.assert_array_equal(two.explain(rows).to_numpy(), tables)
    _same_values_alone_and_together(
        lambda X: one.explain(X).to_numpy(),
        lambda X: two.explain(X).to_numpy(),
        rows,
        per_row=1,
    )


def test_pair_walks_equal_the_definition(fitted, monkeypatch, forbid_table_builds):
    model, background, _, rows = fitted
    monkeypatch.setattr(_interventional, "_TABLE_BUDGET_BYTES", 0)
    monkeypatch.setattr(_interventional, "_PAIR_NODES", 0)
    explainer = _explainer(model, background, 2)
    forbid_table_builds()
    _rows_equal_the_definition(explainer, model, background, rows)


def test_when_pair_walks_are_taken(monkeypatch):
    # Only for Shapley values whose tables are rebuilt at each call, and
    # for few rows: tables kept from fit serve any rows at once.
    model, X = forest()
    background = X[:60]
    kept = _explainer(model, background, 1)._background
    assert kept._kept is not None
    assert kept._directions is None
    assert not kept._pairs_pay(kept._plan, 1, N_FEATURES)
    monkeypatch.setattr(_interventional, "_TABLE_BUDGET_BYTES", 0)
    rebuilt = _explainer(model, background, 1)._background
    assert rebuilt._kept is None
    # The background's directions, routed at fit: a bitset per node.
    assert rebuilt._directions.shape == (len(rebuilt._bit), 1)
    assert rebuilt._pairs_pay(rebuilt._plan, 1, N_FEATURES)
    assert not rebuilt._pairs_pay(rebuilt._planned(14, gains=False), 1, N_FEATURES)
    assert not rebuilt._pairs_pay(
        rebuilt._plan, _interventional._MAX_PAIR_ROWS + 1, N_FEATURES
    )
    n_trees, nodes = len(rebuilt._roots) - 1, len(rebuilt._bit)
    most = nodes // (n_trees * rebuilt._max_depth * _interventional._PAIR_NODES)
    assert 1 <= most < _interventional._MAX_PAIR_ROWS
    assert rebuilt._pairs_pay(rebuilt._plan, most, N_FEATURES)
    assert not rebuilt._pairs_pay(rebuilt._plan, most + 1, N_FEATURES)
    # Directions beyond their budget are not routed: no pair walks.
    monkeypatch.setattr(_interventional, "_DIRECTIONS_BUDGET_BYTES", 8 * nodes - 1)
    over = _explainer(model, background, 1)._background
    assert over._directions is None
    assert not over._pairs_pay(over._plan, 1, N_FEATURES)


def test_pair_walks_fit_a_quarter_of_max_memory():
    # The background's routes, and the few rows' sums per chunk of trees,
    # take at most a quarter of max_memory; beyond, the tables are rebuilt.
    model, X = forest()
    background = X[:60]

    def fitted(max_memory):
        return (
            TreeExplainer(
                model, feature_perturbation="interventional", max_memory=max_memory
            )
            .fit(background)
            ._background
        )

    rebuilt = fitted(400_000)  # tables beyond half of it: rebuilt at each call
    assert rebuilt._kept is None
    routes = rebuilt._directions.nbytes
    assert 4 * routes <= 400_000
    assert fitted(4 * routes)._directions is not None
    assert fitted(4 * routes - 4)._directions is None
    # Sums of 3 rows' values in each chunk of trees but a batch's last.
    n_chunks = max(len(chunk_start) - 2 for chunk_start in rebuilt._plan.chunks)
    assert n_chunks >= 2
    fitting = 400_000 // 4 // (8 * n_chunks * 3)
    assert rebuilt._pairs_pay(rebuilt._plan, 3, fitting)
    assert not rebuilt._pairs_pay(rebuilt._plan, 3, fitting + 1)


def test_pair_walks_after_a_pickle(monkeypatch, forbid_table_builds):
    # Pickles leave the directions out; the first pair walk routes them again.
    model, X = forest()
    monkeypatch.setattr(_interventional, "_TABLE_BUDGET_BYTES", 0)
    monkeypatch.setattr(_interventional, "_PAIR_NODES", 0)
    explainer = _explainer(model, X[:60], 2)
    rows = X[100:103]
    expected = explainer.explain(rows).to_numpy()
    copy = pickle.loads(pickle.dumps(explainer))
    assert copy._background._directions is None
    forbid_table_builds()
    np.testing.assert_array_equal(copy.explain(rows).to_numpy(), expected)
    assert copy._background._directions is not None
