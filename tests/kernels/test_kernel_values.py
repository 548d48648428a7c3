"""ProductKernelExplainer's values against independent references.

Brute force: v(S) for every coalition from scikit-learn's own kernels on the
columns in S, then Shapley values by enumeration (tests/naive.py); groups
through the quotient game. Parity with shapiq's PKeX-Shapley explainer where
it supports the model. Efficiency at d = 5000, the "auto" quadrature rule
against the exact one and its error bound, and the Shapley axioms as
hypothesis properties.
"""

import copy
from functools import cache

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from naive import (
    kernel_model_output,
    kernel_value_table,
    shapley_of_tables,
)
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

# The oracle sums 2**d differences of values of the game's size with weights
# |S|!(d-|S|-1)!/d!; each v(S), from both sides, carries ~1e-16 of
# sum_i |alpha_i| (which is up to ~700 times max_S |v(S)| for the far rows).
# Measured: <= 5e-15 of max_S |v(S)|. 1e-12 leaves room for that and fails
# at any wrong factor, weight or coalition (errors of 1e-4 and more).
BRUTE_FORCE_RTOL = 1e-12

# shapiq's PKeX-Shapley recursion builds elementary symmetric polynomials of
# the kernel vectors, with alternating signs and factorial weights: it loses
# a few digits more than the quadrature (measured: <= 2e-15 of max |phi| at
# d = 6). 1e-10 still fails at any real difference.
SHAPIQ_RTOL = 1e-10

# Efficiency at d = 5000: each value sums 5000 log-factors and a quadrature
# over a handful of points; the loss is ~1e-13 of the game's scale at most.
# 1e-10 is what the issue asks for.
EFFICIENCY_RTOL = 1e-10

# Two quadrature rules that are both exact (or within one unit in the last
# place of the game's scale) give values that differ by rounding only.
ROUNDING_RTOL = 1e-12

LENGTH_SCALES = [0.8, 1.5, 2.0, 1.0, 3.0, 1.2]
OTHER_SCALES = [2.0, 0.7, 1.2, 4.0, 1.1, 0.9]


def gpr(kernel, **params):
    """A GP regressor with the given kernel, its hyperparameters kept."""
    return GaussianProcessRegressor(kernel, alpha=1e-2, optimizer=None, **params)


# name: (unfitted model, target kind, number of features)
MODELS = {
    "kernel_ridge_rbf": (KernelRidge(kernel="rbf"), "two targets", 6),
    "kernel_ridge_rbf_gamma": (KernelRidge(kernel="rbf", gamma=0.3), "regression", 8),
    "kernel_ridge_laplacian": (KernelRidge(kernel="laplacian"), "regression", 6),
    "kernel_ridge_laplacian_gamma": (
        KernelRidge(kernel="laplacian", gamma=0.2),
        "regression",
        8,
    ),
    "kernel_ridge_chi2": (KernelRidge(kernel="chi2", gamma=0.7), "nonnegative", 6),
    "kernel_ridge_gp_kernel": (
        KernelRidge(kernel=C(1.5) * RBF(LENGTH_SCALES) + C(0.3)),
        "regression",
        6,
    ),
    "svr_scale": (SVR(), "regression", 6),
    "svr_auto": (SVR(gamma="auto"), "regression", 6),
    "nu_svr_gamma": (NuSVR(gamma=0.4), "regression", 6),
    "svc_binary": (SVC(), "binary", 6),
    "nu_svc_binary_labels": (NuSVC(gamma=0.2), "binary labels", 6),
    "svc_multiclass": (SVC(gamma="auto"), "multiclass", 6),
    "nu_svc_multiclass": (NuSVC(nu=0.3), "multiclass", 6),
    "gpr_rbf": (gpr(RBF(1.3)), "regression", 6),
    "gpr_constant_rbf_white_normalize_y": (
        gpr(C(2.0) * RBF(LENGTH_SCALES) + WhiteKernel(0.1), normalize_y=True),
        "regression",
        6,
    ),
    "gpr_rbf_plus_rbf_two_targets": (
        gpr(RBF(1.0) + RBF(OTHER_SCALES), normalize_y=True),
        "two targets",
        6,
    ),
    "gpr_product_of_rbfs": (
        gpr((C(1.5) * RBF(LENGTH_SCALES)) * RBF(2.0)),
        "regression",
        6,
    ),
    "gpr_sum_with_constant": (gpr(RBF(OTHER_SCALES) + C(0.7)), "regression", 6),
    "gpr_white_in_products": (
        gpr(C(2.0) * WhiteKernel(0.1) + RBF(1.0) * WhiteKernel(0.2) + RBF(2.0)),
        "regression",
        6,
    ),
    "gpc_constant_rbf": (
        GaussianProcessClassifier(C(2.0) * RBF(LENGTH_SCALES), optimizer=None),
        "binary",
        6,
    ),
    "gpc_one_vs_rest": (
        GaussianProcessClassifier(C(2.0) * RBF(LENGTH_SCALES), optimizer=None),
        "multiclass",
        6,
    ),
    # Each class's own fitted kernel.
    "gpc_one_vs_rest_fitted": (
        GaussianProcessClassifier(RBF(1.0), random_state=0),
        "multiclass",
        6,
    ),
    "one_class_svm": (OneClassSVM(gamma=0.3, nu=0.3), "regression", 6),
}


