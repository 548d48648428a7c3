"""Product-game Shapley values against enumeration and exact arithmetic."""

import numpy as np
import pytest
from naive import (
    banzhaf_by_enumeration,
    exact_pure_shapley,
    interactions_by_enumeration,
    product_game_table,
    product_shapley_quadrature,
    quotient_table,
    shapley_by_enumeration,
)

from skshapley.games import (
    exact_n_points,
    gauss_legendre,
    product_banzhaf,
    product_interactions,
    product_shapley,
)


def random_games(rng, n_games, d):
    """Generalized games with b != 1, negative and zero factors and dummies."""
    a = rng.normal(size=(n_games, d))
    b = rng.normal(size=(n_games, d))
    weights = rng.normal(size=n_games)
    a[rng.random((n_games, d)) < 0.1] = 0.0
    b[rng.random((n_games, d)) < 0.1] = 0.0
    dummies = rng.random((n_games, d)) < 0.15
    a[dummies] = b[dummies]
    return a, b, weights


def game_scale(a, b, weights):
    """max_S |v(S)| of each game: the scale its values are accurate to."""
    return np.abs(weights) * np.prod(np.maximum(np.abs(a), np.abs(b)), axis=1)


def assert_close_per_game(actual, expected, tolerance):
    """|actual - expected| <= tolerance, row by row (one tolerance per game)."""
    error = np.abs(np.asarray(actual) - np.asarray(expected))
    tolerance = np.reshape(tolerance, (-1,) + (1,) * (error.ndim - 1))
    assert np.all(error <= tolerance), (error / tolerance).max()


@pytest.mark.parametrize("d", [1, 2, 3, 5, 8, 12])
def test_shapley_equals_enumeration(d):
    rng = np.random.default_rng(d)
    a, b, weights = random_games(rng, 6, d)
    values = product_shapley(a, b, weights, reduce=False)
    for g in range(len(a)):
        expected = shapley_by_enumeration(product_game_table(a[g], b[g], weights[g]), d)
        # Enumeration sums 2**d rounded terms; 1e-12 of the game's scale leaves
        # room for that and for the quadrature's O(d) roundings.
        np.testing.assert_allclose(
            values[g], expected, rtol=0, atol=1e-12 * game_scale(a, b, weights)[g]
        )


def test_reduce_sums_the_games():
    rng = np.random.default_rng(0)
    a, b, weights = random_games(rng, 50, 7)
    per_game = product_shapley(a, b, weights, reduce=False)
    # The same per-game numbers, summed in another order.
    np.testing.assert_allclose(
        product_shapley(a, b, weights), per_game.sum(axis=0), rtol=1e-13, atol=1e-13
    )


def test_one_dimensional_input_is_one_game():
    values = product_shapley([0.5, 2.0, 1.0], [1.0, 0.5, 1.0], [3.0])
    expected = shapley_by_enumeration(
        product_game_table([0.5, 2.0, 1.0], [1.0, 0.5, 1.0], 3.0), 3
    )
    np.testing.assert_allclose(values, expected, rtol=1e-14)
    assert product_shapley([0.5, 2.0], reduce=False).shape == (1, 2)


def test_dummies_get_exactly_zero():
    rng = np.random.default_rng(1)
    a, b, weights = random_games(rng, 30, 9)
    a[:, 4] = b[:, 4]
    values = product_shapley(a, b, weights, reduce=False)
    assert np.all(values[:, 4] == 0.0)
    assert np.all(values[a == b] == 0.0)


def test_efficiency_with_the_exact_rule():
    rng = np.random.default_rng(2)
    a, b, weights = random_games(rng, 40, 11)
    values = product_shapley(a, b, weights, reduce=False)
    v_all = weights * a.prod(axis=1)
    v_none = weights * b.prod(axis=1)
    assert_close_per_game(
        values.sum(axis=1), v_all - v_none, 1e-13 * game_scale(a, b, weights)
    )


@pytest.mark.parametrize("n_points", [1, 3, 7])
def test_kernel_equals_numpy_twin_at_any_rule(n_points):
    # Below the exact rule the result is not the Shapley value, but it must
    # still be exactly the quadrature sum: the compiled kernel against its twin.
    rng = np.random.default_rng(n_points)
    a, b, weights = random_games(rng, 20, 16)
    nodes, node_weights = gauss_legendre(n_points)
    expected = product_shapley_quadrature(a, b, weights, nodes, node_weights)
    values = product_shapley(a, b, weights, n_quadrature_points=n_points, reduce=False)
    # The twin's exp(sum of logs) carries ~1e-14 relative error.
    assert_close_per_game(values, expected, 1e-12 * game_scale(a, b, weights))


