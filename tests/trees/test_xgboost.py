"""XGBoost models against their parsed TreeEnsemble and TreeExplainer.

For each kind of model (objective, wrapper or raw Booster, early stopping,
DART, categorical splits, several outputs): the parsed trees predict XGBoost's
margin, also on rows placed exactly on split conditions, on NaN, ±inf and
unseen category codes; the Shapley values agree with XGBoost's own
``pred_contribs`` (and shap, which delegates to it), with the independent
oracles of ``naive`` and sum to the raw output.

The models are small (4 features, depth 3, a few trees): the brute-force
oracle enumerates all 2**4 coalitions.
"""

import json
import subprocess
import sys
import warnings
from dataclasses import dataclass
from functools import cache

import numpy as np
import pandas as pd
import pytest
from naive import (
    path_dependent_shapley,
    predict_ensemble,
    reached_nodes,
    route_left,
    tree_shapley_by_paths,
)

from skshapley import TreeExplainer

xgb = pytest.importorskip("xgboost")

from skshapley.trees._readers.xgboost.model import parse_xgboost  # noqa: E402

XGBOOST_VERSION = tuple(int(part) for part in xgb.__version__.split(".")[:2])

# float32 machine epsilon (2**-23): XGBoost reads inputs, stores leaves and
# sums the margin in float32.
EPS32 = float(np.finfo(np.float32).eps)

# XGBoost's TreeSHAP (src/predictor/treeshap.cc) runs in float32: per path it
# extends and unwinds the path weights (O(depth**2) products and divisions)
# and every contribution sums over trees and paths. With depth 3 and <= 30
# trees that is a few hundred float32 roundings of the contributions' scale
# at worst (measured: <= 3e-7 of max |contribution|); 1e-5 of the largest
# contribution still fails at any wrong cover, route or leaf value (errors of
# 1e-3 and more).
CONTRIBS_RTOL = 1e-5

# Our kernel against the naive float64 oracles, and efficiency of our own
# values against our own raw output: float64 roundings only (measured
# <= 1e-15 of the scale).
FLOAT64_RTOL = 1e-10

N_FEATURES = 4
CATEGORIES = list("uvwxyz")  # feature 3 of the categorical model
UNSEEN_CODES = [6, 7, 31, 32, 200, 255, 256, 1000, 16777215, 3e7, -1, -3, -0.0]


def margin_atol(table):
    """How far XGBoost's float32 margin can be from the exact sum.

    XGBoost adds the base score and one float32 leaf per tree (times a
    float32 weight for DART) in float32: each of these <= 2 roundings per
    tree is at most half an ulp of a running sum, itself at most the sum of
    the magnitudes of the base score and every tree's largest leaf.
    """
    tree_of_node = np.repeat(
        np.arange(table.n_trees),
        np.diff(np.append(table.roots, len(table.feature))),
    )
    largest_leaf = np.zeros(table.n_trees)
    np.maximum.at(largest_leaf, tree_of_node, np.abs(table.value).max(axis=1))
    scale = np.abs(table.base_offset).max() + largest_leaf.sum()
    return (table.n_trees + 1) * EPS32 * scale


