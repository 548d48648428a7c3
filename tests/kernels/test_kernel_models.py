"""Kernel models through ProductKernelExplainer, model by model and kernel by kernel.

For every supported model and kernel: the parsed kernel game reproduces the
model's own output (``predict``, ``decision_function``, a GPC's latent mean),
the base value is ``Σα + c`` read off the model's attributes, the outputs are
named as documented, and the Shapley values sum to the output.
"""

from functools import cache

import numpy as np
import pytest
from naive import gp_kernel_without_features, kernel_expansions, kernel_model_output
from sklearn.base import clone
from sklearn.gaussian_process import (
    GaussianProcessClassifier,
    GaussianProcessRegressor,
)
from sklearn.gaussian_process.kernels import RBF, WhiteKernel
from sklearn.gaussian_process.kernels import ConstantKernel as C
from sklearn.kernel_ridge import KernelRidge
from sklearn.svm import SVC, SVR, NuSVC, NuSVR, OneClassSVM

from skshapley import ProductKernelExplainer

# The model sums K(x, r_i) alpha_i with K from scikit-learn's pairwise
# distances (||x||^2 + ||r||^2 - 2 x.r, which cancels); the game multiplies
# per-feature factors. Both round to ~1e-16 of sum_i |alpha_i|, which is up
# to ~200 times the largest output here (ill-conditioned GP fits): measured
# <= 3e-13 relative. 1e-10 fails at any wrong gamma, length scale, constant,
# sign or intercept (errors of 1e-3 and more).
CONVERSION_RTOL = 1e-10

# Efficiency holds exactly for the exact quadrature rule (d = 5 here), up to
# rounding of the same size as above.
EFFICIENCY_RTOL = 1e-10

N_FEATURES = 5
LENGTH_SCALES = [0.8, 1.5, 2.0, 1.0, 3.0]
OTHER_SCALES = [2.0, 0.7, 1.2, 4.0, 1.1]


def gpr(kernel, **params):
    """A GP regressor with the given kernel, its hyperparameters kept."""
    return GaussianProcessRegressor(kernel, alpha=1e-2, optimizer=None, **params)


