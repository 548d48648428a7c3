"""Interaction indices of any order, for any game, by enumeration.

Every index here is linear in the game's Möbius transform (its Harsanyi
dividends) ``m``: the value of a coalition ``S`` of ``s`` players is

    I(S) = sum_{T ⊇ S} omega(s, |T|) * m(T),

with a weight that depends only on the two sizes, the number of players
``n`` and the index's order ``k`` (see :func:`moebius_weights`, and the user
guide's page "Interactions of any order" for each weight's source). So a
game's table gives every index in ``O(n**2 * 2**n)`` operations: one
transform to the dividends, one summing them over supersets size by size.

Coalitions are listed by size, then in lexicographic order (as
``itertools.combinations`` gives them); the empty coalition comes first for
the indices that give it a value (those whose values add up to ``v(N)``,
and Faith-Banzhaf's intercept).
"""

import itertools
import math
from dataclasses import dataclass
from fractions import Fraction
from functools import cache

import numpy as np

from .._contract.validation import check_count
from ._exact import GameLike, harsanyi_dividends

#: The interaction indices, by the names shapiq uses.
INDICES = ("SII", "k-SII", "STII", "FSII", "FBII", "BII", "Moebius")

# The indices that give the empty coalition a value.
_WITH_EMPTY = frozenset({"k-SII", "STII", "FSII", "FBII", "Moebius"})

#: Largest game whose indices are computed by enumeration (2**16 values).
MAX_INDEX_PLAYERS = 16


@dataclass(frozen=True)
class InteractionIndices:
    """Interaction indices of a game, one value per coalition.

    Attributes
    ----------
    index : str
        The index, one of :data:`INDICES`.
    order : int
        The largest coalition size listed (for k-SII, STII, FSII and FBII
        also the order the values depend on).
    coalitions : tuple of tuple of int
        The coalitions, each a sorted tuple of players: by size, then in
        lexicographic order, the empty coalition first where the index gives
        it a value.
    values : ndarray of shape (n_coalitions,)
        The index's value of each coalition.

    Examples
    --------
    >>> from skshapley.games import interaction_indices
    >>> result = interaction_indices([0.0, 1.0, 2.0, 7.0], 2, index="Moebius")
    >>> result.coalitions
    ((), (0,), (1,), (0, 1))
    >>> result.values
    array([0., 1., 2., 4.])
    """

    index: str
    order: int
    coalitions: tuple[tuple[int, ...], ...]
    values: np.ndarray

    def as_dict(self) -> dict[tuple[int, ...], float]:
        """The values keyed by coalition.

        Returns
        -------
        dict of tuple of int to float
            ``{coalition: value}``, in the order of :attr:`coalitions`.
        """
        return dict(zip(self.coalitions, self.values.tolist(), strict=True))


def check_index(index, order, n_players: int) -> tuple[str, int]:
    """Return ``(index, order)`` checked against ``n_players`` players."""
    if index not in INDICES:
        raise ValueError(
            f"index must be one of {', '.join(map(repr, INDICES))}, got {index!r}."
        )
    order = check_count(order, "order")
    if order > n_players:
        raise ValueError(
            f"order must be between 1 and the number of players ({n_players}), "
            f"got {order}."
        )
    return index, order


def coalitions_up_to(
    n_players: int, order: int, index: str
) -> tuple[tuple[int, ...], ...]:
    """The coalitions an index lists: by size, then lexicographic."""
    sizes = range(0 if index in _WITH_EMPTY else 1, order + 1)
    return tuple(
        coalition
        for size in sizes
        for coalition in itertools.combinations(range(n_players), size)
    )


@cache
def bernoulli_numbers(count: int) -> tuple[Fraction, ...]:
    """``B_0 .. B_{count-1}``, with ``B_1 = -1/2``."""
    numbers: list[Fraction] = []
    for n in range(count):
        numbers.append(
            -sum((math.comb(n + 1, j) * numbers[j] for j in range(n)), Fraction(0))
            / (n + 1)
            if n
            else Fraction(1)
        )
    return tuple(numbers)


