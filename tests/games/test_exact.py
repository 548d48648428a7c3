"""Exact and sampled Shapley values, dividends and leave-one-out of set functions."""

import itertools

import numpy as np
import pytest
from naive import table_of

from skshapley.games import (
    game_table,
    harsanyi_dividends,
    leave_one_out,
    sample_shapley,
    shapley_values,
)

METHODS = ["factorial", "permutation", "moebius"]

# Values of the hand-derived games below are O(10) and each method sums at most
# 2**5 or 5! terms of that size: a few units in the last place, far below 1e-12.
HAND_ATOL = 1e-12


def random_table(n_players, seed):
    """A game with signed values of a random scale."""
    rng = np.random.default_rng(seed)
    return rng.normal(size=2**n_players) * rng.uniform(0.1, 100.0)


def callable_of(table):
    """The game ``table`` as a callable, looked up by the mask's bitmask."""
    table = np.asarray(table)
    bits = 1 << np.arange(table.size.bit_length() - 1)
    return lambda mask: table[bits[mask].sum()]


def unanimity(coalition, n_players):
    """The unanimity game u_T: 1 if every player of T is present, else 0."""
    return table_of(lambda s: float(set(coalition) <= s), n_players)


def weighted_majority(weights, quota):
    """A callable game: 1 if the coalition's weights reach the quota, else 0."""
    weights = np.asarray(weights)
    return lambda mask: float(weights[mask].sum() >= quota)


# Two players worth 10 together and nothing alone; the same with 8 for either
# of two redundant players; a signed additive game with a harmful player.
AND_GAME = [0.0, 0.0, 0.0, 10.0]
REDUNDANT_GAME = [0.0, 8.0, 8.0, 8.0]
ADDITIVE_GAME = [0.0, 6.0, -4.0, 2.0]


@pytest.mark.parametrize("n_players", range(1, 9))
@pytest.mark.parametrize("seed", range(3))
def test_methods_agree_on_random_games(n_players, seed):
    table = random_table(n_players, seed)
    factorial = shapley_values(table, n_players, method="factorial")
    # Each method adds up to 8! = 40320 terms of size <= 2 max|v|; measured
    # disagreements stay below 2e-14 max|v|, while a wrong weight or a missed
    # coalition moves the values by more than 1e-6 max|v|.
    tolerance = 1e-12 * np.abs(table).max()
    for method in ("permutation", "moebius"):
        np.testing.assert_allclose(
            shapley_values(table, n_players, method=method),
            factorial,
            rtol=0,
            atol=tolerance,
        )


def test_players_are_bits_of_the_table_index():
    np.testing.assert_array_equal(
        game_table(lambda mask: float(mask[0]), 3), [0, 1, 0, 1, 0, 1, 0, 1]
    )
    np.testing.assert_array_equal(
        game_table(lambda mask: float(mask[2]), 3), [0, 0, 0, 0, 1, 1, 1, 1]
    )


def test_game_table_evaluates_the_callable_on_every_coalition():
    weights = np.array([1.5, -2.0, 3.0, 0.25])

    def value(players):
        return sum(weights[i] for i in players) ** 2

    table = game_table(lambda mask: weights[mask].sum() ** 2, 4)
    # Same sums, possibly in another order: a few units in the last place.
    np.testing.assert_allclose(table, table_of(value, 4), rtol=1e-14)


def test_game_table_copies_an_array():
    table = np.array(AND_GAME)
    result = game_table(table, 2)
    result[:] = -1.0
    np.testing.assert_array_equal(table, AND_GAME)


@pytest.mark.parametrize("method", METHODS)
def test_and_game(method):
    np.testing.assert_allclose(
        shapley_values(AND_GAME, 2, method=method), [5, 5], atol=HAND_ATOL
    )


@pytest.mark.parametrize("method", METHODS)
def test_redundant_game(method):
    np.testing.assert_allclose(
        shapley_values(REDUNDANT_GAME, 2, method=method), [4, 4], atol=HAND_ATOL
    )