# name: (unfitted model, target kind)
MODELS = {
    "kernel_ridge_rbf": (KernelRidge(kernel="rbf"), "regression"),
    "kernel_ridge_rbf_gamma": (KernelRidge(kernel="rbf", gamma=0.7), "regression"),
    "kernel_ridge_rbf_two_targets": (KernelRidge(kernel="rbf"), "two targets"),
    "kernel_ridge_laplacian": (KernelRidge(kernel="laplacian"), "regression"),
    "kernel_ridge_laplacian_gamma": (
        KernelRidge(kernel="laplacian", gamma=0.4),
        "three targets",
    ),
    "kernel_ridge_chi2": (KernelRidge(kernel="chi2", gamma=0.5), "nonnegative"),
    "kernel_ridge_chi2_two_targets": (
        KernelRidge(kernel="chi2", gamma=2.0),
        "nonnegative two targets",
    ),
    "kernel_ridge_gp_rbf": (KernelRidge(kernel=RBF(LENGTH_SCALES)), "regression"),
    "kernel_ridge_gp_sum_constant": (
        KernelRidge(kernel=C(2.0) * RBF(1.5) + C(0.5)),
        "two targets",
    ),
    "svr_scale": (SVR(), "regression"),
    "svr_auto": (SVR(gamma="auto", C=3.0), "regression"),
    "svr_gamma": (SVR(gamma=0.3, epsilon=0.05), "regression"),
    "nu_svr": (NuSVR(gamma="auto", nu=0.4), "regression"),
    "svc_binary": (SVC(), "binary"),
    "svc_binary_labels": (SVC(gamma=0.4, C=2.0), "binary labels"),
    "nu_svc_binary": (NuSVC(gamma="auto"), "binary"),
    "svc_multiclass": (SVC(), "multiclass"),
    "svc_multiclass_ovo": (SVC(decision_function_shape="ovo"), "four classes"),
    "nu_svc_multiclass": (NuSVC(gamma=0.3, nu=0.3), "multiclass"),
    "gpr_default_kernel": (gpr(None), "regression"),
    "gpr_rbf": (gpr(RBF(1.3)), "regression"),
    "gpr_rbf_anisotropic": (gpr(RBF(LENGTH_SCALES)), "regression"),
    "gpr_constant_rbf": (gpr(C(2.5) * RBF(LENGTH_SCALES)), "regression"),
    "gpr_constant_rbf_white": (
        gpr(C(2.5) * RBF(LENGTH_SCALES) + WhiteKernel(0.2)),
        "regression",
    ),
    "gpr_fitted_constant_rbf_white": (
        GaussianProcessRegressor(
            C(1.0) * RBF(np.ones(N_FEATURES), (1e-2, 1e3)) + WhiteKernel(0.1),
            random_state=0,
        ),
        "smooth",
    ),
    "gpr_rbf_plus_rbf": (gpr(RBF(1.0) + RBF(OTHER_SCALES)), "regression"),
    "gpr_product_of_rbfs": (
        gpr((C(1.5) * RBF(2.0)) * RBF(OTHER_SCALES)),
        "regression",
    ),
    "gpr_sum_with_constant": (gpr(RBF(LENGTH_SCALES) + C(0.7)), "regression"),
    "gpr_sum_of_products": (
        gpr(C(0.5) * RBF(LENGTH_SCALES) + C(2.0) * RBF(OTHER_SCALES) + C(0.1)),
        "regression",
    ),
    "gpr_white_in_products": (
        gpr(C(2.0) * WhiteKernel(0.1) + RBF(1.0) * WhiteKernel(0.2) + RBF(2.0)),
        "regression",
    ),
    "gpr_constant_only": (gpr(C(0.5)), "regression"),
    "gpr_normalize_y": (
        gpr(C(0.8) * RBF(LENGTH_SCALES) + WhiteKernel(0.1), normalize_y=True),
        "regression",
    ),
    "gpr_two_targets": (gpr(RBF(OTHER_SCALES)), "two targets"),
    "gpr_two_targets_normalize_y": (
        gpr(C(2.0) * RBF(LENGTH_SCALES), normalize_y=True),
        "two targets",
    ),
    "gpc_rbf": (
        GaussianProcessClassifier(RBF(1.0), optimizer=None),
        "binary labels",
    ),
    "gpc_fitted_constant_rbf": (
        GaussianProcessClassifier(
            C(1.0) * RBF(np.ones(N_FEATURES), (1e-2, 1e3)), random_state=0
        ),
        "half-space",
    ),
    # One-vs-rest: one latent mean per class; with optimizer=None the
    # classes share their kernel, fitted each class has its own.
    "gpc_one_vs_rest": (
        GaussianProcessClassifier(C(2.0) * RBF(LENGTH_SCALES), optimizer=None),
        "multiclass",
    ),
    "gpc_one_vs_rest_fitted": (
        GaussianProcessClassifier(RBF(1.0), random_state=0),
        "four classes",
    ),
    # y is ignored: decision_function, of a shape the data decide.
    "one_class_svm": (OneClassSVM(), "regression"),
    "one_class_svm_gamma": (OneClassSVM(gamma=0.4, nu=0.2), "regression"),
}


