"""Checks of the efficiency, dummy, symmetry and linearity axioms."""

import dataclasses

import numpy as np
import pytest
from naive import table_of

from skshapley.games import (
    AxiomReport,
    check_axioms,
    leave_one_out,
    linearity_residual,
    shapley_values,
)

METHODS = ["factorial", "permutation", "moebius"]

AND_GAME = [0.0, 0.0, 0.0, 10.0]
REDUNDANT_GAME = [0.0, 8.0, 8.0, 8.0]


def squared_weight_game(weights):
    """``v(S) = (sum of the weights of S)**2``: equal weights, symmetric players."""
    return table_of(lambda s: sum(weights[i] for i in s) ** 2, len(weights))


def test_leave_one_out_breaks_efficiency_on_the_and_game():
    report = check_axioms(AND_GAME, leave_one_out(AND_GAME, 2), 2)
    # 10 + 10 given out, v(N) - v(∅) = 10 to give.
    assert report.efficiency_residual == 10.0
    assert report.symmetric_pairs == ((0, 1),)
    assert report.symmetry_max == 0.0
    assert report.dummies == ()
    assert not report.holds(atol=1e-9)


def test_leave_one_out_breaks_efficiency_on_the_redundant_game():
    report = check_axioms(REDUNDANT_GAME, leave_one_out(REDUNDANT_GAME, 2), 2)
    assert report.efficiency_residual == -8.0


@pytest.mark.parametrize("game", [AND_GAME, REDUNDANT_GAME])
def test_shapley_values_hold(game):
    report = check_axioms(game, shapley_values(game, 2), 2)
    assert report.efficiency_residual == 0.0
    assert report.holds(atol=1e-12)


def test_wrong_values_are_reported():
    report = check_axioms(AND_GAME, [5.0, 4.0], 2)
    assert report.efficiency_residual == -1.0
    assert report.symmetry_max == 1.0
    assert not report.holds(atol=0.5)
    assert report.holds(atol=1.0)


def test_dummy_player_is_detected():
    # Player 2 never changes any coalition's value.
    game = table_of(lambda s: 3.0 * (0 in s) - 2.0 * (0 in s and 1 in s) + 1.0, 3)
    report = check_axioms(game, [0.0, 0.0, 0.5], 3)
    assert report.dummies == (2,)
    assert report.dummy_max == 0.5
    phi = shapley_values(game, 3)
    assert check_axioms(game, phi, 3).dummy_max == 0.0


def test_symmetric_pairs_are_found_by_swapping():
    game = squared_weight_game([1.0, 1.0, 2.0, 3.0])
    report = check_axioms(game, [0.0, 0.3, 0.0, 0.0], 4)
    assert report.symmetric_pairs == ((0, 1),)
    assert report.symmetry_max == pytest.approx(0.3, abs=1e-15)


def test_equal_values_do_not_make_players_symmetric():
    # u_{0,2} + 0.5 u_{1}: every player's Shapley value is 1/2, but only 0 and 2
    # can be swapped (v({0}) = 0 while v({1}) = 0.5).
    game = table_of(lambda s: float({0, 2} <= s) + 0.5 * (1 in s), 3)
    phi = shapley_values(game, 3)
    np.testing.assert_allclose(phi, [0.5, 0.5, 0.5], atol=1e-15)
    assert check_axioms(game, phi, 3).symmetric_pairs == ((0, 2),)


def test_symmetry_and_dummies_use_a_relative_tolerance():
    game = squared_weight_game([1e6, 1e6, 1.0])
    # A difference of 1e-3 on values of order 4e12 is below 1e-12 relative.
    game[1] += 1e-3
    assert check_axioms(game, np.zeros(3), 3).symmetric_pairs == ((0, 1),)
    assert check_axioms(game, np.zeros(3), 3, tol=0.0).symmetric_pairs == ()
    # A game worth 1e-20 is not the zero game: nothing is a dummy.
    assert check_axioms([0.0, 1e-20], [1e-20], 1).dummies == ()


def test_zero_game():
    report = check_axioms(np.zeros(8), np.zeros(3), 3)
    assert report.dummies == (0, 1, 2)
    assert report.symmetric_pairs == ((0, 1), (0, 2), (1, 2))
    assert report.holds(atol=0.0)


def test_check_axioms_accepts_callables():
    weights = np.array([2.0, 2.0, 0.0])
    report = check_axioms(lambda mask: weights[mask].sum() ** 2, [8.0, 8.0, 0.0], 3)
    assert report.dummies == (2,)
    assert report.symmetric_pairs == ((0, 1),)
    assert report.holds(atol=1e-12)


def test_report_is_frozen():
    report = check_axioms(AND_GAME, [5.0, 5.0], 2)
    assert isinstance(report, AxiomReport)
    with pytest.raises(dataclasses.FrozenInstanceError):
        report.efficiency_residual = 0.0


@pytest.mark.parametrize("method", [*METHODS, leave_one_out])
def test_linear_methods(method):
    rng = np.random.default_rng(0)
    game1, game2 = rng.normal(size=(2, 32))
    residual = linearity_residual(
        game1, game2, 5, method=method, coefficients=(2.5, -0.75)
    )
    # Values of order 1 computed three times: rounding only.
    assert residual <= 1e-13


def test_nonlinear_method_is_caught():
    def squared_shapley(table, n_players):
        return shapley_values(table, n_players) ** 2

    # (5 + 4)**2 = 81 versus 5**2 + 4**2 = 41 for each player.
    assert linearity_residual(
        AND_GAME, REDUNDANT_GAME, 2, squared_shapley
    ) == pytest.approx(40.0)


def test_linearity_with_callable_games():
    weights = np.array([1.0, -2.0, 0.5])
    residual = linearity_residual(
        lambda mask: weights[mask].sum() ** 2, lambda mask: float(mask.all()), 3
    )
    assert residual <= 1e-14  # values of order 1


def test_values_of_wrong_shape():
    with pytest.raises(
        ValueError,
        match=r"values must have shape \(n_players,\) = \(3,\), got shape \(2,\)",
    ):
        check_axioms(np.zeros(8), [0.0, 0.0], 3)


def test_values_with_nan():
    with pytest.raises(ValueError, match="values contains NaN"):
        check_axioms(AND_GAME, [np.nan, 0.0], 2)


def test_bad_tol():
    with pytest.raises(ValueError, match="tol must be a real number >= 0"):
        check_axioms(AND_GAME, [5.0, 5.0], 2, tol=-1.0)


def test_bad_game_table():
    with pytest.raises(ValueError, match="game must have shape"):
        check_axioms([0.0, 1.0, 2.0], [0.0, 0.0], 2)
    with pytest.raises(ValueError, match="game contains NaN"):
        linearity_residual(AND_GAME, [0.0, 0.0, np.nan, 0.0], 2)


def test_bad_method_name():
    with pytest.raises(ValueError, match="method must be one of"):
        linearity_residual(AND_GAME, REDUNDANT_GAME, 2, method="banzhaf")


def test_method_returning_wrong_shape():
    with pytest.raises(
        ValueError, match=r"method's output must have shape \(n_players,\)"
    ):
        linearity_residual(AND_GAME, REDUNDANT_GAME, 2, lambda table, n: table)


def test_bad_coefficients():
    with pytest.raises(ValueError, match=r"coefficients must have shape \(2,\)"):
        linearity_residual(AND_GAME, REDUNDANT_GAME, 2, coefficients=(1.0,))
