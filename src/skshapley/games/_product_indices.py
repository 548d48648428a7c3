"""Interaction indices of any order of product games, by quadrature.

For ``v(S) = w * prod_{j in S} a_j * prod_{j not in S} b_j`` the dividend of
``T`` is ``m(T) = w * prod_{j in T} d_j * prod_{j not in T} b_j`` with ``d_j
= a_j - b_j``. Summed over the supersets of a coalition ``S`` with a weight
``omega(|S|, |T|)`` (see :func:`~skshapley.games._indices.moebius_weights`)
that is a moment of a polynomial, every index of ``S`` is ``w * prod_{j in S}
d_j`` times a functional of

    Q_S(x) = prod_{j not in S} (b_j + x d_j),

the polynomial whose coefficient of ``x**u`` sums the dividends' factors of
the supersets with ``u`` more players:

- Möbius, and STII below the top order: ``Q_S(0)``;
- SII: ``Integral_0^1 Q_S``; BII: ``Q_S(1/2)``;
- STII at the top order ``k``: ``Integral k (1 - x)**(k - 1) Q_S``
  (``1 / C(s + u, k) = k B(u + 1, k)``);
- FSII: ``Q_S(0) + c Integral p(x) (Q_S(x) - Q_S(0)) dx`` with ``p(x) =
  D**r [x**k (1 - x)**(k - 1)] / x``, ``r = k - s``: Tsai et al.'s weight
  ``C(t - 1, k) / C(t + k - 1, k + s)`` is ``B(t, k)`` times a falling
  factorial of degree ``r`` in ``u``, and ``r`` integrations by parts move
  the derivatives onto the Beta density (no boundary terms: the density
  vanishes to order ``k`` at 0 and ``k - 1`` at 1);
- FBII: ``Q_S(0) + (-1)**r y**(r + 1) R_S^(r)(y) / r!`` at ``y = 1/2``, with
  ``R_S(x) = (Q_S(x) - Q_S(0)) / x``: its Taylor coefficients at ``y`` come
  from a recurrence over the players, without division;
- k-SII: the SII of the coalitions of at most ``k`` players, combined with
  Bernoulli numbers.

Gauss–Legendre quadrature with ``n / 2 + 1`` nodes (``(n + k - 1) / 2 +
1`` for FSII) is exact for every integrand. Products are kept as a mantissa
and a power of two, so that none overflows or underflows before the value
itself does; a factor that is 0 is counted, not divided by.
"""

import numpy as np

from .._contract.validation import check_games
from ._index_plan import (
    IndexPlan,
    combinations,
    needs_derivative,
    point_weights,
    rule_of,
)
from ._indices import InteractionIndices, check_index

# Values of one (games x coalitions x points) block, bounding its memory.
_BLOCK_VALUES = 2**22


class _Scaled:
    """Arrays kept as ``mantissa * 2**exponent``."""

    def __init__(self, mantissa: np.ndarray, exponent: np.ndarray):
        self.mantissa, self.exponent = mantissa, exponent

    @classmethod
    def of(cls, values: np.ndarray) -> "_Scaled":
        mantissa, exponent = np.frexp(values)
        return cls(mantissa, exponent.astype(np.int64))

    def times(self, other: "_Scaled") -> "_Scaled":
        product = _Scaled.of(self.mantissa * other.mantissa)
        exponent = product.exponent + self.exponent + other.exponent
        return _Scaled(product.mantissa, exponent)

    def __getitem__(self, key) -> "_Scaled":
        return _Scaled(self.mantissa[key], self.exponent[key])

    def value(self) -> np.ndarray:
        return np.ldexp(self.mantissa, np.clip(self.exponent, -2200, 2200))


def _weighted_sum(terms: _Scaled, weights: np.ndarray) -> _Scaled:
    """``sum_p weights[p] * terms[..., p]``, scaled to the largest term."""
    present = terms.mantissa != 0
    top = np.max(np.where(present, terms.exponent, np.iinfo(np.int64).min), axis=-1)
    top = np.where(present.any(axis=-1), top, 0)
    shift = np.clip(terms.exponent - top[..., None], -1100, 0)
    return _Scaled.of(np.ldexp(terms.mantissa, shift) @ weights).times(
        _Scaled(np.ones_like(top, dtype=float), top)
    )


def _added(x: _Scaled, y: _Scaled) -> _Scaled:
    """``x + y``, scaled to the larger."""
    top = np.maximum(x.exponent, y.exponent)
    total = np.ldexp(x.mantissa, np.clip(x.exponent - top, -1100, 0)) + np.ldexp(
        y.mantissa, np.clip(y.exponent - top, -1100, 0)
    )
    return _Scaled.of(total).times(_Scaled(np.ones_like(total), top))


def _product(factors: np.ndarray, axis: int) -> _Scaled:
    """The product of ``factors`` along ``axis``, scaled after each factor."""
    factors = np.moveaxis(factors, axis, 0)
    result = _Scaled(np.ones(factors.shape[1:]), np.zeros(factors.shape[1:], np.int64))
    for factor in factors:
        result = result.times(_Scaled.of(factor))
    return result


