"""Gauss–Legendre rules on [0, 1] and the choice of their size.

A product game's Shapley integrand ``prod_{j != i} f_j(t)`` is a polynomial of
degree ``n - 1`` for ``n`` non-dummy players. An ``m``-point Gauss–Legendre
rule integrates polynomials of degree ``2m - 1`` exactly, so ``ceil(n / 2)``
points are exact. Far fewer usually reach float64 accuracy: for a function
analytic inside the Bernstein ellipse ``E_rho`` the error of the ``m``-point
rule decays like ``rho**(-2m)`` (Trefethen, *Approximation Theory and
Approximation Practice*, Thm. 19.3), which is what ``"auto"`` uses for large
games.
"""

from dataclasses import dataclass
from functools import lru_cache
from numbers import Integral

import numpy as np
from scipy.special import roots_legendre

from .._contract.validation import check_count
from .._runtime.limits import MAX_QUADRATURE_POINTS
from . import _product_core

# "auto" uses the exact rule while it needs at most this many points: below it
# the exact rule costs next to nothing, above it the error bound saves work.
EXACT_AUTO_LIMIT = 64

# "auto" asks the error bound for this accuracy relative to the game's scale
# max_S |v(S)|: one unit in the last place of float64.
AUTO_TOLERANCE = 2.0**-52

# The ellipse parameters rho over which the bound is minimized.
_LOG_RHO = np.geomspace(1e-3, 20.0, 200)


