"""Shapley values, interactions and Banzhaf values of product games.

A product game on players ``0..n_players-1`` has the value function

    v(S) = w * prod_{j in S} a_j * prod_{j not in S} b_j,

and its Shapley value is a one-dimensional integral of a polynomial,

    phi_i = w * (a_i - b_i) * Integral_0^1 prod_{j != i} ((1 - t) b_j + t a_j) dt,

evaluated here with Gauss–Legendre quadrature by the compiled kernels of
``_product_core``. This module validates inputs, picks the rules and allocates
the outputs.
"""

from collections.abc import Sequence
from dataclasses import dataclass

import numpy as np

from .._contract.validation import check_games
from .._runtime.threads import effective_n_threads
from . import _product_core
from ._quadrature import (
    Rules,
    auto_n_points,
    check_n_quadrature_points,
    error_bounds,
    game_statistics,
)


def product_shapley(
    a,
    b=None,
    weights=None,
    *,
    groups: Sequence[Sequence[int]] | None = None,
    n_quadrature_points: int | str = "auto",
    reduce: bool = True,
    n_jobs: int | None = None,
) -> np.ndarray:
    """Shapley values of a batch of product games.

    Game ``g`` has the value function ``v_g(S) = weights[g] * prod_{j in S}
    a[g, j] * prod_{j not in S} b[g, j]``. Its Shapley values are integrals of
    polynomials over [0, 1], which Gauss–Legendre quadrature evaluates exactly
    with ``ceil(n / 2)`` points for ``n`` non-dummy players, in O(n) work per
    point, with products kept in a scaled form that cannot overflow or
    underflow.

    Parameters
    ----------
    a : array-like of shape (n_games, n_players) or (n_players,)
        Each player's factor when it is in the coalition. A 1-D array is a
        single game.
    b : array-like of the shape of ``a``, default=None
        Each player's factor when it is absent; ``None`` means 1 (a pure
        product game).
    weights : array-like of shape (n_games,), default=None
        The games' weights ``w``; ``None`` means 1.
    groups : sequence of sequences of int, default=None
        A partition of the players. If given, each group acts as one player
        whose factors are the products of its members' factors, and the exact
        Shapley values of that quotient game are returned, one per group, in
        the order of ``groups``.
    n_quadrature_points : "auto" or int, default="auto"
        Quadrature points per game. ``"auto"`` uses the exact rule
        ``ceil(n / 2)`` for games of up to 128 non-dummy players, and for
        larger games the fewest points whose error bound is below one unit in
        the last place relative to ``max_S |v(S)|`` (see the user guide). An
        integer uses that many points for every game.
    reduce : bool, default=True
        If True, return the weighted sum of all games' values; otherwise one
        row per game.
    n_jobs : int, default=None
        Number of OpenMP threads; ``None`` or ``-1`` means all CPUs.

    Returns
    -------
    values : ndarray of shape (n_players,) or (n_games, n_players)
        Shapley values, one column per player (or per group). Efficiency
        holds: each game's values sum to ``v(N) - v(∅)``. Players with
        ``a_j == b_j`` (dummies) get exactly 0.

    See Also
    --------
    product_interactions : Pairwise Shapley interaction values.
    product_banzhaf : Banzhaf values of the same games.
    shapley_values : Exact Shapley values of any game, by enumeration.

    Examples
    --------
    The game ``v(S) = 10`` if players 0 and 1 are both in ``S`` (else 0) is
    the product game with ``a = (1, 1)``, ``b = (0, 0)`` and weight 10; the
    interaction is shared equally:

    >>> from skshapley.games import product_shapley
    >>> product_shapley([1.0, 1.0], [0.0, 0.0], [10.0])
    array([5., 5.])
    """
    a, b, weights = check_games(a, b, weights)
    check_n_quadrature_points(n_quadrature_points)
    return _shapley(
        a, b, weights, groups, n_quadrature_points, reduce, effective_n_threads(n_jobs)
    )


