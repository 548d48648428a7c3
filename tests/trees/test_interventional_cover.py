"""Interventional fits count the background by each tree's cover or by a walk.

Both give the same exact integer counts at every leaf, so the values,
interaction values and base values built from them agree bit for bit
(``_cover.pxd``). The models here take every kind of split the cover meets:
float32 and float64 comparisons, NaN sent either way, LightGBM's zero as
missing and categories, scikit-learn's categories, several outputs, and
trees too deep for a cover beside ones it takes. The brute-force and
threshold tests (``test_interventional.py``, ``test_interventional_routing.py``)
run through both as well.
"""

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import (
    GradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestRegressor,
)

from skshapley import TreeExplainer
from skshapley.trees import _interventional, _interventional_core


def xgboost_with_nan():
    xgb = pytest.importorskip("xgboost")
    X, y = make_regression(400, 6, n_informative=6, random_state=0)
    X[::7, 2] = np.nan
    X[::11, 4] = np.nan
    model = xgb.XGBRegressor(n_estimators=20, max_depth=6, tree_method="hist")
    return model.fit(X, y), X


def lightgbm_multiclass():
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(500, 5))
    X[:, 0] = rng.integers(0, 7, size=500)
    X[::5, 1] = 0.0
    X[::6, 3] = np.nan
    y = (X[:, 0] % 3 + (X[:, 1] > 0) + np.nan_to_num(X[:, 3]) > 1.5).astype(int)
    y[X[:, 0] == 5] = 2
    model = lgb.LGBMClassifier(
        n_estimators=8, num_leaves=12, zero_as_missing=True, verbose=-1
    )
    return model.fit(X, y, categorical_feature=[0]), X


def hist_gradient_boosting_categories():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(400, 4))
    X[:, 1] = rng.integers(0, 5, size=400)
    X[::9, 2] = np.nan
    y = X[:, 0] + (X[:, 1] == 3) - np.nan_to_num(X[:, 2])
    model = HistGradientBoostingRegressor(
        max_iter=10, max_depth=5, categorical_features=[1], random_state=0
    )
    return model.fit(X, y), X


def gradient_boosting_three_classes():
    X, y = make_classification(400, 6, n_informative=4, n_classes=3, random_state=0)
    model = GradientBoostingClassifier(n_estimators=5, max_depth=4, random_state=0)
    return model.fit(X, y), X


def forest_partly_too_deep():
    # Depth 14: most trees have leaves deeper than a cover's key.
    X, y = make_regression(300, 5, n_informative=5, random_state=1)
    model = RandomForestRegressor(n_estimators=4, max_depth=14, random_state=0)
    return model.fit(X, y), X


MODELS = [
    xgboost_with_nan,
    lightgbm_multiclass,
    hist_gradient_boosting_categories,
    gradient_boosting_three_classes,
    forest_partly_too_deep,
]


def fitted(model, background):
    explainer = TreeExplainer(model, feature_perturbation="interventional")
    return explainer.fit(background)


@pytest.mark.parametrize("make", MODELS, ids=lambda make: make.__name__)
@pytest.mark.parametrize("table_budget", [2**28, 0], ids=["kept", "rebuilt"])
def test_covers_and_walks_give_the_same_bits(make, table_budget, count_by, monkeypatch):
    monkeypatch.setattr(_interventional, "_TABLE_BUDGET_BYTES", table_budget)
    monkeypatch.setattr(_interventional, "_PAIR_NODES", 0)  # no pair walks
    model, X = make()
    background, rows = X[:150], X[300:312]
    results = {}
    for how in ["walks", "covers"]:
        count_by(how)
        explainer = fitted(model, background)
        results[how] = (
            explainer.explain(rows).to_numpy(),
            explainer.explain_interactions(rows).to_numpy(),
            explainer.expected_value_,
        )
    for walked, covered in zip(results["walks"], results["covers"], strict=True):
        np.testing.assert_array_equal(covered, walked)


@pytest.mark.parametrize("make", MODELS, ids=lambda make: make.__name__)
@pytest.mark.parametrize("how", ["walks", "covers"])
def test_base_value_is_the_mean_prediction(make, how, count_by):
    # The base value comes from the background rows counted at each leaf
    # (mask 0 of its table, or of its sorted masks): the parsed trees'
    # predictions averaged, to rounding.
    count_by(how)
    model, X = make()
    background = X[:150]
    explainer = fitted(model, background)
    mean = explainer.raw_predict(background).mean(axis=0)
    scale = np.abs(explainer.raw_predict(background)).max()
    np.testing.assert_allclose(
        np.atleast_1d(explainer.expected_value_), mean, rtol=0, atol=1e-13 * scale
    )


def test_base_value_of_leaves_without_tables(monkeypatch):
    # Every leaf keeps its background's sorted masks: a leaf's first distinct
    # mask is its reach only if it is empty.
    monkeypatch.setattr(_interventional, "_MAX_TABLE_BITS", -1)
    model, X = forest_partly_too_deep()
    explainer = fitted(model, X[:80])
    expected = explainer.raw_predict(X[:80]).mean()
    assert explainer.expected_value_ == pytest.approx(expected, rel=1e-13)


def test_base_value_when_no_tables_are_kept(monkeypatch):
    # Tables rebuilt at each call: fit counts nothing and predicts instead.
    monkeypatch.setattr(_interventional, "_TABLE_BUDGET_BYTES", 0)
    model, X = xgboost_with_nan()
    explainer = fitted(model, X[:100])
    assert explainer._background.mean_output() is None
    expected = model.predict(X[:100], output_margin=True).mean()
    assert explainer.expected_value_ == pytest.approx(expected, rel=1e-5)