def training_data(n=200, seed=0):
    """Feature 0 has NaN in training; feature 3 takes 6 integer values."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, N_FEATURES))
    X[:, 3] = rng.integers(0, len(CATEGORIES), n)
    X[rng.random(n) < 0.1, 0] = np.nan
    y = (
        np.nan_to_num(X[:, 0], nan=1.5)
        + X[:, 1] ** 2
        + 0.5 * X[:, 2]
        + np.isin(X[:, 3], [1, 4])
    )
    return X, y


@dataclass
class Case:
    model: object
    X: np.ndarray  # rows as the table reads them (category codes)
    raw_output: str
    output_names: tuple


def categorical_frame(X):
    frame = pd.DataFrame(X, columns=[f"f{j}" for j in range(N_FEATURES)])
    codes = np.where(np.isnan(X[:, 3]), -1, X[:, 3]).astype(int)
    frame["f3"] = pd.Categorical.from_codes(codes, categories=CATEGORIES)
    return frame


@cache
def fitted(kind):
    X, y = training_data()
    params = {"n_estimators": 8, "max_depth": 3, "random_state": 0, "n_jobs": 1}
    if kind == "regressor":
        model = xgb.XGBRegressor(**params).fit(X, y)
        return Case(model, X, "value", ("target",))
    if kind == "binary":
        model = xgb.XGBClassifier(**params).fit(X, y > 1.5)
        return Case(model, X, "log-odds", (1,))
    if kind == "multiclass":
        model = xgb.XGBClassifier(**params).fit(X, np.digitize(y, [1, 2]))
        return Case(model, X, "margin", (0, 1, 2))
    if kind == "ranker":
        model = xgb.XGBRanker(objective="rank:pairwise", **params).fit(
            X, np.digitize(y, [1, 2]), qid=np.repeat(np.arange(20), 10)
        )
        return Case(model, X, "ranking score", ("target",))
    if kind == "poisson":
        model = xgb.XGBRegressor(objective="count:poisson", **params).fit(
            X, np.exp(y / 3)
        )
        return Case(model, X, "log", ("target",))
    if kind == "booster":
        data = xgb.DMatrix(X, label=y > 1.5, feature_names=list("abcd"))
        booster = xgb.train(
            {"objective": "binary:logistic", "max_depth": 3, "nthread": 1},
            data,
            num_boost_round=8,
        )
        return Case(booster, X, "log-odds", ("target",))
    if kind == "early_stopping":
        model = xgb.XGBRegressor(
            n_estimators=100,
            max_depth=3,
            learning_rate=0.9,
            early_stopping_rounds=2,
            n_jobs=1,
        ).fit(X[:150], y[:150], eval_set=[(X[150:], y[150:])], verbose=False)
        return Case(model, X, "value", ("target",))
    if kind == "dart":
        # Deprecated from XGBoost 3.3 (the tree booster with the dropout
        # parameters below), accepted by every release.
        model = xgb.XGBRegressor(
            booster="dart", rate_drop=0.5, skip_drop=0.0, **params
        ).fit(X, y)
        return Case(model, X, "value", ("target",))
    if kind == "dart_multiclass":
        model = xgb.XGBClassifier(
            booster="dart", rate_drop=0.5, skip_drop=0.0, **params
        ).fit(X, np.digitize(y, [1, 2]))
        return Case(model, X, "margin", (0, 1, 2))
    if kind == "dropout":
        # DART as XGBoost >= 3.3 spells it: the tree booster with dropout
        # (weights saved inside the trees' model from 3.4). XGBoost 3.2 and
        # older ignore these parameters and train a plain tree booster.
        model = xgb.XGBClassifier(rate_drop=0.5, skip_drop=0.0, **params).fit(
            X, y > 1.5
        )
        return Case(model, X, "log-odds", (1,))
    if kind == "categorical":
        model = xgb.XGBRegressor(
            enable_categorical=True, max_cat_to_onehot=1, **params
        ).fit(categorical_frame(X), y)
        return Case(model, X, "value", ("target",))
    if kind == "random_forest":
        # num_parallel_tree = 4 trees per class and round: tree_info is
        # [0, 0, 0, 0, 1, 1, 1, 1, 2, 2, 2, 2], not round-robin.
        model = xgb.XGBRFClassifier(n_estimators=4, max_depth=3, n_jobs=1).fit(
            X, np.digitize(y, [1, 2])
        )
        return Case(model, X, "margin", (0, 1, 2))
    if kind == "multi_target":
        model = xgb.XGBRegressor(**params).fit(X, np.c_[y, np.sin(3 * X[:, 2])])
        return Case(model, X, "value", ("target 0", "target 1"))
    raise ValueError(kind)


KINDS = [
    "regressor",
    "binary",
    "multiclass",
    "ranker",
    "poisson",
    "booster",
    "early_stopping",
    "dart",
    "dart_multiclass",
    "dropout",
    "categorical",
    "random_forest",
    "multi_target",
]


def booster_of(model):
    return model if isinstance(model, xgb.Booster) else model.get_booster()


def margin(model, X):
    """XGBoost's default margin, shape (n_samples, n_outputs).

    ``inplace_predict`` (what the wrappers' ``predict`` uses) accepts ±inf,
    a DMatrix does not; the Booster's default uses every tree.
    """
    if isinstance(model, xgb.Booster):
        out = model.inplace_predict(X, predict_type="margin")
    else:
        out = model.predict(X, output_margin=True)
    return np.asarray(out, dtype=np.float64).reshape(len(X), -1)


def contributions(model, X):
    """``pred_contribs=True`` with the trees of the default prediction.

    Shape (n_samples, n_outputs, n_features + 1); the last column is the bias.
    """
    booster = booster_of(model)
    best = booster.attr("best_iteration")
    iteration_range = (
        (0, int(best) + 1)
        if best is not None and not isinstance(model, xgb.Booster)
        else (0, 0)
    )
    data = xgb.DMatrix(
        X,
        feature_names=booster.feature_names,
        feature_types=booster.feature_types,
        enable_categorical=True,
    )
    out = booster.predict(data, pred_contribs=True, iteration_range=iteration_range)
    return np.asarray(out, dtype=np.float64).reshape(len(X), -1, N_FEATURES + 1)


def values_array(explainer_, phi):
    """(n_samples, n_outputs, n_features) from explain's DataFrame."""
    return phi.to_numpy().reshape(len(phi), len(explainer_.output_names_), -1)


def rows_on_conditions(table, X):
    """Rows exactly on, one float32 below and above each split condition.

    XGBoost goes left iff ``float32(x) < condition``; the table stores the
    float32 below the condition. Also float64 values a quarter of an ulp
    inside the gap, which the float32 cast rounds onto either side.
    """
    reaching = reached_nodes(table, X)
    rows = []
    for node, reached in reaching.items():
        if table.is_categorical[node]:
            continue
        below = np.float32(table.threshold[node])
        condition = np.nextafter(below, np.float32(np.inf))
        gap = float(condition) - float(below)
        values = (
            condition,
            below,
            np.nextafter(condition, np.float32(np.inf)),
            float(condition) - gap / 4,  # rounds to the condition: right
            float(below) + gap / 4,  # rounds to below: left
        )
        for value in values:
            row = X[reached[0]].copy()
            row[table.feature[node]] = value
            rows.append(row)
    return np.array(rows)


def prediction_rows(table, X):
    """Training rows, rows on conditions, NaN, ±inf and unseen categories."""
    rng = np.random.default_rng(1)
    base = X[rng.choice(len(X), 12)]
    missing = np.repeat(base, N_FEATURES, axis=0)
    missing[np.arange(len(missing)), np.tile(np.arange(N_FEATURES), 12)] = np.nan
    infinite = np.repeat(base[:6], 3, axis=0)
    infinite[:, [0, 1, 2]] = np.tile([[np.inf], [-np.inf], [1e39]], (6, 1))
    unseen = np.repeat(base[:2], len(UNSEEN_CODES), axis=0)
    unseen[:, 3] = np.tile(UNSEEN_CODES, 2)
    return np.vstack([X, rows_on_conditions(table, X), missing, infinite, unseen])


# 1e39 overflows float32 to inf, as XGBoost's cast does.
@pytest.mark.filterwarnings("ignore:overflow encountered in cast:RuntimeWarning")
@pytest.mark.parametrize("kind", KINDS)
def test_predictions_match_margin(kind):
    case = fitted(kind)
    table = parse_xgboost(case.model)
    assert table.raw_output == case.raw_output
    assert table.output_names == case.output_names
    assert table.n_features == N_FEATURES
    assert table.float32_inputs
    assert table.allow_nan
    assert table.allow_inf
    assert bool(table.is_categorical.any()) == (kind == "categorical")
    X = prediction_rows(table, case.X)
    expected = margin(case.model, X)
    actual = predict_ensemble(table, X)
    np.testing.assert_allclose(actual, expected, rtol=0, atol=margin_atol(table))


@pytest.mark.parametrize("kind", KINDS)
def test_values_match_pred_contribs_and_oracles(kind):
    case = fitted(kind)
    explainer_ = TreeExplainer(case.model).fit()
    table = explainer_.ensemble_
    X = case.X[::4]
    phi = values_array(explainer_, explainer_.explain(X))

    # XGBoost's own TreeSHAP (float32).
    expected = contributions(case.model, X)
    scale = np.abs(expected).max()
    np.testing.assert_allclose(
        phi, expected[..., :-1], rtol=0, atol=CONTRIBS_RTOL * scale
    )
    np.testing.assert_allclose(
        np.atleast_1d(explainer_.expected_value_),
        expected[0, :, -1],
        rtol=0,
        atol=CONTRIBS_RTOL * scale,
    )

    # Independent float64 oracles: one product game per leaf with NumPy's
    # Gauss-Legendre rule, and brute force over all 2**4 coalitions.
    for i in range(3):
        by_paths = tree_shapley_by_paths(table, X[i]).T
        np.testing.assert_allclose(phi[i], by_paths, rtol=0, atol=FLOAT64_RTOL * scale)
    by_coalitions = path_dependent_shapley(table, X[0]).T
    np.testing.assert_allclose(phi[0], by_coalitions, rtol=0, atol=FLOAT64_RTOL * scale)

    # Efficiency: exact against our raw output, float32-close to XGBoost's.
    raw = explainer_.raw_predict(X).reshape(len(X), -1)
    total = phi.sum(axis=2) + np.atleast_1d(explainer_.expected_value_)
    np.testing.assert_allclose(
        total, raw, rtol=0, atol=FLOAT64_RTOL * np.abs(raw).max()
    )
    np.testing.assert_allclose(
        total, margin(case.model, X), rtol=0, atol=margin_atol(table)
    )


@pytest.mark.parametrize("kind", KINDS)
def test_values_match_shap(kind):
    # shap's TreeExplainer hands XGBoost models to XGBoost's pred_contribs,
    # so this is the same float32 reference as above, reached through shap
    # (which also honours best_iteration).
    shap = pytest.importorskip("shap")
    case = fitted(kind)
    explainer_ = TreeExplainer(case.model).fit()
    X = case.X[::8]
    phi = values_array(explainer_, explainer_.explain(X))
    shap_input = categorical_frame(X) if kind == "categorical" else X
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        reference = shap.TreeExplainer(
            case.model, feature_perturbation="tree_path_dependent"
        )
        expected = np.asarray(reference.shap_values(shap_input))
    expected = expected.reshape(len(X), N_FEATURES, -1).transpose(0, 2, 1)
    np.testing.assert_allclose(
        phi, expected, rtol=0, atol=CONTRIBS_RTOL * np.abs(expected).max()
    )


def test_early_stopping_uses_best_iteration():
    # The wrapper's predict uses best_iteration + 1 iterations; its Booster's
    # predict uses every tree.
    model = fitted("early_stopping").model
    booster = model.get_booster()
    assert model.best_iteration + 1 < booster.num_boosted_rounds()
    assert parse_xgboost(model).n_trees == model.best_iteration + 1
    full = parse_xgboost(booster)
    assert full.n_trees == booster.num_boosted_rounds()
    X = fitted("early_stopping").X
    np.testing.assert_allclose(
        predict_ensemble(full, X), margin(booster, X), rtol=0, atol=margin_atol(full)
    )


@pytest.mark.parametrize(
    ("max_cat_to_onehot", "split"), [(1, "partition"), (64, "one-hot")]
)
def test_categories_listed_in_a_node_go_right(max_cat_to_onehot, split):
    # A one-split model on a categorical feature: XGBoost sends the
    # categories the node lists to its right child (unlisted, negative and
    # too large codes go left); the table swaps the children so that its
    # bitset, which goes left, is that list.
    rng = np.random.default_rng(2)
    codes = rng.integers(0, 6, 300)
    X = np.c_[codes, rng.normal(size=300)].astype(float)
    model = xgb.XGBRegressor(
        n_estimators=1,
        max_depth=1,
        n_jobs=1,
        enable_categorical=True,
        max_cat_to_onehot=max_cat_to_onehot,
        feature_types=["c", "q"],
    ).fit(X, np.isin(codes, [1, 2, 4]) + 0.1 * X[:, 1])
    booster = model.get_booster()
    tree_json = json.loads(booster.save_raw("json"))["learner"]["gradient_booster"][
        "model"
    ]["trees"][0]
    assert tree_json["split_type"][0] == 1
    listed = tree_json["categories"]
    assert (len(listed) == 1) == (split == "one-hot")

    table = parse_xgboost(model)
    assert [c for c in range(256) if route_left(table, 0, float(c))] == sorted(listed)
    rows = np.c_[[-2, -1, -0.0, *range(9), 255, 256, np.nan], np.zeros(15)]
    leaves = model.apply(rows).reshape(len(rows), -1)[:, 0]
    right = tree_json["right_children"][0]
    goes_right = np.isin(rows[:, 0], listed) | (
        np.isnan(rows[:, 0]) & (tree_json["default_left"][0] == 0)
    )
    np.testing.assert_array_equal(leaves == right, goes_right)
    np.testing.assert_allclose(
        predict_ensemble(table, rows), margin(model, rows), atol=margin_atol(table)
    )


def test_dataframe_categories_are_recoded_by_value():
    # XGBoost >= 3.1 stores the training categories and re-codes prediction
    # frames by category value: the codes the table reads are positions in
    # the training categories, whatever the frame's own category order.
    case = fitted("categorical")
    table = parse_xgboost(case.model)
    assert table.category_levels == (None, None, None, tuple(CATEGORIES))
    X = case.X[:40]
    frame = categorical_frame(X)
    frame["f3"] = frame["f3"].cat.reorder_categories(CATEGORIES[::-1])
    assert not np.array_equal(frame["f3"].cat.codes, np.nan_to_num(X[:, 3], nan=-1))
    np.testing.assert_allclose(
        predict_ensemble(table, X),
        margin(case.model, frame),
        rtol=0,
        atol=margin_atol(table),
    )


def test_explain_a_frame_with_other_categories():
    # Like XGBoost, the explainer re-codes a frame's categorical columns by
    # value against the training categories, whatever the frame's own
    # category list: reversed, or inferred from the values present.
    case = fitted("categorical")
    explainer_ = TreeExplainer(case.model).fit()
    assert explainer_.ensemble_.category_levels == (None, None, None, (*CATEGORIES,))
    X = case.X[case.X[:, 3] != 0][:20]  # no "u": inferred codes shift
    expected = explainer_.explain(X).to_numpy()
    reversed_ = categorical_frame(X)
    reversed_["f3"] = reversed_["f3"].cat.reorder_categories(CATEGORIES[::-1])
    inferred = categorical_frame(X)
    inferred["f3"] = pd.Categorical(inferred["f3"].astype(object))
    assert len(inferred["f3"].cat.categories) < len(CATEGORIES)
    for frame in (reversed_, inferred):
        np.testing.assert_allclose(
            margin(case.model, frame), margin(case.model, X), rtol=0, atol=0
        )
        actual = explainer_.explain(frame).to_numpy()
        np.testing.assert_allclose(actual, expected, rtol=0, atol=0)


def test_base_score_is_in_output_space():
    # base_score '[p]' is a probability for logistic objectives: the margin's
    # constant is its logit (clamped to [1e-6, 1 - 1e-6] like XGBoost does).
    X, y = training_data()
    for base_score in (0.25, 0.0, 1.0):
        model = xgb.XGBClassifier(
            n_estimators=2, max_depth=2, base_score=base_score, n_jobs=1
        ).fit(X, y > 1.5)
        table = parse_xgboost(model)
        # XGBoost's ProbToMargin, in float32: -log(1 / p - 1).
        p = np.clip(np.float32(base_score), np.float32(1e-6), np.float32(1 - 1e-6))
        logit = -np.log(np.float32(1) / p - np.float32(1))
        np.testing.assert_allclose(table.base_offset, logit, rtol=1e-6)
        np.testing.assert_allclose(
            predict_ensemble(table, X), margin(model, X), atol=margin_atol(table)
        )


@pytest.mark.parametrize(
    "objective",
    [
        "reg:squarederror",
        "reg:squaredlogerror",
        "reg:pseudohubererror",
        "reg:absoluteerror",
        "reg:quantileerror",
        "reg:logistic",
        "binary:logitraw",
        "binary:hinge",
        "reg:gamma",
        "reg:tweedie",
        "survival:cox",
        "survival:aft",
        "multi:softmax",
        "rank:ndcg",
        "rank:map",
        # XGBoost >= 3.3 only: two expectiles, two targets whose base scores
        # are linked to the margin through softplus increments.
        *(["reg:expectileerror"] if XGBOOST_VERSION >= (3, 3) else []),
    ],
)
def test_every_objective_link(objective):
    X, y = training_data()
    params = {"objective": objective, "max_depth": 2, "nthread": 1}
    label = {"reg:logistic": y > 1.5, "binary:logitraw": y > 1.5}.get(
        objective, np.exp(y / 3)
    )
    if objective.startswith(("binary:", "rank:map")):
        label = y > 1.5
    if objective.startswith(("multi:", "rank:ndcg")):
        label = np.digitize(y, [1, 2])
    if objective == "multi:softmax":
        params["num_class"] = 3
    if objective == "reg:quantileerror":
        params["quantile_alpha"] = 0.3
    if objective == "reg:expectileerror":
        params["expectile_alpha"] = [0.2, 0.7]
    data = xgb.DMatrix(X, label=label)
    if objective.startswith("rank:"):
        data.set_group([10] * 20)
    if objective == "survival:aft":
        data = xgb.DMatrix(X)
        data.set_float_info("label_lower_bound", np.exp(y / 3))
        data.set_float_info("label_upper_bound", np.exp(y / 3))
    booster = xgb.train(params, data, num_boost_round=2)
    table = parse_xgboost(booster)
    np.testing.assert_allclose(
        predict_ensemble(table, X), margin(booster, X), rtol=0, atol=margin_atol(table)
    )


def test_pruned_trees_drop_deleted_nodes():
    # Pruning an existing model leaves deleted nodes in the tree arrays;
    # only the nodes reachable from the root are parsed.
    X, y = training_data()
    data = xgb.DMatrix(X, label=y)
    booster = xgb.train({"max_depth": 4, "nthread": 1}, data, num_boost_round=3)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")  # "manually specified the updater"
        pruned = xgb.train(
            {"process_type": "update", "updater": "prune", "gamma": 5.0, "nthread": 1},
            data,
            num_boost_round=3,
            xgb_model=booster,
        )
    table = parse_xgboost(pruned)
    assert len(table.feature) < len(parse_xgboost(booster).feature)
    np.testing.assert_allclose(
        predict_ensemble(table, X), margin(pruned, X), rtol=0, atol=margin_atol(table)
    )
    phi = np.array([tree_shapley_by_paths(table, x)[:, 0] for x in X[:5]])
    expected = contributions(pruned, X[:5])[:, 0]
    np.testing.assert_allclose(
        phi, expected[:, :-1], rtol=0, atol=CONTRIBS_RTOL * np.abs(expected).max()
    )


@pytest.mark.parametrize(
    ("params", "multi_output", "match"),
    [
        ({"booster": "gblinear"}, False, "gblinear"),
        ({"multi_strategy": "multi_output_tree"}, True, "multi-output trees"),
    ],
)
def test_unsupported_models_raise(params, multi_output, match):
    X, y = training_data()
    target = np.c_[y, -y] if multi_output else y
    model = xgb.XGBRegressor(n_estimators=2, n_jobs=1, **params).fit(X, target)
    with pytest.raises(TypeError, match=match):
        TreeExplainer(model).fit()


@pytest.mark.parametrize("missing", [0.0, -999.0, np.nan])
def test_missing_value_is_recorded(missing):
    # Inputs equal to the wrapper's `missing` are missing values; the table
    # routes them as NaN (a Booster's missing value is NaN).
    X, y = training_data()
    model = xgb.XGBRegressor(n_estimators=2, n_jobs=1, missing=missing).fit(X, y)
    np.testing.assert_equal(parse_xgboost(model).missing_value, missing)
    assert np.isnan(parse_xgboost(model.get_booster()).missing_value)


def test_large_categories_raise():
    X, y = training_data()
    X[:, 3] = X[:, 3] * 100  # codes up to 500
    model = xgb.XGBRegressor(
        n_estimators=2,
        max_depth=2,
        n_jobs=1,
        enable_categorical=True,
        max_cat_to_onehot=1,
    )
    model.set_params(feature_types=["q", "q", "q", "c"]).fit(X, y + (X[:, 3] == 400))
    with pytest.raises(TypeError, match=r"categories 0\.\.255"):
        parse_xgboost(model)


def test_feature_names_are_the_boosters():
    # The wrappers' feature_names_in_ are their Booster's feature_names.
    named = TreeExplainer(fitted("categorical").model).fit()
    assert list(named.feature_names_in_) == ["f0", "f1", "f2", "f3"]
    unnamed = TreeExplainer(fitted("regressor").model).fit()
    assert list(unnamed.feature_names_in_) == ["x0", "x1", "x2", "x3"]
    booster = TreeExplainer(fitted("booster").model).fit()
    assert list(booster.feature_names_in_) == ["a", "b", "c", "d"]


def test_explain_a_frame_with_the_training_categories():
    # A frame with the training categories (same order) enters as its codes.
    case = fitted("categorical")
    explainer_ = TreeExplainer(case.model).fit()
    frame = categorical_frame(case.X[:20])
    np.testing.assert_allclose(
        explainer_.explain(frame).to_numpy(),
        explainer_.explain(case.X[:20]).to_numpy(),
        rtol=0,
        atol=0,
    )


def test_importing_skshapley_does_not_import_xgboost():
    code = (
        "import sys, skshapley, skshapley.trees._readers.dispatch; "
        "assert 'xgboost' not in sys.modules"
    )
    subprocess.run([sys.executable, "-c", code], check=True)


def test_non_integral_category_codes_are_floored_like_xgboost():
    # XGBoost looks a category up as floor(float32(x)): 2.9999999999 rounds
    # to 3 in float32 first, -0.5 floors to -1 (invalid, the unlisted side).
    case = fitted("categorical")
    explainer_ = TreeExplainer(case.model).fit()
    X = np.repeat(case.X[:1], 6, axis=0)
    X[:, 3] = [2.5, 2.9999999999, 0.999999, -0.5, 4.0000001, 5.5]
    np.testing.assert_allclose(
        explainer_.raw_predict(X),
        margin(case.model, X)[:, 0],
        rtol=0,
        atol=margin_atol(explainer_.ensemble_),
    )


def test_unknown_dataframe_categories_are_refused_like_xgboost():
    case = fitted("categorical")
    explainer_ = TreeExplainer(case.model).fit()
    frame = categorical_frame(case.X[:5])
    frame["f3"] = frame["f3"].cat.add_categories(["new"])
    frame.loc[0, "f3"] = "new"
    with pytest.raises(ValueError, match=r"'f3'.*did not see in training.*new"):
        explainer_.explain(frame)
