"""IsolationForest through TreeExplainer: the raw score is the average path length.

scikit-learn's ``score_samples`` is ``-2 ** (-E[h(x)] / c(max_samples_))``
with ``E[h(x)]`` the mean over trees of the depth of the leaf ``x`` reaches
plus ``c(n)`` of the leaf's training points. The explainer explains
``E[h(x)]``; these tests recover it from ``score_samples`` (scikit-learn's
own output, not the parser's), check the values sum to it, agree with shap
and with brute-force enumeration, on training rows, rows placed on the
split thresholds and NaN rows, for trees on all and on subsets of the
features.
"""

from functools import cache

import numpy as np
import pandas as pd
import pytest
from naive import path_dependent_shapley, path_dependent_value, rows_on_thresholds
from sklearn.base import clone
from sklearn.ensemble import IsolationForest

from skshapley import TreeExplainer

# The path lengths are sums of a few depths and logarithms (~10), averaged
# over <= 20 trees; score_samples rounds them through 2 ** (-h / c), which
# log2 undoes with a relative error of a few ulps of h: 1e-12 of the largest
# length fails at any wrong leaf (off by at least 1 / n_trees = 0.05).
CONVERSION_RTOL = 1e-12

# Efficiency is exact for the exact quadrature rule, up to rounding in the
# sums over trees and paths (measured <= 1e-14 relative).
EFFICIENCY_RTOL = 1e-10

# shap unwinds cover ratios; the oracle sums 2**5 coalition values: both
# round to ~1e-15 of the output's scale (measured <= 1e-15).
SHAP_RTOL = 1e-9
BRUTE_FORCE_RTOL = 1e-12

N_FEATURES = 5

MODELS = {
    "all_features": IsolationForest(n_estimators=20, random_state=0),
    # Each tree sees X[:, estimators_features_[t]]: indices are mapped back.
    "feature_subsets": IsolationForest(n_estimators=20, max_features=3, random_state=0),
    # Few samples per tree, shallow trees: leaves hold several points, so
    # c(n) carries much of the path length.
    "small_samples": IsolationForest(n_estimators=10, max_samples=20, random_state=1),
    "nan_in_training": IsolationForest(n_estimators=10, random_state=2),
}


def training_data(name, n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, N_FEATURES))
    X[:5] *= 6.0  # a few outliers
    if name == "nan_in_training":
        X[rng.random(n) < 0.15, 1] = np.nan
    return X


@cache
def fitted(name):
    """A fitted model, its explainer and its training X (cached: read only)."""
    X = training_data(name)
    model = clone(MODELS[name]).fit(X)
    return model, TreeExplainer(model).fit(), X


def average_path_length(n):
    """c(n) as Liu et al. define it, written out for the oracle."""
    if n <= 1:
        return 0.0
    if n == 2:
        return 1.0
    return 2.0 * (np.log(n - 1.0) + np.euler_gamma) - 2.0 * (n - 1.0) / n


def path_length(model, X):
    """E[h(x)], recovered from scikit-learn's score_samples."""
    return -np.log2(-model.score_samples(X)) * average_path_length(model.max_samples_)


def rows(name):
    """Training rows (outliers first), rows on thresholds, NaN rows."""
    _, explainer, X = fitted(name)
    on_thresholds = rows_on_thresholds(explainer.ensemble_, X[:40])
    nan = np.vstack([X[:4], X[:4]])
    nan[:4, 1] = np.nan
    nan[4:, :] = np.nan
    return np.vstack([X[:40], on_thresholds[::7], nan])


def assert_close(actual, expected, rtol, scale=None):
    scale = np.abs(expected).max() if scale is None else scale
    np.testing.assert_allclose(actual, expected, rtol=0, atol=rtol * scale)


@pytest.mark.parametrize("name", MODELS)
def test_raw_output_is_the_average_path_length(name):
    model, explainer, _ = fitted(name)
    X = rows(name)
    raw = explainer.raw_predict(X)
    assert_close(raw, path_length(model, X), CONVERSION_RTOL)
    # The documented maps to scikit-learn's outputs.
    c = average_path_length(model.max_samples_)
    assert_close(-(2 ** (-raw / c)), model.score_samples(X), CONVERSION_RTOL)
    assert_close(
        -(2 ** (-raw / c)) - model.offset_, model.decision_function(X), 1e-12, 1.0
    )
    assert explainer.raw_output_ == "average path length"
    assert explainer.output_names_ == ("target",)
    assert explainer.ensemble_.n_trees == model.n_estimators


@pytest.mark.parametrize("name", MODELS)
def test_efficiency(name):
    model, explainer, _ = fitted(name)
    X = rows(name)
    phi = explainer.explain(X)
    assert list(phi.columns) == [f"x{j}" for j in range(N_FEATURES)]
    total = phi.sum(axis=1).to_numpy() + explainer.expected_value_
    assert_close(total, path_length(model, X), EFFICIENCY_RTOL)
    # Outliers (the first rows) have shorter paths: their values are
    # mostly negative.
    assert (phi.iloc[:5].sum(axis=1) < 0).all()


@pytest.mark.parametrize("name", MODELS)
def test_matches_shap(name):
    shap = pytest.importorskip("shap")
    model, explainer, X = fitted(name)
    # Not rows on thresholds: shap compares float64 inputs with the
    # thresholds, where scikit-learn (and the explainer) compare float32.
    X = np.vstack([X[:40], rows(name)[-8:]])
    reference = shap.TreeExplainer(model)
    expected = reference.shap_values(X)
    assert_close(explainer.explain(X).to_numpy(), expected, SHAP_RTOL, 10.0)
    assert_close(explainer.expected_value_, reference.expected_value, SHAP_RTOL)


@pytest.mark.parametrize("name", ["feature_subsets", "small_samples"])
def test_matches_brute_force(name):
    _, explainer, _ = fitted(name)
    X = rows(name)[[0, 1, 6, 50, -5, -1]]
    phi = explainer.explain(X).to_numpy()
    table = explainer.ensemble_
    for x, phi_x in zip(X, phi, strict=True):
        expected = path_dependent_shapley(table, x)[:, 0]
        assert_close(phi_x, expected, BRUTE_FORCE_RTOL, 10.0)
    empty = path_dependent_value(table, X[0], set())
    assert_close(explainer.expected_value_, empty[0], BRUTE_FORCE_RTOL)


def test_dataframe_feature_names():
    X = pd.DataFrame(training_data("all_features"), columns=list("abcde"))
    model = IsolationForest(n_estimators=5, random_state=0).fit(X)
    phi = TreeExplainer(model).fit().explain(X.iloc[:, ::-1].head())
    assert list(phi.columns) == list("abcde")


@pytest.mark.parametrize(
    ("attribute", "value", "named"),
    [
        ("estimators_features_", None, "estimators_features_"),
        ("estimators_features_", [np.arange(5)] * 2, "estimators_features_"),
        ("estimators_features_", [np.zeros(3)] * 5, "integer"),
        ("estimators_features_", [np.array([0, 1, 9])] * 5, "malformed"),
    ],
)
def test_malformed_model_gives_a_value_error(attribute, value, named):
    X = training_data("all_features")
    model = IsolationForest(n_estimators=5, max_features=3, random_state=0).fit(X)
    setattr(model, attribute, value)
    with pytest.raises(ValueError, match=named):
        TreeExplainer(model).fit()
