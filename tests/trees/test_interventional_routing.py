"""Interventional values route rows on thresholds exactly as the model does.

Rows (and background rows) sit exactly on the parsed thresholds, one unit in
the last place on either side, and between a float64 threshold and its
float32 rounding, where a wrong comparison or cast sends them the other way.
The oracle is the model's own ``predict`` on all hybrid rows. Each test
runs three times: through the tables counted by walking the background,
through the tables counted by every tree's cover (in float32 where the
background is float32's), and through pair walks (the tables then rebuilt
at each call, and a few rows walked with the background's directions routed
at ``fit``).
"""

import numpy as np
import pytest
from naive import interventional_shapley
from sklearn.datasets import make_regression
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor

from skshapley import TreeExplainer
from skshapley.trees import _interventional

# As in test_interventional.py: a few hundred roundings of the output scale.
RTOL = 1e-12


def rows_around_thresholds(ensemble, base, n_rows, seed=0):
    """Rows equal to ``base`` but for one feature put at or near a threshold.

    The value is the threshold, its float64 neighbours, its float32
    rounding, or the midpoint between the threshold and that rounding.
    """
    rng = np.random.default_rng(seed)
    internal = np.flatnonzero(ensemble.left >= 0)
    rows = np.repeat(base[None], n_rows, axis=0)
    for row in rows:
        node = rng.choice(internal)
        t = ensemble.threshold[node]
        t32 = float(np.float32(t))
        candidates = [t, np.nextafter(t, -np.inf), np.nextafter(t, np.inf), t32]
        candidates.append(t + (t32 - t) / 2)
        row[ensemble.feature[node]] = rng.choice(candidates)
    return rows


@pytest.fixture(params=["tables", "covers", "pair walks"])
def path(request, monkeypatch, forbid_table_builds, count_by):
    """The interventional path the tests' explainers take."""
    count_by("covers" if request.param == "covers" else "walks")
    if request.param == "pair walks":
        monkeypatch.setattr(_interventional, "_TABLE_BUDGET_BYTES", 0)
        monkeypatch.setattr(_interventional, "_PAIR_NODES", 0)
        forbid_table_builds()
    return request.param


def model_and_data(model):
    X, y = make_regression(300, 5, n_informative=5, random_state=0)
    # Not rounded to float32: thresholds fall between float32 values.
    return model.fit(X, y), X


@pytest.mark.parametrize(
    "model",
    [
        RandomForestRegressor(n_estimators=3, max_depth=5, random_state=0),
        HistGradientBoostingRegressor(max_iter=5, max_depth=4, random_state=0),
    ],
    ids=["float32 comparisons", "float64 comparisons"],
)
def test_rows_on_and_near_thresholds(model, path):
    model, X = model_and_data(model)
    explainer = TreeExplainer(model, feature_perturbation="interventional").fit(X[:5])
    ensemble = explainer.ensemble_
    background = rows_around_thresholds(ensemble, X[0], 24, seed=1)
    rows = rows_around_thresholds(ensemble, X[1], 6, seed=2)
    explainer.fit(background)
    phi = explainer.explain(rows).to_numpy()
    scale = np.abs(model.predict(background)).max()
    for r in range(len(rows)):
        expected = interventional_shapley(model.predict, rows[r], background)
        np.testing.assert_allclose(phi[r], expected[:, 0], rtol=0, atol=RTOL * scale)


def test_xgboost_rows_between_float32_and_float64(path):
    xgb = pytest.importorskip("xgboost")
    X, y = make_regression(300, 5, n_informative=5, random_state=0)
    model = xgb.XGBRegressor(n_estimators=5, max_depth=3, tree_method="hist")
    model.fit(X, y)
    explainer = TreeExplainer(model, feature_perturbation="interventional").fit(X[:5])
    ensemble = explainer.ensemble_
    background = rows_around_thresholds(ensemble, X[0], 24, seed=1)
    rows = rows_around_thresholds(ensemble, X[1], 6, seed=2)
    phi = explainer.fit(background).explain(rows).to_numpy()
    scale = np.abs(explainer.raw_predict(background)).max()
    for r in range(len(rows)):
        # XGBoost's own float32 sums: a route error moves a whole leaf
        # value, far above float32's rounding of the scale.
        expected = interventional_shapley(
            lambda hybrid: model.predict(hybrid, output_margin=True),
            rows[r],
            background,
        )
        np.testing.assert_allclose(phi[r], expected[:, 0], rtol=0, atol=1e-5 * scale)


def test_lightgbm_zero_as_missing_and_categories(path):
    # LightGBM's own rules: |x| <= kZeroThreshold is missing where the split
    # says so, categories by bitset (unseen ones go right), NaN by the
    # split's default side; rows and background rows exactly on them.
    lgb = pytest.importorskip("lightgbm")
    rng = np.random.default_rng(0)
    X = rng.normal(size=(400, 4))
    X[:, 0] = rng.integers(0, 6, size=400)
    X[::5, 1] = 0.0
    X[::7, 2] = np.nan
    y = X[:, 0] % 2 + X[:, 1] - np.nan_to_num(X[:, 2]) + 0.3 * X[:, 3]
    model = lgb.LGBMRegressor(
        n_estimators=6, num_leaves=8, zero_as_missing=True, verbose=-1
    ).fit(X, y, categorical_feature=[0])
    edge = np.array(
        [[7.0, 0.0, np.nan, 0.1], [2.0, 1e-40, 0.5, np.nan], [3.0, -0.0, 0.0, 0.0]]
    )
    background = np.vstack([X[:20], edge])
    rows = np.vstack([edge, X[300:302]])
    explainer = TreeExplainer(model, feature_perturbation="interventional")
    phi = explainer.fit(background).explain(rows).to_numpy()
    scale = np.abs(model.predict(background, raw_score=True)).max()
    for r in range(len(rows)):
        expected = interventional_shapley(
            lambda hybrid: model.predict(hybrid, raw_score=True), rows[r], background
        )
        np.testing.assert_allclose(phi[r], expected[:, 0], rtol=0, atol=RTOL * scale)