def test_zero_factors_are_exact():
    # v(S) = 6 if S contains player 0 and not player 1, whatever player 2 does.
    a = np.array([[1.0, 0.0, 2.0]])
    b = np.array([[0.0, 1.0, 2.0]])
    values = product_shapley(a, b, [3.0], reduce=False)
    expected = shapley_by_enumeration(product_game_table(a[0], b[0], 3.0), 3)
    np.testing.assert_allclose(values[0], expected, rtol=1e-15)
    np.testing.assert_array_equal(values[0], [3.0, 3.0 * -1.0, 0.0])


@pytest.mark.parametrize("n_roots", [1, 2, 3])
def test_factors_vanishing_at_a_node(n_roots):
    # f_j(t) = -1 + 2t is exactly 0 at t = 1/2, the middle node of every
    # odd-sized rule (d = 5 uses 3 points) and Banzhaf's only point: at that
    # node only a lone zero's player has a term, and with two zeros nobody.
    rng = np.random.default_rng(n_roots)
    a, b = rng.uniform(0.5, 2.0, size=(2, 5))
    a[:n_roots], b[:n_roots] = 1.0, -1.0
    table = product_game_table(a, b, 2.0)
    np.testing.assert_allclose(
        product_shapley(a, b, [2.0]),
        shapley_by_enumeration(table, 5),
        rtol=0,
        atol=1e-13 * game_scale(a[None], b[None], [2.0])[0],
    )
    np.testing.assert_allclose(
        product_banzhaf(a, b, [2.0]),
        banzhaf_by_enumeration(table, 5),
        rtol=0,
        atol=1e-13 * game_scale(a[None], b[None], [2.0])[0],
    )


def test_products_growing_along_the_rule():
    # b = 1e-40 a: the integrand rises from ~1e-480 near t = 0 to ~1 at t = 1,
    # so later nodes' products exceed the first ones' by far more than a
    # float64 exponent step: the kernel must rescale its running sums.
    rng = np.random.default_rng(6)
    a = rng.uniform(0.5, 1.0, size=(3, 12))
    b = 1e-40 * a * rng.uniform(0.5, 1.0, size=(3, 12))
    values = product_shapley(a, b, reduce=False)
    for g in range(3):
        expected = shapley_by_enumeration(product_game_table(a[g], b[g]), 12)
        np.testing.assert_allclose(values[g], expected, rtol=1e-12)


def test_integrand_far_below_the_float_range():
    # Players alternate between f(t) ~ t and f(t) ~ 1 - t, so the integrand
    # stays below 4**-1000 = 1e-602 on all of [0, 1]; with w = 1e300 the
    # values are ~1e-302, representable. The log-space twin is the reference.
    d, n_points = 2000, 300
    a = np.where(np.arange(d) % 2 == 0, 1.0, 1e-3)
    b = np.where(np.arange(d) % 2 == 0, 1e-3, 1.0)
    nodes, node_weights = gauss_legendre(n_points)
    expected = product_shapley_quadrature(a, b, np.array([1e300]), nodes, node_weights)
    values = product_shapley(a, b, [1e300], n_quadrature_points=n_points)
    assert np.all(np.abs(values) > 1e-310)
    np.testing.assert_allclose(values, expected[0], rtol=1e-10)


def test_many_players_stay_finite_and_efficient():
    # d = 5000 with factors in (0, 1]: most products underflow in plain float64.
    rng = np.random.default_rng(3)
    a = rng.uniform(1e-3, 1.0, size=(5, 5000))
    values = product_shapley(a, reduce=False)
    assert np.isfinite(values).all()
    v_all = np.exp(np.log(a).sum(axis=1))  # 0.0 in float64: far below 1e-300
    # Efficiency: the values sum to v(N) - v(∅) = prod(a) - 1; 1e-10 relative is
    # the bar, reached with thousands of roundings per value.
    np.testing.assert_allclose(values.sum(axis=1), v_all - 1.0, rtol=1e-10)


def test_many_players_auto_equals_exact_rule():
    rng = np.random.default_rng(4)
    x, reference = rng.normal(size=3000), rng.normal(size=(3, 3000))
    a = np.exp(-((x - reference) ** 2) / 3000)  # an RBF kernel's factors
    auto = product_shapley(a, reduce=False)
    exact = product_shapley(a, reduce=False, n_quadrature_points=exact_n_points(3000))
    # The auto rule's bound is one ulp of max_S |v(S)| = 1 per value.
    np.testing.assert_allclose(auto, exact, rtol=0, atol=1e-14)
    np.testing.assert_allclose(auto.sum(axis=1), a.prod(axis=1) - 1.0, rtol=1e-12)


