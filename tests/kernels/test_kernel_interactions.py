"""ProductKernelExplainer.explain_interactions against independent references.

Brute force: v(S) for every coalition from scikit-learn's own kernels on the
columns in S, then the Shapley interaction index by enumeration
(tests/naive.py), in shap's convention; groups through the quotient game;
the product-game core's ``product_interactions`` on the kernel factors; and
the ``"auto"`` rule against the exact one when the exact rule is too large.
"""

import numpy as np
import pytest
from naive import interactions_by_enumeration, kernel_value_table, quotient_table
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVC

from skshapley import ProductKernelExplainer
from skshapley.games import product_interactions

# The oracle sums 2**d second differences of values of the game's scale,
# each carrying ~1e-16 of sum_i |alpha_i|: 1e-12 of max_S |v(S)| leaves room
# for that and fails at any wrong factor, weight or coalition.
RTOL = 1e-12

MODELS = {
    "kernel_ridge_rbf": (KernelRidge(kernel="rbf", gamma=0.3), "regression"),
    "kernel_ridge_laplacian": (
        KernelRidge(kernel="laplacian", gamma=0.2),
        "regression",
    ),
    "kernel_ridge_chi2": (KernelRidge(kernel="chi2", gamma=0.7), "nonnegative"),
    "svc_multiclass": (SVC(gamma="auto", decision_function_shape="ovo"), "multiclass"),
    "gpr_anisotropic": (
        GaussianProcessRegressor(RBF([0.8, 1.5, 2.0, 1.0, 3.0]), optimizer=None),
        "regression",
    ),
}


def data(kind, n=40, n_features=5, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, n_features))
    if kind == "nonnegative":
        X = np.abs(X)
        X[rng.random(X.shape) < 0.15] = 0.0  # chi2's 0/0 term
    y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] - 0.5 * X[:, 3]
    if kind == "multiclass":
        y = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
    return X, y


def as_matrices(frame, n_outputs):
    """(n_samples, n_outputs, n_players, n_players) from a result frame."""
    n_players = frame.shape[1] // n_outputs
    values = frame.to_numpy().reshape(-1, n_players, n_outputs, n_players)
    return values.transpose(0, 2, 1, 3)


@pytest.mark.parametrize("name", MODELS)
def test_matches_brute_force(name):
    model, kind = MODELS[name]
    X, y = data(kind)
    model.fit(X, y)
    explainer = ProductKernelExplainer(model).fit()
    rows = np.vstack([X[:2], data(kind, n=2, seed=1)[0]])
    n_outputs = len(explainer.output_names_)
    got = as_matrices(explainer.explain_interactions(rows), n_outputs)
    assert explainer.quadrature_error_bound_ == 0.0
    for r, x in enumerate(rows):
        table = kernel_value_table(model, x)
        for k in range(n_outputs):
            expected = interactions_by_enumeration(table[:, k], 5)
            scale = np.abs(table).max()
            np.testing.assert_allclose(got[r, k], expected, rtol=0, atol=RTOL * scale)


def test_groups_match_the_quotient_game():
    model, kind = MODELS["svc_multiclass"]
    X, y = data(kind)
    model.fit(X, y)
    explainer = ProductKernelExplainer(model, groups={"g": ["x3", "x0"]}).fit()
    assert list(explainer.player_names_) == ["g", "x1", "x2", "x4"]
    players = [[3, 0], [1], [2], [4]]
    got = as_matrices(explainer.explain_interactions(X[:3]), 3)
    for r, x in enumerate(X[:3]):
        table = kernel_value_table(model, x)
        for k in range(3):
            expected = interactions_by_enumeration(
                quotient_table(table[:, k], players), 4
            )
            np.testing.assert_allclose(
                got[r, k], expected, rtol=0, atol=RTOL * np.abs(table).max()
            )


def test_matches_the_product_game_core():
    # KernelRidge(rbf): games a_ij = k(x_j, r_ij) with weights alpha_i.
    rng = np.random.default_rng(3)
    X = rng.normal(size=(30, 7))
    model = KernelRidge(kernel="rbf", gamma=0.2).fit(X, X[:, 0] * X[:, 1])
    x = rng.normal(size=7)
    factors = np.stack(
        [rbf_kernel(x[[j]][None], X[:, [j]], gamma=0.2)[0] for j in range(7)], axis=1
    )
    expected = product_interactions(factors, None, model.dual_coef_)
    got = ProductKernelExplainer(model).fit().explain_interactions(x[None])
    np.testing.assert_allclose(
        got, expected, rtol=0, atol=1e-12 * np.abs(expected).max()
    )


def test_auto_rule_beyond_the_exact_limit():
    # 150 players: the exact rule has 75 points, more than "auto" uses.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(20, 150))
    model = KernelRidge(kernel="rbf", gamma=1 / 150).fit(X, X[:, 0] - X[:, 1] ** 2)
    rows = X[:2] + 0.1
    auto = ProductKernelExplainer(model).fit()
    approximate = auto.explain_interactions(rows)
    assert auto.n_quadrature_points_ < 75
    exact = ProductKernelExplainer(model, n_quadrature_points=75).fit()
    expected = exact.explain_interactions(rows)
    assert exact.quadrature_error_bound_ == 0.0
    # "auto" aims at one unit in the last place of the game's scale.
    np.testing.assert_allclose(
        approximate, expected, rtol=0, atol=1e-12 * np.abs(expected.to_numpy()).max()
    )
    phi = exact.explain(rows)
    sums = expected.sum(axis=1).to_numpy().reshape(2, 150)
    np.testing.assert_allclose(sums, phi, rtol=0, atol=1e-12 * np.abs(phi).max().max())
