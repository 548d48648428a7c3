"""scikit-learn's tree models through TreeExplainer, model by model.

For every supported scikit-learn tree model (and each loss, link and number
of outputs): the parsed trees predict what the model predicts, also on rows
placed exactly on split thresholds and on NaN; the Shapley values agree with
shap, with brute-force enumeration of all coalitions, and sum to the model's
raw output.

The models are small (5 features, depth <= 4, a few trees), so that the
brute-force oracle, which enumerates all 2**5 coalitions, stays fast.
"""

import dataclasses
from functools import cache

import numpy as np
import pytest
from limited import run_limited
from naive import path_dependent_shapley, path_dependent_value, predict_ensemble
from sklearn.base import clone, is_classifier
from sklearn.ensemble import (
    ExtraTreesClassifier,
    ExtraTreesRegressor,
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.tree import (
    DecisionTreeClassifier,
    DecisionTreeRegressor,
    ExtraTreeClassifier,
    ExtraTreeRegressor,
)

from skshapley import TreeExplainer

# The parsed trees add the same leaf values as scikit-learn, only scaled
# before rather than after summing (forests divide each leaf by the number of
# trees) and with boosting's initial prediction recovered by a subtraction:
# a few roundings of the output's scale. 1e-12 relative to the largest output
# leaves room for those, never for a leaf reached by a wrong route (a wrong
# leaf is off by a leaf value, ~1e-2 of the scale or more).
CONVERSION_RTOL = 1e-12

# shap's recursion divides by cover ratios ("zero fractions") and unwinds
# them; ratios of very unequal covers can cost it a few digits (measured
# here: <= 7e-16 of max |phi|). 1e-9 still fails at any wrong split, cover
# or leaf value (errors of 1e-3 and more).
SHAP_RTOL = 1e-9

# The oracle enumerates 2**5 coalitions in float64, with weights
# |S|!(d-|S|-1)!/d! and differences of values of the output's size: each
# phi carries ~2**5 roundings of the output's scale, ~1e-14 of it.
BRUTE_FORCE_RTOL = 1e-12

# Efficiency is exact for the exact quadrature rule, up to rounding in the
# kernel's sums over trees (<= 15 here), paths and quadrature points, each
# ~1e-16 of the output's scale; 1e-10 leaves wide room for that and fails at
# any missing or misweighted leaf (measured here: <= 6e-16).
EFFICIENCY_RTOL = 1e-10

N_FEATURES = 5

# name: (unfitted model, target kind)
MODELS = {
    "decision_tree_regressor": (
        DecisionTreeRegressor(max_depth=4, random_state=0),
        "regression",
    ),
    "decision_tree_classifier": (
        DecisionTreeClassifier(max_depth=4, random_state=0),
        "multiclass",
    ),
    "extra_tree_regressor": (
        ExtraTreeRegressor(max_depth=4, random_state=0),
        "regression",
    ),
    "extra_tree_classifier": (
        ExtraTreeClassifier(max_depth=4, random_state=0),
        "binary",
    ),
    "random_forest_regressor": (
        RandomForestRegressor(n_estimators=4, max_depth=4, random_state=0),
        "regression",
    ),
    "random_forest_classifier": (
        RandomForestClassifier(n_estimators=4, max_depth=4, random_state=0),
        "multiclass",
    ),
    "random_forest_classifier_binary": (
        RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0),
        "binary",
    ),
    "extra_trees_regressor": (
        ExtraTreesRegressor(n_estimators=4, max_depth=4, random_state=0),
        "regression",
    ),
    "extra_trees_classifier": (
        ExtraTreesClassifier(n_estimators=4, max_depth=4, random_state=0),
        "labels",
    ),
    **{
        f"gradient_boosting_{loss}": (
            GradientBoostingRegressor(
                loss=loss, n_estimators=5, max_depth=3, random_state=0
            ),
            "regression",
        )
        for loss in ("squared_error", "absolute_error", "huber", "quantile")
    },
    "gradient_boosting_binary": (
        GradientBoostingClassifier(n_estimators=5, max_depth=3, random_state=0),
        "binary",
    ),
    "gradient_boosting_multiclass": (
        GradientBoostingClassifier(n_estimators=5, max_depth=3, random_state=0),
        "multiclass",
    ),
    "gradient_boosting_binary_zero": (
        GradientBoostingClassifier(
            n_estimators=5, max_depth=3, init="zero", random_state=0
        ),
        "binary",
    ),
    "gradient_boosting_multiclass_zero": (
        GradientBoostingClassifier(
            n_estimators=5, max_depth=3, init="zero", random_state=0
        ),
        "labels",
    ),
    "multi_output_decision_tree": (
        DecisionTreeRegressor(max_depth=4, random_state=0),
        "two targets",
    ),
    "multi_output_random_forest": (
        RandomForestRegressor(n_estimators=3, max_depth=4, random_state=0),
        "three targets",
    ),
    "multi_output_extra_trees": (
        ExtraTreesRegressor(n_estimators=3, max_depth=4, random_state=0),
        "two targets",
    ),
}