@pytest.mark.parametrize("d", [6, 400])
def test_extreme_factors_do_not_overflow(d):
    # Scaling player j's factors by c_j scales every v(S), hence every Shapley
    # value, by prod(c_j). With c_j = 1e+-300 in pairs, prod(c) = 1: the values
    # must not change, although single factors span 1e-300 ... 1e300.
    rng = np.random.default_rng(d)
    a, b = rng.uniform(0.5, 2.0, size=(2, 3, d))
    a[:, 0] = b[:, 0]  # a dummy among them
    scale = np.where(np.arange(d) % 2 == 0, 1e300, 1e-300)
    plain = product_shapley(a, b, reduce=False)
    scaled = product_shapley(a * scale, b * scale, reduce=False)
    # Each scaled factor is rounded once (relative 1e-16); d of them shift the
    # values by up to d ulps of the game's scale.
    assert_close_per_game(scaled, plain, d * 1e-15 * game_scale(a, b, np.ones(3)))


def test_weights_beyond_float_range_of_products():
    # w = 1e300 times factors of 1e-300: no intermediate product is representable.
    a, b = np.array([1.0, 2.0]), np.array([3.0, 1.0])
    expected = shapley_by_enumeration(product_game_table(a, b), 2)
    np.testing.assert_allclose(
        product_shapley(a * 1e-300, b * 1e-300, [1e300]) * 1e300, expected, rtol=1e-14
    )
    np.testing.assert_allclose(
        product_shapley(a * 1e300, b * 1e300, [1e-300]) * 1e-300, expected, rtol=1e-14
    )


def test_factors_whose_gap_exceeds_the_float_range():
    # a - b = 3e308 is not a float64; the values scale exactly with the factors
    # of player 0 (by 2**-8 here), and the weight keeps them in range.
    a, b = np.array([1.5e308, 0.5, 2.0]), np.array([-1.5e308, 0.3, 0.1])
    ratio = 2.0**-8
    shrunk = product_shapley(a * [ratio, 1, 1], b * [ratio, 1, 1], [1e-10])
    np.testing.assert_allclose(
        product_shapley(a, b, [1e-10]), shrunk / ratio, rtol=1e-15
    )
    expected = shapley_by_enumeration(
        product_game_table(a * [ratio, 1, 1], b * [ratio, 1, 1], 1e-10), 3
    )
    np.testing.assert_allclose(shrunk, expected, rtol=1e-14)


def test_overflowing_result_raises():
    with pytest.raises(FloatingPointError, match="float64 range"):
        product_shapley(np.full(4, 1e200), weights=[1.0])


def test_error_decays_geometrically_to_the_exact_value():
    # Known answer: the polynomial integrated in rational arithmetic.
    rng = np.random.default_rng(5)
    a = np.round(rng.uniform(0.0, 1.0, size=60), 2)
    exact = np.array([float(value) for value in exact_pure_shapley(a)])
    errors = np.array(
        [
            np.abs(product_shapley(a, n_quadrature_points=m) - exact).max()
            for m in range(1, 31)
        ]
    )
    above_floor = errors > 1e-14
    # While above rounding level, two more points gain at least a constant
    # factor (the decay rho**-2m of the Bernstein-ellipse bound; for a
    # polynomial it even accelerates), and the exact rule (30 points) is exact.
    ratios = errors[2:][above_floor[:-2]] / errors[:-2][above_floor[:-2]]
    assert above_floor[:10].all()
    assert not above_floor[-1]
    assert np.all(ratios < 0.75), ratios
    assert np.all(np.diff(ratios) < 0.05), ratios  # the decay does not slow down
    assert errors[-1] <= 1e-15 * np.abs(exact).sum()


