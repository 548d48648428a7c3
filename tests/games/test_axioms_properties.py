"""Property tests: every exact method satisfies the four Shapley axioms."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from skshapley.games import (
    check_axioms,
    linearity_residual,
    sample_shapley,
    shapley_values,
)

METHODS = st.sampled_from(["factorial", "permutation", "moebius"])

# Each method sums at most 2**6 or 6! terms of size <= 2 max|v|: rounding stays
# below 1e-14 max|v|, so 1e-12 relative catches any wrong weight or coalition.
RTOL = 1e-12

# No subnormals: their spacing (5e-324) is absolute, so a game of subnormal
# values cannot meet a relative tolerance however exact the method is.
VALUES = st.floats(
    -1e3, 1e3, allow_nan=False, allow_infinity=False, allow_subnormal=False
)


def tables(n_players):
    return arrays(np.float64, 2**n_players, elements=VALUES)


@st.composite
def games(draw, min_players=1, max_players=6):
    n_players = draw(st.integers(min_players, max_players))
    return n_players, draw(tables(n_players))


def bits(n_players):
    """Membership matrix of shape (2**n_players, n_players) of all coalitions."""
    masks = np.arange(2**n_players)
    return (masks[:, None] >> np.arange(n_players)) & 1


def with_dummy(table, player):
    """Extend a game by a player, inserted at index ``player``, who never matters."""
    members = bits(table.size.bit_length())
    others = np.delete(members, player, axis=1)
    return table[others @ (1 << np.arange(others.shape[1]))]


def symmetrized(table, i, j):
    """Average a game with its copy in which players ``i`` and ``j`` trade places."""
    members = bits(table.size.bit_length() - 1)
    members[:, [i, j]] = members[:, [j, i]]
    swapped = table[members @ (1 << np.arange(members.shape[1]))]
    # a + b and b + a round alike: the result is exactly symmetric.
    return (table + swapped) / 2


def scale(table):
    return np.abs(table).max() or 1.0


@settings(max_examples=60, deadline=None)
@given(game=games(), method=METHODS)
def test_efficiency(game, method):
    n_players, table = game
    values = shapley_values(table, n_players, method=method)
    report = check_axioms(table, values, n_players)
    assert abs(report.efficiency_residual) <= RTOL * scale(table)
    assert report.holds(atol=RTOL * scale(table))


@settings(max_examples=40, deadline=None)
@given(data=st.data(), method=METHODS)
def test_dummy(data, method):
    n_others, table = data.draw(games(max_players=5))
    player = data.draw(st.integers(0, n_others))
    game = with_dummy(table, player)
    values = shapley_values(game, n_others + 1, method=method)
    report = check_axioms(game, values, n_others + 1)
    assert player in report.dummies
    assert report.dummy_max <= RTOL * scale(table)
    # The others share the game as if the dummy did not exist.
    np.testing.assert_allclose(
        np.delete(values, player),
        shapley_values(table, n_others, method=method),
        rtol=0,
        atol=RTOL * scale(table),
    )


@settings(max_examples=40, deadline=None)
@given(data=st.data(), method=METHODS)
def test_symmetry(data, method):
    n_players, table = data.draw(games(min_players=2))
    i, j = sorted(
        data.draw(st.sets(st.integers(0, n_players - 1), min_size=2, max_size=2))
    )
    game = symmetrized(table, i, j)
    values = shapley_values(game, n_players, method=method)
    report = check_axioms(game, values, n_players)
    assert (i, j) in report.symmetric_pairs
    assert abs(values[i] - values[j]) <= RTOL * scale(game)
    assert report.symmetry_max <= RTOL * scale(game)


@settings(max_examples=40, deadline=None)
@given(
    data=st.data(),
    method=METHODS,
    coefficients=st.tuples(st.floats(-10, 10), st.floats(-10, 10)),
)
def test_linearity(data, method, coefficients):
    n_players = data.draw(st.integers(1, 6))
    game1, game2 = data.draw(tables(n_players)), data.draw(tables(n_players))
    residual = linearity_residual(
        game1, game2, n_players, method, coefficients=coefficients
    )
    c1, c2 = np.abs(coefficients)
    assert residual <= RTOL * (c1 * scale(game1) + c2 * scale(game2))


@settings(max_examples=40, deadline=None)
@given(
    game=games(max_players=8),
    n_permutations=st.integers(1, 3),
    seed=st.integers(0, 2**32 - 1),
)
def test_sampling_is_efficient(game, n_permutations, seed):
    n_players, table = game
    values = sample_shapley(table, n_players, n_permutations, random_state=seed)
    # Telescoping differences of at most 8 values: rounding only.
    assert abs(values.sum() - (table[-1] - table[0])) <= RTOL * scale(table)
