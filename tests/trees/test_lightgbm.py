"""LightGBM models against their parsed TreeEnsemble and TreeExplainer.

For each kind of model (objective, missing-value handling, boosting mode):
the parsed trees predict ``predict(raw_score=True)`` also on rows placed
exactly on the split thresholds, on NaN, on exact and signed zeros, on values
around LightGBM's zero threshold (1e-35) and on unseen, negative and huge
category codes; the explanations equal LightGBM's own ``pred_contrib=True``
(and shap's, which delegates to it) and sum to the raw output. Hand-written
one-split models pin down each routing rule on its own.
"""

import dataclasses
from functools import cache

import numpy as np
import pandas as pd
import pytest
from naive import (
    path_dependent_shapley,
    predict_ensemble,
    rows_on_thresholds,
    tree_shapley_by_paths,
)

from skshapley import TreeExplainer

lgb = pytest.importorskip("lightgbm")

from skshapley.trees._readers.lightgbm.model import parse_lightgbm  # noqa: E402

# LightGBM adds the same leaf values in the same order (tree by tree), so the
# sums agree to rounding; a leaf reached by a wrong route is off by ~1e-2 of
# the output's scale or more.
RTOL = 1e-12
# Both sides are exact algorithms in float64 (LightGBM's TreeSHAP recursion,
# the kernel's quadrature); their roundings differ by ~1e-15 of the scale.
SHAP_RTOL = 1e-9
EFFICIENCY_RTOL = 1e-10

# LightGBM's kZeroThreshold (the float 1e-35f as a double).
K_ZERO = float(np.float32(1e-35))

# Feature 1 holds category codes; 1, 4, 6 and 8 are never seen in training.
CATEGORIES = np.array([0, 2, 3, 5, 7, 9])
UNSEEN_CATEGORIES = [1, 4, 6, 8, 10, 31, 32, 255, 256, 1e9, -1, -3, -0.0, np.nan]
# Values around zero for the numerical features.
TINY = [0.0, -0.0, 1e-36, -1e-36, 1e-35, -1e-35, K_ZERO, -K_ZERO, 1e-34, -1e-34]
NUMERICAL = [0, 2, 3]

BASE_PARAMS = {
    "n_estimators": 8,
    "num_leaves": 8,
    "min_child_samples": 5,
    "min_data_per_group": 5,
    "cat_smooth": 1.0,
    "verbose": -1,
}