def allows_nan(name):
    return MODELS[name][0].__sklearn_tags__().input_tags.allow_nan


# Models that learn missing values are also trained with NaN in X (so that
# missing_go_to_left is learned); all of them are explained on NaN.
CASES = [
    pytest.param(name, nan, id=f"{name}-nan" if nan else name)
    for name in MODELS
    for nan in ([False, True] if allows_nan(name) else [False])
]

# shap (0.51) rejects multiclass GradientBoostingClassifier and init="zero".
SHAP_UNSUPPORTED = {
    "gradient_boosting_multiclass",
    "gradient_boosting_binary_zero",
    "gradient_boosting_multiclass_zero",
}


def training_data(kind, nan_in_training, n=200, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, N_FEATURES))
    # Integer codes: thresholds at 0.5, 1.5, 2.5, which float32 represents
    # exactly, so rows on them tell "<=" from "<".
    X[:, 3] = rng.integers(0, 4, n)
    y = X[:, 0] + X[:, 1] ** 2 - X[:, 2] * X[:, 3] + 0.1 * rng.normal(size=n)
    targets = {
        "regression": y,
        "binary": y > np.median(y),
        "multiclass": np.digitize(y, np.quantile(y, [1 / 3, 2 / 3])),
        "labels": np.array(["low", "mid", "high"])[
            np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
        ],
        "two targets": np.c_[y, X[:, 4] - X[:, 0]],
        "three targets": np.c_[y, X[:, 4] - X[:, 0], 10 * X[:, 1]],
    }
    if nan_in_training:
        X[rng.random(n) < 0.15, 0] = np.nan
        X[rng.random(n) < 0.15, 2] = np.nan
    return X, targets[kind]


@cache
def fitted(name, nan_in_training):
    """A fitted model, its explainer and its training X (cached: read only)."""
    model, kind = MODELS[name]
    X, y = training_data(kind, nan_in_training)
    model = clone(model).fit(X, y)
    return model, TreeExplainer(model).fit(), X


def model_output(model, X):
    """What TreeExplainer explains: the model's own raw output (a binary
    classifier's: its positive class's alone)."""
    if isinstance(model, GradientBoostingClassifier):
        return model.decision_function(X)
    if is_classifier(model):
        proba = model.predict_proba(X)
        return proba[:, 1] if len(model.classes_) == 2 else proba
    return model.predict(X)


def sklearn_trees(model):
    return [
        estimator.tree_ for estimator in np.ravel(getattr(model, "estimators_", model))
    ]


def threshold_rows(model, X):
    """Rows placed exactly on each split threshold and on its neighbours.

    scikit-learn routes ``float32(x) <= threshold`` with a float64
    threshold, so each threshold ``t`` goes in as ``t``, ``float32(t)`` and
    the adjacent float64 and float32 values, into a row that reaches the node
    (by scikit-learn's own ``decision_path``). Splits of NaN from all
    numbers have threshold +inf, which no finite row tells apart: the NaN
    rows test those.
    """
    rows = []
    for tree in sklearn_trees(model):
        reached = tree.decision_path(np.asarray(X, dtype=np.float32)).tocsc()
        internal = (tree.children_left >= 0) & np.isfinite(tree.threshold)
        for node in np.flatnonzero(internal):
            reaching = reached[:, [node]].indices
            assert len(reaching) > 0  # every node holds training rows
            t = tree.threshold[node]
            t32 = np.float32(t)
            values = [
                t,
                np.nextafter(t, -np.inf),
                np.nextafter(t, np.inf),
                t32,
                np.nextafter(t32, np.float32(-np.inf)),
                np.nextafter(t32, np.float32(np.inf)),
            ]
            for value in values:
                row = X[reaching[0]].copy()
                row[tree.feature[node]] = value
                rows.append(row)
    return np.array(rows)