def training_data(kind, n_features, n=50, seed=0):
    """Random X (>= 0 with exact zeros for chi2) and the target of ``kind``."""
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    if kind == "nonnegative":
        X = np.abs(X)
        X[rng.random(X.shape) < 0.15] = 0.0  # x + y = 0: chi2's 0/0 term
    y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] - 0.5 * X[:, 3] + 0.1 * rng.normal(size=n)
    targets = {
        "regression": y,
        "nonnegative": y,
        "two targets": np.c_[y, X[:, 4] - X[:, 0]],
        "binary": (y > np.median(y)).astype(int),
        "binary labels": np.where(y > np.median(y), "yes", "no"),
        "multiclass": np.array(["low", "mid", "high"])[
            np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
        ],
    }
    return X, targets[kind]


@cache
def fitted(name):
    """A fitted model, its explainer and its training X (cached: read only)."""
    model, kind, n_features = MODELS[name]
    X, y = training_data(kind, n_features)
    model = clone(model).fit(X, y)
    return model, ProductKernelExplainer(model).fit(), X


def rows(name, n_new=2):
    """Two training rows, ``n_new`` new rows and two far from all the data.

    Far rows: one feature 40 away (kernel factors ~1e-100 and below) and
    every feature at 1000 (factors that underflow to 0 in float64).
    """
    _, kind, n_features = MODELS[name]
    X = fitted(name)[2]
    new, _ = training_data(kind, n_features, n=n_new, seed=1)
    shifted = X[2].copy()
    shifted[1] += 40.0
    return np.vstack([X[:2], new, shifted, np.full(n_features, 1000.0)])


def as_array(phi, explainer):
    """The explanation as an array of shape (n_samples, n_players, n_outputs)."""
    if len(explainer.output_names_) == 1:
        return phi.to_numpy()[:, :, None]
    return np.stack(
        [phi[output].to_numpy() for output in explainer.output_names_], axis=2
    )


def assert_close(actual, expected, rtol, scale=None):
    """``|actual - expected| <= rtol * scale``, ``scale`` the largest |expected|."""
    scale = np.abs(expected).max() if scale is None else scale
    np.testing.assert_allclose(actual, expected, rtol=0, atol=rtol * scale)


@pytest.mark.parametrize("name", MODELS)
def test_matches_brute_force(name):
    model, explainer, _ = fitted(name)
    X = rows(name)
    phi = as_array(explainer.explain(X), explainer)
    for x, phi_x, output in zip(X, phi, kernel_model_output(model, X), strict=True):
        table = kernel_value_table(model, x)
        scale = np.abs(table).max()
        # The oracle is the model: v(all features) is its output.
        assert_close(table[-1], np.ravel(output), BRUTE_FORCE_RTOL, scale)
        assert_close(phi_x, shapley_of_tables(table), BRUTE_FORCE_RTOL, scale)
        assert_close(
            np.ravel(explainer.expected_value_), table[0], BRUTE_FORCE_RTOL, scale
        )


