"""HistGradientBoosting models against their parsed TreeEnsemble.

The table routes category codes (positions in the model's OrdinalEncoder
categories); rows reach it through the tree package's input stage
(``tree_values``), as in the explainer.
"""

import numpy as np
import pandas as pd
import pytest
from naive import (
    path_dependent_shapley,
    path_dependent_value,
    predict_ensemble,
    rows_on_thresholds,
)
from sklearn.ensemble import (
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
)

from skshapley import TreeExplainer
from skshapley.trees._categories import tree_values
from skshapley.trees._readers.hist_gradient_boosting import parse_hist_gradient_boosting

# The table adds the same leaf values to the same base offset in the same
# order as sklearn (iteration by iteration), so the sums agree bit for bit in
# practice; 1e-12 relative to the output scale only leaves room for a change
# of summation order, never for a leaf reached by a wrong route.
RTOL = 1e-12

# Feature 1 holds category codes; 1, 4, 6 and 8 are never seen in training.
CATEGORIES = np.array([0, 2, 3, 5, 7, 9])
UNKNOWN = [1, 4, 6, 8, 255, 256, -1, -0.0, 2.5, 1e9, np.nan]


def training_data(n=300, seed=0):
    """Feature 0 has NaN in training, feature 3 none; feature 1 is a category."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X[:, 1] = rng.choice(CATEGORIES, n)
    X[rng.random(n) < 0.1, 0] = np.nan
    X[rng.random(n) < 0.05, 1] = np.nan
    y = (
        np.nan_to_num(X[:, 0], nan=1.5)
        + np.isin(X[:, 1], [2, 7])
        + np.abs(X[:, 2])
        + 0.5 * X[:, 3]
    )
    return X, y


def fitted(kind, categorical=True, **params):
    X, y = training_data()
    params = {"max_iter": 8, "max_leaf_nodes": 8, "random_state": 0, **params}
    if categorical:
        params["categorical_features"] = [1]
    if kind == "poisson":
        return HistGradientBoostingRegressor(loss="poisson", **params).fit(
            X, np.exp(y / 2)
        )
    if kind == "regressor":
        return HistGradientBoostingRegressor(**params).fit(X, y)
    if kind == "binary":
        return HistGradientBoostingClassifier(**params).fit(X, y > 1.5)
    return HistGradientBoostingClassifier(**params).fit(X, np.digitize(y, [0, 1, 2]))


def prediction_rows(table, X):
    """Training rows, threshold rows, NaN, ±inf and unknown categories."""
    rng = np.random.default_rng(1)
    base = X[rng.choice(len(X), 40)]
    nan_unseen = base.copy()
    nan_unseen[:, 3] = np.nan  # feature 3 had no NaN in training
    nan_seen = base.copy()
    nan_seen[:, [0, 2]] = np.nan
    infinite = base.copy()
    infinite[:20, [0, 3]] = np.inf
    infinite[20:, [0, 2]] = -np.inf
    unknown = np.repeat(base[:8], len(UNKNOWN), axis=0)
    unknown[:, 1] = np.tile(UNKNOWN, 8)
    return np.vstack(
        [X, rows_on_thresholds(table, X), nan_unseen, nan_seen, infinite, unknown]
    )


def assert_matches_model(table, model, X):
    expected = model._raw_predict(X)
    actual = predict_ensemble(table, tree_values(X, table))
    assert actual.shape == expected.shape
    np.testing.assert_allclose(
        actual, expected, rtol=0, atol=RTOL * np.abs(expected).max()
    )


@pytest.mark.parametrize(
    ("kind", "raw_output", "output_names"),
    [
        ("regressor", "value", ("target",)),
        ("poisson", "log", ("target",)),
        ("binary", "log-odds", (True,)),
        ("multiclass", "margin", (0, 1, 2, 3)),
    ],
)
@pytest.mark.parametrize("categorical", [True, False])
def test_predictions_match(kind, raw_output, output_names, categorical):
    model = fitted(kind, categorical)
    nodes_before = [p.nodes.copy() for it in model._predictors for p in it]
    table = parse_hist_gradient_boosting(model)

    assert table.raw_output == raw_output
    assert table.output_names == output_names
    assert table.n_features == 4
    assert table.n_trees == model.n_iter_ * len(output_names)
    np.testing.assert_array_equal(table.base_offset, model._baseline_prediction[0])
    assert bool(table.is_categorical.any()) == categorical
    X = prediction_rows(table, training_data()[0])
    assert_matches_model(table, model, X)
    # Parsing leaves the model as it was.
    nodes_after = [p.nodes for it in model._predictors for p in it]
    for before, after in zip(nodes_before, nodes_after, strict=True):
        np.testing.assert_array_equal(before, after)


def test_leaf_values_include_learning_rate():
    slow, fast = (fitted("regressor", learning_rate=lr) for lr in (0.01, 1.0))
    first_leaf = np.flatnonzero(slow._predictors[0][0].nodes["is_leaf"])[0]
    ratio = (
        parse_hist_gradient_boosting(fast).value[first_leaf, 0]
        / parse_hist_gradient_boosting(slow).value[first_leaf, 0]
    )
    np.testing.assert_allclose(ratio, 100.0)


def test_single_known_category_follows_the_predictor():
    # A categorical feature with one category and NaN in training: sklearn
    # fills such a split as a "split on NaN" and never gives it a bitset, so
    # its predictor reads another node's bitset row. The table follows the
    # predictor (what _raw_predict returns), whatever it reads.
    rng = np.random.default_rng(3)
    X = rng.normal(size=(300, 3))
    X[:, 0] = np.where(rng.random(300) < 0.5, 5.0, np.nan)
    X[:, 2] = rng.integers(0, 4, 300)
    y = 3.0 * np.isnan(X[:, 0]) + X[:, 1] + X[:, 2]
    model = HistGradientBoostingRegressor(max_iter=3, categorical_features=[0, 2]).fit(
        X, y
    )
    table = parse_hist_gradient_boosting(model)
    extra = [[5, 0, 1], [4, 0, 1], [np.nan, 0, 7], [0, 0, 2]]
    assert_matches_model(table, model, np.vstack([X, extra]))


def test_pandas_categories():
    # The table reads the original columns in their original order, and
    # categories by their values (not by pandas' codes 0, 1, 2, 3): the
    # frame's values as plain numbers route the same.
    rng = np.random.default_rng(4)
    values = np.array([1, 4, 7, 200])[rng.integers(0, 4, 200)]
    frame = pd.DataFrame({"code": pd.Categorical(values), "x": rng.normal(size=200)})
    y = frame["x"] + (values % 3 == 1) + (values == 7)
    model = HistGradientBoostingRegressor(max_iter=5).fit(frame, y)
    table = parse_hist_gradient_boosting(model)
    assert set(table.feature[table.is_categorical == 1]) == {0}
    expected = model._raw_predict(frame)
    actual = predict_ensemble(table, tree_values(frame.to_numpy(dtype=float), table))
    np.testing.assert_allclose(actual, expected, rtol=0, atol=RTOL)


@pytest.mark.parametrize("kind", ["regressor", "multiclass"])
def test_covers_are_sklearn_partial_dependence_weights(kind):
    # sklearn's recursive partial dependence weighs children by node counts,
    # as the path-dependent game does with covers: with one feature in the
    # coalition, the two agree (minus the base offset, which sklearn leaves
    # out). sklearn's recursion ignores NaN and categories: finite numerical
    # features only.
    model = fitted(kind, categorical=False, max_iter=3)
    table = parse_hist_gradient_boosting(model)
    X = training_data()[0][:5]
    for j in (2, 3):
        expected = model._compute_partial_dependence_recursion(X[:, [j]], [j])
        actual = [path_dependent_value(table, x, {j}) for x in X]
        np.testing.assert_allclose(
            np.array(actual) - table.base_offset, expected.T, rtol=0, atol=1e-12
        )


@pytest.mark.parametrize("kind", ["regressor", "multiclass"])
def test_path_dependent_efficiency(kind):
    # The Shapley values of the path-dependent game sum to v(all) - v(∅); with
    # v(all) the model's raw output this checks covers and values fit together.
    model = fitted(kind, max_iter=3, max_leaf_nodes=4)
    table = parse_hist_gradient_boosting(model)
    X = prediction_rows(table, training_data()[0])[::97]
    for x, codes in zip(X, tree_values(X, table), strict=True):
        phi = path_dependent_shapley(table, codes)
        empty = path_dependent_value(table, codes, set())
        raw = model._raw_predict(x[None])[0]
        np.testing.assert_allclose(phi.sum(axis=0), raw - empty, rtol=0, atol=1e-12)


# ---- attributes as a tampered model file delivers them ---------------------


def _categorical_model():
    rng = np.random.default_rng(2)
    X = np.column_stack([rng.normal(size=200), rng.integers(0, 5, size=200)])
    y = X[:, 0] + (X[:, 1] == 3)
    return HistGradientBoostingRegressor(
        max_iter=3, categorical_features=[1], random_state=0
    ).fit(X, y)


def _tamper_known_categories(model):
    # The bin mapper's own bitset writer has no bounds checks: a code of 300
    # would be written past its 8 words.
    model._bin_mapper.bin_thresholds_[0] = np.array([0.0, 1.0, 300.0])


def _tamper_feature(model):
    model._predictors[0][0].nodes["feature_idx"][0] = 7


def _tamper_count(model):
    model._predictors[0][0].nodes["count"][1] = 10**6


def _tamper_nodes_dtype(model):
    model._predictors[0][0].nodes = np.zeros(3)


def _tamper_iteration(model):
    model._predictors[0].append(model._predictors[0][0])


@pytest.mark.parametrize(
    ("tamper", "message"),
    [
        (_tamper_known_categories, "codes 0..255"),
        (_tamper_feature, "splits on a feature"),
        (_tamper_count, "cover"),
        (_tamper_nodes_dtype, "record type"),
        (_tamper_iteration, "trees for 1 outputs"),
    ],
)
def test_tampered_model_gives_value_error(tamper, message):
    model = _categorical_model()
    tamper(model)
    with pytest.raises(ValueError, match=message):
        TreeExplainer(model).fit()
