"""
Accuracy of the quadrature rule
===============================

The Shapley value of player ``i`` in a product game is
``w (a_i - b_i) Integral_0^1 prod_{j != i} ((1 - t) b_j + t a_j) dt``, the
integral of a polynomial of degree ``n - 1``. Gauss–Legendre quadrature with
``ceil(n / 2)`` points is exact for it; with fewer points the error decays
geometrically in the number of points, at a rate set by how much the factors
vary. This example measures and draws that decay against the exact rule,
and checks a game of 5000 players, whose products span hundreds of orders of
magnitude.
"""

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from skshapley.games import exact_n_points, product_shapley


def scientific(x):
    return f"{x:.1e}"


# %%
# Error against the number of points, 200 players
# -----------------------------------------------
# Pure product games (``b = 1``) whose factors ``a_j`` are drawn uniformly
# from ``[low, 1]``, as for an RBF kernel. Every ``v(S)`` lies in ``[0, 1]``
# and ``v(∅) = 1``, so the errors below are relative to the game's scale
# ``max_S |v(S)| = 1``. The reference is the exact rule, 100 points.

n_players = 200
exact_points = exact_n_points(n_players)
rng = np.random.RandomState(0)
lows = (0.0, 0.5, 0.9)
games = {low: rng.uniform(low, 1.0, size=n_players) for low in lows}
exact = {
    low: product_shapley(a, n_quadrature_points=exact_points)
    for low, a in games.items()
}

n_points = (1, 2, 4, 8, 12, 16, 24, 32, 48, 64)
errors = pd.DataFrame(
    {
        f"a in [{low}, 1]": [
            np.abs(product_shapley(a, n_quadrature_points=m) - exact[low]).max()
            for m in n_points
        ]
        for low, a in games.items()
    },
    index=pd.Index(n_points, name="n_quadrature_points"),
)
print(f"max |phi - phi_exact| ({exact_points} points is exact):")
print(errors.to_string(float_format=scientific))

# %%
# On a logarithmic axis geometric decay is a straight line, down to rounding
# level (errors of exactly 0 are not drawn).

figure, ax = plt.subplots(figsize=(6, 4), layout="constrained")
for column in errors:
    ax.semilogy(errors.index, errors[column].where(errors[column] > 0), "o-")
ax.axvline(exact_points, color="grey", linestyle=":")
ax.set_xlim(0, 110)
ax.legend(errors.columns, title=f"{n_players} players", frameon=False)
ax.set_xlabel("n_quadrature_points (the exact rule, dotted, has 100)")
ax.set_ylabel("max |phi - phi_exact|")

# %%
# The error falls by orders of magnitude with each few added points until it
# reaches rounding level, the sooner the less the factors vary; far below
# the 100 points of the exact rule. It decreases monotonically until then.

# Values are of order 1e-2 and sums of them of order 1, with last places near
# 1e-18 and 1e-16: an error below 1e-15 is rounding.
ROUNDING = 1e-15
for column in errors:
    above = errors[column][errors[column] > ROUNDING]
    assert (np.diff(above.to_numpy()) < 0).all(), column
    assert errors[column].loc[32] < ROUNDING, column

# The default, n_quadrature_points="auto", uses the exact rule for up to 128
# non-dummy players.
for low, a in games.items():
    assert np.abs(product_shapley(a) - exact[low]).max() < ROUNDING

# %%
# Efficiency is a property of the exact integral: with too few points the
# values do not add up to ``v(N) - v(∅) = prod_j a_j - 1``.

a = games[0.0]
target = np.prod(a) - 1.0
residuals = pd.Series(
    [product_shapley(a, n_quadrature_points=m).sum() - target for m in n_points],
    index=errors.index,
    name="efficiency residual, a in [0, 1]",
)
print(residuals.to_frame().to_string(float_format=scientific))
assert abs(residuals.loc[64]) < ROUNDING
assert abs(residuals.loc[4]) > 0.1

# %%
# 5000 players
# ------------
# With 5000 factors drawn from ``(0, 1]``, ``v(N) = prod_j a_j`` is about
# ``e**-5000``, far below the smallest float64 (about ``1e-308``), and the
# integrand sweeps from 1 at ``t = 0`` to that at ``t = 1``. The core keeps
# every product as a mantissa and a power of two, so nothing underflows to a
# wrong value: each Shapley value is finite, and they add up to
# ``v(N) - v(∅)``, which is -1 to within float64 precision.
#
# The exact rule would have 2500 points. Instead of computing it, each
# result is compared with the one for twice as many points: once that
# difference is at rounding level, so is the error.

n_players = 5000
a = 1.0 - rng.uniform(0.0, 1.0, size=n_players)  # in (0, 1]
log_v_full = np.log(a).sum()
target = np.expm1(log_v_full)  # v(N) - v(∅), rounds to -1.0
print(f"exact rule: {exact_n_points(n_players)} points")
print(f"log v(N) = {log_v_full:.0f}; v(N) - v(∅) = {target}")

phi = {m: product_shapley(a, n_quadrature_points=m) for m in (50, 100, 200, 400, 800)}
phi["auto"] = product_shapley(a)
table = pd.DataFrame(
    {
        "max |phi_m - phi_2m|": {
            m: np.abs(phi[m] - phi[2 * m]).max() for m in (50, 100, 200, 400)
        },
        "efficiency residual": {m: values.sum() - target for m, values in phi.items()},
    }
)
table.index.name = "n_quadrature_points"
print(table.to_string(na_rep="", float_format=scientific))
auto_vs_800 = np.abs(phi["auto"] - phi[800]).max()
print(f"max |phi_auto - phi_800| = {auto_vs_800:.1e}")

assert all(np.isfinite(values).all() for values in phi.values())
# A few hundred points, far below the exact rule's 2500, reach rounding
# level; so does "auto", which picks the number of points from an error bound.
assert table.loc[200, "max |phi_m - phi_2m|"] < ROUNDING
assert auto_vs_800 < ROUNDING
# The residual is relative to |v(N) - v(∅)| = 1: a few units in the last place.
converged = table.loc[[200, 400, 800, "auto"], "efficiency residual"]
assert (converged.abs() < 1e-13).all()
