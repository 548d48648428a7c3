"""Interventional values route rows on thresholds exactly as the model does.

Rows (and background rows) sit exactly on the parsed thresholds, one unit in
the last place on either side, and between a float64 threshold and its
float32 rounding, where a wrong comparison or cast sends them the other way.
The oracle is the model's own ``predict`` on all hybrid rows.
"""

import numpy as np
import pytest
from naive import interventional_shapley
from sklearn.datasets import make_regression
from sklearn.ensemble import HistGradientBoostingRegressor, RandomForestRegressor

from skshapley import TreeExplainer

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
def test_rows_on_and_near_thresholds(model):
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


def test_xgboost_rows_between_float32_and_float64():
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
