"""Interaction indices of any order: enumeration and product games against
each index's definition (tests/naive.py: coalition sums, least squares)."""

import itertools

import numpy as np
import pytest
from naive import (
    bernoulli_by_recurrence,
    interaction_index_by_definition,
    product_game_table,
)

from skshapley.games import (
    INDICES,
    interaction_indices,
    product_banzhaf,
    product_interaction_indices,
    product_interactions,
    product_shapley,
)
from skshapley.games._index_plan import lexicographic_rank
from skshapley.games._indices import bernoulli_numbers

# The indices whose values, with the empty coalition's, add up to v(N).
EFFICIENT = ("k-SII", "STII", "FSII")


def random_product_games(rng, n_games, n_players):
    """Games with signed factors, zero factors and a dummy player."""
    a = rng.normal(size=(n_games, n_players))
    b = rng.normal(size=(n_games, n_players))
    a[0, 1] = 0.0
    b[-1, -1] = 0.0
    a[:, 0] = b[:, 0] if n_players > 3 else a[:, 0]
    return a, b, rng.normal(size=n_games)


def tolerance_of(index):
    """The oracle's own accuracy: FSII and FBII come from a least-squares
    solve over all coalitions (condition numbers of 1e3 to 1e4)."""
    return 2e-11 if index in ("FSII", "FBII") else 1e-12


def assert_equal_to(result, expected, tolerance):
    got = result.as_dict()
    assert list(got) == sorted(expected, key=lambda c: (len(c), c))
    scale = max(1.0, max(abs(v) for v in expected.values()))
    for coalition, value in expected.items():
        assert got[coalition] == pytest.approx(value, abs=tolerance * scale), coalition


@pytest.mark.parametrize("index", INDICES)
@pytest.mark.parametrize("n_players", [1, 3, 5])
def test_enumeration_equals_each_definition(index, n_players):
    rng = np.random.default_rng(n_players)
    table = rng.normal(size=2**n_players)
    for order in range(1, n_players + 1):
        expected = interaction_index_by_definition(table, n_players, index, order)
        assert_equal_to(
            interaction_indices(table, n_players, index=index, order=order),
            expected,
            tolerance_of(index),
        )


@pytest.mark.parametrize("index", INDICES)
@pytest.mark.parametrize("n_players", [2, 4, 6])
def test_product_games_equal_each_definition(index, n_players):
    # The definitions read the summed games' table, the quadrature their
    # factors: signed, zero and dummy factors included.
    rng = np.random.default_rng(10 + n_players)
    a, b, weights = random_product_games(rng, 3, n_players)
    table = sum(product_game_table(*game) for game in zip(a, b, weights, strict=True))
    for order in range(1, n_players + 1):
        expected = interaction_index_by_definition(table, n_players, index, order)
        assert_equal_to(
            product_interaction_indices(a, b, weights, index=index, order=order),
            expected,
            tolerance_of(index),
        )


@pytest.mark.parametrize("index", INDICES)
def test_product_games_equal_enumeration_of_a_callable(index):
    rng = np.random.default_rng(7)
    a, b = rng.uniform(0, 2, size=(2, 7))

    def game(mask):
        return float(np.prod(np.where(mask, a, b)))

    for order in (2, 4):
        expected = interaction_indices(game, 7, index=index, order=order)
        result = product_interaction_indices(a, b, index=index, order=order)
        assert result.coalitions == expected.coalitions
        np.testing.assert_allclose(result.values, expected.values, rtol=0, atol=1e-12)


def test_order_one_gives_the_shapley_and_banzhaf_values():
    rng = np.random.default_rng(3)
    a, b = rng.normal(size=(2, 4, 9))
    weights = rng.normal(size=4)
    shapley = product_shapley(a, b, weights)
    for index in ("SII", "k-SII", "STII", "FSII"):
        values = product_interaction_indices(a, b, weights, index=index, order=1)
        np.testing.assert_allclose(values.values[-9:], shapley, atol=1e-13)
    for index in ("BII", "FBII"):
        values = product_interaction_indices(a, b, weights, index=index, order=1)
        banzhaf = product_banzhaf(a, b, weights)
        np.testing.assert_allclose(values.values[-9:], banzhaf, atol=1e-13)


def test_k_sii_of_order_two_is_shaps_interaction_matrix():
    # shap's matrix: pairs' halves off the diagonal, main effects on it; the
    # second-order k-SII holds the full pair values and the same main effects.
    rng = np.random.default_rng(4)
    a, b = rng.uniform(-1, 1, size=(2, 3, 6))
    weights = rng.normal(size=3)
    matrix = product_interactions(a, b, weights)
    k_sii = product_interaction_indices(a, b, weights, index="k-SII", order=2)
    values = k_sii.as_dict()
    for i in range(6):
        assert values[(i,)] == pytest.approx(matrix[i, i], abs=1e-13)
    for i, j in itertools.combinations(range(6), 2):
        assert values[(i, j)] == pytest.approx(2 * matrix[i, j], abs=1e-13)


