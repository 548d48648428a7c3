"""ProductKernelExplainer's API: the estimator contract, inputs, outputs and errors."""

import pickle
from functools import cache

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import RandomForestRegressor
from sklearn.exceptions import NotFittedError
from sklearn.gaussian_process import (
    GaussianProcessClassifier,
    GaussianProcessRegressor,
)
from sklearn.gaussian_process.kernels import (
    RBF,
    DotProduct,
    ExpSineSquared,
    Matern,
    RationalQuadratic,
)
from sklearn.gaussian_process.kernels import ConstantKernel as C
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import LinearRegression
from sklearn.svm import SVC, SVR, NuSVC, NuSVR

from skshapley import ProductKernelExplainer

FEATURES = ["age", "dose", "weight", "height", "pulse"]


def data(n=60, seed=0):
    """A DataFrame with string column names and a non-default index."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        rng.normal(size=(n, len(FEATURES))),
        columns=FEATURES,
        index=pd.Index([f"p{i}" for i in range(seed * 1000, seed * 1000 + n)]),
    )
    X.index.name = "patient"
    y = np.sin(X["age"]) + X["dose"] * X["weight"] - 0.5 * X["height"]
    return X, y


@cache
def regressor():
    X, y = data()
    return KernelRidge(kernel="rbf", gamma=0.3).fit(X, y)


@cache
def classifier():
    X, y = data()
    labels = np.array(["low", "mid", "high"])[np.digitize(y, [-0.5, 0.5])]
    return SVC().fit(X, labels)


@cache
def chi2_model():
    # On an array: scikit-learn's chi2 kernel rejects the read-only arrays
    # that pandas' copy-on-write hands out for a DataFrame.
    X, y = data()
    return KernelRidge(kernel="chi2", gamma=0.5).fit(np.abs(X.to_numpy()), y)


def small_data(n=30, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, d))
    return X, X[:, 0] + np.sin(X[:, 1])


def test_pickle_round_trip_with_groups():
    # (Without groups, for every model family: tests/test_common.py.)
    groups = {"body": ["weight", "height"]}
    explainer = ProductKernelExplainer(classifier(), groups=groups).fit()
    restored = pickle.loads(pickle.dumps(explainer))
    X, _ = data(n=10, seed=1)
    pd.testing.assert_frame_equal(restored.explain(X), explainer.explain(X))
    np.testing.assert_array_equal(restored.raw_predict(X), explainer.raw_predict(X))
    pd.testing.assert_series_equal(restored.expected_value_, explainer.expected_value_)
    assert restored.output_names_ == explainer.output_names_


@pytest.mark.parametrize(
    "model",
    [
        KernelRidge(),
        SVR(),
        NuSVR(),
        SVC(),
        NuSVC(),
        GaussianProcessRegressor(),
        GaussianProcessClassifier(),
    ],
    ids=lambda model: type(model).__name__,
)
def test_unfitted_model(model):
    with pytest.raises(NotFittedError):
        ProductKernelExplainer(model).fit()


def my_kernel(x, y):
    """A callable kernel (an RBF, but opaque to any parser)."""
    return float(np.exp(-np.sum((x - y) ** 2)))


def my_gram(A, B):
    """A callable Gram-matrix kernel, as libsvm takes it."""
    return np.exp(-((A[:, None, :] - B[None, :, :]) ** 2).sum(axis=2))


def fitted_on(model, *, precomputed=False, kind="regression"):
    X, y = small_data()
    if kind == "binary":
        y = y > np.median(y)
    if kind == "multiclass":
        y = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
    return model.fit(X @ X.T if precomputed else X, y)


UNSUPPORTED_KERNELS = {
    **{
        # alpha=10: the sigmoid kernel's Gram matrix is singular otherwise.
        f"kernel_ridge_{kernel}": (
            lambda k=kernel: KernelRidge(kernel=k, alpha=10.0),
            kernel,
        )
        for kernel in ("poly", "sigmoid", "linear", "cosine")
    },
    "kernel_ridge_precomputed": (
        lambda: fitted_on(KernelRidge(kernel="precomputed"), precomputed=True),
        "precomputed",
    ),
    # A callable is named by what it is (or by its name).
    "kernel_ridge_callable": (
        lambda: KernelRidge(kernel=my_kernel),
        "function|callable|my_kernel",
    ),
    "kernel_ridge_gp_matern": (lambda: KernelRidge(kernel=Matern(nu=1.5)), "Matern"),
    **{
        f"{name}_{kernel}": (lambda m=model, k=kernel: m(kernel=k), kernel)
        for kernel in ("linear", "poly", "sigmoid")
        for name, model in (("svr", SVR), ("nu_svr", NuSVR))
    },
    **{
        f"svc_{kernel}": (
            lambda k=kernel: fitted_on(SVC(kernel=k), kind="binary"),
            kernel,
        )
        for kernel in ("linear", "poly", "sigmoid")
    },
    "nu_svc_poly_multiclass": (
        lambda: fitted_on(NuSVC(kernel="poly", nu=0.3), kind="multiclass"),
        "poly",
    ),
    "svr_precomputed": (
        lambda: fitted_on(SVR(kernel="precomputed"), precomputed=True),
        "precomputed",
    ),
    "svc_precomputed": (
        lambda: fitted_on(SVC(kernel="precomputed"), precomputed=True, kind="binary"),
        "precomputed",
    ),
    "svr_callable": (lambda: SVR(kernel=my_gram), "function|callable|my_gram"),
    **{
        f"gpr_{type(kernel).__name__}": (
            lambda k=kernel: GaussianProcessRegressor(k, alpha=0.1, optimizer=None),
            type(kernel).__name__,
        )
        for kernel in (
            Matern(nu=1.5),
            RationalQuadratic(),
            DotProduct(),
            ExpSineSquared(periodicity=10.0),
        )
    },
    "gpr_constant_times_matern": (
        lambda: GaussianProcessRegressor(
            C(2.0) * Matern(nu=2.5), alpha=0.1, optimizer=None
        ),
        "Matern",
    ),
    "gpr_rbf_plus_dot_product": (
        lambda: GaussianProcessRegressor(
            RBF() + DotProduct(), alpha=0.1, optimizer=None
        ),
        "DotProduct",
    ),
    "gpc_matern": (
        lambda: fitted_on(
            GaussianProcessClassifier(Matern(nu=0.5), optimizer=None), kind="binary"
        ),
        "Matern",
    ),
}


@pytest.mark.parametrize("name", UNSUPPORTED_KERNELS)
def test_unsupported_kernel(name):
    make, kernel_name = UNSUPPORTED_KERNELS[name]
    model = make()
    if not hasattr(model, "n_features_in_"):
        model = fitted_on(model)
    with pytest.raises(TypeError, match=kernel_name):
        ProductKernelExplainer(model).fit()


def test_one_vs_one_gaussian_process_classifier():
    # Multiclass is explained one-vs-rest (the latent mean of each class);
    # the pairwise models of one_vs_one are refused, naming the setting.
    model = GaussianProcessClassifier(RBF(), optimizer=None, multi_class="one_vs_one")
    model = fitted_on(model, kind="multiclass")
    with pytest.raises(TypeError, match="multi_class='one_vs_one'"):
        ProductKernelExplainer(model).fit()


@pytest.mark.parametrize(
    "model",
    [
        LinearRegression().fit(*small_data()),
        RandomForestRegressor(n_estimators=2, random_state=0).fit(*small_data()),
    ],
    ids=["linear", "random_forest"],
)
def test_unsupported_model(model):
    with pytest.raises(TypeError, match=type(model).__name__) as info:
        ProductKernelExplainer(model).fit()
    message = str(info.value)
    # One short line naming the families, not a list of every class.
    assert all(
        family in message for family in ("kernel ridge", "SVMs", "Gaussian processes")
    )
    assert len(message) < 300


@pytest.mark.parametrize("bad", ["x", 0, -3, 1.5, 2.0, True, None])
def test_bad_n_quadrature_points(bad):
    explainer = ProductKernelExplainer(regressor(), n_quadrature_points=bad)
    with pytest.raises(ValueError, match="n_quadrature_points"):
        explainer.fit()
    assert not hasattr(explainer, "game_")


@pytest.mark.parametrize("model", [regressor, classifier])
def test_rejected_values(model):
    explainer = ProductKernelExplainer(model()).fit()
    X, _ = data(n=4)
    for value in (np.nan, np.inf, -np.inf):
        bad = X.copy()
        bad.iloc[1, 2] = value
        with pytest.raises(ValueError, match=r"NaN|inf"):
            explainer.explain(bad)
        with pytest.raises(ValueError, match=r"NaN|inf"):
            explainer.raw_predict(bad.to_numpy())


def test_wrong_shape():
    explainer = ProductKernelExplainer(regressor()).fit()
    X = data(n=5)[0].to_numpy()
    with pytest.raises(ValueError, match=r"\(5, 4\)"):
        explainer.explain(X[:, :4])
    with pytest.raises(ValueError, match=r"\(5, 6\)"):
        explainer.raw_predict(np.c_[X, X[:, 0]])
    with pytest.raises(ValueError, match=r"\(5,\)"):
        explainer.explain(X[0])


def test_missing_and_unknown_columns_are_named():
    # (Columns in another order: tests/test_common.py.)
    explainer = ProductKernelExplainer(regressor()).fit()
    X, _ = data(n=8, seed=1)
    with pytest.raises(ValueError, match=r"missing: \['dose'\]"):
        explainer.explain(X.drop(columns="dose"))
    with pytest.raises(ValueError, match=r"unknown: \['bmi'\]"):
        explainer.explain(X.assign(bmi=1.0))


def test_dataframe_for_a_model_fitted_without_names():
    # A model fitted on an array records no feature names: frames are read
    # positionally, as scikit-learn does, and the players are x0, x1, ...
    X, y = data()
    model = KernelRidge(kernel="laplacian").fit(X.to_numpy(), y)
    explainer = ProductKernelExplainer(model).fit()
    assert list(explainer.feature_names_in_) == [f"x{j}" for j in range(5)]
    phi = explainer.explain(X.iloc[:4])
    assert list(phi.columns) == [f"x{j}" for j in range(5)]
    pd.testing.assert_index_equal(phi.index, X.index[:4])
    np.testing.assert_array_equal(
        phi.to_numpy(), explainer.explain(X.iloc[:4].to_numpy())
    )


def test_chi2_rejects_negative_values():
    explainer = ProductKernelExplainer(chi2_model()).fit()
    X = data(n=4, seed=1)[0].abs()
    explainer.explain(X)  # zeros and positive values are fine
    X.iloc[2, 3] = -0.5
    with pytest.raises(ValueError, match="negative"):
        explainer.explain(X)
    with pytest.raises(ValueError, match="negative"):
        explainer.raw_predict(X)


def test_chi2_input_is_not_modified():
    # (Other models: tests/test_common.py.)
    explainer = ProductKernelExplainer(chi2_model()).fit()
    X = data(n=6, seed=1)[0].abs()
    X.iloc[0, 0] = 0.1
    array = X.to_numpy().copy()
    frame, array_before = X.copy(), array.copy()
    for method in (explainer.explain, explainer.raw_predict):
        method(frame)
        method(array)
    pd.testing.assert_frame_equal(frame, X)
    np.testing.assert_array_equal(array, array_before)


@pytest.mark.parametrize(
    ("groups", "match"),
    [
        ({"body": ["weight", "bmi"]}, "bmi"),
        ({"body": ["weight", 7]}, "7"),
        ({"body": ["weight", "height"], "size": ["height"]}, "height"),
        # 3 is "height" by position.
        ({"body": ["weight", "height"], "size": [3]}, "height"),
        ({"age": ["weight", "height"]}, "age"),  # "age" stays a player
        ({"body": []}, "body"),
    ],
    ids=["unknown", "bad_position", "two_groups", "two_groups_mixed", "clash", "empty"],
)
def test_bad_groups(groups, match):
    with pytest.raises(ValueError, match=match):
        ProductKernelExplainer(regressor(), groups=groups).fit()


def test_group_layout():
    groups = {"body": ["height", "weight"], "treatment": ["dose"]}
    players = ["body", "treatment", "age", "pulse"]
    X, _ = data(n=5, seed=1)
    single = ProductKernelExplainer(regressor(), groups=groups).fit()
    assert list(single.player_names_) == players
    assert list(single.feature_names_in_) == FEATURES
    phi = single.explain(X)
    assert list(phi.columns) == players
    pd.testing.assert_index_equal(phi.index, X.index)

    multi = ProductKernelExplainer(classifier(), groups=groups).fit()
    phi = multi.explain(X)
    assert phi.columns.names == ["output", "feature"]
    assert list(phi.columns) == [
        (output, player) for output in multi.output_names_ for player in players
    ]


def test_output_layout():
    X, _ = data(n=6, seed=1)
    X = X.iloc[[5, 0, 3, 1, 4, 2]]
    single = ProductKernelExplainer(regressor()).fit()
    phi = single.explain(X)
    pd.testing.assert_index_equal(phi.index, X.index)
    assert list(phi.columns) == FEATURES
    assert type(single.expected_value_) is float
    assert single.output_names_ == ("target",)
    assert single.raw_output_ == "value"
    assert set(phi.attrs) >= {"n_quadrature_points", "quadrature_error_bound"}
    assert isinstance(phi.attrs["n_quadrature_points"], int)
    assert isinstance(phi.attrs["quadrature_error_bound"], float)
    assert single.raw_predict(X).shape == (6,)
    pd.testing.assert_index_equal(single.explain(X.to_numpy()).index, pd.RangeIndex(6))
    assert single.explain(X.iloc[:0]).shape == (0, 5)

    model = classifier()
    multi = ProductKernelExplainer(model).fit()
    phi = multi.explain(X)
    pd.testing.assert_index_equal(phi.index, X.index)
    pairs = ("high vs low", "high vs mid", "low vs mid")  # classes_ are sorted
    assert multi.output_names_ == pairs
    assert multi.raw_output_ == "decision function"
    assert list(phi.columns) == [(pair, f) for pair in pairs for f in FEATURES]
    assert isinstance(multi.expected_value_, pd.Series)
    assert tuple(multi.expected_value_.index) == pairs
    assert multi.raw_predict(X).shape == (6, 3)
