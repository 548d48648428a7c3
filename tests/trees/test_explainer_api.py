"""TreeExplainer's API: the estimator contract, inputs, outputs and errors."""

from functools import cache

import numpy as np
import pandas as pd
import pytest
from naive import path_dependent_value
from sklearn.ensemble import (
    GradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import make_pipeline
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from skshapley import TreeExplainer
from skshapley.trees import _tree_core

FEATURES = ["age", "dose", "weight", "height"]

# The unsupported-model error names the families, in one short line.
SUPPORTED = [
    "decision trees",
    "random forests",
    "extra trees",
    "gradient boosting",
    "HistGradientBoosting",
    "XGBoost",
    "LightGBM",
]

# Values computed two ways that are mathematically equal but rounded
# differently (another quadrature rule, another summation order) agree to a
# few units in the last place of the output's scale; 1e-13 relative is
# ~500 such units and still fails at any real difference (>= 1e-6 here).
ROUNDING_RTOL = 1e-13


def data(n=200, seed=0):
    """A DataFrame with string column names and a non-default index."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        rng.normal(size=(n, len(FEATURES))),
        columns=FEATURES,
        index=pd.Index([f"p{i}" for i in range(n)], name="patient"),
    )
    y = X["age"] + X["dose"] ** 2 - X["weight"] * X["height"]
    return X, y


@cache
def regressor():
    X, y = data()
    return RandomForestRegressor(n_estimators=3, max_depth=5, random_state=0).fit(X, y)


@cache
def classifier():
    X, y = data()
    return RandomForestClassifier(n_estimators=3, max_depth=4, random_state=0).fit(
        X, np.digitize(y, [-1, 1])
    )


@cache
def gradient_boosting():
    X, y = data()
    return GradientBoostingRegressor(n_estimators=3, random_state=0).fit(X, y)


def test_unfitted_model():
    with pytest.raises(NotFittedError):
        TreeExplainer(RandomForestRegressor()).fit()


class Namesake(DecisionTreeRegressor):
    """A class of a supported name from another library (here: this module)."""


Namesake.__name__ = Namesake.__qualname__ = "DecisionTreeRegressor"


@pytest.mark.parametrize(
    "model",
    [
        LinearRegression().fit([[0.0], [1.0]], [0.0, 1.0]),
        make_pipeline(LinearRegression()).fit([[0.0], [1.0]], [0.0, 1.0]),
        Namesake().fit([[0.0], [1.0]], [0.0, 1.0]),
    ],
    ids=["linear", "pipeline_of_linear", "namesake"],
)
def test_unsupported_model(model):
    with pytest.raises(TypeError, match="does not support") as info:
        TreeExplainer(model).fit()
    assert all(name in str(info.value) for name in SUPPORTED)
    assert len(str(info.value)) < 300


def test_unsupported_model_variants():
    X = np.arange(20.0).reshape(10, 2)
    multi_output = DecisionTreeClassifier().fit(X, np.c_[X[:, 0] > 5, X[:, 1] > 9])
    with pytest.raises(TypeError, match="2 outputs"):
        TreeExplainer(multi_output).fit()
    linear_init = GradientBoostingRegressor(init=LinearRegression(), n_estimators=2)
    with pytest.raises(TypeError, match="init=LinearRegression"):
        TreeExplainer(linear_init.fit(X, X[:, 0])).fit()


@pytest.mark.parametrize(
    ("params", "match"),
    [
        ({"feature_perturbation": "interventional"}, "feature_perturbation"),
        ({"n_quadrature_points": 0}, "n_quadrature_points"),
        ({"n_quadrature_points": -3}, "n_quadrature_points"),
        ({"n_quadrature_points": 2.0}, "n_quadrature_points"),
        ({"n_quadrature_points": True}, "n_quadrature_points"),
        ({"n_quadrature_points": "exact"}, "n_quadrature_points"),
        ({"n_quadrature_points": None}, "n_quadrature_points"),
    ],
)
def test_bad_parameters(params, match):
    explainer = TreeExplainer(regressor(), **params)
    with pytest.raises(ValueError, match=match):
        explainer.fit()
    assert not hasattr(explainer, "ensemble_")


def test_bad_n_jobs():
    # Refused at fit, before any work; and at explain if set after fit.
    with pytest.raises(ValueError, match="n_jobs"):
        TreeExplainer(regressor(), n_jobs=0).fit()
    explainer = TreeExplainer(regressor()).fit().set_params(n_jobs=0)
    with pytest.raises(ValueError, match="n_jobs"):
        explainer.explain(data(n=2)[0])


def test_wrong_shape():
    explainer = TreeExplainer(regressor()).fit()
    X = data(n=5)[0].to_numpy()
    with pytest.raises(ValueError, match=r"\(n_samples, 4\).*\(5, 3\)"):
        explainer.explain(X[:, :3])
    with pytest.raises(ValueError, match=r"\(n_samples, 4\).*\(4,\)"):
        explainer.explain(X[0])
    with pytest.raises(ValueError, match="numbers"):
        explainer.explain([["a", "b", "c", "d"]])


def test_missing_and_unknown_columns_are_named():
    # (Columns in another order: tests/test_common.py.)
    explainer = TreeExplainer(regressor()).fit()
    X, _ = data(n=10)
    with pytest.raises(ValueError, match=r"missing: \['dose'\]"):
        explainer.explain(X.drop(columns="dose"))
    with pytest.raises(ValueError, match=r"unknown: \['pulse'\]"):
        explainer.explain(X.assign(pulse=1.0))


def test_dataframe_for_a_model_fitted_without_names():
    # A model fitted on pd.DataFrame(X) (integer column names) records no
    # feature names; scikit-learn then reads any frame positionally.
    X, y = data(n=50)
    model = DecisionTreeRegressor(max_depth=3).fit(pd.DataFrame(X.to_numpy()), y)
    assert not hasattr(model, "feature_names_in_")
    explainer = TreeExplainer(model).fit()
    frame = pd.DataFrame(X.to_numpy(), index=X.index)
    phi = explainer.explain(frame)
    pd.testing.assert_index_equal(phi.index, X.index)
    np.testing.assert_array_equal(phi.to_numpy(), explainer.explain(X.to_numpy()))


def test_rejected_values():
    X, _ = data(n=4)
    with_nan = X.copy()
    with_nan.iloc[1, 2] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        TreeExplainer(gradient_boosting()).fit().explain(with_nan)
    # scikit-learn's trees reject inf and values beyond float32; so do we.
    for model in (regressor(), gradient_boosting()):
        explainer = TreeExplainer(model).fit()
        for value, match in [
            (np.inf, "infinity"),
            (-np.inf, "infinity"),
            (1e39, "float32"),
        ]:
            bad = X.copy()
            bad.iloc[0, 1] = value
            with (
                pytest.raises(ValueError, match="infinity or a value too large"),
                np.errstate(over="ignore"),
            ):
                model.predict(bad)
            with pytest.raises(ValueError, match=match):
                explainer.explain(bad)
            with pytest.raises(ValueError, match=match):
                explainer.raw_predict(bad)


def test_rounding_to_float32_is_numpys_cast():
    """The in-place rounding of inputs for float32 models, bit for bit.

    Against NumPy's ``astype(np.float32)``: ties, subnormals, signed zeros,
    values just below and beyond float32's largest, NaN and infinity; and
    the NaN and infinity it reports.
    """
    f32 = np.finfo(np.float32)
    largest, tiny = float(f32.max), float(f32.smallest_subnormal)
    edges = [
        0.0, -0.0, 1.0 + 2.0**-24, 1.0 + 3 * 2.0**-24, largest, -largest,
        largest * (1 + 2.0**-25), largest * (1 + 2.0**-24), 1e39, -1e39,
        tiny, tiny / 2, tiny * 0.75, -tiny * 0.25, float(f32.tiny), 5e-324,
        np.inf, -np.inf, np.nan,
    ]  # fmt: skip
    rng = np.random.default_rng(0)
    spread = rng.standard_normal(2000) * 10.0 ** rng.integers(-50, 50, 2000)
    X = np.concatenate([edges, spread]).reshape(-1, 3)
    with np.errstate(over="ignore"):
        expected = X.astype(np.float32).astype(np.float64)
    rounded = X.copy()
    assert _tree_core.round_to_float32(rounded) == (True, True)
    np.testing.assert_array_equal(rounded, expected)
    np.testing.assert_array_equal(np.signbit(rounded), np.signbit(expected))
    finite = np.array([[1.0, largest, -tiny]])
    assert _tree_core.round_to_float32(finite.copy()) == (False, False)
    assert _tree_core.round_to_float32(np.array([[0.5, 1e39]])) == (False, True)
    assert _tree_core.round_to_float32(np.array([[np.nan, 1.0]])) == (True, False)
    assert _tree_core.round_to_float32(np.empty((0, 3))) == (False, False)


def test_output_layout():
    X, _ = data(n=6)
    X = X.iloc[[5, 0, 3, 1, 4, 2]]
    single = TreeExplainer(regressor()).fit()
    phi = single.explain(X)
    pd.testing.assert_index_equal(phi.index, X.index)
    assert list(phi.columns) == FEATURES
    assert type(single.expected_value_) is float
    pd.testing.assert_index_equal(single.explain(X.to_numpy()).index, pd.RangeIndex(6))
    assert single.explain(X.iloc[:0]).shape == (0, 4)

    model = classifier()
    multi = TreeExplainer(model).fit()
    phi = multi.explain(X)
    pd.testing.assert_index_equal(phi.index, X.index)
    labels = model.classes_.tolist()  # the model's own labels
    assert list(phi.columns) == [(label, f) for label in labels for f in FEATURES]
    assert isinstance(multi.expected_value_, pd.Series)
    assert list(multi.expected_value_.index) == labels
    # The base value is v(∅) of the path-dependent game; probabilities sum to 1
    # (both to rounding: the outputs' scale is 1).
    empty = path_dependent_value(multi.ensemble_, X.to_numpy()[0], set())
    np.testing.assert_allclose(multi.expected_value_, empty, rtol=0, atol=ROUNDING_RTOL)
    assert multi.expected_value_.sum() == pytest.approx(1.0, abs=ROUNDING_RTOL)


def distinct_features_on_paths(tree):
    """The largest number of distinct features on a root-to-leaf path."""
    largest, stack = 0, [(0, frozenset())]
    while stack:
        node, features = stack.pop()
        if tree.children_left[node] < 0:
            largest = max(largest, len(features))
            continue
        features = features | {tree.feature[node]}
        stack += [(tree.children_left[node], features)]
        stack += [(tree.children_right[node], features)]
    return largest


def test_quadrature_rule():
    model = regressor()
    X, _ = data(n=30, seed=3)
    auto = TreeExplainer(model).fit()
    exact = [
        max(1, -(-distinct_features_on_paths(tree.tree_) // 2))
        for tree in model.estimators_
    ]
    np.testing.assert_array_equal(auto.n_quadrature_points_, exact)
    assert max(exact) >= 2  # so that fewer points than the exact rule exist
    phi = auto.explain(X)
    scale = np.abs(model.predict(X)).max()

    # The exact rule forced on every tree, or more points: the same
    # integrals, other roundings.
    same = TreeExplainer(model, n_quadrature_points=max(exact)).fit()
    np.testing.assert_allclose(same.explain(X), phi, rtol=0, atol=ROUNDING_RTOL * scale)
    more = TreeExplainer(model, n_quadrature_points=max(exact) + 3).fit()
    np.testing.assert_allclose(more.explain(X), phi, rtol=0, atol=ROUNDING_RTOL * scale)

    # Fewer: the integrand, of degree D - 1, is integrated inexactly; so is
    # the sum over features (the integral of the derivative of the game's
    # polynomial), so efficiency breaks as well.
    # (The quadrature error is of the size of the phi themselves, ~1e-2 of the
    # scale here; 1e-6 is far above rounding and far below that.)
    fewer = TreeExplainer(model, n_quadrature_points=1).fit()
    np.testing.assert_array_equal(fewer.n_quadrature_points_, 1)
    phi_fewer = fewer.explain(X)
    assert np.abs(phi_fewer - phi).to_numpy().max() > 1e-6 * scale
    total = phi_fewer.sum(axis=1) + fewer.expected_value_
    assert np.abs(total - model.predict(X)).max() > 1e-6 * scale
    assert fewer.expected_value_ == auto.expected_value_  # v(∅) needs no rule