def nan_rows(X):
    """NaN in feature 0 (NaN in training for the "-nan" cases), in feature 4
    (never NaN in training), and everywhere."""
    rows = np.vstack([X[:8], X[:8], X[:2]])
    rows[:8, 0] = np.nan
    rows[8:16, 4] = np.nan
    rows[16:, :] = np.nan
    return rows


def prediction_rows(name, nan_in_training, n_threshold_rows=None):
    """Training rows, threshold rows and, if the model allows it, NaN rows."""
    model, _, X = fitted(name, nan_in_training)
    on_thresholds = threshold_rows(model, X)
    if n_threshold_rows is not None:
        rng = np.random.default_rng(2)
        on_thresholds = on_thresholds[
            rng.choice(len(on_thresholds), n_threshold_rows, replace=False)
        ]
    parts = [X[:40], on_thresholds]
    if allows_nan(name):
        parts.append(nan_rows(X))
    return np.vstack(parts)


def as_array(phi, explainer):
    """The explanation as an array of shape (n_samples, n_features, n_outputs)."""
    if len(explainer.output_names_) == 1:
        return phi.to_numpy()[:, :, None]
    return np.stack(
        [phi[output].to_numpy() for output in explainer.output_names_], axis=2
    )


def assert_close(actual, expected, rtol, scale=None):
    """``|actual - expected| <= rtol * scale``, ``scale`` the largest |expected|."""
    scale = np.abs(expected).max() if scale is None else scale
    np.testing.assert_allclose(actual, expected, rtol=0, atol=rtol * scale)


def expected_outputs(model):
    """Output names and raw output kind that the explainer should report."""
    if is_classifier(model):
        boosted = isinstance(model, GradientBoostingClassifier)
        if len(model.classes_) == 2:  # one output: the positive class's
            return (model.classes_[1].item(),), "log-odds" if boosted else "probability"
        return tuple(model.classes_.tolist()), "margin" if boosted else "probability"
    if getattr(model, "n_outputs_", 1) > 1:
        return tuple(f"target {k}" for k in range(model.n_outputs_)), "value"
    return ("target",), "value"


@pytest.mark.parametrize(("name", "nan_in_training"), CASES)
def test_raw_predict_matches_model(name, nan_in_training):
    model, explainer, _ = fitted(name, nan_in_training)
    X = prediction_rows(name, nan_in_training)
    expected = model_output(model, X)
    actual = explainer.raw_predict(X)
    assert actual.shape == expected.shape
    assert_close(actual, expected, CONVERSION_RTOL)
    output_names, raw_output = expected_outputs(model)
    assert explainer.output_names_ == output_names
    assert explainer.raw_output_ == raw_output
    assert explainer.ensemble_.n_trees == len(sklearn_trees(model))


@pytest.mark.parametrize("nan_in_training", [False, True])
@pytest.mark.parametrize("name", ["decision_tree_regressor", "random_forest_regressor"])
def test_rows_catch_routing_errors(name, nan_in_training):
    # The test rows have teeth: a table that compares "<" instead of "<=" or
    # skips the float32 cast mispredicts threshold rows; one that sends NaN
    # the other way mispredicts NaN rows (also for a model that never saw
    # NaN, which sends it to the child with more training samples).
    model, explainer, X = fitted(name, nan_in_training)
    table = explainer.ensemble_
    wrong_tables = {
        "strict": dataclasses.replace(
            table, threshold=np.nextafter(table.threshold, -np.inf)
        ),
        "no cast": dataclasses.replace(table, float32_inputs=False),
        "flipped NaN": dataclasses.replace(table, missing_left=1 - table.missing_left),
    }
    for kind, wrong in wrong_tables.items():
        rows = nan_rows(X) if kind == "flipped NaN" else threshold_rows(model, X)
        expected = model.predict(rows)
        assert_close(predict_ensemble(table, rows)[:, 0], expected, CONVERSION_RTOL)
        assert np.abs(predict_ensemble(wrong, rows)[:, 0] - expected).max() > 1e-3