@pytest.mark.parametrize("method", METHODS)
def test_signed_additive_game(method):
    np.testing.assert_allclose(
        shapley_values(ADDITIVE_GAME, 2, method=method), [6, -4], atol=HAND_ATOL
    )


@pytest.mark.parametrize(
    ("game", "expected"),
    [
        # Each player alone already makes the grand coalition's value: 10 each,
        # twice v(N) = 10 in total.
        (AND_GAME, [10, 10]),
        # Either player alone keeps the 8: each looks irrelevant.
        (REDUNDANT_GAME, [0, 0]),
        # On additive games leave-one-out and Shapley agree.
        (ADDITIVE_GAME, [6, -4]),
    ],
)
def test_leave_one_out_hand_cases(game, expected):
    np.testing.assert_array_equal(leave_one_out(game, 2), expected)
    np.testing.assert_array_equal(leave_one_out(callable_of(game), 2), expected)


@pytest.mark.parametrize(
    ("game", "expected"),
    [
        (AND_GAME, [0, 0, 0, 10]),
        # v({0, 1}) = 8 = 8 + 8 + m({0, 1}): the pair's dividend is -8.
        (REDUNDANT_GAME, [0, 8, 8, -8]),
        (ADDITIVE_GAME, [0, 6, -4, 0]),
    ],
)
def test_dividends_hand_cases(game, expected):
    np.testing.assert_allclose(harsanyi_dividends(game, 2), expected, atol=HAND_ATOL)


@pytest.mark.parametrize(
    "coalition", [(0,), (3,), (1, 2), (0, 2, 4), (0, 1, 2, 3), (0, 1, 2, 3, 4)]
)
@pytest.mark.parametrize("method", METHODS)
def test_unanimity_games(coalition, method):
    # u_T's only dividend is 1 on T, shared equally by its members.
    table = unanimity(coalition, 5)
    expected = np.zeros(5)
    expected[list(coalition)] = 1 / len(coalition)
    np.testing.assert_allclose(
        shapley_values(table, 5, method=method), expected, atol=HAND_ATOL
    )
    dividends = np.zeros(32)
    dividends[sum(1 << i for i in coalition)] = 1.0
    np.testing.assert_allclose(harsanyi_dividends(table, 5), dividends, atol=HAND_ATOL)
    np.testing.assert_array_equal(leave_one_out(table, 5), expected > 0)


@pytest.mark.parametrize("method", METHODS)
def test_glove_game(method):
    # Player 0 owns a left glove, players 1 and 2 a right glove each; a pair is
    # worth 1, so v(S) = 1 iff 0 is in S with 1 or 2. Player 0 adds 1 exactly
    # when it arrives after 1 or 2, i.e. unless it arrives first: 1 - 1/3 =
    # 2/3. Players 1 and 2 are symmetric and share the remaining 1/3.
    game = table_of(lambda s: float(0 in s and bool(s & {1, 2})), 3)
    np.testing.assert_allclose(
        shapley_values(game, 3, method=method), [2 / 3, 1 / 6, 1 / 6], atol=HAND_ATOL
    )


@pytest.mark.parametrize("method", METHODS)
def test_weighted_majority_game(method):
    # Weights (3, 1, 1, 1), quota 4 of 6: player 0 wins with any other player,
    # the three others together only reach 3. Player 0 is pivotal unless it
    # arrives first: 3/4. The others are symmetric and share the rest: 1/12.
    game = weighted_majority([3, 1, 1, 1], quota=4)
    np.testing.assert_allclose(
        shapley_values(game, 4, method=method),
        [3 / 4, 1 / 12, 1 / 12, 1 / 12],
        atol=HAND_ATOL,
    )


