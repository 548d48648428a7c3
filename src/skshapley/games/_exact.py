"""Exact and sampled Shapley values of general set functions.

A game on players ``0..n_players-1`` is given either as a callable, taking a
boolean coalition mask of shape (n_players,) and returning a real number, or
as a table of its ``2**n_players`` values indexed by bitmask: player ``i`` is
bit ``i``, so index 0 is the empty coalition and index ``2**n_players - 1`` the
grand coalition.

The three exact methods of :func:`shapley_values` share nothing but the game
table, so that each checks the others.
"""

import itertools
import math
from collections.abc import Callable

import numpy as np
from numpy.typing import ArrayLike
from sklearn.utils import check_random_state

from .._contract.validation import check_count, check_finite_array

# A game: a function of boolean coalition masks, or the table of its values.
GameLike = Callable[[np.ndarray], float] | ArrayLike

# Largest game turned into a table: 2**20 coalitions, about a million values.
MAX_TABLE_PLAYERS = 20

# Largest game for method="permutation": 10! orderings, about 3.6 million.
MAX_PERMUTATION_PLAYERS = 10

# Orderings processed at once by method="permutation" (bounds memory).
_ORDERINGS_PER_CHUNK = 2**15


def _popcount(masks: np.ndarray) -> np.ndarray:
    """Number of set bits of each non-negative integer in ``masks``."""
    masks = np.array(masks, dtype=np.int64)
    counts = np.zeros(masks.shape, dtype=np.intp)
    while masks.any():
        counts += masks & 1
        masks >>= 1
    return counts


def _masks_to_bool(masks: np.ndarray, n_players: int) -> np.ndarray:
    """Boolean coalitions of shape (len(masks), n_players) from bitmasks."""
    return ((masks[:, None] >> np.arange(n_players)) & 1).astype(bool)


