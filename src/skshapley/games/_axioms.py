"""Checks of the Shapley axioms for any attribution of a game.

The Shapley value is the only attribution with all four properties checked
here: efficiency (the values add up to ``v(N) - v(∅)``), dummy (a player who
never changes any coalition's value gets 0), symmetry (two players who can be
swapped in every coalition without changing its value get equal values) and
linearity (the values of a weighted sum of games are the weighted sum of their
values). The checks work on the game table, so they verify an attribution
without trusting the code that produced it.
"""

from collections.abc import Callable
from dataclasses import dataclass
from numbers import Real

import numpy as np
from numpy.typing import ArrayLike

from .._contract.validation import check_finite_array
from ._exact import GameLike, check_shapley_method, game_table, shapley_values


@dataclass(frozen=True)
class AxiomReport:
    """How far an attribution is from satisfying the Shapley axioms.

    Returned by :func:`check_axioms`; every field is zero for the exact
    Shapley values, up to rounding.

    Attributes
    ----------
    efficiency_residual : float
        ``sum(values) - (v(N) - v(∅))``, signed.
    dummy_max : float
        Largest ``|values[i]|`` over the dummy players ``i``; 0.0 if there are
        none.
    symmetry_max : float
        Largest ``|values[i] - values[j]|`` over the symmetric pairs; 0.0 if
        there are none.
    dummies : tuple of int
        The dummy (null) players: ``v(S ∪ {i}) = v(S)`` for every coalition
        ``S``.
    symmetric_pairs : tuple of (int, int)
        The pairs ``(i, j)``, ``i < j``, such that swapping ``i`` and ``j`` in
        every coalition leaves the game unchanged.

    See Also
    --------
    check_axioms : Computes the report.

    Examples
    --------
    >>> from skshapley.games import check_axioms
    >>> report = check_axioms([0.0, 0.0, 0.0, 10.0], [10.0, 10.0], n_players=2)
    >>> report.efficiency_residual
    10.0
    >>> report.symmetric_pairs
    ((0, 1),)
    >>> report.holds(atol=1e-9)
    False
    """

    efficiency_residual: float
    dummy_max: float
    symmetry_max: float
    dummies: tuple[int, ...]
    symmetric_pairs: tuple[tuple[int, int], ...]

    def holds(self, atol: float) -> bool:
        """Whether efficiency, dummy and symmetry hold within ``atol``.

        Parameters
        ----------
        atol : float
            Largest accepted absolute residual.

        Returns
        -------
        holds : bool
            True if ``|efficiency_residual|``, ``dummy_max`` and
            ``symmetry_max`` are all at most ``atol``.

        Examples
        --------
        >>> from skshapley.games import check_axioms
        >>> check_axioms([0.0, 0.0, 0.0, 10.0], [5.0, 5.0], 2).holds(atol=1e-12)
        True
        """
        residuals = (abs(self.efficiency_residual), self.dummy_max, self.symmetry_max)
        return all(residual <= atol for residual in residuals)


def _swap_players(masks: np.ndarray, i: int, j: int) -> np.ndarray:
    """The bitmasks ``masks`` with the bits of players ``i`` and ``j`` swapped."""
    differ = ((masks >> i) ^ (masks >> j)) & 1
    return masks ^ (differ << i) ^ (differ << j)


