"""The Shapley axioms for product games, as hypothesis property tests."""

import numpy as np
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra.numpy import arrays

from skshapley.games import check_axioms, product_shapley

factors = st.floats(-3.0, 3.0, allow_nan=False, allow_infinity=False)


@st.composite
def product_games(draw, max_players=7, max_games=4):
    d = draw(st.integers(1, max_players))
    n_games = draw(st.integers(1, max_games))
    a = draw(arrays(np.float64, (n_games, d), elements=factors))
    b = draw(arrays(np.float64, (n_games, d), elements=factors))
    weights = draw(arrays(np.float64, (n_games,), elements=factors))
    return a, b, weights


def table(a, b, weights):
    """The value function of a sum of product games, on all coalitions."""
    d = a.shape[1]
    masks = (np.arange(2**d)[:, None] >> np.arange(d)) & 1
    values = np.where(masks[:, None, :] == 1, a[None], b[None]).prod(axis=2)
    return values @ weights


def tolerance(a, b, weights):
    """Rounding allowance: 1e-12 of the games' total scale max_S |v(S)|."""
    scale = np.abs(weights) * np.prod(np.maximum(np.abs(a), np.abs(b)), axis=1)
    return 1e-12 * max(scale.sum(), 1e-300)


@settings(max_examples=60, deadline=None)
@given(product_games())
def test_efficiency_dummy_symmetry(games):
    a, b, weights = games
    d = a.shape[1]
    # Make player 0 a dummy in every game and players d-1 and d-2 symmetric.
    a[:, 0] = b[:, 0]
    if d >= 3:
        a[:, -1], b[:, -1] = a[:, -2], b[:, -2]
    values = product_shapley(a, b, weights)
    # Detection tolerance below the assertion tolerance: a player detected as
    # (nearly) dummy or symmetric may only differ by less than we allow.
    report = check_axioms(table(a, b, weights), values, d, tol=1e-13)
    atol = tolerance(a, b, weights)
    assert abs(report.efficiency_residual) <= atol
    assert report.dummy_max <= atol
    assert report.symmetry_max <= atol
    assert values[0] == 0.0  # a dummy in every game gets exactly zero


@settings(max_examples=40, deadline=None)
@given(product_games(), product_games(), st.floats(-2, 2), st.floats(-2, 2))
def test_linearity(first, second, c1, c2):
    (a1, b1, w1), (a2, b2, w2) = first, second
    d = min(a1.shape[1], a2.shape[1])
    a1, b1, a2, b2 = a1[:, :d], b1[:, :d], a2[:, :d], b2[:, :d]
    combined = product_shapley(
        np.vstack([a1, a2]), np.vstack([b1, b2]), np.concatenate([c1 * w1, c2 * w2])
    )
    separate = c1 * product_shapley(a1, b1, w1) + c2 * product_shapley(a2, b2, w2)
    atol = 3 * (tolerance(a1, b1, w1) + tolerance(a2, b2, w2))
    np.testing.assert_allclose(combined, separate, rtol=0, atol=atol)


@settings(max_examples=40, deadline=None)
@given(product_games(), st.randoms(use_true_random=False))
def test_relabelling_players_permutes_values(games, random):
    a, b, weights = games
    order = list(range(a.shape[1]))
    random.shuffle(order)
    values = product_shapley(a, b, weights)
    permuted = product_shapley(a[:, order], b[:, order], weights)
    np.testing.assert_allclose(
        permuted, values[order], rtol=0, atol=tolerance(a, b, weights)
    )