def training_data(kind, n=60, seed=0):
    """Random X (>= 0 with exact zeros for chi2) and the target of ``kind``."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, N_FEATURES))
    if kind.startswith("nonnegative"):
        X = np.abs(X)
        X[rng.random(X.shape) < 0.1] = 0.0  # x + y = 0: chi2's 0/0 term
    y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] - 0.5 * X[:, 3] + 0.1 * rng.normal(size=n)
    classes = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
    targets = {
        "regression": y,
        "nonnegative": y,
        # Targets on which the optimizer keeps every length scale inside
        # its bounds (else scikit-learn warns).
        "smooth": np.sin(2 * X[:, 0])
        + np.cos(X[:, 1]) * X[:, 2]
        + np.sin(X[:, 3] * X[:, 4])
        + 0.1 * rng.normal(size=n),
        "half-space": np.where(X.sum(axis=1) > 0, "in", "out"),
        "two targets": np.c_[y, X[:, 4] - X[:, 0]],
        "nonnegative two targets": np.c_[y, X[:, 4] - X[:, 0]],
        "three targets": np.c_[y, X[:, 4] - X[:, 0], 10 * X[:, 1]],
        "binary": (y > np.median(y)).astype(int),
        "binary labels": np.where(y > np.median(y), "yes", "no"),
        "multiclass": np.array(["low", "mid", "high"])[classes],
        "four classes": np.digitize(y, np.quantile(y, [0.25, 0.5, 0.75])),
    }
    return X, targets[kind]


@cache
def fitted(name):
    """A fitted model, its explainer and its training data (cached: read only)."""
    model, kind = MODELS[name]
    X, y = training_data(kind)
    model = clone(model).fit(X, y)
    return model, ProductKernelExplainer(model).fit(), X, y


def rows(name):
    """Training rows and new rows from the same distribution."""
    _, _, X, _ = fitted(name)
    new, _ = training_data(MODELS[name][1], n=15, seed=1)
    return np.vstack([X[:15], new])


def assert_close(actual, expected, rtol, scale=None):
    """``|actual - expected| <= rtol * scale``, ``scale`` the largest |expected|."""
    scale = np.abs(expected).max() if scale is None else scale
    np.testing.assert_allclose(actual, expected, rtol=0, atol=rtol * scale)


def expected_outputs(model, y):
    """Output names and raw output kind that the explainer should report."""
    if isinstance(model, SVC | NuSVC):
        classes = model.classes_
        if len(classes) == 2:
            return (classes[1],), "decision function"
        pairs = [
            f"{classes[i]} vs {classes[j]}"
            for i in range(len(classes))
            for j in range(i + 1, len(classes))
        ]
        return tuple(pairs), "decision function"
    if isinstance(model, GaussianProcessClassifier):
        classes = model.classes_
        return tuple(classes[1:] if len(classes) == 2 else classes), "latent mean"
    if isinstance(model, OneClassSVM):
        return ("target",), "decision function"
    if y.ndim == 2:
        return tuple(f"target {k}" for k in range(y.shape[1])), "value"
    return ("target",), "value"


@pytest.mark.parametrize("name", MODELS)
def test_raw_predict_matches_model(name):
    model, explainer, _, y = fitted(name)
    X = rows(name)
    expected = kernel_model_output(model, X)
    actual = explainer.raw_predict(X)
    assert actual.shape == expected.shape
    assert_close(actual, expected, CONVERSION_RTOL)
    output_names, raw_output = expected_outputs(model, y)
    assert explainer.output_names_ == output_names
    assert explainer.raw_output_ == raw_output
    assert explainer.n_features_in_ == N_FEATURES
    assert list(explainer.feature_names_in_) == [f"x{j}" for j in range(N_FEATURES)]


@pytest.mark.parametrize(
    "name", [name for name in MODELS if "multiclass" in name or "ovo" in name]
)
def test_multiclass_outputs_are_one_vs_one(name):
    # Whatever decision_function_shape the model has, the outputs are the
    # one-vs-one functions, one per pair of classes (for a model fitted with
    # "ovo", its own decision_function).
    model, explainer, _, _ = fitted(name)
    n_classes = len(model.classes_)
    assert len(explainer.output_names_) == n_classes * (n_classes - 1) // 2
    if model.decision_function_shape == "ovo":
        X = rows(name)
        expected = model.decision_function(X)
        assert_close(explainer.raw_predict(X), expected, CONVERSION_RTOL)


@pytest.mark.parametrize(
    "name", [name for name in MODELS if "gpc" in name and "one_vs_rest" not in name]
)
def test_gpc_latent_mean_sign_is_the_prediction(name):
    model, explainer, _, _ = fitted(name)
    X = rows(name)
    latent = explainer.raw_predict(X)
    predicted = np.where(latent > 0, model.classes_[1], model.classes_[0])
    np.testing.assert_array_equal(predicted, model.predict(X))
    assert (latent > 0).any()
    assert (latent < 0).any()


@pytest.mark.parametrize("name", [name for name in MODELS if "one_vs_rest" in name])
def test_gpc_one_vs_rest_latent_means(name):
    # Output k is the latent mean of class k against the rest: positive
    # exactly where that binary classifier predicts the class. Classes that
    # share a kernel share its games.
    model, explainer, _, _ = fitted(name)
    X = rows(name)
    latent = explainer.raw_predict(X)
    binaries = model.base_estimator_.estimators_
    assert latent.shape == (len(X), len(model.classes_))
    for k, binary in enumerate(binaries):
        np.testing.assert_array_equal(latent[:, k] > 0, binary.predict(X) == 1)
    n_kernels = len({repr(binary.kernel_) for binary in binaries})
    assert n_kernels == (1 if model.optimizer is None else len(binaries))
    assert len(explainer.game_.components) == n_kernels


@pytest.mark.parametrize("name", MODELS)
def test_expected_value_is_sum_of_dual_weights(name):
    # v(∅) = Σα k_∅ + c, with k_∅ the kernel on no features: 1 for a
    # product kernel, the constants' total for a GP kernel (white noise adds 0).
    model, explainer, _, _ = fitted(name)
    expected = scale = 0.0
    for _, alpha, c, (kernel, _) in kernel_expansions(model):
        k_empty = 1.0 if isinstance(kernel, str) else gp_kernel_without_features(kernel)
        expected = expected + alpha.sum(axis=0) * k_empty + c
        scale += np.abs(alpha).sum(axis=0).max() * max(k_empty, 1.0) + np.abs(c).max()
    assert_close(np.ravel(explainer.expected_value_), expected, 1e-13, scale)
    if len(explainer.output_names_) == 1:
        assert type(explainer.expected_value_) is float
    else:
        assert list(explainer.expected_value_.index) == list(explainer.output_names_)


@pytest.mark.parametrize(
    "name", ["gpr_normalize_y", "gpr_two_targets_normalize_y", "gpr_rbf"]
)
def test_gpr_normalize_y_statistics(name):
    # The mean and standard deviation of the training targets, computed here
    # rather than read from the model's private attributes.
    model, explainer, _, y = fitted(name)
    mean, std = (y.mean(axis=0), y.std(axis=0)) if model.normalize_y else (0.0, 1.0)
    kernel = model.kernel_
    expected = mean + std * gp_kernel_without_features(kernel) * model.alpha_.sum(0)
    assert_close(np.ravel(explainer.expected_value_), np.ravel(expected), 1e-13)


@pytest.mark.parametrize("name", MODELS)
def test_efficiency(name):
    model, explainer, _, _ = fitted(name)
    X = rows(name)
    phi = explainer.explain(X)
    expected = kernel_model_output(model, X)
    names = explainer.output_names_
    # d = 5: "auto" is the exact rule, ceil(5 / 2) points at most.
    assert phi.attrs["n_quadrature_points"] <= 3
    assert phi.attrs["quadrature_error_bound"] == 0.0
    if len(names) == 1:
        assert list(phi.columns) == [f"x{j}" for j in range(N_FEATURES)]
        total = phi.sum(axis=1).to_numpy() + explainer.expected_value_
    else:
        assert phi.columns.names == ["output", "feature"]
        assert list(phi.columns) == [
            (output, f"x{j}") for output in names for j in range(N_FEATURES)
        ]
        total = np.column_stack(
            [
                phi[output].sum(axis=1) + explainer.expected_value_[output]
                for output in names
            ]
        )
    assert_close(total, expected, EFFICIENCY_RTOL)
    assert_close(total, explainer.raw_predict(X), EFFICIENCY_RTOL)


# ---- attributes as a tampered model file delivers them ---------------------


def _fitted(model, n_classes=0):
    rng = np.random.default_rng(5)
    X = rng.uniform(0.1, 2.0, size=(30, 3))
    y = X[:, 0] - X[:, 1] if not n_classes else np.arange(30) % n_classes
    return clone(model).fit(X, y)


def _set(model, path, value):
    """Set the attribute at dotted ``path`` (e.g. ``kernel_.k2.length_scale``)."""
    *owners, name = path.split(".")
    for owner in owners:
        model = getattr(model, owner)
    setattr(model, name, value)


@pytest.mark.parametrize(
    ("model", "n_classes", "attribute", "value", "named"),
    [
        (KernelRidge(kernel="rbf", gamma=0.5), 0, "gamma", np.nan, "gamma"),
        (KernelRidge(kernel="rbf", gamma=0.5), 0, "gamma", -1.0, "gamma"),
        (KernelRidge(kernel="laplacian", gamma=0.5), 0, "gamma", np.inf, "gamma"),
        (KernelRidge(kernel="chi2", gamma=0.5), 0, "gamma", "big", "gamma"),
        (KernelRidge(kernel="rbf"), 0, "dual_coef_", np.array([np.nan] * 30),
         "dual_coef_"),
        (KernelRidge(kernel="rbf"), 0, "dual_coef_", np.ones(7), "dual coefficients"),
        (KernelRidge(kernel="rbf"), 0, "X_fit_", np.full((30, 3), np.inf), "X_fit_"),
        (KernelRidge(kernel="rbf"), 0, "X_fit_", np.array([["a"] * 3] * 30), "X_fit_"),
        (SVR(), 0, "_gamma", -0.1, "gamma"),
        (SVR(), 0, "support_vectors_", np.zeros((0, 3)), "support_vectors_"),
        (SVR(), 0, "_intercept_", np.array([np.nan]), "intercept_"),
        (SVC(), 3, "_n_support", np.array([1, 1, 1]), "n_support_"),
        (SVC(), 2, "_intercept_", np.zeros(3), "intercept_"),
        (SVC(), 2, "classes_", np.array([0]), "classes_"),
        (GaussianProcessRegressor(C(2.0) * RBF([1.0] * 3), optimizer=None), 0,
         "kernel_.k2.length_scale", np.array([1.0, 0.0, 1.0]), "length_scale"),
        (GaussianProcessRegressor(C(2.0) * RBF(1.0), optimizer=None), 0,
         "kernel_.k2.length_scale", np.nan, "length_scale"),
        (GaussianProcessRegressor(C(2.0) * RBF(1.0), optimizer=None), 0,
         "kernel_.k1.constant_value", -2.0, "constant_value"),
        (GaussianProcessRegressor(RBF(1.0), optimizer=None), 0, "alpha_",
         np.full(30, np.nan), "alpha_"),
        (GaussianProcessRegressor(RBF(1.0), normalize_y=True, optimizer=None), 0,
         "_y_train_std", np.inf, "_y_train_std"),
        (GaussianProcessClassifier(RBF(1.0), optimizer=None), 2,
         "base_estimator_.pi_",
         np.full(30, np.nan), "pi_"),
        (GaussianProcessClassifier(RBF(1.0), optimizer=None), 3,
         "base_estimator_.estimators_", [], "estimators_"),
        (OneClassSVM(), 0, "_intercept_", np.array([np.inf]), "intercept_"),
        (OneClassSVM(), 0, "_impl", "c_svc", "libsvm implementation"),
    ],
)  # fmt: skip
def test_bad_model_numbers_give_a_value_error_naming_them(
    model, n_classes, attribute, value, named
):
    model = _fitted(model, n_classes)
    _set(model, attribute, value)
    with pytest.raises(ValueError, match=named):
        ProductKernelExplainer(model).fit()


def test_one_vs_rest_classes_with_their_own_points_stay_apart():
    # Equal kernels are shared only with equal training points: a model
    # (say, from a file) whose classes hold different points is explained
    # as it predicts.
    model = _fitted(GaussianProcessClassifier(RBF(1.0), optimizer=None), 3)
    binary = model.base_estimator_.estimators_[1]
    binary.X_train_ = binary.X_train_ + 0.5
    X = np.random.default_rng(2).uniform(0.1, 2.0, size=(6, 3))
    explainer = ProductKernelExplainer(model).fit()
    expected = kernel_model_output(model, X)
    assert_close(explainer.raw_predict(X), expected, CONVERSION_RTOL)
    total = np.column_stack(
        [
            explainer.explain(X)[k].sum(axis=1) + explainer.expected_value_[k]
            for k in explainer.output_names_
        ]
    )
    assert_close(total, expected, EFFICIENCY_RTOL)


def test_bad_number_in_one_class_of_a_multiclass_gpc_is_named():
    model = _fitted(GaussianProcessClassifier(RBF(1.0), optimizer=None), 3)
    model.base_estimator_.estimators_[1].y_train_ = np.full(30, np.nan)
    with pytest.raises(ValueError, match=r"estimators_\[1\]\.y_train_"):
        ProductKernelExplainer(model).fit()


@pytest.mark.parametrize("gamma", [0, 0.0])
def test_zero_gamma_is_a_constant_model(gamma):
    # scikit-learn accepts gamma = 0: every kernel value is 1, the model is
    # constant and every attribution is exactly 0.
    model = _fitted(KernelRidge(kernel="rbf", gamma=gamma))
    X = np.random.default_rng(1).uniform(size=(4, 3))
    explainer = ProductKernelExplainer(model).fit()
    phi = explainer.explain(X)
    assert np.all(phi.to_numpy() == 0.0)
    np.testing.assert_allclose(explainer.expected_value_, model.predict(X), rtol=1e-12)


def test_missing_attribute_gives_a_value_error():
    # An attribute no check names (the fitted gamma) is missing,
    # as a file may leave it: the parsers' last line of defence reports it.
    model = _fitted(SVR())
    del model._gamma
    with pytest.raises(ValueError, match="malformed"):
        ProductKernelExplainer(model).fit()