def training_data(n=300, seed=0):
    """Feature 0 has NaN, feature 1 is categorical, feature 2 has many zeros."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X[:, 1] = rng.choice(CATEGORIES, n)
    X[rng.random(n) < 0.1, 0] = np.nan
    X[rng.random(n) < 0.05, 1] = np.nan
    X[rng.random(n) < 0.25, 2] = 0.0
    y = (
        np.nan_to_num(X[:, 0], nan=1.5)
        + np.isin(X[:, 1], [2, 7])
        + np.abs(X[:, 2])
        + (X[:, 2] == 0)
        + 0.5 * X[:, 3]
    )
    return X, y


@cache
def fitted(kind):
    """A small fitted LightGBM model of the given kind."""
    X, y = training_data()
    fit = {"categorical_feature": [1]}
    if kind == "regressor":
        return lgb.LGBMRegressor(**BASE_PARAMS).fit(X, y, **fit)
    if kind == "zero_as_missing":
        return lgb.LGBMRegressor(zero_as_missing=True, **BASE_PARAMS).fit(X, y, **fit)
    if kind == "no_missing":
        return lgb.LGBMRegressor(use_missing=False, **BASE_PARAMS).fit(X, y, **fit)
    if kind == "weighted":
        weight = np.random.default_rng(1).uniform(0.1, 5.0, len(y))
        return lgb.LGBMRegressor(subsample=0.7, subsample_freq=1, **BASE_PARAMS).fit(
            X, y, sample_weight=weight, **fit
        )
    if kind == "dart":
        model = lgb.LGBMRegressor(boosting_type="dart", drop_rate=0.5, **BASE_PARAMS)
        return model.fit(X, y, **fit)
    if kind == "poisson":
        return lgb.LGBMRegressor(objective="poisson", **BASE_PARAMS).fit(
            X, np.exp(y / 3), **fit
        )
    if kind == "binary":
        return lgb.LGBMClassifier(**BASE_PARAMS).fit(X, y > 1.5, **fit)
    if kind == "multiclass":
        labels = np.array(["low", "mid", "high"])[np.digitize(y, [1.0, 2.5])]
        return lgb.LGBMClassifier(**BASE_PARAMS).fit(X, labels, **fit)
    if kind == "ranker":
        relevance = np.digitize(y, [0.5, 1.5, 2.5])
        return lgb.LGBMRanker(**BASE_PARAMS).fit(X, relevance, group=[10] * 30, **fit)
    if kind == "booster":
        params = {**BASE_PARAMS, "objective": "regression"}
        n_rounds = params.pop("n_estimators")
        data = lgb.Dataset(
            X, y, feature_name=["a", "b", "c", "d"], categorical_feature=[1]
        )
        return lgb.train(params, data, n_rounds)
    if kind == "early_stopping":
        # keep_training_booster keeps the trees after the best iteration,
        # which predict (by default) and the parser leave out.
        X_valid, y_valid = training_data(100, seed=1)
        y_valid = y_valid + np.random.default_rng(2).normal(size=100)
        params = {**BASE_PARAMS, "learning_rate": 0.5}
        params.pop("n_estimators")
        return lgb.train(
            params,
            lgb.Dataset(X, y, categorical_feature=[1]),
            60,
            valid_sets=[lgb.Dataset(X_valid, y_valid, categorical_feature=[1])],
            callbacks=[lgb.early_stopping(2, verbose=False)],
            keep_training_booster=True,
        )
    raise ValueError(kind)


# Raw Boosters, which TreeExplainer does not accept yet (see
# test_explainer_accepts_booster): checked through the table and the oracles.
BOOSTERS = ("booster", "early_stopping")
KINDS = [
    "regressor",
    "zero_as_missing",
    "no_missing",
    "weighted",
    "dart",
    "poisson",
    "binary",
    "multiclass",
    "ranker",
    "booster",
    "early_stopping",
]


def n_outputs(model):
    booster = getattr(model, "booster_", model)
    return booster.dump_model()["num_tree_per_iteration"]


def raw_output_of(model, X):
    """``predict(X, raw_score=True)`` as an array of shape (n, n_outputs)."""
    return np.reshape(model.predict(X, raw_score=True), (len(X), -1))


def contributions(model, X):
    """``pred_contrib=True`` as (n, n_outputs, n_features + 1)."""
    return np.reshape(
        model.predict(X, pred_contrib=True), (len(X), n_outputs(model), -1)
    )


def prediction_rows(table, X):
    """Training rows, threshold rows, NaN, zeros, ±inf and unseen categories."""
    rng = np.random.default_rng(3)
    base = X[rng.choice(len(X), 12)]
    parts = [X[:60], rows_on_thresholds(table, X)]
    for j in range(X.shape[1]):
        nan = base.copy()
        nan[:, j] = np.nan
        parts.append(nan)
    for j in NUMERICAL:
        tiny = np.repeat(base[:4], len(TINY), axis=0)
        tiny[:, j] = np.tile(TINY, 4)
        parts.append(tiny)
    infinite = base.copy()
    infinite[:6, NUMERICAL] = np.inf
    infinite[6:, NUMERICAL] = -np.inf
    parts.append(infinite)
    unseen = np.repeat(base[:4], len(UNSEEN_CATEGORIES), axis=0)
    unseen[:, 1] = np.tile(UNSEEN_CATEGORIES, 4)
    parts.append(unseen)
    return np.vstack(parts)


@cache
def case(kind):
    """(model, explainer, table, rows) for a kind of model."""
    model = fitted(kind)
    table = parse_lightgbm(model)
    explainer = None if kind in BOOSTERS else TreeExplainer(model).fit()
    return model, explainer, table, prediction_rows(table, training_data()[0])


def assert_close(actual, expected, rtol, scale=None):
    """``|actual - expected| <= rtol * scale``, ``scale`` the largest |expected|."""
    scale = np.abs(expected).max() if scale is None else scale
    np.testing.assert_allclose(actual, expected, rtol=0, atol=rtol * scale)


def as_array(phi, n_outputs):
    """An explanation as (n_samples, n_outputs, n_features)."""
    return phi.to_numpy().reshape(len(phi), n_outputs, -1)


EXPECTED_OUTPUTS = {
    "regressor": ("value", ("target",)),
    "zero_as_missing": ("value", ("target",)),
    "no_missing": ("value", ("target",)),
    "weighted": ("value", ("target",)),
    "dart": ("value", ("target",)),
    "poisson": ("log", ("target",)),
    "binary": ("log-odds", (True,)),
    "multiclass": ("margin", ("high", "low", "mid")),
    "ranker": ("ranking score", ("target",)),
    "booster": ("value", ("target",)),
    "early_stopping": ("value", ("target",)),
}


@pytest.mark.parametrize("kind", KINDS)
def test_predictions_match(kind):
    model, explainer, table, X = case(kind)
    assert (table.raw_output, table.output_names) == EXPECTED_OUTPUTS[kind]
    assert table.n_features == 4
    assert table.float32_inputs is False
    assert table.category_input == "codes"
    np.testing.assert_array_equal(table.base_offset, np.zeros(n_outputs(model)))
    assert table.is_categorical.any()
    assert_close(predict_ensemble(table, X), raw_output_of(model, X), RTOL)
    if explainer is not None:
        raw = explainer.raw_predict(X)
        assert_close(np.reshape(raw, (len(X), -1)), raw_output_of(model, X), RTOL)


def test_models_have_each_missing_type():
    # The fixtures do exercise the three missing types.
    zero = case("zero_as_missing")[2]
    assert ((zero.missing_left & 2) == 2)[zero.left >= 0].any()
    for kind in ("regressor", "no_missing"):
        table = case(kind)[2]
        assert not (table.missing_left & 2).any()
    nan_types = {
        node["missing_type"]
        for kind in ("regressor", "no_missing")
        for node in _internal_nodes(fitted(kind))
    }
    assert {"NaN", "None"} <= nan_types
    assert {n["missing_type"] for n in _internal_nodes(fitted("no_missing"))} == {
        "None"
    }


def _internal_nodes(model):
    booster = getattr(model, "booster_", model)
    stack = [info["tree_structure"] for info in booster.dump_model()["tree_info"]]
    while stack:
        node = stack.pop()
        if "leaf_value" not in node:
            yield node
            stack += [node["left_child"], node["right_child"]]


@pytest.mark.parametrize("kind", [k for k in KINDS if k not in BOOSTERS])
def test_matches_pred_contrib(kind):
    model, explainer, table, X = case(kind)
    expected = contributions(model, X)
    phi = explainer.explain(X)
    assert phi.shape == (len(X), 4 * table.n_outputs)
    scale = np.abs(raw_output_of(model, X)).max()
    assert_close(as_array(phi, table.n_outputs), expected[:, :, :-1], SHAP_RTOL, scale)
    assert_close(
        np.ravel(explainer.expected_value_), expected[0, :, -1], SHAP_RTOL, scale
    )


@pytest.mark.parametrize(
    "kind", ["regressor", "zero_as_missing", "multiclass", "ranker"]
)
def test_matches_shap(kind):
    shap = pytest.importorskip("shap")
    model, explainer, table, X = case(kind)
    reference = shap.TreeExplainer(model, feature_perturbation="tree_path_dependent")
    expected = np.asarray(reference.shap_values(X))
    expected = expected if expected.ndim == 3 else expected[:, :, None]
    actual = as_array(explainer.explain(X), table.n_outputs).transpose(0, 2, 1)
    scale = np.abs(raw_output_of(model, X)).max()
    assert_close(actual, expected, SHAP_RTOL, scale)
    assert_close(
        np.ravel(explainer.expected_value_),
        np.ravel(reference.expected_value),
        SHAP_RTOL,
        scale,
    )


@pytest.mark.parametrize("kind", [k for k in KINDS if k not in BOOSTERS])
def test_efficiency(kind):
    model, explainer, table, X = case(kind)
    phi = as_array(explainer.explain(X), table.n_outputs)
    total = phi.sum(axis=2) + np.ravel(explainer.expected_value_)
    assert_close(total, raw_output_of(model, X), EFFICIENCY_RTOL)


@pytest.mark.parametrize("kind", [k for k in KINDS if k not in BOOSTERS])
def test_one_row_at_a_time_equals_the_batch(kind):
    # A row alone takes the kernel's one-row walk, which routes it by its own
    # code (packed thresholds, the routing rule only where they are NaN): on
    # every edge row (thresholds, NaN, zeros around kZeroThreshold, ±inf,
    # unseen categories) its values are the batch's, to the bit.
    _, explainer, _, X = case(kind)
    batch = explainer.explain(X).to_numpy()
    alone = np.vstack(
        [explainer.explain(X[i : i + 1]).to_numpy() for i in range(len(X))]
    )
    np.testing.assert_array_equal(alone, batch)


@pytest.mark.parametrize("kind", ["regressor", "zero_as_missing", "multiclass"])
def test_matches_brute_force(kind):
    model, explainer, table, X = case(kind)
    rows = X[np.random.default_rng(4).choice(len(X), 6, replace=False)]
    phi = as_array(explainer.explain(rows), table.n_outputs)
    scale = np.abs(raw_output_of(model, rows)).max()
    for x, phi_x in zip(rows, phi, strict=True):
        assert_close(phi_x.T, path_dependent_shapley(table, x), 1e-12, scale)


@pytest.mark.parametrize("kind", BOOSTERS)
def test_boosters_match_pred_contrib(kind):
    # Boosters from lightgbm.train: their pred_contrib, through the table by
    # the path-by-path oracle.
    model, _, table, X = case(kind)
    rows = X[np.random.default_rng(5).choice(len(X), 20, replace=False)]
    expected = contributions(model, rows)
    scale = np.abs(raw_output_of(model, rows)).max()
    for x, contrib in zip(rows, expected, strict=True):
        phi = tree_shapley_by_paths(table, x)
        assert_close(phi.T, contrib[:, :-1], SHAP_RTOL, scale)


def test_explainer_accepts_booster():
    model, _, _, X = case("booster")
    explainer = TreeExplainer(model).fit()
    assert list(explainer.feature_names_in_) == ["a", "b", "c", "d"]
    assert_close(
        as_array(explainer.explain(X), 1), contributions(model, X)[:, :, :-1], SHAP_RTOL
    )


def test_feature_names():
    assert case("booster")[2].feature_names == ("a", "b", "c", "d")


def test_default_feature_names():
    # A Booster trained without names calls its features Column_0, ...: the
    # table reports no names (columns are matched by position).
    X, y = training_data()
    booster = lgb.train({"verbose": -1, "num_leaves": 4}, lgb.Dataset(X, y), 2)
    assert booster.feature_name()[0] == "Column_0"
    assert parse_lightgbm(booster).feature_names is None
    assert case("regressor")[2].feature_names is None


def test_early_stopping_uses_best_iteration():
    model, _, table, _ = case("early_stopping")
    assert 0 < model.best_iteration < model.current_iteration()
    assert table.n_trees == model.best_iteration
    X = training_data()[0]
    all_trees = model.predict(X, raw_score=True, num_iteration=-1)
    assert np.abs(predict_ensemble(table, X)[:, 0] - all_trees).max() > 1e-3


def leaf_values(table, tree):
    """The leaf values of one tree of a table."""
    end = table.roots[tree + 1] if tree + 1 < table.n_trees else len(table.left)
    nodes = np.arange(table.roots[tree], end)
    return table.value[nodes[table.left[nodes] < 0], 0]


def test_leaf_values_include_learning_rate():
    # Without boost_from_average, the first tree's leaves are the learning
    # rate times the same Newton steps.
    X, y = training_data()
    first_leaves = []
    for learning_rate in (0.01, 1.0):
        params = {"learning_rate": learning_rate, "boost_from_average": False}
        model = lgb.LGBMRegressor(n_estimators=1, verbose=-1, **params).fit(X, y)
        first_leaves.append(leaf_values(parse_lightgbm(model), 0))
    np.testing.assert_allclose(first_leaves[1] / first_leaves[0], 100.0, rtol=1e-12)


def test_init_score_in_first_trees():
    # boost_from_average adds the mean of y to the first tree's leaves: the
    # base offset stays zero.
    X, y = training_data()
    model = lgb.LGBMRegressor(**BASE_PARAMS).fit(X, y + 100.0, categorical_feature=[1])
    table = parse_lightgbm(model)
    assert (leaf_values(table, 0) > 90).all()
    for tree in range(1, table.n_trees):
        assert (np.abs(leaf_values(table, tree)) < 10).all()


@pytest.mark.parametrize(
    ("params", "raw_output", "output_names"),
    [
        ({"objective": "binary"}, "log-odds", (1,)),
        ({"objective": "binary", "sigmoid": 2.0}, "margin", (1,)),
        ({"objective": "multiclass", "num_class": 3}, "margin", (0, 1, 2)),
        ({"objective": "multiclassova", "num_class": 3}, "log-odds", (0, 1, 2)),
        ({"objective": "tweedie"}, "log", ("target",)),
        ({"objective": "huber"}, "value", ("target",)),
    ],
)
def test_booster_outputs(params, raw_output, output_names):
    # A raw Booster knows no class labels: LightGBM's are 0..num_class-1.
    X, y = training_data()
    label = np.digitize(y, [1.0, 2.5])
    if params["objective"] == "binary":
        label = label > 0
    elif params["objective"] in ("tweedie", "huber"):
        label = np.exp(y / 3)
    booster = lgb.train(
        {"verbose": -1, "num_leaves": 4, **params}, lgb.Dataset(X, label), 3
    )
    table = parse_lightgbm(booster)
    assert (table.raw_output, table.output_names) == (raw_output, output_names)
    assert table.n_trees == 3 * len(output_names)
    assert_close(predict_ensemble(table, X), raw_output_of(booster, X), RTOL)


def test_random_forest_averages_iterations():
    # In rf mode, predict averages the trees (then applies the link);
    # LightGBM's raw_score and pred_contrib return the sum instead.
    X, y = training_data()
    model = lgb.LGBMClassifier(
        boosting_type="rf", subsample=0.7, subsample_freq=1, **BASE_PARAMS
    ).fit(X, y > 1.5, categorical_feature=[1])
    explainer = TreeExplainer(model).fit()
    rows = prediction_rows(explainer.ensemble_, X)
    n_iterations = model.booster_.current_iteration()
    raw = model.predict(rows, raw_score=True) / n_iterations
    assert_close(explainer.raw_predict(rows), raw, RTOL)
    np.testing.assert_allclose(
        1 / (1 + np.exp(-explainer.raw_predict(rows))), model.predict_proba(rows)[:, 1]
    )
    contrib = model.predict(rows, pred_contrib=True) / n_iterations
    phi = explainer.explain(rows).to_numpy()
    assert_close(phi, contrib[:, :-1], SHAP_RTOL, np.abs(raw).max())
    assert_close(
        explainer.expected_value_, contrib[0, -1], SHAP_RTOL, np.abs(raw).max()
    )


def test_linear_trees_raise():
    X, y = training_data()
    model = lgb.LGBMRegressor(linear_tree=True, n_estimators=2, verbose=-1).fit(
        np.nan_to_num(X), y
    )
    with pytest.raises(TypeError, match="linear trees"):
        TreeExplainer(model).fit()


def test_pandas_categorical():
    # Categorical columns enter LightGBM as their pandas codes; the explainer
    # matches columns by name.
    X, y = training_data()
    frame = pd.DataFrame(
        {
            "x": X[:, 0],
            "colour": pd.Categorical.from_codes(
                np.nan_to_num(X[:, 1], nan=-1).astype(int) % 4,
                ["red", "green", "blue", "grey"],
            ),
            "z": X[:, 2],
        }
    )
    target = y + (frame["colour"] == "green")
    model = lgb.LGBMRegressor(**BASE_PARAMS).fit(frame, target)
    explainer = TreeExplainer(model).fit()
    assert list(explainer.feature_names_in_) == ["x", "colour", "z"]
    assert explainer.ensemble_.is_categorical.any()
    phi = explainer.explain(frame[["z", "colour", "x"]])
    expected = model.predict(frame, pred_contrib=True)
    assert_close(phi[["x", "colour", "z"]].to_numpy(), expected[:, :-1], SHAP_RTOL)

    # The same values with the categories listed in another order, and an
    # unknown one: LightGBM recodes them to its training categories (unknown
    # ones are missing), and so does the explainer.
    recoded = frame.copy()
    recoded["colour"] = recoded["colour"].cat.set_categories(
        ["grey", "blue", "green", "red", "violet"]
    )
    recoded.loc[:4, "colour"] = "violet"
    np.testing.assert_allclose(
        explainer.raw_predict(recoded),
        model.predict(recoded, raw_score=True),
        rtol=1e-12,  # the same leaves, summed in the same order
    )


# ---------------------------------------------------------------------------
# Hand-written one-split models: each routing rule on its own.

_MODEL_STRING = """tree
version=v4
num_class=1
num_tree_per_iteration=1
label_index=0
max_feature_idx=0
objective=regression
feature_names=Column_0
feature_infos=[-3:3]
tree_sizes=0