def _shapley(a, b, weights, groups, n_quadrature_points, reduce, n_threads: int):
    """:func:`product_shapley` of validated games."""
    exponents = np.zeros(len(weights), dtype=np.intc)
    if groups is not None:
        a, b, exponents = _quotient_game(a, b, groups, n_threads)
    gap, b, exponents = _gaps(a, b, exponents)
    return solve_games(
        gap, b, weights, exponents, n_quadrature_points, reduce=reduce,
        n_threads=n_threads,
    ).values  # fmt: skip


@dataclass(frozen=True)
class GameValues:
    """The Shapley values of a batch of games and how they were computed.

    Attributes
    ----------
    values : ndarray of shape (n_players,) or (n_games, n_players)
        The Shapley values: the games' weighted sum, or one row per game.
    n_points : ndarray of shape (n_games,), dtype intp
        The number of quadrature points each game used.
    error_bounds : ndarray of shape (n_games,) or None
        Each game's bound on the quadrature error of its values, relative to
        ``max_S |v(S)|`` (0 where the rule is exact; see
        :func:`~skshapley.games._quadrature.error_bounds`); None unless asked
        for.
    """

    values: np.ndarray
    n_points: np.ndarray
    error_bounds: np.ndarray | None


def solve_games(
    gap: np.ndarray,
    b: np.ndarray,
    weights: np.ndarray,
    weight_exponents: np.ndarray,
    n_quadrature_points: int | str,
    *,
    reduce: bool,
    n_threads: int,
    with_bounds: bool = False,
) -> GameValues:
    """Shapley values of validated games, the points used and error bounds.

    The games are given by ``b`` and ``gap = a - b`` (see
    :func:`_gaps`) and weighted by ``weights * 2**weight_exponents``, on
    ``n_threads`` OpenMP threads. The error bounds are computed only
    ``with_bounds``.
    """
    statistics = None
    if n_quadrature_points == "auto" or with_bounds:
        statistics = game_statistics(gap, b, n_threads)
    n_points = _n_points(len(gap), n_quadrature_points, statistics)
    bounds = error_bounds(n_points, statistics) if with_bounds else None
    values = _game_values(
        gap, b, weights, weight_exponents, Rules.stack(n_points), reduce, n_threads
    )
    return GameValues(values, n_points, bounds)


