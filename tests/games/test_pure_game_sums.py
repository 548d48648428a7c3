"""``add_pure_game_sums``: each row's weighted sum of pure games, in a fixed order.

Against the NumPy twin of the core (tests/naive.py) game by game, summed
with the weights in NumPy; the same points and error bounds as
``solve_games``; and the same bits whatever the number of threads.
"""

import numpy as np
import pytest
from naive import product_shapley_quadrature

from skshapley.games._product import add_pure_game_sums, solve_games
from skshapley.games._quadrature import Rules, game_statistics, gauss_legendre

# Products of 40 factors in (0, 1] and sums of 21 games: a few ulps of the
# largest value; 1e-13 fails at any wrong game, weight or player.
TWIN_RTOL = 1e-13


def pure_games(n_rows, n_per_row, n_players, seed=0):
    """Gaps ``a - 1`` of kernel-like factors ``a`` in (0, 1], some exactly 1."""
    rng = np.random.default_rng(seed)
    a = np.exp(-rng.exponential(0.3, size=(n_rows * n_per_row, n_players)))
    a[rng.random(a.shape) < 0.1] = 1.0  # dummies
    return a - 1.0


@pytest.mark.parametrize("n_quadrature_points", ["auto", 3])
def test_sums_match_the_twin_game_by_game(n_quadrature_points):
    n_rows, n_per_row, n_players, n_outputs = 3, 21, 40, 2
    gap = pure_games(n_rows, n_per_row, n_players)
    weights = np.random.default_rng(1).normal(size=(n_per_row, n_outputs))
    statistics = game_statistics(gap, np.ones_like(gap))
    out = np.zeros((n_rows, n_outputs, n_players))
    solved = add_pure_game_sums(
        gap, statistics, weights, n_quadrature_points, out, n_threads=2
    )
    assert solved.values is out
    reference = solve_games(
        gap, np.ones_like(gap), np.ones(len(gap)), np.zeros(len(gap), np.intc),
        n_quadrature_points, reduce=False, n_threads=1, with_bounds=True,
    )  # fmt: skip
    np.testing.assert_array_equal(solved.n_points, reference.n_points)
    np.testing.assert_array_equal(solved.error_bounds, reference.error_bounds)
    # Each game with its own rule ("auto": the exact one, by its dummies).
    per_game = np.vstack([
        product_shapley_quadrature(
            gap[g : g + 1] + 1.0, np.ones((1, n_players)), np.ones(1),
            *gauss_legendre(int(solved.n_points[g])),
        )
        for g in range(len(gap))
    ]).reshape(n_rows, n_per_row, n_players)  # fmt: skip
    expected = np.einsum("mo,rmp->rop", weights, per_game)
    np.testing.assert_allclose(
        out, expected, rtol=0, atol=TWIN_RTOL * np.abs(expected).max()
    )


def test_sums_are_added_to_out_and_the_same_bits_on_any_threads():
    n_rows, n_per_row, n_players = 4, 19, 30
    gap = pure_games(n_rows, n_per_row, n_players, seed=2)
    weights = np.random.default_rng(3).normal(size=(n_per_row, 1))
    statistics = game_statistics(gap, np.ones_like(gap))
    results = []
    for n_threads in (1, 2, 3):
        out = np.full((n_rows, 1, n_players), 0.5)
        add_pure_game_sums(gap, statistics, weights, "auto", out, n_threads)
        results.append(out)
    for out in results[1:]:
        np.testing.assert_array_equal(out, results[0])
    # The sums are added to what out held (rounded once more: 1e-15).
    from_zeros = np.zeros((n_rows, 1, n_players))
    add_pure_game_sums(gap, statistics, weights, "auto", from_zeros, 2)
    np.testing.assert_allclose(results[0] - 0.5, from_zeros, rtol=0, atol=1e-15)
    # A row's sums do not depend on the other rows: row 2 alone.
    alone = np.full((1, 1, n_players), 0.5)
    rows = slice(2 * n_per_row, 3 * n_per_row)
    add_pure_game_sums(
        gap[rows], tuple(s[rows] for s in statistics), weights, "auto", alone, 2
    )
    np.testing.assert_array_equal(alone[0], results[0][2])


def test_games_with_one_rule_share_it_unsorted():
    rules = Rules.stack(np.array([4, 4, 4]))
    nodes, weights = gauss_legendre(4)
    np.testing.assert_array_equal(rules.nodes, nodes)
    np.testing.assert_array_equal(rules.weights, weights)
    np.testing.assert_array_equal(rules.start, [0, 0, 0])
    assert rules.start.dtype == rules.n_points.dtype == np.intp