Tree=0
num_leaves=2
num_cat={num_cat}
split_feature=0
split_gain=1
threshold={threshold}
decision_type={decision_type}
left_child=-1
right_child=-2
leaf_value=1 2
leaf_weight=30 70
leaf_count=30 70
internal_value=0
internal_weight=100
internal_count=100
{categories}is_linear=0
shrinkage=1


end of trees

pandas_categorical:null
"""

MISSING_TYPES = {"None": 0, "Zero": 1, "NaN": 2}


def one_split(threshold=0.0, missing_type="None", default_left=False, left=None):
    """A one-split Booster: leaf value 1 on the left, 2 on the right."""
    decision_type = (MISSING_TYPES[missing_type] << 2) | (int(default_left) << 1)
    categories = ""
    if left is not None:
        words = np.zeros(max(left) // 32 + 1, dtype=np.uint32)
        for c in left:
            words[c // 32] |= np.uint32(1 << (c % 32))
        categories = (
            f"cat_boundaries=0 {len(words)}\n"
            f"cat_threshold={' '.join(str(w) for w in words)}\n"
        )
        decision_type |= 1
        threshold = 0
    return lgb.Booster(
        model_str=_MODEL_STRING.format(
            num_cat=int(left is not None),
            threshold=repr(float(threshold)),
            decision_type=decision_type,
            categories=categories,
        )
    )


NUMERICAL_VALUES = [
    np.nan, 0.0, -0.0, 1e-36, -1e-36, 1e-35, -1e-35, 1e-34, -1e-34, K_ZERO,
    -K_ZERO, np.nextafter(K_ZERO, 1), -np.nextafter(K_ZERO, 1), 0.5,
    np.nextafter(0.5, 0), np.nextafter(0.5, 1), -0.5, np.nextafter(-0.5, 0),
    np.nextafter(-0.5, -1), 1e300, -1e300, np.inf, -np.inf,
]  # fmt: skip
THRESHOLDS = [0.5, -0.5, 0.0, K_ZERO, -K_ZERO, 1e-36, -1e-36, 1e-35, 1e-34, -1e-34]


@pytest.mark.parametrize("default_left", [False, True])
@pytest.mark.parametrize("missing_type", list(MISSING_TYPES))
def test_numerical_split_rules(missing_type, default_left):
    # NaN -> 0 (types None, Zero); |x| <= K_ZERO -> 0 before any split (so a
    # threshold in [-K_ZERO, K_ZERO) routes tiny values as 0); Zero: zeros to
    # the default side; NaN: NaN to the default side; else x <= threshold.
    X = np.array(NUMERICAL_VALUES)[:, None]
    for threshold in THRESHOLDS:
        booster = one_split(threshold, missing_type, default_left)
        table = parse_lightgbm(booster)
        expected = booster.predict(X, raw_score=True)
        np.testing.assert_array_equal(predict_ensemble(table, X)[:, 0], expected)


def test_tiny_values_routes_have_teeth():
    # Without the threshold shift, a split at 0 would send 1e-36 right; LightGBM
    # reads it as 0 and sends it left.
    booster = one_split(0.0, "NaN")
    table = parse_lightgbm(booster)
    assert table.threshold[0] == K_ZERO
    unshifted = dataclasses.replace(table, threshold=np.zeros_like(table.threshold))
    X = np.array([[1e-36]])
    assert booster.predict(X, raw_score=True)[0] == 1.0
    assert predict_ensemble(table, X)[0, 0] == 1.0
    assert predict_ensemble(unshifted, X)[0, 0] == 2.0


CATEGORY_VALUES = [
    *range(-3, 70), 254, 255, 256, 257, 1e9, -1e9, 2.0**31, -0.0, np.nan,
    np.inf, -np.inf,
]  # fmt: skip


@pytest.mark.parametrize("missing_type", list(MISSING_TYPES))
@pytest.mark.parametrize("left", [[0], [1, 4, 6], [0, 2, 31, 32, 64, 255]])
def test_categorical_split_rules(left, missing_type):
    # Listed categories go left; NaN, negative, unlisted and huge codes go
    # right, whatever the missing type and default side.
    X = np.array(CATEGORY_VALUES, dtype=float)[:, None]
    for default_left in (False, True):
        booster = one_split(
            missing_type=missing_type, default_left=default_left, left=left
        )
        table = parse_lightgbm(booster)
        assert table.is_categorical[0] == 1
        expected = booster.predict(X, raw_score=True)
        np.testing.assert_array_equal(predict_ensemble(table, X)[:, 0], expected)


def test_categories_above_255_raise():
    with pytest.raises(TypeError, match="category 300"):
        parse_lightgbm(one_split(left=[3, 300]))


def test_non_integral_categories():
    # LightGBM truncates category codes (int(2.5) = 2, int(-0.5) = 0); the
    # explainer does too before routing.
    booster = one_split(left=[0, 2])
    X = np.array([[2.5], [-0.5], [0.99], [1e-36]])
    np.testing.assert_array_equal(
        TreeExplainer(booster).fit().raw_predict(X),
        booster.predict(X, raw_score=True),
    )


def test_zero_as_missing_bound():
    booster = one_split(0.5, "Zero", default_left=False)
    X = np.array([[K_ZERO], [-K_ZERO]])
    np.testing.assert_array_equal(
        predict_ensemble(parse_lightgbm(booster), X)[:, 0],
        booster.predict(X, raw_score=True),
    )
