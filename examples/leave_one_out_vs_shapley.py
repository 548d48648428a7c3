"""
Why Shapley values and not leave-one-out
========================================

Leave-one-out (LOO) attributes to each feature what the prediction loses
when that feature alone is removed: ``v(N) - v(N minus {i})``. It is cheap and
intuitive, and it fails in both directions: features that only matter together
are each given the whole effect, and features that can stand in for each
other are each given nothing. The Shapley value averages a feature's marginal
contribution over every order in which the features can arrive, and is the
only attribution that is efficient, symmetric, linear and gives dummies zero.

Each story below is a small cooperative game: the players are features and
``v(S)`` is the prediction when only the features in ``S`` are known. Every
Shapley value is computed four independent ways — the factorial formula, the
average over all orderings, Möbius inversion, and, because each game here is a
sum of product games, the quadrature core — and compared with LOO. The script
checks each claim it prints with ``assert``, and a figure sets the two
attributions side by side.
"""

import itertools
import math
from fractions import Fraction

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.linear_model import LinearRegression

from skshapley.games import (
    check_axioms,
    game_table,
    harsanyi_dividends,
    leave_one_out,
    product_shapley,
    sample_shapley,
    shapley_values,
)

# The games below have values of order 10; sums of a few dozen such numbers
# are exact or off by a few units in the last place.
ATOL = 1e-12

EXACT_METHODS = ("factorial", "permutation", "moebius")


def product_game_table(a, b, weights):
    """Table of ``sum_g w_g prod_{j in S} a[g, j] prod_{j not in S} b[g, j]``.

    Built by brute force over all coalitions, to check a product-game form
    against the game it is meant to represent.
    """
    a, b, weights = np.atleast_2d(a), np.atleast_2d(b), np.asarray(weights)
    n_players = a.shape[1]
    masks = np.arange(2**n_players)
    present = ((masks[:, None] >> np.arange(n_players)) & 1).astype(bool)
    factors = np.where(present[:, None, :], a[None], b[None])
    return factors.prod(axis=2) @ weights


def attributions(game, features, product_form):
    """Shapley values by four methods and leave-one-out, one row per feature.

    ``product_form`` is ``(a, b, weights)``, a sum of product games equal to
    ``game``; that equality is checked on every coalition first.
    """
    n_players = len(features)
    table = game_table(game, n_players)
    np.testing.assert_allclose(product_game_table(*product_form), table, atol=ATOL)

    columns = {
        method: shapley_values(table, n_players, method=method)
        for method in EXACT_METHODS
    }
    columns["product"] = product_shapley(*product_form)
    columns["leave_one_out"] = leave_one_out(table, n_players)
    frame = pd.DataFrame(columns, index=pd.Index(features, name="feature"))

    # Four independent computations of the Shapley value agree.
    for method in ("permutation", "moebius", "product"):
        np.testing.assert_allclose(frame[method], frame["factorial"], atol=ATOL)
    # ... and satisfy efficiency, dummy and symmetry, read off the game table.
    assert check_axioms(table, frame["factorial"], n_players).holds(atol=ATOL)
    return table, frame


def with_totals(frame, table):
    """``frame`` with a last row of column sums and the target v(N) - v(∅)."""
    totals = frame.sum().rename("sum")
    target = pd.Series(table[-1] - table[0], index=frame.columns, name="v(N)-v(∅)")
    return pd.concat([frame, totals.to_frame().T, target.to_frame().T])


def dividends(table, features):
    """Harsanyi dividends as a Series indexed by the coalitions' names."""
    n_players = len(features)
    names = [
        "{" + ", ".join(f for k, f in enumerate(features) if mask >> k & 1) + "}"
        for mask in range(2**n_players)
    ]
    return pd.Series(harsanyi_dividends(table, n_players), index=names)


# %%
# Interaction: two features that only matter together
# ----------------------------------------------------
# A fraud model predicts 10 only when the payment has a card *and* the card is
# verified. This is the product game ``a = (1, 1)``, ``b = (0, 0)``, weight
# 10: the product is 1 only when both players are present.

features = ["has_card", "is_verified"]


def interaction(mask):
    return 10.0 * bool(mask[0] and mask[1])


table, frame = attributions(interaction, features, ([1.0, 1.0], [0.0, 0.0], [10.0]))
print(with_totals(frame, table).to_string())
# Kept, with the game's total v(N) - v(∅), for the figure further down.
stories = {"interaction": (frame, table[-1] - table[0])}

# Leave-one-out gives each feature the whole 10: the attributions add up to
# 20, twice the prediction. Shapley shares the interaction equally.
np.testing.assert_array_equal(frame["leave_one_out"], [10.0, 10.0])
np.testing.assert_allclose(frame["factorial"], [5.0, 5.0], atol=ATOL)
loo_report = check_axioms(table, frame["leave_one_out"], 2)
print("LOO efficiency residual:", loo_report.efficiency_residual)
assert loo_report.efficiency_residual == 10.0