class _LeaveOut:
    """``prod_{j not in S} f_j(x)`` for many coalitions ``S``, from the full
    product of the non-zero factors and the count of zero ones."""

    def __init__(self, factors: np.ndarray):
        # factors: (games, players, points).
        self.factors = factors
        zero = factors == 0
        self.zeros = zero.sum(axis=1)
        self.full = _product(np.where(zero, 1.0, factors), axis=1)

    def without(self, members: np.ndarray) -> _Scaled:
        """For ``members`` of shape (coalitions, s): (games, coalitions, points)."""
        chosen = self.factors[:, members, :]  # (games, coalitions, s, points)
        zero = chosen == 0
        removed = _product(np.where(zero, 1.0, chosen), axis=2)
        left = self.zeros[:, None, :] - zero.sum(axis=2)
        mantissa = self.full.mantissa[:, None, :] / removed.mantissa
        return _Scaled.of(np.where(left > 0, 0.0, mantissa)).times(
            _Scaled(
                np.ones_like(mantissa),
                self.full.exponent[:, None, :] - removed.exponent,
            )
        )


def _banzhaf_derivative(gap, b, members, n_players: int, r: int) -> _Scaled:
    """``y**(r + 1) R_S^(r)(y) / r!`` at ``y = 1/2`` for each coalition:
    (games, coalitions).

    ``R_S(y + h) = sum_i [prod_{l < i} (c_l + h d_l)] d_i [prod_{l > i} b_l]``
    over the players outside ``S`` (``c = b + d / 2``), by a recurrence from
    the last player: ``A <- d_j B + (c_j + h d_j) A``, ``B <- b_j B``, as
    series in ``h`` truncated after ``h**r``.
    """
    n_games, n_coalitions = len(gap), len(members)
    inside = np.zeros((n_coalitions, n_players), dtype=bool)
    np.put_along_axis(inside, members, True, axis=1)
    series = np.zeros((n_games, n_coalitions, r + 1))
    suffix = np.ones((n_games, n_coalitions))
    exponent = np.zeros((n_games, n_coalitions), np.int64)
    for j in reversed(range(n_players)):
        d, c = gap[:, j, None], b[:, j, None] + gap[:, j, None] / 2
        step = c[..., None] * series
        step[..., 1:] += d[..., None] * series[..., :-1]
        step[..., 0] += d * suffix
        keep = inside[None, :, j]
        series = np.where(keep[..., None], series, step)
        suffix = np.where(keep, suffix, b[:, j, None] * suffix)
        _, shift = np.frexp(np.maximum(np.abs(series).max(axis=-1), np.abs(suffix)))
        series = np.ldexp(series, -shift[..., None])
        suffix = np.ldexp(suffix, -shift)
        exponent += shift
    return _Scaled.of(series[..., r] * (-1) ** r).times(
        _Scaled(np.ones(exponent.shape), exponent - (r + 1))
    )


def product_interaction_indices(
    a, b=None, weights=None, *, index: str = "k-SII", order: int = 2
) -> InteractionIndices:
    """Exact interaction indices of any order of a batch of product games.

    Game ``g`` has the value function ``v_g(S) = weights[g] * prod_{j in S}
    a[g, j] * prod_{j not in S} b[g, j]``; the result is the sum of the
    games' indices. Every index of a product game is a one-dimensional
    integral (or point value) of a polynomial, evaluated exactly by
    Gauss–Legendre quadrature, in O(coalitions * players * points) work.

    Parameters
    ----------
    a : array-like of shape (n_games, n_players) or (n_players,)
        Each player's factor when it is in the coalition.
    b : array-like of the shape of ``a``, default=None
        Each player's factor when it is absent; ``None`` means 1.
    weights : array-like of shape (n_games,), default=None
        The games' weights; ``None`` means 1.
    index : {"SII", "k-SII", "STII", "FSII", "FBII", "BII", "Moebius"}, \
default="k-SII"
        The interaction index (see :func:`interaction_indices`).
    order : int, default=2
        The largest coalition size, from 1 to ``n_players``.

    Returns
    -------
    InteractionIndices
        One value per coalition of at most ``order`` players.

    See Also
    --------
    interaction_indices : The same indices of any game, by enumeration.
    product_interactions : Pairwise interactions in shap's convention.

    Examples
    --------
    Three players who earn 6 only together: the Shapley-Taylor index of
    order 2 shares the triple's value equally among its three pairs.

    >>> from skshapley.games import product_interaction_indices
    >>> result = product_interaction_indices(
    ...     [1.0, 1.0, 1.0], [0.0, 0.0, 0.0], [6.0], index="STII", order=2
    ... )
    >>> {c: round(v, 12) for c, v in result.as_dict().items() if len(c) == 2}
    {(0, 1): 2.0, (0, 2): 2.0, (1, 2): 2.0}
    """
    a, b, weights = check_games(a, b, weights)
    n_games, n_players = a.shape
    index, order = check_index(index, order, n_players)
    gap = a - b
    plan = IndexPlan(index, order, n_players, int((gap != 0).any(axis=0).sum()))
    nodes, node_weights = rule_of(plan.n_nodes)
    points = np.concatenate([nodes, [0.0, 0.5]])
    leave_out = _LeaveOut(b[:, :, None] + points * gap[:, :, None])
    game_weights = _Scaled.of(weights)[:, None]
    by_size = []
    for size in plan.sizes:
        combos = combinations(n_players, size)
        weights_at = point_weights(index, order, size, nodes, node_weights)
        values = np.empty(len(combos))
        block = max(1, _BLOCK_VALUES // (n_games * len(points) * max(size, 1)))
        for start in range(0, len(combos), block):
            members = combos[start : start + block]
            functional = _weighted_sum(leave_out.without(members), weights_at)
            if needs_derivative(index, order, size):
                functional = _added(
                    functional,
                    _banzhaf_derivative(gap, b, members, n_players, order - size),
                )
            share = _product(gap[:, members], axis=2).times(functional)
            values[start : start + block] = share.times(game_weights).value().sum(0)
        by_size.append(values)
    values = plan.k_additive(np.concatenate(by_size))
    return InteractionIndices(index, order, plan.coalitions, values)