def test_dividends_match_the_definition():
    n_players = 5
    table = random_table(n_players, seed=7)
    expected = np.zeros(2**n_players)
    for s in range(2**n_players):
        for t in range(2**n_players):
            if t & ~s == 0:  # T is a subset of S
                sign = (-1) ** (bin(s).count("1") - bin(t).count("1"))
                expected[s] += sign * table[t]
    dividends = harsanyi_dividends(table, n_players)
    # Alternating sums of 32 values: a few units in the last place of max|v|.
    np.testing.assert_allclose(
        dividends, expected, rtol=0, atol=1e-13 * np.abs(table).max()
    )
    # And the game is the sum of the dividends of its subsets.
    rebuilt = [
        sum(dividends[t] for t in range(2**n_players) if t & ~s == 0)
        for s in range(2**n_players)
    ]
    np.testing.assert_allclose(rebuilt, table, rtol=0, atol=1e-13 * np.abs(table).max())


def test_harsanyi_dividends_leaves_the_input_unchanged():
    table = random_table(4, seed=0)
    original = table.copy()
    harsanyi_dividends(table, 4)
    shapley_values(table, 4, method="moebius")
    np.testing.assert_array_equal(table, original)


def test_leave_one_out_evaluates_n_plus_one_coalitions():
    rng = np.random.default_rng(0)
    weights = rng.normal(size=60)
    total = weights.sum()
    calls = []

    def game(mask):
        calls.append(mask.copy())
        return weights[mask].sum() ** 2

    values = leave_one_out(game, 60)
    assert len(calls) == 61
    # v(N) - v(N - i) = W**2 - (W - w_i)**2, up to rounding of sums of 60 terms.
    np.testing.assert_allclose(values, total**2 - (total - weights) ** 2, atol=1e-10)


def test_leave_one_out_agrees_for_tables_and_callables():
    table = random_table(6, seed=1)
    np.testing.assert_array_equal(
        leave_one_out(callable_of(table), 6), leave_one_out(table, 6)
    )


@pytest.mark.parametrize("seed", range(5))
def test_sample_shapley_is_efficient_with_one_permutation_of_a_table(seed):
    table = random_table(8, seed)
    values = sample_shapley(table, 8, n_permutations=1, random_state=seed)
    # The contributions telescope: only the rounding of 8 differences remains.
    assert abs(values.sum() - (table[-1] - table[0])) <= 1e-12 * np.abs(table).max()


@pytest.mark.parametrize("seed", range(5))
def test_sample_shapley_is_efficient_with_one_permutation_of_40_players(seed):
    rng = np.random.default_rng(seed)
    weights = rng.integers(1, 10, size=40)
    calls = []

    def game(mask):
        calls.append(1)
        # A weighted majority game shifted and scaled, so that v(∅) != 0.
        return 7.5 * float(weights[mask].sum() > weights.sum() / 2) - 2.25

    values = sample_shapley(game, 40, n_permutations=1, random_state=seed)
    # v(∅) and v(N) once, then the 39 intermediate coalitions.
    assert len(calls) == 41
    # 40 differences of values of size <= 7.5: rounding only.
    assert abs(values.sum() - 7.5) <= 1e-12 * 7.5


def test_sample_shapley_converges_to_the_exact_values():
    table = random_table(6, seed=3)
    exact = shapley_values(table, 6)
    errors = [
        np.mean(
            [
                np.abs(sample_shapley(table, 6, n, random_state=seed) - exact).max()
                for seed in range(5)
            ]
        )
        for n in (10, 100, 1000, 10000)
    ]
    # Each tenfold increase divides the standard error by sqrt(10) ~ 3.2;
    # averaged over five seeds, halving at least leaves room for noise.
    assert all(later < earlier / 2 for earlier, later in itertools.pairwise(errors))
    assert errors[-1] < 0.02 * np.abs(table).max()


def test_sample_shapley_is_reproducible():
    table = random_table(5, seed=0)
    first = sample_shapley(table, 5, 10, random_state=42)
    np.testing.assert_array_equal(first, sample_shapley(table, 5, 10, random_state=42))
    assert not np.array_equal(first, sample_shapley(table, 5, 10, random_state=43))


