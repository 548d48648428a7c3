"""PermutationExplainer: exact efficiency, what one draw is, and its statistics.

The reference values are the interventional game's, tabulated by the oracle
(``tests/naive.py``) for every coalition: the exact Shapley values by the
factorial formula, and the marginal contributions along every one of the d!
orders of arrival, which are all a single permutation can give.
"""

import itertools

import numpy as np
import pandas as pd
import pytest
from naive import (
    contributions_by_order,
    index_of_tables,
    interventional_index,
    interventional_table,
)
from sklearn.datasets import make_classification
from sklearn.linear_model import LogisticRegression

from skshapley import ExactExplainer, PermutationExplainer

# Efficiency and single draws: sums of d marginal contributions, each the
# difference of two means over the background of the same model outputs.
RTOL = 1e-12


def entangled(X):
    """Three-way interactions: no order of arrival gives the Shapley values.

    Reads any number of features from 3 on. (With interactions of two
    features at most, an antithetic pair is exact: see
    test_antithetic_pairs_are_exact_for_pairwise_interactions.)
    """
    X = np.asarray(X, dtype=float)
    return (
        X[:, 0] * X[:, 1] * X[:, 2]
        + X[:, 1:].max(axis=1)
        + np.sin(X[:, 0] + X[:, -1] * X[:, -2])
    )


def pairwise(X):
    """Interactions of two features at most: a sum of functions of pairs."""
    X = np.asarray(X, dtype=float)
    return (
        X[:, 0] * X[:, 1]
        + np.maximum(X[:, 2], X[:, 3])
        + np.sin(X[:, 4] + X[:, 0])
        - 0.5 * X[:, 1] * X[:, 3]
    )


def game(d=5, n_background=6, n_rows=4, seed=0):
    """A background, rows to explain, and the rows' value tables (2**d, 1)."""
    rng = np.random.default_rng(seed)
    background = rng.normal(size=(n_background, d))
    rows = rng.normal(size=(n_rows, d))
    players = [[j] for j in range(d)]
    tables = [interventional_table(entangled, x, background, players) for x in rows]
    return background, rows, tables


def exact_values(tables):
    """The exact Shapley values of each row, (n_rows, d)."""
    return np.array([index_of_tables(table, "shapley")[:, 0] for table in tables])


@pytest.mark.parametrize("antithetic", [True, False])
@pytest.mark.parametrize("seed", [0, 1, None])
def test_efficiency_is_exact_with_one_permutation(antithetic, seed):
    background, rows, _ = game()
    explainer = PermutationExplainer(
        entangled, n_permutations=1, antithetic=antithetic, random_state=seed
    ).fit(background)
    total = explainer.explain(rows).sum(axis=1) + explainer.expected_value_
    scale = np.abs(entangled(np.vstack([background, rows]))).max()
    np.testing.assert_allclose(total, entangled(rows), rtol=0, atol=RTOL * scale)


def test_efficiency_of_every_output_of_a_classifier():
    X, y = make_classification(120, 6, n_informative=4, n_classes=3, random_state=0)
    model = LogisticRegression().fit(X, y)
    explainer = PermutationExplainer(model, n_permutations=3, random_state=0)
    explainer.fit(X[:9])
    phi = explainer.explain(X[50:55])
    gaps = model.predict_proba(X[50:55]) - explainer.expected_value_.to_numpy()
    for k, output in enumerate(explainer.output_names_):
        np.testing.assert_allclose(
            phi[output].sum(axis=1), gaps[:, k], rtol=0, atol=RTOL
        )


@pytest.mark.parametrize("antithetic", [True, False])
def test_one_permutation_is_one_order_of_arrival(antithetic):
    # With one draw the estimate is one order's marginal contributions, or
    # the mean of an order's and its reverse's: one of these d! vectors.
    d = 4
    background, rows, tables = game(d=d, n_rows=6)
    explainer = PermutationExplainer(
        entangled, n_permutations=1, antithetic=antithetic, random_state=3
    ).fit(background)
    phi = explainer.explain(rows).to_numpy()
    for r, table in enumerate(tables):
        assert_one_order(phi[r], table[:, 0], d, antithetic)


def test_groups_arrive_as_one_player():
    # The players are the groups: the orders are those of the quotient game.
    background, rows, _ = game(n_rows=3)
    players = [[0, 3], [4, 1], [2]]
    explainer = PermutationExplainer(
        entangled,
        n_permutations=1,
        antithetic=False,
        groups={"front": [0, 3], "back": ["x4", "x1"]},
        random_state=2,
    ).fit(background)
    assert list(explainer.player_names_) == ["front", "back", "x2"]
    phi = explainer.explain(rows).to_numpy()
    for r, x in enumerate(rows):
        table = interventional_table(entangled, x, background, players)[:, 0]
        assert_one_order(phi[r], table, len(players), antithetic=False)