def add_pure_game_sums(
    gap: np.ndarray,
    statistics: tuple[np.ndarray, np.ndarray],
    weights: np.ndarray,
    n_quadrature_points: int | str,
    out: np.ndarray,
    n_threads: int,
) -> GameValues:
    """Add each row's weighted sum of pure games' Shapley values to ``out``.

    Row ``r`` of ``out`` (of shape (n_rows, n_outputs, n_players)) gets
    ``sum_i weights[i, o] * phi(game r * n + i)`` in output ``o``, for the
    pure games (``b = 1``) with gaps ``gap`` (of shape (n_rows * n,
    n_players), ``n = len(weights)``) and their :func:`game_statistics`.
    The sums are in an order fixed by the games alone: bit-identical
    whatever ``n_threads`` and whatever the other rows. Returns the points
    each game used and its error bound; the returned ``values`` is ``out``.
    """
    n_points = _n_points(len(gap), n_quadrature_points, statistics)
    n_rows, n_outputs, n_players = out.shape
    n_tasks = -(-len(weights) // _product_core.GAMES_PER_TASK)
    partial = np.empty((n_rows * n_tasks, n_outputs, n_players))
    out_of_memory = np.zeros(1, dtype=np.intc)
    _product_core.pure_game_sums(
        gap, weights, Rules.stack(n_points), partial, out, n_threads, out_of_memory
    )
    if out_of_memory[0]:
        raise MemoryError("Could not allocate the product-game scratch memory.")
    _check_finite(out)
    return GameValues(out, n_points, error_bounds(n_points, statistics))


def _n_points(n_games: int, n_quadrature_points, statistics) -> np.ndarray:
    """Each game's number of points: ``"auto"``'s (from the games'
    statistics) or the given number."""
    if n_quadrature_points == "auto":
        return auto_n_points(None, None, statistics=statistics)
    return np.full(n_games, n_quadrature_points, dtype=np.intp)


# Factors above this (2**1020) are scaled down before their gaps are taken, so
# that neither ``a - b`` nor ``b + (a - b)`` can overflow.
_LARGE_FACTOR = 2.0**1020


def _gaps(a, b, exponents):
    """``a - b`` and ``b``, with huge factors scaled by 2**-4 (exactly).

    Each scaled player adds 4 to its game's weight exponent: every ``v(S)``
    has one factor of each player.
    """
    large = np.maximum(np.abs(a), np.abs(b)) > _LARGE_FACTOR
    if large.any():
        a = np.where(large, a / 16.0, a)
        b = np.where(large, b / 16.0, b)
        exponents = (exponents + 4 * large.sum(axis=1)).astype(np.intc)
    return a - b, b, exponents


def product_banzhaf(a, b=None, weights=None, *, n_jobs: int | None = None):
    """Banzhaf values of a batch of product games.

    The Banzhaf value of player ``i`` averages its marginal contributions over
    all coalitions of the other players with equal weight. For a product game
    it is ``w * (a_i - b_i) * prod_{j != i} (a_j + b_j) / 2``: the Shapley
    integrand evaluated at ``t = 1/2``.

    Parameters
    ----------
    a : array-like of shape (n_games, n_players) or (n_players,)
        Each player's factor when it is in the coalition.
    b : array-like of the shape of ``a``, default=None
        Each player's factor when it is absent; ``None`` means 1.
    weights : array-like of shape (n_games,), default=None
        The games' weights; ``None`` means 1.
    n_jobs : int, default=None
        Number of OpenMP threads; ``None`` or ``-1`` means all CPUs.

    Returns
    -------
    values : ndarray of shape (n_players,)
        The weighted sum of the games' Banzhaf values.

    See Also
    --------
    product_shapley : Shapley values of the same games.

    Examples
    --------
    >>> from skshapley.games import product_banzhaf
    >>> product_banzhaf([1.0, 1.0], [0.0, 0.0], [10.0])
    array([5., 5.])
    """
    a, b, weights = check_games(a, b, weights)
    gap, b, exponents = _gaps(a, b, np.zeros(len(a), dtype=np.intc))
    return _game_values(
        gap, b, weights, exponents, Rules.midpoint(len(a)), True,
        effective_n_threads(n_jobs),
    )  # fmt: skip


def product_interactions(
    a,
    b=None,
    weights=None,
    *,
    n_quadrature_points: int | str = "auto",
    n_jobs: int | None = None,
) -> np.ndarray:
    """Pairwise Shapley interaction values of a batch of product games.

    Uses shap's convention: entry ``(i, j)`` for ``i != j`` is half the
    Shapley interaction index of ``i`` and ``j``, the diagonal holds the main
    effects, and each row sums to player ``i``'s Shapley value.

    The interaction index of ``i != j`` is
    ``w (a_i - b_i)(a_j - b_j) Integral_0^1 prod_{k != i, j} f_k(t) dt``: the
    Shapley value of ``j`` in the game where ``i`` is replaced by the constant
    factor ``a_i - b_i``. It is computed that way, with the same compiled core.

    Parameters
    ----------
    a : array-like of shape (n_games, n_players) or (n_players,)
        Each player's factor when it is in the coalition.
    b : array-like of the shape of ``a``, default=None
        Each player's factor when it is absent; ``None`` means 1.
    weights : array-like of shape (n_games,), default=None
        The games' weights; ``None`` means 1.
    n_quadrature_points : "auto" or int, default="auto"
        Quadrature points per game, as in :func:`product_shapley`.
    n_jobs : int, default=None
        Number of OpenMP threads; ``None`` or ``-1`` means all CPUs.

    Returns
    -------
    interactions : ndarray of shape (n_players, n_players)
        Symmetric; summed over all games.

    See Also
    --------
    product_shapley : The Shapley values that the rows sum to.

    Examples
    --------
    >>> from skshapley.games import product_interactions
    >>> product_interactions([1.0, 1.0], [0.0, 0.0], [10.0])
    array([[0., 5.],
           [5., 0.]])
    """
    a, b, weights = check_games(a, b, weights)
    check_n_quadrature_points(n_quadrature_points)
    n_threads = effective_n_threads(n_jobs)
    n_players = a.shape[1]
    shapley = _shapley(a, b, weights, None, n_quadrature_points, True, n_threads)
    interactions = np.zeros((n_players, n_players))
    delta = a - b
    for i in np.flatnonzero((delta != 0).any(axis=0)):
        a_i, b_i = a.copy(), b.copy()
        a_i[:, i] = b_i[:, i] = delta[:, i]
        interactions[i] = _shapley(
            a_i, b_i, weights, None, n_quadrature_points, True, n_threads
        )
    interactions /= 2.0
    np.fill_diagonal(interactions, shapley - interactions.sum(axis=1))
    return interactions


def _quotient_game(a, b, groups, n_threads: int):
    """Factors of the game whose players are ``groups``, and their exponents."""
    n_games, n_players = a.shape
    members, group_start = _check_partition(groups, n_players)
    n_groups = len(group_start) - 1
    a_groups = np.empty((n_games, n_groups))
    b_groups = np.empty((n_games, n_groups))
    exponents = np.empty(n_games, dtype=np.intc)
    _product_core.group_factors(
        a, b, members, group_start, a_groups, b_groups, exponents, n_threads,
    )  # fmt: skip
    return a_groups, b_groups, exponents


def _check_partition(groups, n_players):
    """Flatten ``groups`` after checking it partitions ``range(n_players)``."""
    try:
        members = [np.asarray(group, dtype=np.intp).reshape(-1) for group in groups]
    except (TypeError, ValueError) as exc:
        raise ValueError(
            "groups must be a sequence of sequences of player indices."
        ) from exc
    flat = np.concatenate(members) if members else np.empty(0, np.intp)
    if any(len(group) == 0 for group in members):
        raise ValueError("groups must not contain an empty group.")
    if not np.array_equal(np.sort(flat), np.arange(n_players)):
        indices, counts = np.unique(flat, return_counts=True)
        missing = np.setdiff1d(np.arange(n_players), indices).tolist()
        repeated = indices[counts > 1].tolist()
        unknown = indices[(indices < 0) | (indices >= n_players)].tolist()
        raise ValueError(
            f"groups must partition the {n_players} players: each index in "
            f"0..{n_players - 1} exactly once; missing {missing}, repeated "
            f"{repeated}, out of range {unknown}."
        )
    group_start = np.concatenate([[0], np.cumsum([len(g) for g in members])])
    return flat, group_start.astype(np.intp)


def _game_values(
    gap, b, weights, weight_exponents, rules: Rules, reduce, n_threads: int
):
    """Run the compiled kernel on validated games with the given rules."""
    out = np.zeros((n_threads if reduce else len(gap), gap.shape[1]))
    out_of_memory = np.zeros(1, dtype=np.intc)
    _product_core.product_game_values(
        gap, b, weights, weight_exponents, rules, out, reduce, n_threads,
        out_of_memory,
    )  # fmt: skip
    if out_of_memory[0]:
        raise MemoryError("Could not allocate the product-game scratch memory.")
    values = out.sum(axis=0) if reduce else out
    _check_finite(values)
    return values


def _check_finite(values: np.ndarray) -> None:
    """Refuse values that overflowed rather than return them."""
    if not np.isfinite(values).all():
        raise FloatingPointError(
            "The Shapley values exceed the float64 range (about 1.8e308)."
        )