@lru_cache(maxsize=512)
def _cached_rule(n_points: int) -> tuple[np.ndarray, np.ndarray]:
    """Nodes and weights on [0, 1], accurate to a few units in the last place.

    Newton's method on ``P_n(cos theta)`` in the angle ``theta``, from
    SciPy's nodes, with ``P_n`` by the three-term recurrence, in extended
    precision where the platform has it (the recurrence's rounding grows with
    ``n``). Only the nodes ``t <= 1/2`` are computed; the rule is symmetric.
    The node is ``t = sin(theta / 2)**2``, accurate to ~1e-14 relative even
    near ``t = 0``, where ``(1 + x) / 2`` would lose it all to cancellation.
    The weight is the Christoffel function
    ``1 / (2 sum_{j < n} (j + 1/2) P_j(x)**2)``, a sum of positive terms: the
    textbook formula through ``P_n'`` loses ~1e-10 relative accuracy at the
    end nodes for ``n`` in the thousands.
    """
    n = n_points
    x, _ = roots_legendre(n)
    theta = np.arccos(x[::-1][: (n + 1) // 2].astype(np.longdouble))
    for _ in range(_NEWTON_STEPS):
        p_n, p_previous, _ = _legendre(n, np.cos(theta))
        slope = n * (p_previous - np.cos(theta) * p_n) / np.sin(theta) ** 2
        theta = theta + p_n / (np.sin(theta) * slope)
    _, _, christoffel = _legendre(n, np.cos(theta))
    half_nodes = (np.sin(theta / 2) ** 2).astype(np.float64)
    half_weights = (0.5 / christoffel).astype(np.float64)
    mirrored = slice(n // 2 - 1, None, -1) if n > 1 else slice(0, 0)
    nodes = np.concatenate([half_nodes, 1.0 - half_nodes[mirrored]])
    weights = np.concatenate([half_weights, half_weights[mirrored]])
    nodes.flags.writeable = False
    weights.flags.writeable = False
    return nodes, weights


# SciPy's nodes are within ~1e-13 in the angle; Newton's method converges
# quadratically, so two steps reach extended precision.
_NEWTON_STEPS = 2


def _legendre(n: int, x: np.ndarray) -> tuple[np.ndarray, ...]:
    """``P_n(x)``, ``P_{n-1}(x)`` and ``sum_{j < n} (j + 1/2) P_j(x)**2``.

    By the (stable) three-term recurrence.
    """
    p_previous, p_n = np.zeros_like(x), np.ones_like(x)
    christoffel = np.zeros_like(x)
    for degree in range(1, n + 1):
        christoffel += (degree - 0.5) * p_n**2
        p_previous, p_n = (
            p_n,
            ((2 * degree - 1) * x * p_n - (degree - 1) * p_previous) / degree,
        )
    return p_n, p_previous, christoffel


def gauss_legendre(n_points: int) -> tuple[np.ndarray, np.ndarray]:
    """Gauss–Legendre nodes and weights on the interval [0, 1].

    The ``n_points``-point rule integrates every polynomial of degree at most
    ``2 * n_points - 1`` exactly. Rules are cached; the returned arrays are
    read-only.

    Parameters
    ----------
    n_points : int
        Number of nodes, from 1 to ``MAX_QUADRATURE_POINTS`` (65,536).

    Returns
    -------
    nodes : ndarray of shape (n_points,)
        Increasing nodes in the open interval (0, 1).
    weights : ndarray of shape (n_points,)
        Positive weights summing to 1.

    See Also
    --------
    exact_n_points : The number of points that makes a product game exact.

    Examples
    --------
    >>> from skshapley.games import gauss_legendre
    >>> nodes, weights = gauss_legendre(2)
    >>> print(f"{weights @ nodes**3:.15f}")  # the integral of t**3 over [0, 1]
    0.250000000000000
    """
    n_points = check_count(n_points, "n_points")
    _check_at_most_max_points(n_points, "n_points")
    return _cached_rule(n_points)


def exact_n_points(n_players: int) -> int:
    """Number of Gauss–Legendre points that makes a product game exact.

    The Shapley integrand of a product game with ``n_players`` non-dummy
    players is a polynomial of degree ``n_players - 1``, which the rule with
    ``ceil(n_players / 2)`` points integrates exactly.

    Parameters
    ----------
    n_players : int
        Number of (non-dummy) players, at least 0.

    Returns
    -------
    n_points : int
        ``ceil(n_players / 2)``, and at least 1.

    Examples
    --------
    >>> from skshapley.games import exact_n_points
    >>> exact_n_points(5000)
    2500
    """
    if n_players < 0:
        raise ValueError(f"n_players must be >= 0, got {n_players!r}.")
    return max(1, (int(n_players) + 1) // 2)


def check_n_quadrature_points(n_quadrature_points) -> None:
    """Raise ``ValueError`` unless the value is ``"auto"`` or an integer in
    ``[1, MAX_QUADRATURE_POINTS]``."""
    if isinstance(n_quadrature_points, str) and n_quadrature_points == "auto":
        return
    if (
        not isinstance(n_quadrature_points, Integral)
        or isinstance(n_quadrature_points, bool)
        or n_quadrature_points < 1
    ):
        raise ValueError(
            'n_quadrature_points must be "auto" or an integer from 1 to '
            f"{MAX_QUADRATURE_POINTS}, got {n_quadrature_points!r}."
        )
    _check_at_most_max_points(n_quadrature_points, "n_quadrature_points")


def _check_at_most_max_points(n_points: int, name: str) -> None:
    """Refuse rules larger than ``MAX_QUADRATURE_POINTS``.

    A rule's nodes cost O(n_points**2) to compute and every game's scratch
    grows with them: 10**9 points would exhaust memory. The limit is the
    exact rule for 131,072 players, and far more than float64 accuracy
    needs for any game (see ``auto_n_points``).
    """
    if n_points > MAX_QUADRATURE_POINTS:
        raise ValueError(
            f"{name} must be at most {MAX_QUADRATURE_POINTS} (the limit on "
            f"quadrature points), got {n_points!r}."
        )


def auto_n_points(
    gap: np.ndarray,
    b: np.ndarray,
    n_threads: int = 1,
    *,
    statistics: tuple[np.ndarray, np.ndarray] | None = None,
) -> np.ndarray:
    """The ``"auto"`` number of points for each game of a batch.

    The exact rule while it has at most ``EXACT_AUTO_LIMIT`` points; beyond
    that, the fewest points whose Gauss–Legendre error bound (see
    :func:`error_bounds`) is below ``AUTO_TOLERANCE * max_S |v(S)|`` for every
    player, and never more than the exact rule. (The bound's points grow
    like the square root of the players: ~10,000 for 10**7 players, far
    below ``MAX_QUADRATURE_POINTS``.)

    Parameters
    ----------
    gap, b : ndarray of shape (n_games, n_players)
        The games' gaps ``a - b`` and factors ``b``, C-contiguous float64.
    n_threads : int, default=1
        OpenMP threads for the pass over the factors.
    statistics : tuple of ndarray, default=None
        The games' :func:`game_statistics`, if already computed.

    Returns
    -------
    n_points : ndarray of shape (n_games,), dtype intp
    """
    n_moving, mean_gap = statistics or game_statistics(gap, b, n_threads)
    n_points = np.maximum(1, (n_moving + 1) // 2)
    large = n_points > EXACT_AUTO_LIMIT
    if not large.any():
        return n_points
    log_error = _log_error_at_zero_points(n_moving[large], mean_gap[large])
    needed = np.ceil((log_error - np.log(AUTO_TOLERANCE)) / (2.0 * _LOG_RHO))
    n_points[large] = np.clip(needed.min(axis=1), 1, n_points[large]).astype(np.intp)
    return n_points


def error_bounds(
    n_points: np.ndarray, statistics: tuple[np.ndarray, np.ndarray]
) -> np.ndarray:
    """Bounds on the quadrature error of each game's Shapley values.

    The bound. Scale player ``j`` so that ``max(|a_j|, |b_j|) = 1`` (this
    scales every ``v(S)`` alike and makes ``max_S |v(S)| = |w|``). On the
    Bernstein ellipse of [0, 1] with parameter ``rho``, whose points lie within
    ``A = (rho + 1/rho) / 4`` of 1/2, each factor obeys
    ``|f_j(z)| <= |f_j(1/2)| + |a_j - b_j| A <= 1 + q_j (A - 1/2)`` with
    ``q_j = |a_j - b_j|``. By Jensen's inequality the product over ``n``
    players is at most ``M = (1 + q (A - 1/2))**n`` for the mean ``q``, and the
    ``m``-point rule's error on [0, 1] is at most
    ``(32/15) M rho**(-2m) / (rho**2 - 1)`` (Trefethen, Thm. 19.3); the Shapley
    value multiplies it by ``|a_i - b_i| <= 2``. The bound is minimized over
    ``rho``; it is 0 where ``n_points`` reaches the exact rule.

    Parameters
    ----------
    n_points : ndarray of shape (n_games,)
        The number of points each game is evaluated with.
    statistics : tuple of ndarray
        The games' :func:`game_statistics`.

    Returns
    -------
    bounds : ndarray of shape (n_games,)
        Bounds on ``|phi_i - phi_i(exact)| / max_S |v(S)|`` for every player.
    """
    n_moving, mean_gap = statistics
    bounds = np.zeros(len(n_moving))
    inexact = np.asarray(n_points) < (n_moving + 1) // 2
    if inexact.any():
        log_error = _log_error_at_zero_points(n_moving[inexact], mean_gap[inexact])
        log_error -= 2.0 * _LOG_RHO * np.asarray(n_points)[inexact, None]
        bounds[inexact] = np.exp(log_error.min(axis=1))
    return bounds


def game_statistics(
    gap: np.ndarray, b: np.ndarray, n_threads: int = 1
) -> tuple[np.ndarray, np.ndarray]:
    """Each game's number of non-dummy players and their mean scaled gap.

    The scaled gap of player ``j`` is ``|a_j - b_j| / max(|a_j|, |b_j|)``:
    what the error bound of large games depends on.
    """
    n_moving = np.empty(len(gap), dtype=np.intp)
    mean_gap = np.empty(len(gap))
    _product_core.game_statistics(gap, b, n_moving, mean_gap, n_threads)
    return n_moving, mean_gap


def _log_error_at_zero_points(n_moving, mean_gap):
    """``log(bound * rho**(2m))`` per game (rows) and ellipse ``rho`` (columns)."""
    rho = np.exp(_LOG_RHO)
    growth = (rho + 1.0 / rho) / 4.0 - 0.5
    return (
        np.log(64.0 / 15.0)
        - np.log(rho**2 - 1.0)
        + n_moving[:, None] * np.log1p(mean_gap[:, None] * growth)
    )


@dataclass(frozen=True)
class Rules:
    """The quadrature rules of a batch of games, stacked one after another.

    Game (or tree) ``g`` integrates with the rule
    ``nodes[start[g]:][:n_points[g]]`` and the matching ``weights``. Games
    with the same number of points share one copy of their rule. The
    compiled kernels read it as the ``Rules`` struct of ``_rules.pxd``.

    Attributes
    ----------
    nodes : ndarray of shape (n_nodes,), dtype float64
        The distinct rules' nodes in [0, 1], one rule after another.
    weights : ndarray of shape (n_nodes,), dtype float64
        Their weights.
    start : ndarray of shape (n_games,), dtype intp
        Where each game's rule starts in ``nodes`` and ``weights``.
    n_points : ndarray of shape (n_games,), dtype intp
        The number of points of each game's rule.
    """

    nodes: np.ndarray
    weights: np.ndarray
    start: np.ndarray
    n_points: np.ndarray

    @classmethod
    def stack(cls, n_points: np.ndarray) -> "Rules":
        """The Gauss–Legendre rule of ``n_points[g]`` points for each game ``g``.

        Parameters
        ----------
        n_points : ndarray of shape (n_games,)
            The number of points of each game's rule.
        """
        n_points = np.asarray(n_points, dtype=np.intp)
        if len(n_points) and (n_points == n_points[0]).all():
            # One rule for all (the usual case): np.unique would sort.
            nodes, weights = gauss_legendre(int(n_points[0]))
            return cls(nodes, weights, np.zeros(len(n_points), np.intp), n_points)
        sizes, inverse = np.unique(n_points, return_inverse=True)
        offsets = np.concatenate([[0], np.cumsum(sizes)])
        rules = [gauss_legendre(int(size)) for size in sizes]
        return cls(
            nodes=np.concatenate([nodes for nodes, _ in rules]),
            weights=np.concatenate([weights for _, weights in rules]),
            start=offsets[:-1][inverse].astype(np.intp),
            n_points=n_points,
        )

    @classmethod
    def midpoint(cls, n_games: int) -> "Rules":
        """The one-point rule at ``t = 1/2`` with weight 1, for every game.

        It evaluates a product game's Shapley integrand at the midpoint:
        its Banzhaf value.
        """
        return cls(
            nodes=np.array([0.5]),
            weights=np.array([1.0]),
            start=np.zeros(n_games, dtype=np.intp),
            n_points=np.ones(n_games, dtype=np.intp),
        )