@pytest.mark.parametrize(
    ("name", "nan_in_training"),
    [case for case in CASES if case.values[0] not in SHAP_UNSUPPORTED],
)
def test_matches_shap(name, nan_in_training):
    shap = pytest.importorskip("shap")
    model, explainer, _ = fitted(name, nan_in_training)
    X = prediction_rows(name, nan_in_training, n_threshold_rows=30)
    reference = shap.TreeExplainer(model, feature_perturbation="tree_path_dependent")
    # shap returns a list of (n, d) arrays per output in old versions and an
    # (n, d, K) array in new ones; one output is (n, d).
    expected = reference.shap_values(X)
    if isinstance(expected, list):
        expected = np.stack(expected, axis=-1)
    expected = expected if expected.ndim == 3 else expected[:, :, None]
    expected_value = np.ravel(reference.expected_value)
    actual = as_array(explainer.explain(X), explainer)
    scale = np.abs(model_output(model, X)).max()
    if explainer.raw_output_ == "probability" and len(model.classes_) == 2:
        # shap explains both probabilities of a binary forest; skshapley the
        # positive class's, whose negatives are the other class's values.
        assert_close(expected[:, :, 0], -expected[:, :, 1], SHAP_RTOL)
        assert_close(expected_value[0], 1 - expected_value[1], SHAP_RTOL, scale)
        expected, expected_value = expected[:, :, 1:], expected_value[1:]
    assert actual.shape == expected.shape
    assert_close(actual, expected, SHAP_RTOL)
    assert_close(
        np.ravel(explainer.expected_value_), expected_value, SHAP_RTOL, scale=scale
    )


@pytest.mark.parametrize(("name", "nan_in_training"), CASES)
def test_matches_brute_force(name, nan_in_training):
    model, explainer, _ = fitted(name, nan_in_training)
    rows = prediction_rows(name, nan_in_training, n_threshold_rows=4)
    rows = np.vstack([rows[:3], rows[40:]])  # 3 training rows, then the rest
    phi = as_array(explainer.explain(rows), explainer)
    scale = np.abs(model_output(model, rows)).max()
    table = explainer.ensemble_
    for x, phi_x in zip(rows, phi, strict=True):
        assert_close(phi_x, path_dependent_shapley(table, x), BRUTE_FORCE_RTOL, scale)
    empty = path_dependent_value(table, rows[0], set())
    assert_close(np.ravel(explainer.expected_value_), empty, BRUTE_FORCE_RTOL, scale)


@pytest.mark.parametrize(("name", "nan_in_training"), CASES)
def test_efficiency(name, nan_in_training):
    model, explainer, _ = fitted(name, nan_in_training)
    X = prediction_rows(name, nan_in_training)
    raw = model_output(model, X)
    phi = explainer.explain(X)
    names = explainer.output_names_
    if len(names) == 1:
        assert list(phi.columns) == [f"x{j}" for j in range(N_FEATURES)]
        total = phi.sum(axis=1) + explainer.expected_value_
    else:
        assert phi.columns.names == ["output", "feature"]
        assert tuple(phi.columns.get_level_values("output").unique()) == names
        total = np.column_stack(
            [
                phi[output].sum(axis=1) + explainer.expected_value_[output]
                for output in names
            ]
        )
    assert_close(np.asarray(total), raw, EFFICIENCY_RTOL)


def test_deep_tree():
    # A fully grown tree (depth ~20, up to 12 distinct features on a path, 6
    # quadrature points): efficiency and shap parity at a depth where
    # enumeration is out of reach.
    rng = np.random.default_rng(3)
    X = rng.normal(size=(2000, 12))
    y = X @ rng.normal(size=12) + np.sin(3 * X[:, 0]) + rng.normal(size=2000)
    model = DecisionTreeRegressor(random_state=0).fit(X, y)
    assert model.get_depth() >= 15
    explainer = TreeExplainer(model).fit()
    phi = explainer.explain(X[:50])
    raw = model.predict(X[:50])
    assert_close(phi.sum(axis=1) + explainer.expected_value_, raw, EFFICIENCY_RTOL)
    shap = pytest.importorskip("shap")
    expected = shap.TreeExplainer(model).shap_values(X[:50])
    assert_close(phi.to_numpy(), expected, SHAP_RTOL)


# ---- gradient boosting's initial prediction, and models from files --------


def _boosting_data(n_classes):
    rng = np.random.default_rng(3)
    X = rng.normal(size=(80, 3))
    y = X[:, 0] + rng.normal(scale=0.3, size=80)
    if n_classes:
        y = np.digitize(y, np.quantile(y, np.linspace(0, 1, n_classes + 1)[1:-1]))
    return X, y, rng.uniform(0.1, 3.0, size=80)