@pytest.mark.parametrize("d", [2, 4, 7])
def test_interactions_equal_enumeration(d):
    rng = np.random.default_rng(10 + d)
    a, b, weights = random_games(rng, 4, d)
    expected = sum(
        interactions_by_enumeration(product_game_table(a[g], b[g], weights[g]), d)
        for g in range(len(a))
    )
    interactions = product_interactions(a, b, weights)
    scale = game_scale(a, b, weights).sum()
    np.testing.assert_allclose(interactions, expected, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(interactions, interactions.T, rtol=0, atol=1e-13 * scale)
    np.testing.assert_allclose(
        interactions.sum(axis=1),
        product_shapley(a, b, weights),
        rtol=0,
        atol=1e-13 * scale,
    )


@pytest.mark.parametrize("d", [1, 3, 6, 9])
def test_banzhaf_equals_enumeration(d):
    rng = np.random.default_rng(20 + d)
    a, b, weights = random_games(rng, 5, d)
    expected = sum(
        banzhaf_by_enumeration(product_game_table(a[g], b[g], weights[g]), d)
        for g in range(len(a))
    )
    np.testing.assert_allclose(
        product_banzhaf(a, b, weights),
        expected,
        rtol=0,
        atol=1e-13 * game_scale(a, b, weights).sum(),
    )


@pytest.mark.parametrize(
    "groups",
    [[[0, 3], [1], [2, 4, 5]], [[5, 4, 3, 2, 1, 0]], [[2], [0], [1], [3], [4], [5]]],
)
def test_groups_equal_the_quotient_game(groups):
    rng = np.random.default_rng(30)
    a, b, weights = random_games(rng, 4, 6)
    values = product_shapley(a, b, weights, groups=groups, reduce=False)
    for g in range(len(a)):
        table = product_game_table(a[g], b[g], weights[g])
        expected = shapley_by_enumeration(quotient_table(table, groups), len(groups))
        np.testing.assert_allclose(
            values[g], expected, rtol=0, atol=1e-12 * game_scale(a, b, weights)[g]
        )


def test_groups_of_extreme_factors():
    # A group of 600 factors 1e-300 * 1e300 pairs: its product is of order 1
    # although every partial product leaves the float64 range.
    rng = np.random.default_rng(31)
    a, b = rng.uniform(0.5, 2.0, size=(2, 1, 602))
    scale = np.where(np.arange(602) % 2 == 0, 1e300, 1e-300)
    groups = [list(range(600)), [600], [601]]
    plain = product_shapley(a, b, groups=groups)
    scaled = product_shapley(a * scale, b * scale, groups=groups)
    np.testing.assert_allclose(scaled, plain, rtol=1e-12)


def test_input_is_not_modified():
    rng = np.random.default_rng(40)
    a, b, weights = random_games(rng, 5, 4)
    copies = a.copy(), b.copy(), weights.copy()
    product_shapley(a, b, weights, groups=[[0, 1], [2, 3]])
    product_interactions(a, b, weights)
    product_banzhaf(a, b, weights)
    for original, copy in zip((a, b, weights), copies, strict=True):
        np.testing.assert_array_equal(original, copy)


def test_threads_agree():
    rng = np.random.default_rng(41)
    a, b, weights = random_games(rng, 200, 10)
    one = product_shapley(a, b, weights, reduce=False, n_jobs=1)
    np.testing.assert_array_equal(
        one, product_shapley(a, b, weights, reduce=False, n_jobs=2)
    )
    # Reduced sums are added in another order across threads.
    np.testing.assert_allclose(
        product_shapley(a, b, weights, n_jobs=2),
        one.sum(axis=0),
        rtol=1e-13,
        atol=1e-13,
    )


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"a": [[np.nan, 1.0]]}, "a contains NaN"),
        ({"a": [[1.0, 2.0]], "b": [[np.inf, 1.0]]}, "b contains NaN"),
        ({"a": [[1.0, 2.0]], "weights": [np.nan]}, "weights contains NaN"),
        ({"a": [[1.0, 2.0]], "b": [[1.0, 2.0, 3.0]]}, r"same shape, got \(1, 2\)"),
        ({"a": [[1.0, 2.0]], "weights": [1.0, 2.0]}, r"shape \(n_games,\) = \(1,\)"),
        ({"a": np.ones((2, 2, 2))}, "a must be 1-D or 2-D"),
        ({"a": np.ones((2, 0))}, "at least one player"),
        ({"a": [1.0], "n_quadrature_points": 0}, "n_quadrature_points"),
        ({"a": [1.0], "n_quadrature_points": "exact"}, "n_quadrature_points"),
        ({"a": [1.0, 2.0], "groups": [[0]]}, r"missing \[1\]"),
        ({"a": [1.0, 2.0], "groups": [[0, 1], [1]]}, r"repeated \[1\]"),
        ({"a": [1.0, 2.0], "groups": [[0, 1, 2]]}, r"out of range \[2\]"),
        ({"a": [1.0, 2.0], "groups": [[0, 1], []]}, "empty group"),
        ({"a": [1.0, 2.0], "n_jobs": 0}, "n_jobs"),
    ],
)
def test_bad_input_names_the_argument(kwargs, message):
    with pytest.raises(ValueError, match=message):
        product_shapley(**kwargs)


def test_non_numeric_input_is_a_type_error():
    with pytest.raises(TypeError, match="a must be an array-like of real numbers"):
        product_shapley([["x", 1.0]])