def assert_one_order(values, table, d, antithetic):
    """``values`` are the contributions along one order (or an antithetic pair)."""
    by_order = contributions_by_order(table, d)
    orders = np.array(
        [
            (m + by_order[order[::-1]]) / 2 if antithetic else m
            for order, m in by_order.items()
        ]
    )
    closest = np.abs(orders - values).max(axis=1).min()
    assert closest <= RTOL * np.abs(table).max()


def test_standard_error_of_two_draws():
    # Two draws m1, m2: the estimate is (m1 + m2) / 2 and the standard error
    # std(ddof=1) / sqrt(2) = |m1 - m2| / 2, per player, for one pair of orders.
    d = 3
    background, rows, tables = game(d=d, n_rows=5, seed=4)
    explainer = PermutationExplainer(
        entangled, n_permutations=2, antithetic=False, random_state=5
    ).fit(background)
    phi, std = explainer.explain(rows, return_std=True)
    for r, table in enumerate(tables):
        orders = list(contributions_by_order(table[:, 0], d).values())
        estimate, error = phi.to_numpy()[r], std.to_numpy()[r]
        atol = RTOL * np.abs(table).max()
        assert any(
            np.allclose((m1 + m2) / 2, estimate, rtol=0, atol=atol)
            and np.allclose(np.abs(m1 - m2) / 2, error, rtol=0, atol=atol)
            for m1, m2 in itertools.product(orders, repeat=2)
        )


@pytest.mark.parametrize("n_permutations", [1, 3])
def test_two_players_are_exact_with_antithetic_pairs(n_permutations):
    # With two players the only orders are (0, 1) and (1, 0), each the
    # other's reverse: an antithetic pair gives player 0
    # ((v(0) - v()) + (v(01) - v(1))) / 2, the factorial formula for d = 2
    # (weights 1/2 and 1/2). Every draw is exact, so the error is 0.
    rng = np.random.default_rng(6)
    background, rows = rng.normal(size=(5, 2)), rng.normal(size=(4, 2))

    def product(X):
        return np.exp(X[:, 0]) * X[:, 1] + X[:, 0]

    explainer = PermutationExplainer(
        product, n_permutations=n_permutations, random_state=7
    ).fit(background)
    phi = explainer.explain(rows).to_numpy()
    for r, x in enumerate(rows):
        expected = interventional_index(product, x, background, "shapley")[:, 0]
        np.testing.assert_allclose(phi[r], expected, rtol=0, atol=1e-12)
    if n_permutations > 1:
        _, std = explainer.explain(rows, return_std=True)
        np.testing.assert_allclose(std.to_numpy(), 0.0, rtol=0, atol=1e-12)


def test_antithetic_pairs_are_exact_for_pairwise_interactions():
    # A function of two features gives an interventional game whose Möbius
    # dividends sit on single players and pairs. Along an order, player i
    # collects its own dividend and those of the pairs {i, j} with j before
    # it; along the reversed order, those with j after it: the pair's mean
    # collects every pair dividend half, which is the Shapley value. One
    # antithetic permutation is then exact; a single order is not.
    background, rows, _ = game()
    exact = np.array(
        [interventional_index(pairwise, x, background, "shapley")[:, 0] for x in rows]
    )
    for antithetic in (True, False):
        explainer = PermutationExplainer(
            pairwise, n_permutations=1, antithetic=antithetic, random_state=0
        ).fit(background)
        error = np.abs(explainer.explain(rows).to_numpy() - exact).max()
        assert (error <= 1e-12) == antithetic


def estimates(background, rows, n_permutations, seeds):
    """(seed, row, player) estimates and standard errors, one explainer per seed."""
    values, errors = [], []
    for seed in seeds:
        explainer = PermutationExplainer(
            entangled, n_permutations=n_permutations, random_state=seed
        ).fit(background)
        phi, std = explainer.explain(rows, return_std=True)
        values.append(phi.to_numpy())
        errors.append(std.to_numpy())
    return np.array(values), np.array(errors)


