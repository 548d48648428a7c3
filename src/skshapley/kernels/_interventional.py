"""Interventional values of product-kernel models against a background.

With ``feature_perturbation="interventional"`` an absent feature takes the
background rows' values instead of matching every reference point: ``v(S) =
mean_z f(x_S, z_rest) = sum_i alpha_i mean_z prod_{j in S} k_j(x_j, r_ij)
prod_{j not in S} k_j(z_j, r_ij) + c``. For each reference point ``r_i`` and
background row ``z`` that is a product game with ``a_j = k_j(x_j, r_ij)``
and ``b_j = k_j(z_j, r_ij)``, weighted by ``alpha_i / n_background``: its
values, interactions and indices are the product-game core's (``b`` is
computed once per block of reference points, and shared by the rows).
Repeated background rows make the same games: they are kept once, weighted
by their count (:func:`distinct_background`). A row costs O(references *
distinct background rows * players * points).
"""

from typing import NamedTuple

import numpy as np

from .._contract.results import QuadratureUse
from ..games import _indices_core
from ..games._indices_core import RuleView
from ..games._product import product_interactions as _product_interactions
from ..games._product import solve_games
from ..games._quadrature import EXACT_AUTO_LIMIT, exact_n_points

# Games of one row solved at a time (references x background rows): bounds
# the (games, players) factors to a few tens of MB.
_GAMES_PER_BLOCK = 2**16


class Background(NamedTuple):
    """The distinct background rows and each one's share of the rows."""

    rows: np.ndarray
    shares: np.ndarray


def distinct_background(background: np.ndarray) -> Background:
    """The background's distinct rows (sorted), weighted by their counts."""
    rows, counts = np.unique(background, axis=0, return_counts=True)
    return Background(np.ascontiguousarray(rows), counts / len(background))


def _factors(component, X, references, players, n_players, n_threads):
    """``k_j`` of each player for rows ``X`` and ``references``:
    (n_rows, n_references, n_players)."""
    log = component.log_factors(X, references, players, n_players, n_threads)
    return np.exp(log).reshape(len(X), -1, n_players)


def _reference_blocks(n_references: int, n_background: int):
    """Slices of reference points whose games with the background fit a block."""
    step = max(1, _GAMES_PER_BLOCK // max(n_background, 1))
    for begin in range(0, n_references, step):
        yield slice(begin, begin + step)


def _background_games(component, background, references, players, n_players, n_threads):
    """The factors ``b`` of the games of ``references`` with the background
    rows, (n_references * n_background, n_players) (game ``(i, z)`` at ``i *
    n_background + z``), and their weights (n_references * n_background,
    n_outputs): the same for every explained row."""
    rows, shares = background
    b = _factors(component, rows, references, players, n_players, n_threads)
    b = np.ascontiguousarray(b.transpose(1, 0, 2).reshape(-1, n_players))
    weights = np.repeat(component.weights[references], len(rows), axis=0)
    weights *= np.tile(shares, len(weights) // len(rows))[:, None]
    return b, np.ascontiguousarray(weights)


def _row_games(game, X, background, players, n_players, n_threads):
    """Each row's games with the background: ``(row, a, b, weights)``, the
    row's factors ``a`` repeated for every background row; ``b`` and the
    weights are made once per block of references."""
    for component in game.components:
        for references in _reference_blocks(
            len(component.reference), len(background.rows)
        ):
            b, weights = _background_games(
                component, background, references, players, n_players, n_threads
            )
            for row, x in enumerate(X):
                a = _factors(
                    component, x[None], references, players, n_players, n_threads
                )[0]
                yield row, np.repeat(a, len(background.rows), axis=0), b, weights


def values(
    game, X, background, players, n_players, points, out, n_threads
) -> QuadratureUse:
    """Add the rows' interventional Shapley values to ``out``
    (n_rows, n_outputs, n_players); return the most points any game used
    and a bound on the quadrature error of every value."""
    most_points, bound = 0, np.zeros(out.shape[:2])
    for row, a, b, weights in _row_games(
        game, X, background, players, n_players, n_threads
    ):
        gap, no_exponents = a - b, np.zeros(len(a), dtype=np.intc)
        for o in range(weights.shape[1]):
            solved = solve_games(
                gap, b, np.ascontiguousarray(weights[:, o]), no_exponents, points,
                reduce=True, n_threads=n_threads, with_bounds=True,
            )  # fmt: skip
            out[row, o] += solved.values
            most_points = max(most_points, int(solved.n_points.max()))
            # |v(S)| <= |w| for factors in (0, 1].
            bound[row, o] += solved.error_bounds @ np.abs(weights[:, o])
    return QuadratureUse(most_points, float(bound.max(initial=0.0)))


def interactions(
    game, X, background, players, n_players, points, out, n_threads
) -> QuadratureUse:
    """Add the rows' interventional interaction matrices, in shap's
    convention, to ``out`` (n_rows, n_outputs, n_players, n_players);
    return the quadrature used."""
    for row, a, b, weights in _row_games(
        game, X, background, players, n_players, n_threads
    ):
        for o in range(weights.shape[1]):
            out[row, o] += _product_interactions(
                a, b, weights[:, o], n_quadrature_points=points, n_jobs=n_threads
            )
    if points == "auto":  # the exact rule, up to EXACT_AUTO_LIMIT points
        points = min(exact_n_points(n_players), EXACT_AUTO_LIMIT)
    return QuadratureUse(points, 0.0 if 2 * points >= n_players else None)


def indices(game, X, background, players, n_players, plan, out, n_threads):
    """Add the rows' interventional interaction indices of ``plan`` to
    ``out`` (n_rows, n_outputs, plan.n_columns), by colexicographic column."""
    view = RuleView(plan)
    for component in game.components:
        for references in _reference_blocks(
            len(component.reference), len(background.rows)
        ):
            b, weights = _background_games(
                component, background, references, players, n_players, n_threads
            )
            step = max(1, _GAMES_PER_BLOCK * 32 // (len(b) * max(n_players, 1)))
            for begin in range(0, len(X), step):
                rows = slice(begin, begin + step)
                a = _factors(
                    component, X[rows], references, players, n_players, n_threads
                )
                a = np.ascontiguousarray(np.repeat(a, len(background.rows), axis=1))
                _indices_core.add_row_games(view, a, b, weights, out[rows], n_threads)