def test_float32_copy_only_when_exact():
    exact = np.array([[0.5, np.nan, -np.inf, float(np.float32(0.1))]])
    copy = _interventional_core.float32_copy(exact)
    assert copy.dtype == np.float32
    np.testing.assert_array_equal(copy.astype(float), exact)
    for inexact in [0.1, 1e300, 1e-50]:
        assert _interventional_core.float32_copy(np.array([[0.5, inexact]])) is None
    assert _interventional_core.float32_copy(np.empty((3, 0))).shape == (3, 0)


def test_background_of_float64_values_is_routed_in_float64(count_by):
    # LightGBM compares in float64: values between two floats must not be
    # rounded; the cover then reads the float64 background.
    lgb = pytest.importorskip("lightgbm")
    X, y = make_regression(300, 4, n_informative=4, random_state=3)
    model = lgb.LGBMRegressor(n_estimators=5, num_leaves=8, verbose=-1).fit(X, y)
    explainer = fitted(model, X[:5])
    ensemble = explainer.ensemble_
    internal = np.flatnonzero(ensemble.left >= 0)
    background = np.repeat(X[:1], 2 * len(internal), axis=0)
    for i, node in enumerate(internal):  # just above each threshold, and on it
        t = ensemble.threshold[node]
        background[2 * i, ensemble.feature[node]] = np.nextafter(t, np.inf)
        background[2 * i + 1, ensemble.feature[node]] = t
    assert _interventional_core.float32_copy(np.ascontiguousarray(background.T)) is None
    values = {}
    for how in ["walks", "covers"]:
        count_by(how)
        values[how] = fitted(model, background).explain(X[300::-40]).to_numpy()
    np.testing.assert_array_equal(values["covers"], values["walks"])


# Row covers: rows' Shapley values from each count node's table of summed
# gains, where every tree's tables are kept from fit.


def row_cover_count(explainer) -> int:
    covers = explainer._background._plan.row_covers
    return len(covers[2]) if covers else 0


@pytest.mark.parametrize("make", MODELS[:-1], ids=lambda make: make.__name__)
@pytest.mark.parametrize("key_bits", [6, 8, 11])
def test_row_covers_agree_with_walks(make, key_bits, monkeypatch):
    # The same gains, summed per count node before they are added: equal
    # to the walks' values to rounding.
    model, X = make()
    background, rows = X[:150], X[300:340]
    monkeypatch.setattr(_interventional, "_ROW_COVER_BITS", -1)
    walked = fitted(model, background).explain(rows).to_numpy()
    monkeypatch.setattr(_interventional, "_ROW_COVER_BITS", key_bits)
    explainer = fitted(model, background)
    assert row_cover_count(explainer) > 0
    covered = explainer.explain(rows).to_numpy()
    scale = np.abs(explainer.raw_predict(background)).max()
    np.testing.assert_allclose(covered, walked, rtol=0, atol=1e-13 * scale)


def test_row_covers_against_brute_force():
    # Categories, zero as missing, NaN, three classes: the model's own raw
    # scores on every hybrid row.
    from naive import interventional_shapley

    model, X = lightgbm_multiclass()
    background, rows = X[:40], X[300:303]
    explainer = fitted(model, background)
    assert row_cover_count(explainer) > 0
    phi = explainer.explain(rows).to_numpy()
    scale = np.abs(model.predict(background, raw_score=True)).max()
    for r in range(len(rows)):
        expected = interventional_shapley(
            lambda hybrid: model.predict(hybrid, raw_score=True), rows[r], background
        )
        np.testing.assert_allclose(
            phi[r], expected.T.ravel(), rtol=0, atol=1e-12 * scale
        )


@pytest.mark.parametrize("make", [xgboost_with_nan, lightgbm_multiclass])
def test_row_covers_give_the_same_bits_on_any_schedule(make, monkeypatch):
    # Threads, blocks of rows, one row or many: the same sums in the same order.
    model, X = make()
    background, rows = X[:150], X[300:340]
    reference = fitted(model, background).explain(rows).to_numpy()
    monkeypatch.setattr(_interventional, "_BLOCK_ROWS", 3)
    for n_jobs in (1, 2):
        explainer = fitted(model, background).set_params(n_jobs=n_jobs)
        assert row_cover_count(explainer) > 0
        np.testing.assert_array_equal(explainer.explain(rows).to_numpy(), reference)
        np.testing.assert_array_equal(
            explainer.explain(rows[5:6]).to_numpy(), reference[5:6]
        )


def test_row_covers_only_where_every_table_is_kept(monkeypatch):
    # Tables rebuilt at each call keep no row covers: the rows walk.
    model, X = xgboost_with_nan()
    kept = fitted(model, X[:100])._background._kept
    assert kept.row_tables.size > 0
    monkeypatch.setattr(_interventional, "_TABLE_BUDGET_BYTES", 0)
    assert row_cover_count(fitted(model, X[:100])) == 0
    # Nor where the tables fit the budget but the row covers' would not.
    tables_and_masks = 8 * (kept.tables.size + kept.masks.size)
    monkeypatch.setattr(_interventional, "_TABLE_BUDGET_BYTES", tables_and_masks)
    explainer = fitted(model, X[:100])
    assert explainer._background._kept is not None
    assert row_cover_count(explainer) == 0
