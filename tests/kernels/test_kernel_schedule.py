"""ProductKernelExplainer's values do not depend on how the work is scheduled.

Each row's games are summed in an order fixed by the games alone, so a row's
values are the same bits whatever ``n_jobs``, whether it is explained alone
or among other rows (1, 2, 31, 33 or 100 of them: more and fewer than a
task's games, odd counts), and whether the rows come in ``max_memory``
chunks. The values themselves are checked against brute force in
test_kernel_values.py; here, on models with more reference points than one
task's games, the first rows are checked against the same oracle too.
"""

from functools import cache

import numpy as np
import pytest
from naive import kernel_value_table, shapley_of_tables
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF
from sklearn.gaussian_process.kernels import ConstantKernel as C
from sklearn.kernel_ridge import KernelRidge
from sklearn.svm import SVC, SVR

from skshapley import ProductKernelExplainer

ROW_COUNTS = (1, 2, 31, 33, 100)

# As in test_kernel_values.py: the oracle's own rounding is ~5e-15 of the
# game's scale; 1e-12 fails at any wrong factor, weight or game.
BRUTE_FORCE_RTOL = 1e-12

N_FEATURES = 6

# name: (unfitted model, classifier?, explainer parameters)
MODELS = {
    "kernel_ridge_two_targets": (KernelRidge(kernel="rbf", gamma=0.3), False, {}),
    "svr": (SVR(C=3.0), False, {}),
    "svc_multiclass": (SVC(gamma=0.4), True, {}),
    "gpr_sum_of_rbfs": (
        GaussianProcessRegressor(
            C(1.5) * RBF([0.8, 1.5, 2.0, 1.0, 3.0, 1.2]) + RBF(2.0), optimizer=None
        ),
        False,
        {},
    ),
    "kernel_ridge_groups": (
        KernelRidge(kernel="laplacian", gamma=0.2),
        False,
        {"groups": {"first": [3, 0], "second": [2, 4, 5]}},
    ),
}


@cache
def fitted(name):
    """The fitted model and its data: 60 training points, 100 new rows."""
    model, is_classifier, _ = MODELS[name]
    rng = np.random.default_rng(7)
    X = rng.normal(size=(160, N_FEATURES))
    y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] - 0.5 * X[:, 3]
    if is_classifier:
        y = np.digitize(y, np.quantile(y, [1 / 3, 2 / 3]))
    elif name == "kernel_ridge_two_targets":
        y = np.c_[y, X[:, 4] - X[:, 0]]
    return model.fit(X[:60], y[:60]), X[60:]


def explain(name, X, n_jobs, **params):
    model = fitted(name)[0]
    explainer = ProductKernelExplainer(
        model, n_jobs=n_jobs, **MODELS[name][2], **params
    ).fit()
    return explainer.explain(X).to_numpy()


@pytest.mark.parametrize("name", MODELS)
def test_rows_are_the_same_bits_whatever_the_schedule(name):
    X = fitted(name)[1]
    everything = explain(name, X, n_jobs=1)
    # Many tasks of 8 games per row: the models have tens of reference points.
    assert len(everything) == 100
    for n_rows in ROW_COUNTS:
        for n_jobs in (1, 2):
            np.testing.assert_array_equal(
                explain(name, X[:n_rows], n_jobs), everything[:n_rows]
            )
    alone = np.vstack([explain(name, X[k : k + 1], n_jobs=2) for k in range(100)])
    np.testing.assert_array_equal(alone, everything)
    # Rows in max_memory chunks (7 rows each) are the same bits too.
    np.testing.assert_array_equal(
        explain(name, X, n_jobs=2, max_memory=2048), everything
    )


@pytest.mark.parametrize("name", ["svc_multiclass", "gpr_sum_of_rbfs"])
def test_values_match_brute_force_with_two_threads(name):
    model, X = fitted(name)
    # Columns (output, feature): one (n_outputs, n_features) block per row.
    phi = explain(name, X[:3], n_jobs=2).reshape(3, -1, N_FEATURES)
    for x, phi_x in zip(X[:3], phi, strict=True):
        table = kernel_value_table(model, x)
        scale = np.abs(table).max()
        np.testing.assert_allclose(
            phi_x, shapley_of_tables(table).T, rtol=0, atol=BRUTE_FORCE_RTOL * scale
        )


def test_wide_rows_are_the_same_bits_whatever_the_schedule():
    # 2,500 features and 500 reference points: a row's games come in blocks
    # of reference points (2**20 factors at a time), and "auto" uses fewer
    # points than the exact rule, with a nonzero error bound.
    rng = np.random.default_rng(3)
    latent = rng.normal(size=(503, 4))
    X = latent @ rng.normal(size=(4, 2500)) + 0.5 * rng.normal(size=(503, 2500))
    model = KernelRidge(kernel="rbf", alpha=0.1).fit(X[:500], latent[:500, 0])
    rows = X[500:]
    results = {}
    for n_jobs in (1, 2):
        explainer = ProductKernelExplainer(model, n_jobs=n_jobs).fit()
        results[n_jobs] = explainer.explain(rows)
        for k in range(len(rows)):
            np.testing.assert_array_equal(
                explainer.explain(rows[k : k + 1]).to_numpy()[0],
                results[n_jobs].to_numpy()[k],
            )
    np.testing.assert_array_equal(results[1].to_numpy(), results[2].to_numpy())
    assert results[1].attrs == results[2].attrs
    assert results[1].attrs["quadrature_error_bound"] > 0.0
    assert results[1].attrs["n_quadrature_points"] < 1250


@pytest.mark.parametrize("name", ["svc_multiclass", "kernel_ridge_groups"])
def test_interactions_are_the_same_bits_whatever_the_schedule(name):
    model, X = fitted(name)

    def interactions(rows, n_jobs):
        explainer = ProductKernelExplainer(model, n_jobs=n_jobs, **MODELS[name][2])
        # Rows (sample, player): one (n_players, columns) matrix per sample.
        values = explainer.fit().explain_interactions(rows).to_numpy()
        return values.reshape(len(rows), -1, values.shape[1])

    everything = interactions(X[:33], n_jobs=1)
    np.testing.assert_array_equal(interactions(X[:33], n_jobs=2), everything)
    for k in (0, 31, 32):
        np.testing.assert_array_equal(
            interactions(X[k : k + 1], n_jobs=2), everything[k : k + 1]
        )