@pytest.mark.parametrize("index", EFFICIENT)
@pytest.mark.parametrize(("n_players", "order"), [(1000, 1), (200, 2), (40, 3)])
def test_efficiency_on_large_games(index, n_players, order):
    # Factors near 1 (values of order 1) and a few zeros: the values with
    # v(∅) add up to v(N) at floating-point level.
    rng = np.random.default_rng(n_players)
    a = rng.uniform(0.9, 1.1, size=(2, n_players))
    b = rng.uniform(0.9, 1.1, size=(2, n_players))
    b[0, ::50] = 0.0
    weights = np.array([1.0, -0.5])
    result = product_interaction_indices(a, b, weights, index=index, order=order)
    grand = np.sum(weights * np.prod(a, axis=1))
    assert result.coalitions[0] == ()
    assert result.values[0] == pytest.approx(np.sum(weights * np.prod(b, axis=1)))
    assert abs(result.values.sum() - grand) < 1e-12 * max(1.0, abs(grand))


@pytest.mark.slow
@pytest.mark.parametrize("index", EFFICIENT)
def test_efficiency_of_pairs_of_a_thousand_players(index):
    rng = np.random.default_rng(1000)
    a, b = rng.uniform(0.95, 1.05, size=(2, 1, 1000))
    result = product_interaction_indices(a, b, index=index, order=2)
    grand = np.prod(a)
    assert abs(result.values.sum() - grand) < 1e-12 * max(1.0, grand)


def test_deep_tree_path_keeps_efficiency():
    # A path of depth 100: A in {0, 1}, B products of cover ratios.
    rng = np.random.default_rng(5)
    a = rng.integers(0, 2, size=100).astype(float)
    b = np.cumprod(rng.uniform(0.5, 1.0, size=100)) ** 0.05
    for index in EFFICIENT:
        result = product_interaction_indices(a, b, [3.0], index=index, order=2)
        grand = 3.0 * np.prod(a)
        assert abs(result.values.sum() - grand) < 1e-13


def test_tiny_and_huge_products_neither_underflow_nor_overflow():
    # Twenty dummy factors of 1e-20 (1e20) make every v(S) 1e-400 (1e400)
    # times the original's as a plain product, and a weight of 1e300
    # (1e-300) brings it back in range: the values are the original's times
    # 1e-100 (1e100).
    rng = np.random.default_rng(6)
    a, b = rng.uniform(0.5, 2.0, size=(2, 1, 12))
    for index in ("FSII", "FBII", "k-SII"):
        base = product_interaction_indices(a, b, index=index, order=2)
        for scale in (1e-20, 1e20):
            extra = np.full((1, 20), scale)
            values = product_interaction_indices(
                np.concatenate([a, extra], axis=1),
                np.concatenate([b, extra], axis=1),
                [1.0 / scale**15],
                index=index,
                order=2,
            ).as_dict()
            for coalition, value in zip(base.coalitions, base.values, strict=True):
                assert values[coalition] == pytest.approx(
                    value * scale**5, rel=1e-12
                ), (index, scale, coalition)


def test_bernoulli_numbers_and_lexicographic_ranks():
    assert list(bernoulli_numbers(12)) == bernoulli_by_recurrence(12)
    assert bernoulli_numbers(3)[1] == -0.5
    for n_players, size in [(6, 1), (6, 3), (9, 4), (5, 5)]:
        combos = np.array(list(itertools.combinations(range(n_players), size)))
        ranks = lexicographic_rank(combos, n_players)
        np.testing.assert_array_equal(ranks, np.arange(len(combos)))


def test_coalitions_and_the_empty_coalition():
    table = np.arange(8.0)
    for index in INDICES:
        result = interaction_indices(table, 3, index=index, order=2)
        has_empty = index not in ("SII", "BII")
        assert (result.coalitions[0] == ()) == has_empty
        assert len(result.coalitions) == 3 + 3 + has_empty
        assert result.values.shape == (len(result.coalitions),)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"index": "Shapley"}, ValueError, "index must be one of 'SII', 'k-SII'"),
        ({"order": 0}, ValueError, "order must be >= 1, got 0"),
        ({"order": 4}, ValueError, r"between 1 and the number of players \(3\)"),
        ({"order": 2.0}, TypeError, "order must be an int"),
    ],
)
def test_bad_index_or_order(kwargs, error, message):
    with pytest.raises(error, match=message):
        interaction_indices(np.zeros(8), 3, **kwargs)
    with pytest.raises(error, match=message):
        product_interaction_indices(np.ones(3), np.zeros(3), **kwargs)


def test_enumeration_is_limited_to_sixteen_players():
    with pytest.raises(ValueError, match="n_players must be <= 16"):
        interaction_indices(lambda mask: 0.0, 17)


@pytest.mark.parametrize("index", INDICES)
def test_enumeration_equals_shapiqs_exact_computer(index):
    # An independent implementation: shapiq's ExactComputer on the same
    # table (it leaves out coalitions whose value is 0). Its FSII fits the
    # empty and the grand coalition with a large weight rather than exactly:
    # agreement to 1e-7 there (ours equals the Shapley values at order 1 to
    # rounding, see above).
    shapiq = pytest.importorskip("shapiq")
    rng = np.random.default_rng(8)
    table = rng.normal(size=2**5)

    def game(coalitions):
        return table[coalitions.astype(int) @ (1 << np.arange(5))]

    for order in (1, 2, 3):
        ours = interaction_indices(table, 5, index=index, order=order)
        theirs = shapiq.ExactComputer(game, n_players=5)(index=index, order=order)
        lookup = theirs.interaction_lookup
        for coalition, value in ours.as_dict().items():
            expected = theirs.values[lookup[coalition]] if coalition in lookup else 0
            tolerance = 1e-7 if index == "FSII" else tolerance_of(index)
            assert value == pytest.approx(expected, abs=tolerance), coalition
