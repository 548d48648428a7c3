"""Background rows sharing values with the explained row: fewer calls, same values.

Where background row ``z`` equals the explained row on a player's features,
coalitions differing only by that player give ``z`` the same hybrid row; the
explainers evaluate it once. The counts below are derived from that rule
alone (``m_z``: the players on which ``z`` differs from the row), and the
values are checked against the brute-force oracle, which evaluates every
hybrid row.
"""

import numpy as np
import pandas as pd
import pytest
from naive import interventional_index, interventional_table

from skshapley import ExactExplainer, PermutationExplainer

D = 4


def rows_sharing_values(seed=0):
    """A row and a background of small integers: many values equal the row's."""
    rng = np.random.default_rng(seed)
    background = rng.integers(0, 3, size=(12, D)).astype(float)
    background[0] = background[1]  # a repeated row: one pattern, two rows
    x = rng.integers(0, 3, size=(1, D)).astype(float)
    background[2] = x[0]  # a row equal to x: nothing to evaluate
    return x, background


def model(X):
    """Interactions of every order, row by row (no batch-dependent rounding)."""
    X = np.asarray(X, dtype=float)
    return np.sin(X[:, 0] * X[:, 1]) + X[:, 2] * np.exp(-X[:, 3]) + X.prod(axis=1)


class Counted:
    """A model (by default ``model``), counting the rows it is given."""

    def __init__(self, function=model):
        self.function, self.rows = function, 0

    def __call__(self, X):
        self.rows += len(X)
        return self.function(X)


def differing(x, background):
    return (background != x).sum(axis=1)  # m_z


@pytest.mark.parametrize("index", ["shapley", "banzhaf", "loo"])
def test_exact_evaluates_each_distinct_hybrid_once(index):
    x, background = rows_sharing_values()
    counted = Counted()
    explainer = ExactExplainer(counted, index=index).fit(background)
    counted.rows = 0
    phi = explainer.explain(x).to_numpy()[0]
    m = differing(x, background)
    # loo: every (player, z) where z differs on the player; else the proper
    # non-empty subsets of the players on which each background row differs.
    expected = (m.sum() if index == "loo" else np.maximum(2.0**m - 2, 0).sum()) + 1
    assert counted.rows == expected
    assert counted.rows < (2**D - 2) * len(background) + 1
    oracle = interventional_index(model, x[0], background, index)[:, 0]
    np.testing.assert_allclose(phi, oracle, rtol=0, atol=1e-12)


@pytest.mark.parametrize("antithetic", [True, False])
def test_permutation_evaluates_each_change_along_an_ordering(antithetic):
    # Along one ordering, z's hybrid changes when a player arrives on whom z
    # differs, and is the row itself once all m_z have arrived: m_z - 1
    # evaluations per ordering (none if m_z = 0).
    x, background = rows_sharing_values(seed=1)
    counted = Counted()
    explainer = PermutationExplainer(
        counted, n_permutations=3, antithetic=antithetic, random_state=0
    ).fit(background)
    counted.rows = 0
    phi = explainer.explain(x).to_numpy()[0]
    chains = 3 * (2 if antithetic else 1)
    m = differing(x, background)
    assert counted.rows == chains * np.maximum(m - 1, 0).sum() + 1
    # Every ordering's contributions are those of the full game's table.
    table = interventional_table(model, x[0], background, [[j] for j in range(D)])
    np.testing.assert_allclose(
        phi.sum(), table[-1, 0] - table[0, 0], rtol=0, atol=1e-12
    )


@pytest.mark.parametrize("antithetic", [True, False])
def test_permutation_equals_the_orderings_walked_on_the_full_table(antithetic):
    # The estimate is the mean, over the orderings drawn, of each player's
    # marginal contribution in the oracle's table: skipped hybrids change
    # nothing. The orderings are those of the explainer's documented seed.
    x, background = rows_sharing_values(seed=2)
    explainer = PermutationExplainer(
        model, n_permutations=4, antithetic=antithetic, random_state=7
    ).fit(background)
    phi = explainer.explain(x).to_numpy()[0]
    table = interventional_table(model, x[0], background, [[j] for j in range(D)])[:, 0]
    rng = np.random.default_rng([7, 0])
    drawn = np.argsort(rng.random((4, D)), axis=1)
    orderings = np.vstack([drawn, drawn[:, ::-1]]) if antithetic else drawn
    expected = np.zeros(D)
    for ordering in orderings:
        mask = 0
        for player in ordering:
            expected[player] += table[mask | 1 << player] - table[mask]
            mask |= 1 << player
    np.testing.assert_allclose(phi, expected / len(orderings), rtol=0, atol=1e-12)


def test_missing_values_equal_to_the_rows_are_shared():
    # NaN in both the row and a background row is "the same value": the
    # hybrid is the same, evaluated once, and the values are the oracle's.
    x, background = rows_sharing_values()
    x[0, 1] = np.nan
    background[3:6, 1] = np.nan

    def nan_model(X):
        X = np.asarray(X, dtype=float)
        return np.where(np.isnan(X[:, 1]), 5.0, X[:, 1]) * X[:, 0] + X[:, 2]

    counted = Counted(nan_model)
    explainer = ExactExplainer(counted).fit(background)
    counted.rows = 0
    phi = explainer.explain(x).to_numpy()[0]
    same = (background == x) | (np.isnan(background) & np.isnan(x))
    m = (~same).sum(axis=1)
    assert counted.rows == np.maximum(2.0**m - 2, 0).sum() + 1
    oracle = interventional_index(nan_model, x[0], background, "shapley")[:, 0]
    np.testing.assert_allclose(phi, oracle, rtol=0, atol=1e-12)


def test_string_columns_shared_by_value():
    # A DataFrame with a string and a categorical column: equality is by
    # value, column by column, as the model sees it.
    rng = np.random.default_rng(3)
    frame = pd.DataFrame(
        {
            "colour": rng.choice(["red", "blue"], 10),
            "size": rng.integers(0, 2, 10).astype(float),
            "kind": pd.Categorical(rng.choice(["a", "b"], 10)),
        }
    )

    def scored(X):
        return (X["colour"] == "red").to_numpy() * 2.0 + X["size"].to_numpy() * (
            X["kind"] == "a"
        ).to_numpy()

    counted = Counted(scored)
    explainer = ExactExplainer(counted).fit(frame.iloc[1:])
    counted.rows = 0
    phi = explainer.explain(frame.iloc[[0]]).to_numpy()[0]
    x = frame.iloc[0]
    m = np.array(
        [sum(frame.iloc[z][c] != x[c] for c in frame.columns) for z in range(1, 10)]
    )
    assert counted.rows == np.maximum(2.0**m - 2, 0).sum() + 1
    oracle = interventional_index(scored, frame.iloc[[0]], frame.iloc[1:], "shapley")
    np.testing.assert_allclose(phi, oracle[:, 0], rtol=0, atol=1e-12)