@pytest.mark.parametrize(
    ("model", "n_classes", "weighted"),
    [
        (GradientBoostingRegressor(n_estimators=5), 0, False),
        (GradientBoostingRegressor(n_estimators=5, loss="huber"), 0, True),
        (
            GradientBoostingRegressor(n_estimators=5, loss="quantile", alpha=0.3),
            0,
            True,
        ),
        (GradientBoostingRegressor(n_estimators=5, init="zero"), 0, False),
        (GradientBoostingClassifier(n_estimators=5), 2, False),
        (GradientBoostingClassifier(n_estimators=5), 2, True),
        (GradientBoostingClassifier(n_estimators=5, loss="exponential"), 2, True),
        (GradientBoostingClassifier(n_estimators=5), 3, True),
        (GradientBoostingClassifier(n_estimators=5, init="zero"), 3, False),
    ],
)
def test_initial_prediction_without_predict(model, n_classes, weighted):
    # The base offset comes from the initial estimator's attributes, not
    # from calling predict; it must still match decision_function exactly.
    X, y, weight = _boosting_data(n_classes)
    model = clone(model).set_params(random_state=0)
    model.fit(X, y, sample_weight=weight if weighted else None)
    explainer = TreeExplainer(model).fit()
    raw = model.decision_function(X) if n_classes else model.predict(X)
    # Summing the trees in another order than scikit-learn: a few ulps.
    np.testing.assert_allclose(
        explainer.raw_predict(X).reshape(raw.shape), raw, rtol=1e-12, atol=1e-12
    )


def test_tampered_boosting_tree_is_refused_before_predict_runs(tmp_path):
    # A child pointing back to the root would make scikit-learn's predict
    # loop forever; the parser must refuse it before anything predicts.
    code = """
import numpy as np
from sklearn.ensemble import GradientBoostingRegressor
from skshapley import TreeExplainer
X = np.random.default_rng(0).normal(size=(50, 2))
model = GradientBoostingRegressor(n_estimators=2, max_depth=2).fit(X, X[:, 0])
tree = model.estimators_[0, 0].tree_
state = tree.__getstate__()
state["nodes"]["left_child"][1] = 0
tree.__setstate__(state)
try:
    TreeExplainer(model).fit()
except ValueError as exc:
    print("refused:", exc)
"""
    status, out, err = run_limited([], cwd=tmp_path, code=code, cpu_seconds=60)
    assert status == 0, err
    assert out.startswith("refused: The model's"), out


@pytest.mark.parametrize(
    ("attribute", "value"),
    [
        ("estimators_", "not trees"),
        ("estimators_", [1, 2]),
        ("n_features_in_", 10**12),
        ("n_features_in_", "3"),
        ("classes_", np.arange(5)),
        ("n_outputs_", 0),
    ],
)
def test_forest_with_wrong_attribute_types_gives_value_error(attribute, value):
    X, y, _ = _boosting_data(3)
    model = RandomForestClassifier(n_estimators=2, random_state=0).fit(X, y)
    setattr(model, attribute, value)
    with pytest.raises(ValueError, match=r"(?i)model|forest|classes|tree"):
        TreeExplainer(model).fit()


@pytest.mark.parametrize(
    ("attribute", "value"),
    [
        ("estimators_", np.empty((0, 1), dtype=object)),
        ("learning_rate", "fast"),
        ("classes_", np.array([0])),
    ],
)
def test_boosting_with_wrong_attributes_gives_value_error(attribute, value):
    X, y, _ = _boosting_data(2)
    model = GradientBoostingClassifier(n_estimators=2, random_state=0).fit(X, y)
    setattr(model, attribute, value)
    with pytest.raises(ValueError, match=r"(?i)model|classes"):
        TreeExplainer(model).fit()


def test_boosting_with_nan_initial_constant_gives_value_error():
    X, y, _ = _boosting_data(0)
    model = GradientBoostingRegressor(n_estimators=2).fit(X, y)
    model.init_.constant_ = np.array([[np.nan]])
    with pytest.raises(ValueError, match=r"init_\.constant_ must be finite"):
        TreeExplainer(model).fit()


@pytest.mark.parametrize("cover", [np.nan, -1.0, 1e6])
def test_tampered_cover_gives_value_error(cover):
    # Covers weight the paths; NaN, negative or growing ones have no meaning.
    # (Zero covers are legal: tests/trees/test_covers_and_leaves.py.)
    X, y, _ = _boosting_data(0)
    model = DecisionTreeRegressor(max_depth=3, random_state=0).fit(X, y)
    state = model.tree_.__getstate__()
    state["nodes"]["weighted_n_node_samples"][1] = cover
    model.tree_.__setstate__(state)
    with pytest.raises(ValueError, match="cover"):
        TreeExplainer(model).fit()