def test_sample_shapley_same_orderings_for_tables_and_callables():
    table = random_table(5, seed=0)
    np.testing.assert_array_equal(
        sample_shapley(callable_of(table), 5, 7, random_state=0),
        sample_shapley(table, 5, 7, random_state=0),
    )


def test_sample_shapley_one_ordering_of_the_and_game():
    # The player arriving second completes the pair and gets all 10.
    values = sample_shapley(AND_GAME, 2, 1, random_state=0)
    assert sorted(values.tolist()) == [0.0, 10.0]


def test_one_player():
    assert shapley_values([2.0, 5.0], 1).tolist() == [3.0]
    assert sample_shapley([2.0, 5.0], 1, 3).tolist() == [3.0]
    assert sample_shapley(lambda mask: 2.0 + 3.0 * mask[0], 1, 3).tolist() == [3.0]
    assert leave_one_out([2.0, 5.0], 1).tolist() == [3.0]


@pytest.mark.parametrize("function", [game_table, shapley_values, harsanyi_dividends])
def test_wrong_table_length(function):
    with pytest.raises(ValueError, match=r"game must have shape \(2\*\*n_players,\)"):
        function([0.0, 1.0, 2.0], 2)


@pytest.mark.parametrize(
    "function",
    [game_table, shapley_values, harsanyi_dividends, leave_one_out],
)
def test_nan_in_table(function):
    with pytest.raises(ValueError, match="game contains NaN"):
        function([0.0, np.nan, 1.0, 2.0], 2)


def test_sample_shapley_rejects_nan_in_table():
    with pytest.raises(ValueError, match="game contains NaN"):
        sample_shapley([0.0, np.inf, 1.0, 2.0], 2, 3)


def test_callable_returning_nan():
    def game(mask):
        return np.nan if mask[1] else 0.0

    with pytest.raises(ValueError, match=r"game returned nan for the coalition \[1\]"):
        game_table(game, 2)
    with pytest.raises(ValueError, match="game returned nan"):
        sample_shapley(game, 2, 1)


def test_callable_returning_no_number():
    with pytest.raises(TypeError, match="game must return a real number"):
        game_table(lambda mask: "high", 2)
    with pytest.raises(TypeError, match="game must return a real number"):
        leave_one_out(lambda mask: mask.astype(float), 2)


def test_game_of_wrong_type():
    with pytest.raises(TypeError, match="game must be an array-like"):
        shapley_values(["a", "b"], 1)


def test_bad_method():
    with pytest.raises(
        ValueError, match=r"method must be one of 'factorial'.*got 'exact'"
    ):
        shapley_values(AND_GAME, 2, method="exact")


def test_too_many_players_for_a_table():
    with pytest.raises(ValueError, match=r"n_players must be <= 20.*got 21"):
        game_table(lambda mask: 0.0, 21)
    with pytest.raises(ValueError, match="n_players must be <= 20"):
        shapley_values(lambda mask: 0.0, 21, method="moebius")


def test_too_many_players_for_permutations():
    with pytest.raises(ValueError, match=r"n_players must be <= 10.*got 11"):
        shapley_values(lambda mask: 0.0, 11, method="permutation")


@pytest.mark.parametrize(
    "function", [game_table, shapley_values, harsanyi_dividends, leave_one_out]
)
def test_bad_n_players(function):
    with pytest.raises(ValueError, match="n_players must be >= 1, got 0"):
        function([1.0], 0)
    with pytest.raises(TypeError, match="n_players must be an int, got float"):
        function(AND_GAME, 2.0)


def test_bad_n_permutations():
    with pytest.raises(ValueError, match="n_permutations must be >= 1, got 0"):
        sample_shapley(AND_GAME, 2, 0)
    with pytest.raises(TypeError, match="n_permutations must be an int"):
        sample_shapley(AND_GAME, 2, 1.5)
