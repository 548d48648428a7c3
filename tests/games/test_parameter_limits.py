"""n_jobs and n_quadrature_points: huge or wrong values give one clear error
or a bounded run, never exhausted memory or a crash.

More OpenMP threads than CPUs would only cost memory (each thread allocates
its own scratch), so ``n_jobs`` is capped at the CPUs this process may use;
quadrature rules are limited to ``MAX_QUADRATURE_POINTS`` points. Checked
for both explainers and the product-game functions.
"""

import os
import re

import numpy as np
import pytest
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.kernel_ridge import KernelRidge

from skshapley import ProductKernelExplainer, TreeExplainer
from skshapley._runtime.limits import MAX_QUADRATURE_POINTS
from skshapley._runtime.threads import effective_n_threads
from skshapley.games import (
    gauss_legendre,
    product_banzhaf,
    product_interactions,
    product_shapley,
)

CPUS = len(os.sched_getaffinity(0))
HUGE_N_JOBS = [10**5, 2**31, 2**63]
BAD_N_JOBS = [0, True, False, 2.0, "2", np.float64(1.0)]
TOO_MANY_POINTS = [MAX_QUADRATURE_POINTS + 1, 10**9]


def data():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(40, 4))
    return X, X[:, 0] * X[:, 1] + X[:, 2]


def tree_model():
    return GradientBoostingRegressor(n_estimators=5, max_depth=3, random_state=0).fit(
        *data()
    )


def kernel_model():
    return KernelRidge(kernel="rbf", gamma=0.5).fit(*data())


def games():
    rng = np.random.default_rng(1)
    return rng.uniform(size=(3, 5)), rng.uniform(size=(3, 5))


@pytest.mark.parametrize("n_jobs", HUGE_N_JOBS)
def test_more_threads_than_cpus_are_not_started(n_jobs):
    assert effective_n_threads(n_jobs) == CPUS
    assert effective_n_threads(-(10**9)) == 1
    assert effective_n_threads(None) == effective_n_threads(-1) == CPUS


@pytest.mark.parametrize("n_jobs", BAD_N_JOBS)
def test_bad_n_jobs_is_refused_everywhere(n_jobs):
    a, b = games()
    match = rf"n_jobs must be None or a nonzero integer .*got {re.escape(repr(n_jobs))}"
    for fit in (
        lambda: TreeExplainer(tree_model(), n_jobs=n_jobs).fit(),
        lambda: ProductKernelExplainer(kernel_model(), n_jobs=n_jobs).fit(),
        lambda: product_shapley(a, b, n_jobs=n_jobs),
        lambda: product_interactions(a[0], b[0], n_jobs=n_jobs),
        lambda: product_banzhaf(a, b, n_jobs=n_jobs),
    ):
        with pytest.raises(ValueError, match=match):
            fit()


@pytest.mark.parametrize("n_jobs", HUGE_N_JOBS)
def test_huge_n_jobs_give_the_values_of_one_thread(n_jobs):
    X, _ = data()
    a, b = games()
    for make in (tree_model, kernel_model):
        Explainer = TreeExplainer if make is tree_model else ProductKernelExplainer
        model = make()
        one = Explainer(model, n_jobs=1).fit().explain(X)
        many = Explainer(model, n_jobs=n_jobs).fit().explain(X)
        np.testing.assert_array_equal(many, one)
    np.testing.assert_array_equal(
        product_shapley(a, b, n_jobs=n_jobs, reduce=False),
        product_shapley(a, b, n_jobs=1, reduce=False),
    )
    np.testing.assert_array_equal(
        product_banzhaf(a, b, n_jobs=n_jobs), product_banzhaf(a, b, n_jobs=1)
    )
    np.testing.assert_array_equal(
        product_interactions(a[0], b[0], n_jobs=n_jobs),
        product_interactions(a[0], b[0], n_jobs=1),
    )


@pytest.mark.parametrize("n_points", TOO_MANY_POINTS)
def test_too_many_quadrature_points_are_refused_everywhere(n_points):
    a, b = games()
    match = rf"must be at most {MAX_QUADRATURE_POINTS} .*got {n_points}"
    for call in (
        lambda: TreeExplainer(tree_model(), n_quadrature_points=n_points).fit(),
        lambda: ProductKernelExplainer(
            kernel_model(), n_quadrature_points=n_points
        ).fit(),
        lambda: product_shapley(a, b, n_quadrature_points=n_points),
        lambda: product_interactions(a[0], b[0], n_quadrature_points=n_points),
        lambda: gauss_legendre(n_points),
    ):
        with pytest.raises(ValueError, match=match):
            call()


@pytest.mark.parametrize("n_points", [0, -1, 2.0, True, "many"])
def test_invalid_quadrature_points_name_what_is_allowed(n_points):
    match = rf'"auto" or an integer from 1 to {MAX_QUADRATURE_POINTS}'
    with pytest.raises(ValueError, match=match):
        TreeExplainer(tree_model(), n_quadrature_points=n_points).fit()


def test_the_largest_allowed_rule_is_accepted_by_the_checks():
    # Not computed here (it costs seconds): the checks alone accept it.
    from skshapley.games._quadrature import check_n_quadrature_points

    check_n_quadrature_points(MAX_QUADRATURE_POINTS)
