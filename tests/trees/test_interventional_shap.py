"""Interventional values against shap's interventional TreeExplainer.

On the same full background, on data rounded to float32 (where shap, which
compares float32 features, routes rows as the models do).
"""

import numpy as np
import pytest
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import GradientBoostingClassifier, RandomForestRegressor

from skshapley import TreeExplainer

shap = pytest.importorskip("shap")


def float32_data(X):
    return X.astype(np.float32).astype(float)


def shap_values(model, background, rows):
    # shap subsamples a background of more than 100 rows unless its masker
    # is told to keep them all.
    masker = shap.maskers.Independent(background, max_samples=len(background))
    explainer = shap.TreeExplainer(model, masker, feature_perturbation="interventional")
    return np.asarray(explainer.shap_values(rows, check_additivity=False))


def test_random_forest():
    X, y = make_regression(400, 8, n_informative=8, random_state=0)
    X = float32_data(X)
    model = RandomForestRegressor(n_estimators=10, max_depth=8, random_state=0)
    model.fit(X, y)
    background, rows = X[:200], X[300:340]
    ours = TreeExplainer(model, feature_perturbation="interventional")
    phi = ours.fit(background).explain(rows).to_numpy()
    # shap sums in float32 in places: 1e-6 of the output scale.
    scale = np.abs(y).max()
    np.testing.assert_allclose(
        phi, shap_values(model, background, rows), rtol=0, atol=1e-6 * scale
    )


def test_gradient_boosting_margin():
    X, y = make_classification(400, 8, n_informative=5, random_state=0)
    X = float32_data(X)
    model = GradientBoostingClassifier(n_estimators=20, max_depth=4, random_state=0)
    model.fit(X, y)
    background, rows = X[:150], X[300:330]
    ours = TreeExplainer(model, feature_perturbation="interventional")
    phi = ours.fit(background).explain(rows).to_numpy()
    scale = np.abs(model.decision_function(background)).max()
    np.testing.assert_allclose(
        phi, shap_values(model, background, rows), rtol=0, atol=1e-6 * scale
    )


def test_xgboost():
    xgb = pytest.importorskip("xgboost")
    X, y = make_regression(400, 8, n_informative=8, random_state=0)
    X = float32_data(X)
    model = xgb.XGBRegressor(n_estimators=30, max_depth=5, tree_method="hist")
    model.fit(X, y)
    background, rows = X[:150], X[300:330]
    ours = TreeExplainer(model, feature_perturbation="interventional")
    phi = ours.fit(background).explain(rows).to_numpy()
    # XGBoost's leaf values are float32: shap reads them so, 1e-5 relative.
    scale = np.abs(y).max()
    np.testing.assert_allclose(
        phi, shap_values(model, background, rows), rtol=0, atol=1e-5 * scale
    )
