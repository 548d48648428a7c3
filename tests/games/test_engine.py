"""The engine under both explainers: stacked rules, and values with their facts.

``Rules`` carries the quadrature rules of a batch of games to the compiled
kernels; ``solve_games`` returns a ``GameValues`` with the points each game
used and, when asked, each game's bound on the quadrature error.
"""

import numpy as np
import pytest
from naive import (
    banzhaf_by_enumeration,
    product_game_table,
    product_shapley_quadrature,
)

from skshapley.games import (
    _product,
    exact_n_points,
    gauss_legendre,
    product_banzhaf,
    product_interactions,
    product_shapley,
)
from skshapley.games._product import _game_values, solve_games
from skshapley.games._quadrature import Rules


def test_stacked_rules_give_each_game_its_rule_stored_once():
    n_points = np.array([3, 1, 3, 5, 1])
    rules = Rules.stack(n_points)
    assert rules.n_points.dtype == rules.start.dtype == np.intp
    np.testing.assert_array_equal(rules.n_points, n_points)
    # The distinct rules (1, 3 and 5 points), each once.
    assert len(rules.nodes) == len(rules.weights) == 1 + 3 + 5
    for g, size in enumerate(n_points):
        nodes, weights = gauss_legendre(int(size))
        window = slice(rules.start[g], rules.start[g] + size)
        np.testing.assert_array_equal(rules.nodes[window], nodes)
        np.testing.assert_array_equal(rules.weights[window], weights)


def test_midpoint_rule_gives_banzhaf_values():
    rng = np.random.default_rng(3)
    n_games, d = 4, 5
    a = rng.normal(size=(n_games, d))
    b = rng.normal(size=(n_games, d))
    weights = rng.normal(size=n_games)
    rules = Rules.midpoint(n_games)
    expected = np.array(
        [
            banzhaf_by_enumeration(product_game_table(a[g], b[g], weights[g]), d)
            for g in range(n_games)
        ]
    )
    # The independent NumPy twin with the same rule, and the compiled kernel.
    twin = product_shapley_quadrature(a, b, weights, rules.nodes, rules.weights)
    compiled = _game_values(
        a - b, b, weights, np.zeros(n_games, dtype=np.intc), rules, False, 1
    )
    # Products of 5 factors and sums of 16 terms: a few ulps of the largest.
    scale = np.abs(expected).max()
    np.testing.assert_allclose(twin, expected, rtol=0, atol=1e-14 * scale)
    np.testing.assert_allclose(compiled, expected, rtol=0, atol=1e-14 * scale)


def _pure_games(n_games, d, seed):
    """Games with ``b = 1`` and ``a`` in [1/2, 1]: ``max_S |v(S)| = 1``."""
    a = np.random.default_rng(seed).uniform(0.5, 1.0, size=(n_games, d))
    return a - 1.0, np.ones_like(a), np.ones(n_games), np.zeros(n_games, np.intc)


def test_solved_games_report_their_points_and_error_bounds():
    d = 200
    games = _pure_games(3, d, seed=0)
    exact = solve_games(*games, exact_n_points(d), reduce=False, n_threads=1)
    assert exact.error_bounds is None  # not asked for
    np.testing.assert_array_equal(exact.n_points, exact_n_points(d))

    few = solve_games(*games, 4, reduce=False, n_threads=2, with_bounds=True)
    np.testing.assert_array_equal(few.n_points, [4, 4, 4])
    assert np.all(few.error_bounds > 0)
    error = np.abs(few.values - exact.values).max(axis=1)
    # The bound is relative to max_S |v(S)|, which is 1 for these games.
    assert np.all(error <= few.error_bounds)
    assert np.all(error > 0)  # 4 points are not exact for 200 players


def test_exact_rules_have_zero_error_bounds_and_reduce_sums_the_games():
    games = _pure_games(5, 6, seed=1)
    solved = solve_games(*games, "auto", reduce=False, n_threads=1, with_bounds=True)
    np.testing.assert_array_equal(solved.n_points, exact_n_points(6))
    np.testing.assert_array_equal(solved.error_bounds, 0.0)
    reduced = solve_games(*games, "auto", reduce=True, n_threads=1)
    assert reduced.error_bounds is None  # not asked for
    assert reduced.values.shape == (6,)
    # One thread adds the games in order: the same sums as NumPy's, to rounding.
    np.testing.assert_allclose(reduced.values, solved.values.sum(axis=0), rtol=1e-15)


@pytest.mark.parametrize(
    "solve",
    [
        lambda a, b: product_shapley(a, b, groups=[[0, 1], [2, 3], [4]], n_jobs=2),
        lambda a, b: product_shapley(a, b, reduce=False, n_jobs=2),
        lambda a, b: product_interactions(a, b, n_jobs=2),
        lambda a, b: product_banzhaf(a, b, n_jobs=2),
    ],
    ids=["groups", "per game", "interactions", "banzhaf"],
)
def test_n_jobs_is_resolved_once_per_public_call(solve, monkeypatch):
    calls = []

    def counted(n_jobs):
        calls.append(n_jobs)
        return 1

    monkeypatch.setattr(_product, "effective_n_threads", counted)
    rng = np.random.default_rng(2)
    solve(rng.uniform(size=(3, 5)), rng.uniform(size=(3, 5)))
    assert calls == [2]