# %%
# The Möbius transform (Harsanyi dividends) splits ``v`` into the parts that
# each coalition adds beyond its sub-coalitions. Here all of it sits on the
# pair, and the Shapley value shares each dividend equally among its members.

print(dividends(table, features).to_frame("dividend").to_string())
np.testing.assert_array_equal(harsanyi_dividends(table, 2), [0.0, 0.0, 0.0, 10.0])

# %%
# Redundancy: two copies of one signal
# ------------------------------------
# ``signal`` and ``signal_copy`` carry the same information: the prediction
# is 8 as soon as either is known. As a sum of product games,
# ``8 * (1 - prod_j (1 - x_j))`` is the constant 8 (``a = b = (1, 1)``: both
# players are dummies in it) minus 8 times the game that is 1 only on the
# empty coalition (``a = (0, 0)``, ``b = (1, 1)``).

features = ["signal", "signal_copy"]


def redundancy(mask):
    return 8.0 * bool(mask.any())


table, frame = attributions(
    redundancy,
    features,
    ([[1.0, 1.0], [0.0, 0.0]], [[1.0, 1.0], [1.0, 1.0]], [8.0, -8.0]),
)
print(with_totals(frame, table).to_string())
stories["redundancy"] = (frame, table[-1] - table[0])

# Removing either copy changes nothing, so leave-one-out gives both 0 and a
# real signal looks irrelevant. Shapley gives each 4.
np.testing.assert_array_equal(frame["leave_one_out"], [0.0, 0.0])
np.testing.assert_allclose(frame["factorial"], [4.0, 4.0], atol=ATOL)
loo_report = check_axioms(table, frame["leave_one_out"], 2)
print("LOO efficiency residual:", loo_report.efficiency_residual)
assert loo_report.efficiency_residual == -8.0

# %%
# Each copy alone earns 8; the pair's dividend, -8, removes the double count.

print(dividends(table, features).to_frame("dividend").to_string())
np.testing.assert_array_equal(harsanyi_dividends(table, 2), [0.0, 8.0, 8.0, -8.0])

# %%
# Signs: a helpful feature, a harmful one and a dummy
# ---------------------------------------------------
# A credit score rises by 6 with a history of on-time payments and falls by 4
# with missed payments; the parity of the customer id has no effect. Each
# term ``c_j x_j`` is the product game with ``a = 1`` everywhere, ``b_j = 0``
# for its feature and ``b = 1`` elsewhere.

features = ["on_time_payments", "missed_payments", "customer_id_parity"]


def signs(mask):
    return 6.0 * mask[0] - 4.0 * mask[1]


table, frame = attributions(
    signs,
    features,
    (np.ones((2, 3)), [[0.0, 1.0, 1.0], [1.0, 0.0, 1.0]], [6.0, -4.0]),
)
stories["signs"] = (frame, table[-1] - table[0])
frame["magnitude_only"] = frame["factorial"].abs()
print(frame.to_string())

# The attributions are signed: +6 and -4. A magnitude-only importance says
# that missed payments matter (4) but not in which direction. The dummy gets
# exactly 0 from every method.
np.testing.assert_allclose(frame["factorial"], [6.0, -4.0, 0.0], atol=ATOL)
report = check_axioms(table, frame["factorial"], 3)
assert report.dummies == (2,)
assert (frame.loc["customer_id_parity"] == 0.0).all()

# %%
# The three stories in one figure
# -------------------------------
# Each feature's Shapley value (the four methods agree; one bar) next to its
# leave-one-out attribution, and on the right the sums of both against the
# total they must add up to, ``v(N) - v(∅)`` (black line). Leave-one-out
# doubles the interaction, erases the redundant signal, and only on the
# additive signs game gets the sum right.

figure, axes = plt.subplots(1, 3, figsize=(11, 3.6), layout="constrained")
width = 0.38
for ax, (title, (frame, total)) in zip(axes, stories.items(), strict=True):
    labels = [*frame.index, "sum"]
    x = np.arange(len(labels))
    for offset, column, name, color in (
        (-width / 2, "factorial", "Shapley", "tab:blue"),
        (width / 2, "leave_one_out", "leave-one-out", "tab:orange"),
    ):
        heights = [*frame[column], frame[column].sum()]
        bars = ax.bar(x + offset, heights, width, label=name, color=color)
        ax.bar_label(bars, fmt="%g", fontsize=8)  # shows the zeros too
    ax.hlines(total, x[-1] - width, x[-1] + width, color="black", linewidth=2)
    ax.axhline(0.0, color="grey", linewidth=0.8)
    ax.set_xticks(x, labels, rotation=20, ha="right")
    ax.set_title(f"{title}: v(N) - v(∅) = {total:g}")
axes[0].set_ylabel("attribution")
axes[0].legend(frameon=False)

