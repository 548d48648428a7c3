"""The entry points: Explainer, explain, supports and the unsupported-model error.

Dispatch for every model family is in tests/test_dispatch.py (and the exact
families' contract in tests/test_common.py); here are the refusals and the
one-output form of ``explain``.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.exceptions import NotFittedError
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVR

import skshapley
from skshapley import (
    ExactExplainer,
    ProductKernelExplainer,
    TreeExplainer,
    UnsupportedModelError,
)

EXPLAINERS = [TreeExplainer, ProductKernelExplainer]


def data(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, 3)), columns=["a", "b", "c"])
    return X, X["a"] - X["b"] * X["c"]


@pytest.mark.parametrize(
    ("model", "name"),
    [
        (StandardScaler().fit(data()[0]), "StandardScaler"),
        (object(), "builtins.object"),
        (make_pipeline(StandardScaler()).fit(data()[0]), "StandardScaler"),
    ],
    ids=["transformer", "object", "pipeline_of_a_transformer"],
)
def test_a_model_without_a_response_gets_one_short_line(model, name):
    # Changed by issue 14: a fitted LinearRegression is now explained (by
    # ExactExplainer); what no explainer takes is a model with no predict,
    # predict_proba or decision_function that is not callable.
    X, _ = data()
    with pytest.raises(UnsupportedModelError) as info:
        skshapley.Explainer(model)
    message = str(info.value)
    assert message.startswith(f"skshapley does not support {name};")
    for family in ("tree ensembles", "XGBoost", "LightGBM", "product-kernel"):
        assert family in message
    assert "any model with predict, predict_proba or decision_function" in message
    assert "Supported models" in message  # where the full list is
    assert "\n" not in message
    assert len(message) < 300
    with pytest.raises(UnsupportedModelError, match=name):
        skshapley.explain(model, X, background=X)


def test_a_kernel_with_unsupported_settings_is_explained_model_agnostically():
    # Changed by issue 14: KernelRidge(kernel="poly") is no product kernel,
    # but a model with predict: ExactExplainer explains it. The kernel
    # explainer itself still says what to change.
    X, y = data()
    model = KernelRidge(kernel="poly").fit(X, y)
    assert type(skshapley.Explainer(model)) is ExactExplainer
    with pytest.raises(UnsupportedModelError, match="kernel='poly'") as info:
        ProductKernelExplainer(model).fit()
    assert "is not a product kernel" in str(info.value)
    phi = skshapley.explain(model, X.iloc[:3], background=X.iloc[:10])
    expected = ExactExplainer(model).fit(X.iloc[:10]).explain(X.iloc[:3])
    pd.testing.assert_frame_equal(phi, expected)


@pytest.mark.parametrize("cls", EXPLAINERS)
def test_each_explainers_error_is_short(cls):
    X, y = data()
    with pytest.raises(UnsupportedModelError) as info:
        cls(LinearRegression().fit(X, y)).fit()
    message = str(info.value)
    assert message.startswith(f"{cls.__name__} does not support LinearRegression;")
    assert len(message) < 300


@pytest.mark.parametrize(
    ("model", "expected"),
    [
        (RandomForestRegressor(), {TreeExplainer}),  # unfitted: fit says so
        (KernelRidge(), {ProductKernelExplainer}),
        (KernelRidge(kernel="poly").fit(*data()), set()),
        (LinearRegression(), set()),
        (make_pipeline(StandardScaler(), SVR()), {ProductKernelExplainer}),
        (make_pipeline(StandardScaler(), LinearRegression()).fit(*data()), set()),
    ],
    ids=["forest", "kernel_ridge", "poly", "linear", "svr_pipeline", "linear_pipe"],
)
def test_supports_is_whether_fit_refuses_the_kind(model, expected):
    assert {cls for cls in EXPLAINERS if cls.supports(model)} == expected
    for cls in EXPLAINERS:
        try:
            cls(model).fit()
        except UnsupportedModelError:
            assert cls not in expected
        except NotFittedError:
            assert cls in expected


def test_explainer_passes_the_parameters():
    X, y = data()
    model = SVR().fit(X, y)
    explainer = skshapley.Explainer(model, groups={"bc": ["b", "c"]}, n_jobs=1)
    assert explainer.get_params(deep=False) == {
        "model": model,
        "feature_perturbation": "kernel",
        "groups": {"bc": ["b", "c"]},
        "n_quadrature_points": "auto",
        "n_jobs": 1,
        "max_memory": "1GB",
    }
    assert not hasattr(explainer, "game_")  # not fitted
    phi = skshapley.explain(model, X.iloc[:4], groups={"bc": ["b", "c"]})
    assert list(phi.columns) == ["bc", "a"]
    # A tree's value function is not a kernel model's (issue 35 gave kernel
    # models "interventional" too): fit names the two it has.
    wrong = skshapley.Explainer(model, feature_perturbation="tree_path_dependent")
    with pytest.raises(ValueError, match='must be "kernel" or "interventional"'):
        wrong.fit()


def test_one_output():
    X, y = data()
    labels = np.array(["low", "mid", "high"])[np.digitize(y, [-0.5, 0.5])]
    model = RandomForestClassifier(n_estimators=3, random_state=0).fit(X, labels)
    explainer = TreeExplainer(model).fit()
    phi = explainer.explain(X)
    raw = explainer.raw_predict(X)
    for k, label in enumerate(model.classes_):
        one = explainer.explain(X, output=label)
        assert list(one.columns) == ["a", "b", "c"]
        np.testing.assert_array_equal(one.to_numpy(), phi[label].to_numpy())
        # Probabilities: efficiency to rounding of sums of a few numbers <= 1.
        total = one.sum(axis=1) + explainer.expected_value_[label]
        np.testing.assert_allclose(total, raw[:, k], rtol=0, atol=1e-12)
    with pytest.raises(ValueError, match=r"output 'top' is not one of .*\[high, low"):
        explainer.explain(X, output="top")
    regressor = TreeExplainer(RandomForestRegressor(n_estimators=2).fit(X, y)).fit()
    pd.testing.assert_frame_equal(
        regressor.explain(X, output="target"), regressor.explain(X)
    )