@pytest.mark.parametrize(
    ("name", "by"),
    [
        ("kernel_ridge_laplacian_gamma", "name"),
        ("kernel_ridge_rbf", "position"),
        ("svc_multiclass", "name"),
        ("gpr_constant_rbf_white_normalize_y", "name"),
    ],
)
def test_groups_match_the_quotient_game(name, by):
    model, _, _ = fitted(name)
    n_features = MODELS[name][2]
    members = {"first": [3, 0], "second": [2, 4, 5]}
    groups = {
        group: [f"x{j}" if by == "name" else j for j in positions]
        for group, positions in members.items()
    }
    explainer = ProductKernelExplainer(model, groups=groups).fit()
    # Players: the groups in mapping order, then the other features in order.
    ungrouped = [j for j in range(n_features) if j not in {0, 2, 3, 4, 5}]
    players = [*members.values(), *([j] for j in ungrouped)]
    names = ["first", "second", *(f"x{j}" for j in ungrouped)]
    assert list(explainer.player_names_) == names
    X = rows(name)
    phi = explainer.explain(X)
    if len(explainer.output_names_) == 1:
        assert list(phi.columns) == names
    else:
        outputs = explainer.output_names_
        assert list(phi.columns) == [
            (out, player) for out in outputs for player in names
        ]
    for x, phi_x in zip(X, as_array(phi, explainer), strict=True):
        table = kernel_value_table(model, x)
        expected = shapley_of_tables(table, groups=players)
        scale = np.abs(table).max()
        assert_close(phi_x, expected, BRUTE_FORCE_RTOL, scale)
    # Efficiency holds for the groups as for the features.
    ungrouped_phi = ProductKernelExplainer(model).fit().explain(X)
    np.testing.assert_allclose(
        as_array(explainer.explain(X), explainer).sum(axis=1),
        as_array(ungrouped_phi, explainer).sum(axis=1),
        rtol=0,
        atol=BRUTE_FORCE_RTOL * np.abs(kernel_model_output(model, X)).max(),
    )


SHAPIQ_MODELS = {
    "svr_scale": SVR(),
    "svr_auto": SVR(gamma="auto", C=3.0),
    "svr_gamma": SVR(gamma=0.4, epsilon=0.05),
    "svc_binary": SVC(),
    "svc_binary_gamma": SVC(gamma=0.3, C=2.0),
    "gpr_rbf": gpr(RBF(1.3)),
    "gpr_rbf_fitted": GaussianProcessRegressor(RBF(1.0), alpha=1e-2),
}


@pytest.mark.parametrize("name", SHAPIQ_MODELS)
def test_matches_shapiq(name):
    # shapiq supports SVR, binary SVC (explaining decision_function, the
    # positive class classes_[1]) and a GP regressor whose kernel_ is a bare
    # isotropic RBF, without normalize_y.
    pytest.importorskip("shapiq")
    from shapiq.explainer.product_kernel import ProductKernelExplainer as ShapiqPKE

    model = SHAPIQ_MODELS[name]
    kind = "binary" if isinstance(model, SVC) else "regression"
    X, y = training_data(kind, 6)
    model = clone(model).fit(X, y)
    explainer = ProductKernelExplainer(model).fit()
    reference = ShapiqPKE(model)
    rows_ = np.vstack([X[:2], training_data(kind, 6, n=2, seed=1)[0]])
    phi = explainer.explain(rows_).to_numpy()
    output = kernel_model_output(model, rows_)
    for x, phi_x, output_x in zip(rows_, phi, output, strict=True):
        values = reference.explain(x)
        expected = values.get_n_order_values(1)
        # shapiq's values sum to the same output: the same sign convention.
        scale = np.abs(expected).max()
        assert expected.sum() + values.baseline_value == pytest.approx(
            output_x, abs=SHAPIQ_RTOL * max(scale, abs(output_x))
        )
        assert_close(phi_x, expected, SHAPIQ_RTOL, scale)
        assert explainer.expected_value_ == pytest.approx(
            values.baseline_value, abs=SHAPIQ_RTOL * max(scale, abs(output_x))
        )


def low_rank_data(n, n_features, seed=0):
    """Rows near a 5-dimensional subspace, so kernel values spread out."""
    rng = np.random.default_rng(seed)
    latent = rng.normal(size=(n, 5))
    loadings = rng.normal(size=(5, n_features)) / np.sqrt(5)
    X = latent @ loadings + 0.5 * rng.normal(size=(n, n_features))
    return X, latent[:, 0] + np.sin(latent[:, 1])