def moebius_weights(index: str, order: int, n_players: int) -> np.ndarray:
    """``omega[s, t]``: the weight of a dividend of size ``t`` in the index of
    a coalition of size ``s`` (``s <= order``, ``t >= s``; 0 elsewhere).

    - Möbius: ``[t == s]``.
    - SII (Grabisch and Roubens, 1999): ``1 / (t - s + 1)``.
    - BII: ``2**-(t - s)``.
    - STII (Sundararajan et al., 2020): the dividend for ``s < k``, and
      ``1 / C(t, k)`` at the top order: each dividend shared equally by the
      ``k``-subsets of its coalition.
    - k-SII (Bordt and von Luxburg, 2023): ``sum_j B_{j - s} SII(T_j)`` over
      the supersets of size ``j <= k``, with Bernoulli numbers ``B``; so
      ``sum_{j=s}^{min(k, t)} C(t - s, j - s) B_{j - s} / (t - j + 1)``; the
      empty coalition keeps ``v(∅)``.
    - FSII (Tsai et al., 2023, Theorem 19): ``[t == s] + (-1)**(k - s) * s /
      (k + s) * C(k, s) * C(t - 1, k) / C(t + k - 1, k + s)`` for ``t > k``.
    - FBII (Tsai et al., 2023): ``[t == s] + (-1)**(k - s) * 2**-(t - s) *
      C(t - s - 1, k - s)`` for ``t > k``.
    """
    k, n = order, n_players
    omega = np.zeros((k + 1, n + 1))
    bernoulli = bernoulli_numbers(k + 1)
    for s in range(k + 1):
        for t in range(s, n + 1):
            if index == "Moebius":
                weight = float(t == s)
            elif index == "SII":
                weight = 1.0 / (t - s + 1)
            elif index == "BII":
                weight = 0.5 ** (t - s)
            elif index == "STII":
                weight = float(t == s) if s < k else 1.0 / math.comb(t, k)
            elif index == "k-SII":
                weight = (
                    float(t == 0)
                    if s == 0
                    else float(
                        sum(
                            math.comb(t - s, j - s) * bernoulli[j - s] / (t - j + 1)
                            for j in range(s, min(k, t) + 1)
                        )
                    )
                )
            elif index == "FSII":
                weight = float(t == s)
                if t > k and s > 0:
                    weight += float(
                        Fraction((-1) ** (k - s) * s * math.comb(k, s), k + s)
                        * Fraction(math.comb(t - 1, k), math.comb(t + k - 1, k + s))
                    )
            else:  # FBII
                weight = float(t == s)
                if t > k:
                    weight += (
                        (-1) ** (k - s) * 0.5 ** (t - s) * math.comb(t - s - 1, k - s)
                    )
            omega[s, t] = weight
    return omega


def interaction_indices(
    game: GameLike, n_players: int, *, index: str = "k-SII", order: int = 2
) -> InteractionIndices:
    """Exact interaction indices of any game, by enumeration of its coalitions.

    Parameters
    ----------
    game : callable or array-like of shape (2**n_players,)
        The game, as accepted by :func:`game_table`: a function of boolean
        coalition masks, or the table of its values indexed by bitmask.
    n_players : int
        Number of players, from 1 to 16.
    index : {"SII", "k-SII", "STII", "FSII", "FBII", "BII", "Moebius"}, \
default="k-SII"
        The interaction index: the Shapley interaction index, its k-additive
        aggregation, the Shapley-Taylor index, the faithful Shapley and
        Banzhaf indices, the Banzhaf interaction index, or the Möbius
        transform.
    order : int, default=2
        The largest coalition size, from 1 to ``n_players``.

    Returns
    -------
    InteractionIndices
        One value per coalition of at most ``order`` players. For k-SII,
        STII and FSII the values (with the empty coalition's ``v(∅)``) add
        up to ``v(N)``, as the Möbius transform's do at ``order=n_players``.

    See Also
    --------
    product_interaction_indices : The same indices of product games, by
        quadrature, for any number of players.

    Examples
    --------
    The game worth 10 when players 0 and 1 are both present: its whole value
    is the pair's interaction.

    >>> from skshapley.games import interaction_indices
    >>> interaction_indices([0.0, 0.0, 0.0, 10.0], 2, index="k-SII").as_dict()
    {(): 0.0, (0,): 0.0, (1,): 0.0, (0, 1): 10.0}
    """
    n_players = check_count(n_players, "n_players")
    if n_players > MAX_INDEX_PLAYERS:
        raise ValueError(
            f"n_players must be <= {MAX_INDEX_PLAYERS} to enumerate all "
            f"coalitions, got {n_players}. Product games of any size have "
            "product_interaction_indices."
        )
    index, order = check_index(index, order, n_players)
    dividends = harsanyi_dividends(game, n_players)
    masks = np.arange(2**n_players)
    sizes = ((masks[:, None] >> np.arange(n_players)) & 1).sum(axis=1)
    # by_size[t, S]: the sum of the dividends of the supersets of S of size t.
    by_size = np.zeros((n_players + 1, 2**n_players))
    by_size[sizes, masks] = dividends
    for player in range(n_players):
        bit = 1 << player
        pairs = by_size.reshape(n_players + 1, -1, 2, bit)
        pairs[:, :, 0, :] += pairs[:, :, 1, :]
    omega = moebius_weights(index, order, n_players)
    coalitions = coalitions_up_to(n_players, order, index)
    coalition_masks = [sum(1 << player for player in c) for c in coalitions]
    values = np.array(
        [
            omega[len(c)] @ by_size[:, mask]
            for c, mask in zip(coalitions, coalition_masks, strict=True)
        ]
    )
    return InteractionIndices(index, order, coalitions, values)