def check_axioms(
    game: GameLike, values: ArrayLike, n_players: int, *, tol: float = 1e-12
) -> AxiomReport:
    """Check an attribution against the efficiency, dummy and symmetry axioms.

    Dummy players and symmetric pairs are found from the game table itself:
    ``i`` is a dummy if ``|v(S ∪ {i}) - v(S)| <= tol * scale`` for every ``S``,
    and ``(i, j)`` is symmetric if swapping ``i`` and ``j`` in every coalition
    changes no value by more than ``tol * scale``, where ``scale`` is
    ``max_S |v(S)|`` (1 for the zero game).

    Parameters
    ----------
    game : callable or array-like of shape (2**n_players,)
        The game, as accepted by :func:`game_table`.
    values : array-like of shape (n_players,)
        The attribution to check, one value per player.
    n_players : int
        Number of players, from 1 to 20.
    tol : float, default=1e-12
        Relative tolerance for recognizing dummies and symmetric pairs.

    Returns
    -------
    report : AxiomReport
        The residual of each axiom, the dummies and the symmetric pairs.

    See Also
    --------
    linearity_residual : Checks the fourth axiom.

    Examples
    --------
    Leave-one-out gives each of two complementary players the whole value,
    twice the total:

    >>> from skshapley.games import check_axioms, leave_one_out, shapley_values
    >>> table = [0.0, 0.0, 0.0, 10.0]
    >>> check_axioms(table, leave_one_out(table, 2), 2).efficiency_residual
    10.0
    >>> check_axioms(table, shapley_values(table, 2), 2).efficiency_residual
    0.0
    """
    if not isinstance(tol, Real) or not tol >= 0:
        raise ValueError(f"tol must be a real number >= 0, got {tol!r}.")
    table = game_table(game, n_players)
    values = check_finite_array(
        values, "values", shape=(n_players,), shape_name="(n_players,)"
    )

    threshold = tol * (np.abs(table).max() or 1.0)
    masks = np.arange(table.size)
    dummies = tuple(
        player
        for player in range(n_players)
        if np.all(np.abs(table[masks | (1 << player)] - table) <= threshold)
    )
    symmetric_pairs = tuple(
        (i, j)
        for i in range(n_players)
        for j in range(i + 1, n_players)
        if np.all(np.abs(table[_swap_players(masks, i, j)] - table) <= threshold)
    )
    return AxiomReport(
        efficiency_residual=float(values.sum() - (table[-1] - table[0])),
        dummy_max=max((abs(float(values[i])) for i in dummies), default=0.0),
        symmetry_max=max(
            (abs(float(values[i] - values[j])) for i, j in symmetric_pairs),
            default=0.0,
        ),
        dummies=dummies,
        symmetric_pairs=symmetric_pairs,
    )


def linearity_residual(
    game1: GameLike,
    game2: GameLike,
    n_players: int,
    method: str | Callable[[np.ndarray, int], ArrayLike] = "factorial",
    *,
    coefficients: tuple[float, float] = (1.0, 1.0),
) -> float:
    """Deviation of an attribution method from linearity on two games.

    Computes ``max_i |phi_i(c1 v1 + c2 v2) - (c1 phi_i(v1) + c2 phi_i(v2))|``,
    which is zero, up to rounding, for a linear method such as the Shapley
    value.

    Parameters
    ----------
    game1, game2 : callable or array-like of shape (2**n_players,)
        The games, as accepted by :func:`game_table`.
    n_players : int
        Number of players, from 1 to 20.
    method : {"factorial", "permutation", "moebius"} or callable, \
            default="factorial"
        An exact method of :func:`shapley_values`, or any attribution method:
        a callable taking a game table of shape (2**n_players,) and
        ``n_players``, and returning values of shape (n_players,).
    coefficients : tuple of two floats, default=(1.0, 1.0)
        The weights ``(c1, c2)`` of the combined game.

    Returns
    -------
    residual : float
        The largest absolute deviation over the players.

    See Also
    --------
    check_axioms : Checks efficiency, dummy and symmetry.

    Examples
    --------
    The Shapley value is linear; leave-one-out is linear too, but not
    efficient:

    >>> from skshapley.games import leave_one_out, linearity_residual
    >>> and_game = [0.0, 0.0, 0.0, 10.0]
    >>> or_game = [0.0, 8.0, 8.0, 8.0]
    >>> linearity_residual(and_game, or_game, 2, coefficients=(2.0, -1.0))
    0.0
    >>> linearity_residual(and_game, or_game, 2, method=leave_one_out)
    0.0
    """
    if callable(method):
        attribute = method
    else:
        check_shapley_method(method)

        def attribute(table, n_players):
            return shapley_values(table, n_players, method=method)

    coefficients = check_finite_array(
        coefficients, "coefficients", shape=(2,), shape_name="(2,)"
    )
    tables = [game_table(game, n_players) for game in (game1, game2)]
    tables.append(coefficients @ tables)
    phi = [
        check_finite_array(
            attribute(table, n_players),
            "method's output",
            shape=(n_players,),
            shape_name="(n_players,)",
        )
        for table in tables
    ]
    return float(np.abs(phi[2] - coefficients @ phi[:2]).max())