@pytest.mark.parametrize("gamma_times_d", [None, 5.0])
def test_efficiency_at_5000_features(gamma_times_d):
    d = 5000
    X, y = low_rank_data(63, d)
    gamma = None if gamma_times_d is None else gamma_times_d / d
    model = KernelRidge(kernel="rbf", gamma=gamma, alpha=0.1).fit(X[:60], y[:60])
    explainer = ProductKernelExplainer(model).fit()
    rows_ = X[[0, 60, 61, 62]]  # a reference point and three new rows
    phi = explainer.explain(rows_)
    raw = explainer.raw_predict(rows_)
    predicted = model.predict(rows_)
    # The game's scale: its largest values are v(N) and v(∅).
    scale = max(np.abs(predicted).max(), abs(explainer.expected_value_))
    assert_close(raw, predicted, EFFICIENCY_RTOL, scale)
    total = phi.sum(axis=1).to_numpy() + explainer.expected_value_
    assert_close(total, predicted, EFFICIENCY_RTOL, scale)
    assert phi.attrs["n_quadrature_points"] < d // 2  # "auto" needs far fewer
    assert phi.attrs["quadrature_error_bound"] <= EFFICIENCY_RTOL * scale


@cache
def wide_model(d=1200, gamma_times_d=None):
    X, y = low_rank_data(52, d, seed=3)
    gamma = None if gamma_times_d is None else gamma_times_d / d
    model = KernelRidge(kernel="rbf", gamma=gamma, alpha=0.1).fit(X[:50], y[:50])
    return model, X[[0, 50, 51]]