def test_error_shrinks_like_one_over_sqrt_n_and_is_unbiased():
    # The estimate is a mean of n i.i.d. draws with mean the Shapley value:
    # its mean squared error is sigma**2 / n, so the RMS error over seeds
    # halves when n is multiplied by 4. Simulated with an independent
    # sampler over this game's orders (300 repetitions of 150 seeds x 4 rows
    # x 5 players), each ratio is 2.00 +- 0.10 (range 1.74-2.36): [1.6, 2.5]
    # is 4 spreads below and 5 above, and excludes 1 (no convergence) and 4
    # (a 1/n rate); a bias b would pull the ratio below 2 as n grows.
    background, rows, tables = game()
    exact = exact_values(tables)
    seeds = range(150)
    rms = {}
    for n in (4, 16, 64):
        values, _ = estimates(background, rows, n, seeds)
        errors = values - exact
        rms[n] = np.sqrt(np.mean(errors**2))
        # Unbiased: each (row, player)'s mean error over the seeds is within
        # 5 standard errors of that mean (20 checks per n; the simulation
        # above never saw one outside in 900 runs of 20).
        spread = errors.std(axis=0, ddof=1) / np.sqrt(len(seeds))
        assert (np.abs(errors.mean(axis=0)) <= 5 * spread).all()
    assert 1.6 <= rms[4] / rms[16] <= 2.5
    assert 1.6 <= rms[16] / rms[64] <= 2.5


def test_standard_errors_cover_at_the_stated_rate():
    # |estimate - exact| <= 1.96 std in 95 % of cases for a normal mean; with
    # 32 draws Student's t (31 degrees of freedom) gives 94.1 %. Over 80
    # seeds x 4 rows x 5 players = 1600 cases (correlated within a seed:
    # at least 320 independent ones) the binomial spread is at most
    # sqrt(0.94 * 0.06 / 320) = 1.3 %. Simulated with an independent sampler
    # over this game's orders: 93.6 % +- 0.65 % (range 91.4-95.4 % in 300
    # runs). [0.90, 0.975] is 2.8 binomial (5.5 simulated) spreads below and
    # 3 (6) above; a standard error off by a factor sqrt(2) either way (a
    # pair counted as two draws, a wrong sqrt(n)) covers 83 % or 98.8 %.
    background, rows, tables = game()
    exact = exact_values(tables)
    values, errors = estimates(background, rows, 32, range(80))
    assert (errors > 0).all()
    covered = np.abs(values - exact) <= 1.96 * errors
    assert 0.90 <= covered.mean() <= 0.975


def test_same_seed_same_values_and_fresh_draws_without_one():
    background, rows, _ = game()

    def explain(seed, X=rows):
        explainer = PermutationExplainer(entangled, n_permutations=2, random_state=seed)
        return explainer.fit(background).explain(X)

    pd.testing.assert_frame_equal(explain(11), explain(11), check_exact=True)
    assert not np.array_equal(explain(11).to_numpy(), explain(12).to_numpy())
    assert not np.array_equal(explain(None).to_numpy(), explain(None).to_numpy())


def test_row_r_uses_its_own_seed_whatever_the_chunks():
    # Row r of a call draws from default_rng([random_state, r]): the values
    # do not depend on progress chunks, and a call on the first rows gives
    # the first rows of a longer call.
    rng = np.random.default_rng(8)
    background, rows = rng.normal(size=(4, 5)), rng.normal(size=(140, 5))
    explainer = PermutationExplainer(entangled, n_permutations=2, random_state=13).fit(
        background
    )
    whole = explainer.explain(rows)
    seen = []
    chunked = explainer.explain(rows, progress=lambda done, total: seen.append(done))
    assert seen[-1] == len(rows)
    pd.testing.assert_frame_equal(chunked, whole, check_exact=True)
    pd.testing.assert_frame_equal(
        explainer.explain(rows[:7]), whole.iloc[:7], check_exact=True
    )
    others = np.vstack([rows[:3], rng.normal(size=(2, 5))])
    pd.testing.assert_frame_equal(
        explainer.explain(others).iloc[:3], whole.iloc[:3], check_exact=True
    )


def test_return_std_layout_and_one_output():
    X, y = make_classification(100, 4, n_informative=3, n_redundant=0, n_classes=3)
    model = LogisticRegression().fit(X, y)
    explainer = PermutationExplainer(model, n_permutations=4, random_state=0)
    explainer.fit(X[:6])
    rows = pd.DataFrame(X[40:43], index=["a", "b", "c"])
    phi, std = explainer.explain(rows, return_std=True)
    pd.testing.assert_frame_equal(explainer.explain(rows), phi, check_exact=True)
    pd.testing.assert_index_equal(std.index, phi.index)
    pd.testing.assert_index_equal(std.columns, phi.columns)
    assert (std.to_numpy() >= 0).all()
    one, one_std = explainer.explain(rows, output=1, return_std=True)
    pd.testing.assert_frame_equal(one, phi[1].rename_axis(columns=None))
    pd.testing.assert_frame_equal(one_std, std[1].rename_axis(columns=None))