def _evaluate(game: Callable, coalitions: np.ndarray) -> np.ndarray:
    """Call ``game`` on each row of the boolean array ``coalitions``."""
    coalitions.flags.writeable = False
    results = [game(coalition) for coalition in coalitions]
    try:
        values = np.asarray(results, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise TypeError(
            "game must return a real number for every coalition, got "
            f"{type(results[0]).__name__}."
        ) from exc
    if values.shape != (len(coalitions),):
        raise TypeError(
            "game must return a real number for every coalition, got values "
            f"of shape {np.shape(results[0])}."
        )
    bad = ~np.isfinite(values)
    if bad.any():
        row = np.flatnonzero(bad)[0]
        raise ValueError(
            f"game returned {values[row]} for the coalition "
            f"{np.flatnonzero(coalitions[row]).tolist()}; values must be finite."
        )
    return values


def _check_table(game: ArrayLike, n_players: int) -> np.ndarray:
    """Validate a game given as an array of its 2**n_players values."""
    return check_finite_array(
        game, "game", shape=(2**n_players,), shape_name="(2**n_players,)"
    )


def game_table(game: GameLike, n_players: int) -> np.ndarray:
    """Table of a game's values on all ``2**n_players`` coalitions.

    Parameters
    ----------
    game : callable or array-like of shape (2**n_players,)
        The game. A callable receives a read-only boolean mask of shape
        (n_players,) (True for the players in the coalition) and returns a
        real number. An array holds the value of the coalition whose bitmask
        is the index: player ``i`` is bit ``i``.
    n_players : int
        Number of players, from 1 to 20 (the table has ``2**n_players``
        entries and a callable is evaluated that many times).

    Returns
    -------
    table : ndarray of shape (2**n_players,), dtype float64
        ``table[s]`` is the value of the coalition with bitmask ``s``; a new
        array, also when ``game`` is one.

    See Also
    --------
    shapley_values : Exact Shapley values from the table.

    Examples
    --------
    The game worth 10 when players 0 and 1 are both present:

    >>> from skshapley.games import game_table
    >>> game_table(lambda mask: 10.0 * mask.all(), n_players=2)
    array([ 0.,  0.,  0., 10.])
    """
    n_players = check_count(n_players, "n_players")
    if n_players > MAX_TABLE_PLAYERS:
        raise ValueError(
            f"n_players must be <= {MAX_TABLE_PLAYERS} to tabulate all "
            f"2**n_players coalitions, got {n_players}. Use sample_shapley for "
            "larger games."
        )
    if callable(game):
        coalitions = _masks_to_bool(np.arange(2**n_players), n_players)
        return _evaluate(game, coalitions)
    return _check_table(game, n_players).copy()


def harsanyi_dividends(game: GameLike, n_players: int) -> np.ndarray:
    """Harsanyi dividends (Möbius transform) of a game.

    The dividend of coalition ``S`` is ``m(S) = sum_{T ⊆ S} (-1)**(|S|-|T|)
    v(T)``, the part of ``v(S)`` that no smaller coalition already earns, so
    that ``v(S) = sum_{T ⊆ S} m(T)``. It is computed by the in-place subset
    transform in ``O(n_players * 2**n_players)`` operations.

    Parameters
    ----------
    game : callable or array-like of shape (2**n_players,)
        The game, as accepted by :func:`game_table`.
    n_players : int
        Number of players, from 1 to 20.

    Returns
    -------
    dividends : ndarray of shape (2**n_players,)
        ``dividends[s]`` is the dividend of the coalition with bitmask ``s``.

    See Also
    --------
    shapley_values : With ``method="moebius"``, shares each dividend equally
        among the members of its coalition.

    Examples
    --------
    In the game worth 10 when players 0 and 1 are both present, the whole
    value is the pair's dividend:

    >>> from skshapley.games import harsanyi_dividends
    >>> harsanyi_dividends([0.0, 0.0, 0.0, 10.0], n_players=2)
    array([ 0.,  0.,  0., 10.])
    """
    table = game_table(game, n_players)
    for player in range(n_players):
        bit = 1 << player
        # Axis 1 of the view is bit `player` of the index.
        pairs = table.reshape(-1, 2, bit)
        pairs[:, 1, :] -= pairs[:, 0, :]
    return table


def _shapley_factorial(table: np.ndarray, n_players: int) -> np.ndarray:
    # The probability that exactly the players of S arrive before the player.
    n_orderings = math.factorial(n_players)
    weights = np.array(
        [
            math.factorial(size) * math.factorial(n_players - size - 1) / n_orderings
            for size in range(n_players)
        ]
    )
    return _weighted_marginals(table, n_players, weights)


def _banzhaf(table: np.ndarray, n_players: int) -> np.ndarray:
    # Every coalition without the player weighs the same.
    return _weighted_marginals(
        table, n_players, np.full(n_players, 0.5 ** (n_players - 1))
    )


def _weighted_marginals(
    tables: np.ndarray, n_players: int, size_weights: np.ndarray
) -> np.ndarray:
    """``sum_{S ∌ i} w(|S|) (v(S ∪ {i}) - v(S))`` for each player ``i``.

    ``tables`` has shape (..., 2**n_players), games along the leading axes;
    ``size_weights[s]`` is the weight of a coalition of ``s`` players. The
    result has shape (..., n_players).
    """
    masks = np.arange(tables.shape[-1])
    sizes = _popcount(masks)
    values = np.empty((*tables.shape[:-1], n_players))
    for player in range(n_players):
        without = masks[((masks >> player) & 1) == 0]
        marginals = tables[..., without | (1 << player)] - tables[..., without]
        values[..., player] = marginals @ size_weights[sizes[without]]
    return values


#: The attributions computed from a game's table, by name (see table_indices).
_INDICES = {"shapley": _shapley_factorial, "banzhaf": _banzhaf}


def table_indices(tables: np.ndarray, n_players: int, index: str) -> np.ndarray:
    """The attributions ``index`` of games given as tables, in one batch.

    ``tables`` has shape (..., 2**n_players), one game per leading index, in
    the bitmask order of :func:`game_table`; ``index`` is ``"shapley"`` or
    ``"banzhaf"`` (leave-one-out needs no table: :func:`leave_one_out`).
    Returns shape (..., n_players).
    """
    return _INDICES[index](tables, n_players)


def _marginal_sums(
    path_values: np.ndarray, orderings: np.ndarray, n_players: int
) -> np.ndarray:
    """Sum each player's marginal contributions over a batch of orderings.

    ``path_values[k]`` holds ``v`` of the growing coalitions of
    ``orderings[k]``: empty, then after each arrival, up to the grand
    coalition.
    """
    marginals = np.diff(path_values, axis=1)
    return np.bincount(
        orderings.ravel(), weights=marginals.ravel(), minlength=n_players
    )


def _table_path_values(table: np.ndarray, orderings: np.ndarray) -> np.ndarray:
    """``v`` along each ordering, looked up in the table by bitmask."""
    coalitions = np.cumsum(np.left_shift(1, orderings, dtype=np.int64), axis=1)
    empty = np.zeros((len(orderings), 1), dtype=np.int64)
    return table[np.hstack([empty, coalitions])]


def _shapley_permutation(table: np.ndarray, n_players: int) -> np.ndarray:
    totals = np.zeros(n_players)
    orderings = itertools.permutations(range(n_players))
    while chunk := list(itertools.islice(orderings, _ORDERINGS_PER_CHUNK)):
        batch = np.array(chunk, dtype=np.intp)
        totals += _marginal_sums(_table_path_values(table, batch), batch, n_players)
    return totals / math.factorial(n_players)


def _shapley_moebius(table: np.ndarray, n_players: int) -> np.ndarray:
    dividends = harsanyi_dividends(table, n_players)
    masks = np.arange(1, len(table))
    shares = dividends[1:] / _popcount(masks)
    return np.array(
        [shares[((masks >> player) & 1) == 1].sum() for player in range(n_players)]
    )


_SHAPLEY_ALGORITHMS = {
    "factorial": _shapley_factorial,
    "permutation": _shapley_permutation,
    "moebius": _shapley_moebius,
}


def check_shapley_method(method) -> None:
    """Raise ``ValueError`` unless ``method`` names an exact algorithm."""
    if not isinstance(method, str) or method not in _SHAPLEY_ALGORITHMS:
        raise ValueError(
            f"method must be one of {', '.join(map(repr, _SHAPLEY_ALGORITHMS))}, "
            f"got {method!r}."
        )


def shapley_values(
    game: GameLike, n_players: int, method: str = "factorial"
) -> np.ndarray:
    """Exact Shapley values of a game, by enumeration.

    The Shapley value of player ``i`` is its marginal contribution
    ``v(S ∪ {i}) - v(S)`` averaged over the players' orders of arrival, all
    ``n_players!`` of them equally likely, ``S`` being the players before
    ``i``. Three independent algorithms compute it:

    - ``"factorial"``: ``phi_i = sum_{S ∌ i} |S|! (n-|S|-1)! / n! * (v(S ∪ {i})
      - v(S))``; the weight is the probability that exactly the players of
      ``S`` arrive before ``i``. ``O(n_players * 2**n_players)``.
    - ``"permutation"``: the average of the marginal contributions over all
      ``n_players!`` orderings, literally. Limited to 10 players.
    - ``"moebius"``: each Harsanyi dividend (see :func:`harsanyi_dividends`)
      shared equally among the members of its coalition, ``phi_i = sum_{S ∋ i}
      m(S) / |S|``. ``O(n_players * 2**n_players)``.

    They agree to rounding error; testing them against each other is their
    purpose.

    Parameters
    ----------
    game : callable or array-like of shape (2**n_players,)
        The game, as accepted by :func:`game_table`.
    n_players : int
        Number of players, from 1 to 20 (to 10 for ``"permutation"``).
    method : {"factorial", "permutation", "moebius"}, default="factorial"
        The algorithm.

    Returns
    -------
    values : ndarray of shape (n_players,)
        The Shapley values. They are signed and sum to ``v(N) - v(∅)``.

    See Also
    --------
    sample_shapley : Unbiased estimates for games of any size.
    leave_one_out : The attribution Shapley values improve on.
    check_axioms : Verify efficiency, dummy and symmetry of any attribution.

    Examples
    --------
    Two players worth 10 together and nothing alone share the 10 equally, by
    each method:

    >>> from skshapley.games import shapley_values
    >>> table = [0.0, 0.0, 0.0, 10.0]
    >>> shapley_values(table, n_players=2)
    array([5., 5.])
    >>> shapley_values(table, n_players=2, method="moebius")
    array([5., 5.])
    """
    check_shapley_method(method)
    n_players = check_count(n_players, "n_players")
    if method == "permutation" and n_players > MAX_PERMUTATION_PLAYERS:
        raise ValueError(
            f"n_players must be <= {MAX_PERMUTATION_PLAYERS} for "
            'method="permutation", which enumerates all n_players! orderings, '
            f'got {n_players}. Use method="factorial" or "moebius".'
        )
    table = game_table(game, n_players)
    return _SHAPLEY_ALGORITHMS[method](table, n_players)


def leave_one_out(game: GameLike, n_players: int) -> np.ndarray:
    """Leave-one-out attributions ``v(N) - v(N minus {i})``.

    Each player gets what the grand coalition loses without it. Unlike the
    Shapley value, this is not efficient: interacting players are each given
    the whole interaction, redundant players nothing. A callable game is
    evaluated on the ``n_players + 1`` coalitions needed only, so any number of
    players works.

    Parameters
    ----------
    game : callable or array-like of shape (2**n_players,)
        The game, as accepted by :func:`game_table`.
    n_players : int
        Number of players.

    Returns
    -------
    values : ndarray of shape (n_players,)
        ``values[i] = v(N) - v(N minus {i})``.

    See Also
    --------
    shapley_values : The efficient attribution.

    Examples
    --------
    Two players worth 10 together and nothing alone each get the full 10,
    which sums to twice the game's value:

    >>> from skshapley.games import leave_one_out
    >>> leave_one_out([0.0, 0.0, 0.0, 10.0], n_players=2)
    array([10., 10.])
    """
    n_players = check_count(n_players, "n_players")
    if callable(game):
        coalitions = np.ones((n_players + 1, n_players), dtype=bool)
        coalitions[np.arange(n_players), np.arange(n_players)] = False
        values = _evaluate(game, coalitions)
        return values[-1] - values[:-1]
    table = _check_table(game, n_players)
    return table[-1] - table[table.size - 1 - (1 << np.arange(n_players))]


def banzhaf_values(game: GameLike, n_players: int) -> np.ndarray:
    """Exact Banzhaf values of a game, by enumeration.

    Player ``i``'s Banzhaf value is its marginal contribution ``v(S ∪ {i}) -
    v(S)`` averaged over the ``2**(n_players - 1)`` coalitions ``S`` without
    it, each equally likely. Unlike the Shapley value, which weighs
    coalitions by the probability of an arrival order, it is not efficient:
    the values need not sum to ``v(N) - v(∅)``.

    Parameters
    ----------
    game : callable or array-like of shape (2**n_players,)
        The game, as accepted by :func:`game_table`.
    n_players : int
        Number of players, from 1 to 20.

    Returns
    -------
    values : ndarray of shape (n_players,)
        The Banzhaf values.

    See Also
    --------
    shapley_values : The efficient attribution.
    product_banzhaf : Banzhaf values of product games, in closed form.

    Examples
    --------
    Two players worth 10 together: each adds 10 to the other and 0 alone,
    5 on average, as in the Shapley value; with a third player who is needed
    too, each of the three adds 10 to one coalition of four:

    >>> from skshapley.games import banzhaf_values
    >>> banzhaf_values([0.0, 0.0, 0.0, 10.0], n_players=2)
    array([5., 5.])
    >>> banzhaf_values([0.0] * 7 + [10.0], n_players=3)
    array([2.5, 2.5, 2.5])
    """
    return _banzhaf(game_table(game, n_players), n_players)


def sample_shapley(
    game: GameLike,
    n_players: int,
    n_permutations: int,
    *,
    random_state: int | np.random.RandomState | None = None,
) -> np.ndarray:
    """Shapley values estimated from random orderings of the players.

    Each of the ``n_permutations`` orderings, drawn uniformly at random, adds
    the players one at a time; a player's estimate is its mean marginal
    contribution on arrival. The estimate is unbiased, and its standard error
    decreases like ``1 / sqrt(n_permutations)``: each hundredfold increase of
    the work buys one more correct digit. Each ordering costs ``n_players - 1``
    evaluations of the game, plus ``v(∅)`` and ``v(N)`` evaluated once.

    Efficiency is exact whatever the number of orderings: the contributions of
    one ordering telescope to ``v(N) - v(∅)``, with both ends the same two
    shared evaluations, so the estimates sum to ``v(N) - v(∅)`` up to rounding.

    Parameters
    ----------
    game : callable or array-like of shape (2**n_players,)
        The game, as accepted by :func:`game_table`. A callable is evaluated
        on the coalitions of the sampled orderings only, so large games work.
    n_players : int
        Number of players.
    n_permutations : int
        Number of orderings sampled, at least 1.
    random_state : int, RandomState instance or None, default=None
        Seeds the orderings; pass an int for reproducible output.

    Returns
    -------
    values : ndarray of shape (n_players,)
        The estimated Shapley values.

    See Also
    --------
    shapley_values : Exact values for up to 20 players.

    Examples
    --------
    A weighted majority game of 50 players: a coalition wins (value 1) when
    its weights add up to more than half of the total. The estimates sum to 1
    exactly:

    >>> import numpy as np
    >>> from skshapley.games import sample_shapley
    >>> weights = np.arange(1, 51)
    >>> game = lambda mask: float(weights[mask].sum() > weights.sum() / 2)
    >>> values = sample_shapley(game, 50, n_permutations=20, random_state=0)
    >>> round(float(values.sum()), 12)
    1.0
    """
    n_players = check_count(n_players, "n_players")
    n_permutations = check_count(n_permutations, "n_permutations")
    rng = check_random_state(random_state)
    orderings = np.argsort(rng.random_sample((n_permutations, n_players)), axis=1)
    if not callable(game):
        table = _check_table(game, n_players)
        path_values = _table_path_values(table, orderings)
        return _marginal_sums(path_values, orderings, n_players) / n_permutations

    ends = np.zeros((2, n_players), dtype=bool)
    ends[1] = True
    v_empty, v_full = _evaluate(game, ends)
    path_values = np.empty((n_permutations, n_players + 1))
    path_values[:, 0], path_values[:, -1] = v_empty, v_full
    arrivals = np.arange(1, n_players)[:, None]
    for ordering, values in zip(orderings, path_values, strict=True):
        position = np.argsort(ordering)
        # Row k - 1: the coalition of the first k players of the ordering.
        values[1:-1] = _evaluate(game, position < arrivals)
    return _marginal_sums(path_values, orderings, n_players) / n_permutations