# %%
# Additive model: where the two agree
# -----------------------------------
# For a linear regression, with absent features replaced by their mean over
# the training data, ``v(S) = f(mean) + sum_{j in S} coef_j (x_j - mean_j)``.
# Every feature's marginal contribution is the same in every coalition, so
# leave-one-out, Shapley and ``coef_j (x_j - mean_j)`` coincide, and LOO is
# efficient too. A check run only on additive models cannot tell the two
# methods apart: it validates nothing.

rng = np.random.RandomState(0)
X = rng.normal(size=(200, 4))
y = X @ np.array([3.0, -2.0, 0.5, 0.0]) + 0.1 * rng.normal(size=200)
model = LinearRegression().fit(X, y)
x, mean = X[0], X.mean(axis=0)


def additive(mask):
    return float(model.predict(np.where(mask, x, mean)[None, :])[0])


features = ["x0", "x1", "x2", "x3"]
effects = model.coef_ * (x - mean)
# The constant f(mean) as a game in which every player is a dummy, plus one
# game c_j x_j per feature.
a = np.ones((5, 4))
b = np.vstack([np.ones(4), 1.0 - np.eye(4)])
weights = np.concatenate([[additive(np.zeros(4, dtype=bool))], effects])
table, frame = attributions(additive, features, (a, b, weights))
print(with_totals(frame, table).to_string())

np.testing.assert_allclose(frame["leave_one_out"], frame["factorial"], atol=ATOL)
np.testing.assert_allclose(frame["factorial"], effects, atol=ATOL)
assert check_axioms(table, frame["leave_one_out"], 4).holds(atol=ATOL)

# %%
# The factorial weight is the probability of an arrival order
# -----------------------------------------------------------
# In the factorial formula the marginal contribution ``v(S + i) - v(S)`` has
# weight ``|S|! (n - |S| - 1)! / n!``. It is the probability that, in a
# uniformly random order of the ``n`` players, exactly the players of ``S``
# arrive before ``i``. Counting over all 24 orders of 4 players, in exact
# rational arithmetic:

n = 4
orders = list(itertools.permutations(range(n)))
rows = []
for player in range(n):
    others = [j for j in range(n) if j != player]
    for size in range(n):
        for before in itertools.combinations(others, size):
            count = sum(
                set(order[: order.index(player)]) == set(before) for order in orders
            )
            probability = Fraction(count, len(orders))
            weight = Fraction(
                math.factorial(size) * math.factorial(n - size - 1),
                math.factorial(n),
            )
            assert probability == weight
            rows.append((player, set(before) or "{}", str(probability), str(weight)))

weights_table = pd.DataFrame(
    rows, columns=["player", "S", "P(S arrives before i)", "|S|!(n-|S|-1)!/n!"]
)
# One row per (player, S); all 4 * 2**3 of them match. Those of player 0:
print(weights_table[weights_table["player"] == 0].drop(columns="player").to_string())
assert len(weights_table) == n * 2 ** (n - 1)

# %%
# Three exact methods on a game with no structure
# -----------------------------------------------
# The small games above have round answers. On a random game of 6 players
# the three exact algorithms, which share nothing but the table, still agree
# to rounding error.

random_table = np.random.RandomState(1).normal(size=2**6)
exact = {
    method: shapley_values(random_table, 6, method=method) for method in EXACT_METHODS
}
exact = pd.DataFrame(exact, index=pd.RangeIndex(6, name="player"))
print(exact.to_string())
spread = (exact.max(axis=1) - exact.min(axis=1)).max()
print(f"largest disagreement between methods: {spread:.1e}")
assert spread < ATOL

# %%
# Sampling keeps efficiency exactly
# ---------------------------------
# :func:`~skshapley.games.sample_shapley` averages marginal contributions over
# random orders. Along one order the contributions telescope to
# ``v(N) - v(∅)``, so even a single order gives an efficient attribution —
# though not a symmetric one: in the interaction game it hands the whole 10
# to whichever feature arrives second.

one_order = sample_shapley(interaction, 2, n_permutations=1, random_state=0)
report = check_axioms(interaction, one_order, 2)
print("one order, interaction game:", one_order)
print("efficiency residual:", report.efficiency_residual)
print("symmetry residual:", report.symmetry_max)
assert abs(report.efficiency_residual) <= ATOL
assert report.symmetry_max == 10.0

# %%
# On the random game, the estimates approach the exact values as orders are
# added (the error falls roughly like one over the square root of their
# number), while the efficiency residual stays at rounding level throughout.

target = random_table[-1] - random_table[0]
rows = []
for n_permutations in (1, 10, 100, 1000, 10000):
    estimate = sample_shapley(random_table, 6, n_permutations, random_state=0)
    rows.append(
        {
            "n_permutations": n_permutations,
            "max_error": np.abs(estimate - exact["factorial"]).max(),
            "efficiency_residual": estimate.sum() - target,
        }
    )
sampling = pd.DataFrame(rows).set_index("n_permutations")
print(sampling.to_string())
assert (sampling["efficiency_residual"].abs() <= ATOL).all()
assert sampling["max_error"].iloc[-1] < sampling["max_error"].iloc[0] / 10