def test_return_std_needs_two_permutations_and_computes_nothing():
    background, rows, _ = game()
    calls = []

    def counted(X):
        calls.append(len(X))
        return entangled(X)

    explainer = PermutationExplainer(counted, n_permutations=1).fit(background)
    calls.clear()
    with pytest.raises(ValueError, match="n_permutations"):
        explainer.explain(rows, return_std=True)
    assert calls == []


@pytest.mark.parametrize(("antithetic", "chains"), [(True, 2), (False, 1)])
def test_model_rows_per_explained_row(antithetic, chains):
    d, n_background, n_permutations = 5, 6, 3
    background, rows, _ = game(d=d, n_background=n_background, n_rows=2)
    calls = []

    def counted(X):
        calls.append(len(X))
        return entangled(X)

    explainer = PermutationExplainer(
        counted, n_permutations=n_permutations, antithetic=antithetic, random_state=0
    ).fit(background)
    calls.clear()
    explainer.explain(rows)
    per_row = n_permutations * chains * (d - 1) * n_background + 1
    assert sum(calls) == len(rows) * per_row


def test_leave_one_out_is_the_exact_explainers():
    background, rows, tables = game(n_rows=3)
    explainer = PermutationExplainer(entangled, random_state=0).fit(background)
    loo = explainer.leave_one_out(rows)
    exact = ExactExplainer(entangled, index="loo").fit(background).explain(rows)
    pd.testing.assert_frame_equal(loo, exact, rtol=0, atol=1e-12)
    for r, table in enumerate(tables):
        expected = index_of_tables(table, "loo")[:, 0]
        np.testing.assert_allclose(loo.iloc[r], expected, rtol=0, atol=1e-12)


def test_describe_and_method():
    background, _, _ = game()
    explainer = PermutationExplainer(entangled, n_permutations=7).fit(background)
    facts = explainer.describe()
    assert facts["index"] == "Shapley, estimated from 7 permutations (antithetic)"
    assert facts["background data"] == "6 rows"
    assert facts["model evaluations per row"].replace(",", "") == str(7 * 2 * 4 * 6 + 1)
    assert explainer.n_evaluations_per_row_ == 7 * 2 * 4 * 6 + 1
    assert PermutationExplainer.method_ == "permutation"
    assert not explainer.supports_interactions
    with pytest.raises(NotImplementedError):
        explainer.explain_interactions(background)


@pytest.mark.parametrize("antithetic", [False, True])
@pytest.mark.parametrize("n_background", [1, 3])
def test_rows_that_differ_from_the_background_in_one_feature_or_none(
    antithetic, n_background
):
    """No hybrid lies between the background and such a row: exact values.

    A row equal to every background row gets zeros; one that differs from
    it in one feature gets the whole difference on that feature (the exact
    Shapley values, which the oracle tabulates).
    """
    rng = np.random.default_rng(3)
    background = np.repeat(rng.normal(size=(1, 5)), n_background, axis=0)
    rows = np.repeat(background[:1], 3, axis=0)
    rows[1, 2] += 1.5
    rows[2, 0] -= 0.7
    explainer = PermutationExplainer(
        entangled, n_permutations=4, antithetic=antithetic, random_state=0
    ).fit(background)
    phi = explainer.explain(rows).to_numpy()
    exact = np.array(
        [interventional_index(entangled, row, background, "shapley") for row in rows]
    )
    np.testing.assert_allclose(phi, exact[..., 0], rtol=0, atol=RTOL)
    np.testing.assert_array_equal(phi[0], 0.0)
    assert np.count_nonzero(phi[1]) == 1


def test_standard_errors_take_memory_only_when_asked_for(monkeypatch):
    background, rows, _ = game()
    explainer = PermutationExplainer(entangled, random_state=0).fit(background)
    buffers = []
    original = PermutationExplainer._sampled_rows

    def recorded(self, X, out, entropy):
        buffers.append(out.shape[0])
        return original(self, X, out, entropy)

    monkeypatch.setattr(PermutationExplainer, "_sampled_rows", recorded)
    phi = explainer.explain(rows)
    values, errors = explainer.explain(rows, return_std=True)
    assert buffers == [1, 2]
    pd.testing.assert_frame_equal(phi, values)
    assert (errors.to_numpy() > 0).any()
