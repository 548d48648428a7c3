"""Gauss–Legendre rules and the choice of their size."""

import numpy as np
import pytest
from scipy.special import roots_legendre

from skshapley.games import exact_n_points, gauss_legendre
from skshapley.games._quadrature import EXACT_AUTO_LIMIT, auto_n_points


@pytest.mark.parametrize("n_points", [1, 2, 3, 10, 64, 151, 1000])
def test_rule_integrates_polynomials_up_to_degree_2n_minus_1(n_points):
    nodes, weights = gauss_legendre(n_points)
    assert nodes.shape == weights.shape == (n_points,)
    assert np.all(np.diff(nodes) > 0)
    assert nodes[0] > 0
    assert nodes[-1] < 1
    assert np.all(weights > 0)
    for degree in sorted({0, 1, 2 * n_points - 1, min(2 * n_points - 1, 40)}):
        # Integral of (k+1) t**k over [0, 1] is exactly 1; a few ulps of
        # rounding in the sum of n_points terms.
        moment = (degree + 1) * (weights @ nodes**degree)
        assert abs(moment - 1.0) < 4e-15 * max(1, np.sqrt(n_points)), degree


@pytest.mark.parametrize("n_points", [1, 5, 40, 100])
def test_rule_equals_scipy_on_minus_one_one(n_points):
    # An independent implementation. SciPy's weights carry relative errors up
    # to ~1e-11 at n = 100 (ours are checked to 1e-15 by the moments above).
    x, w = roots_legendre(n_points)
    nodes, weights = gauss_legendre(n_points)
    np.testing.assert_allclose(2 * nodes - 1, x, rtol=0, atol=1e-15)
    np.testing.assert_allclose(2 * weights, w, rtol=1e-10)


def test_rule_is_symmetric_and_accurate_near_zero():
    nodes, weights = gauss_legendre(2500)
    # t and 1 - t are both nodes; near t = 0 the node has full relative
    # accuracy, which (1 + x) / 2 from nodes x on [-1, 1] would not give.
    np.testing.assert_allclose(nodes, 1 - nodes[::-1], rtol=0, atol=2e-16)
    # The end weights (~6e-7) come out of a 2500-term recurrence: a few ulps.
    np.testing.assert_allclose(weights, weights[::-1], rtol=5e-13)
    # Exactness at the highest degree, with the mass at the end nodes:
    # the integral of 5000 (1 - t)**4999 over [0, 1] is 1.
    assert abs(5000 * weights @ (1 - nodes) ** 4999 - 1) < 1e-13
    # The smallest root of P_n satisfies theta ~ j_0,1 / (n + 1/2), so
    # t = sin(theta/2)**2 ~ (2.404825557695773 / (2n + 1))**2 to O(n**-4).
    assert nodes[0] == pytest.approx((2.404825557695773 / 5001) ** 2, rel=1e-6)


def test_rules_are_cached_and_read_only():
    first, _ = gauss_legendre(7)
    second, _ = gauss_legendre(7)
    assert first is second
    with pytest.raises(ValueError, match="read-only"):
        first[0] = 0.5


@pytest.mark.parametrize("bad", [0, -1])
def test_rule_size_is_validated(bad):
    with pytest.raises(ValueError, match="n_points must be >= 1"):
        gauss_legendre(bad)


@pytest.mark.parametrize("bad", [2.5, "3", True, None])
def test_rule_size_must_be_an_int(bad):
    with pytest.raises(TypeError, match="n_points must be an int"):
        gauss_legendre(bad)


@pytest.mark.parametrize(
    ("n_players", "expected"), [(0, 1), (1, 1), (2, 1), (3, 2), (5000, 2500)]
)
def test_exact_rule_size(n_players, expected):
    assert exact_n_points(n_players) == expected


def test_auto_uses_the_exact_rule_for_small_games():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(2, 30, 2 * EXACT_AUTO_LIMIT))
    a[:, :5] = b[:, :5]  # five dummies per game: the integrand's degree drops
    expected = exact_n_points(2 * EXACT_AUTO_LIMIT - 5)
    np.testing.assert_array_equal(auto_n_points(a - b, b), expected)


def test_auto_needs_few_points_for_kernel_factors():
    rng = np.random.default_rng(1)
    x, reference = rng.normal(size=5000), rng.normal(size=(4, 5000))
    gap = np.expm1(-((x - reference) ** 2) / 5000)
    n_points = auto_n_points(gap, np.ones_like(gap))
    assert np.all(n_points < 40), n_points  # against 2500 for the exact rule


def test_auto_never_exceeds_the_exact_rule():
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(2, 5, 1000))  # far-apart factors: the bound is weak
    assert np.all(auto_n_points(a - b, b) <= exact_n_points(1000))