@cache
def exact_values(d=1200, gamma_times_d=None):
    """Values by the exact rule ceil(d / 2)."""
    model, X = wide_model(d, gamma_times_d)
    exact = ProductKernelExplainer(model, n_quadrature_points=-(-d // 2)).fit()
    phi = exact.explain(X)
    assert phi.attrs["n_quadrature_points"] == -(-d // 2)
    assert phi.attrs["quadrature_error_bound"] == 0.0  # the exact rule
    return phi.to_numpy()


@pytest.mark.parametrize("gamma_times_d", [None, 5.0])
def test_auto_matches_the_exact_rule(gamma_times_d):
    d = 1200
    model, X = wide_model(d, gamma_times_d)
    exact = exact_values(d, gamma_times_d)
    scale = np.abs(exact).max()
    auto = ProductKernelExplainer(model).fit().explain(X)
    difference = np.abs(auto.to_numpy() - exact).max()
    assert difference <= ROUNDING_RTOL * scale
    bound = auto.attrs["quadrature_error_bound"]
    if auto.attrs["n_quadrature_points"] >= -(-d // 2):
        assert bound == 0.0
    else:
        assert bound > 0.0
    # The bound covers the quadrature error; the exact rule's own rounding
    # (measured: ~1e-15 of max |phi|) comes on top of it.
    assert difference <= bound + 1e-13 * scale


@pytest.mark.parametrize(
    ("gamma_times_d", "n_points"), [(5.0, 1), (5.0, 2), (5.0, 4), (None, 8)]
)
def test_error_bound_covers_fewer_points(gamma_times_d, n_points):
    d = 1200
    model, X = wide_model(d, gamma_times_d)
    exact = exact_values(d, gamma_times_d)
    explainer = ProductKernelExplainer(model, n_quadrature_points=n_points).fit()
    phi = explainer.explain(X)
    assert phi.attrs["n_quadrature_points"] == n_points
    difference = np.abs(phi.to_numpy() - exact).max()
    # A real quadrature error (measured: 2e-12 to 0.1), far above rounding.
    assert difference > 1e-13 * np.abs(exact).max()
    assert difference <= phi.attrs["quadrature_error_bound"]


# Hypothesis: random KernelRidge models on a handful of points and features.


@st.composite
def kernel_ridge_problems(draw, min_features=1, max_features=9):
    """Training X, two targets, a row to explain and the model's parameters."""
    n = draw(st.integers(2, 12))
    d = draw(st.integers(min_features, max_features))
    rng = np.random.default_rng(draw(st.integers(0, 2**32 - 1)))
    spread = draw(st.sampled_from([0.1, 1.0, 3.0]))
    X = spread * rng.normal(size=(n, d))
    targets = rng.normal(size=(n, 2))
    x = spread * rng.normal(size=d)
    params = {
        "kernel": draw(st.sampled_from(["rbf", "laplacian"])),
        "gamma": draw(st.one_of(st.none(), st.floats(0.01, 3.0))),
        "alpha": draw(st.sampled_from([0.01, 1.0, 10.0])),
    }
    return X, targets, x, params


def explain_one(model, x):
    """Values and base value for one row, on one thread.

    One thread: starting OpenMP's threads costs more than these tiny games
    (the thread count's effect on values is tested in the API tests).
    """
    explainer = ProductKernelExplainer(model, n_jobs=1).fit()
    return explainer.explain(x[None]).to_numpy()[0], explainer.expected_value_


def game_scale(model):
    """|v(S)| <= sum_i |alpha_i| for every S and x: kernel factors are in (0, 1]."""
    return np.abs(model.dual_coef_).sum()


@settings(max_examples=40, deadline=None)
@given(kernel_ridge_problems(min_features=3))
def test_efficiency_symmetry_dummy(problem):
    X, targets, x, params = problem
    # Features 0 and 1 equal in x and in every reference point: symmetric.
    # The last feature equal to one value everywhere: a dummy (factor 1).
    X[:, 1], x[1] = X[:, 0], x[0]
    X[:, -1], x[-1] = 0.7, 0.7
    model = KernelRidge(**params).fit(X, targets[:, 0])
    phi, base = explain_one(model, x)
    atol = 1e-12 * game_scale(model)
    total = phi.sum() + base
    assert abs(total - model.predict(x[None])[0]) <= atol
    assert abs(phi[0] - phi[1]) <= atol
    assert abs(phi[-1]) <= atol


@settings(max_examples=30, deadline=None)
@given(kernel_ridge_problems())
def test_linearity(problem):
    X, targets, x, params = problem
    first = KernelRidge(**params).fit(X, targets[:, 0])
    second = KernelRidge(**params).fit(X, targets[:, 1])
    combined = copy.deepcopy(first)
    combined.dual_coef_ = first.dual_coef_ + second.dual_coef_
    (phi_1, base_1), (phi_2, base_2) = explain_one(first, x), explain_one(second, x)
    phi, base = explain_one(combined, x)
    atol = 1e-12 * (game_scale(first) + game_scale(second))
    np.testing.assert_allclose(phi, phi_1 + phi_2, rtol=0, atol=atol)
    assert abs(base - (base_1 + base_2)) <= atol


@settings(max_examples=30, deadline=None)
@given(kernel_ridge_problems(min_features=2), st.randoms(use_true_random=False))
def test_relabelling_features_permutes_values(problem, random):
    X, targets, x, params = problem
    order = list(range(X.shape[1]))
    random.shuffle(order)
    model = KernelRidge(**params).fit(X, targets[:, 0])
    permuted = KernelRidge(**params).fit(X[:, order], targets[:, 0])
    phi, _ = explain_one(model, x)
    phi_permuted, _ = explain_one(permuted, x[order])
    atol = 1e-12 * game_scale(model)
    np.testing.assert_allclose(phi_permuted, phi[order], rtol=0, atol=atol)


def test_factors_next_to_one_keep_their_relative_accuracy():
    # With gamma = 1e-12 every factor is 1 - O(1e-12): exp(z) - 1 would keep
    # only ~4 digits of each gap. The oracle enumerates marginal
    # contributions alpha_i * prod_{k in S} a_ik * expm1(z_ij), all of one
    # sign for each reference point: no cancellation, no subtraction of v's.
    from math import factorial

    rng = np.random.default_rng(7)
    d = 5
    X = rng.normal(size=(30, d))
    model = KernelRidge(kernel="rbf", gamma=1e-12, alpha=1e-3).fit(X, X[:, 0])
    x = rng.normal(size=d)
    z = -1e-12 * (x - X) ** 2  # log factors, (n_references, d)
    expected = np.zeros(d)
    for j in range(d):
        others = [k for k in range(d) if k != j]
        for mask in range(2 ** (d - 1)):
            members = [k for bit, k in enumerate(others) if mask >> bit & 1]
            weight = factorial(len(members)) * factorial(d - len(members) - 1)
            product = np.exp(z[:, members].sum(axis=1))
            contribution = model.dual_coef_ * product * np.expm1(z[:, j])
            expected[j] += weight / factorial(d) * contribution.sum()
    phi = ProductKernelExplainer(model).fit().explain(x[None, :])
    np.testing.assert_allclose(phi.to_numpy()[0], expected, rtol=1e-12)
