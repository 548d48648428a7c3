"""
Exact Shapley values of an RBF kernel ridge model
=================================================

A kernel ridge regression with the RBF kernel predicts::

    f(x) = sum_i alpha_i k(x, X_i),   k(x, z) = exp(-gamma ||x - z||**2),

with one dual coefficient ``alpha_i`` per training row ``X_i`` and no
intercept. The RBF kernel factorizes over features,
``k(x, z) = prod_j exp(-gamma (x_j - z_j)**2)``, so the model is a sum of
products of one-feature kernels. Explaining ``f`` at a row ``x`` with the
value function::

    v(S) = sum_i alpha_i prod_{j in S} exp(-gamma (x_j - X_ij)**2)

(features outside ``S`` contribute a factor 1, as if they matched every
training row) makes each training row a pure product game with weight
``alpha_i``. :class:`~skshapley.ProductKernelExplainer` parses the model into
these games and computes their exact Shapley values; ``v(∅) = sum_i alpha_i``
is the base value, so that the attributions plus the base value equal the
prediction. This example explains a scaled kernel ridge pipeline, checks
the values against brute-force enumeration built from scikit-learn's own
kernel function, draws the features' importance and one prediction's
waterfall, and explains the six blood-serum measurements as one group.
"""

import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.model_selection import train_test_split
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skshapley import ProductKernelExplainer, importance
from skshapley.games import check_axioms, shapley_values
from skshapley.plotting import ImportanceDisplay, WaterfallDisplay


def three_decimals(x):
    return f"{x:.3f}"


# %%
# The model
# ---------
# Ten features, standardized inside the pipeline, predict disease progression
# one year after baseline. The kernel width is chosen by hand for a
# reasonable fit; the point here is the explanation, not the model.

X, y = load_diabetes(return_X_y=True, as_frame=True)
X_train, X_test, y_train, y_test = train_test_split(
    X, y, test_size=0.25, random_state=0
)
gamma = 0.1 / X.shape[1]
model = make_pipeline(
    StandardScaler(), KernelRidge(kernel="rbf", alpha=1.0, gamma=gamma)
).fit(X_train, y_train)
print(f"R² on the held-out 25 %: {model.score(X_test, y_test):.3f}")

# %%
# The attributions
# ----------------
# The scaler works column by column, so the pipeline is explained in the
# original columns. ``explain`` returns a DataFrame with the explained rows'
# index; the explainer records how many quadrature points the games needed
# (the exact rule for 10 features has 5) and bounds the quadrature error (0:
# every game was integrated exactly).

explainer = ProductKernelExplainer(model).fit()
X_explain = X_test.iloc[:20]
phi = explainer.explain(X_explain)
print(f"quadrature points: {explainer.n_quadrature_points_}")
print(f"quadrature error bound: {explainer.quadrature_error_bound_}")
assert explainer.quadrature_error_bound_ == 0.0

# %%
# Efficiency: the attributions and the base value add up to the model's
# prediction, for every row. The dual coefficients are large and of both
# signs (their absolute sum is a few hundred times the predictions), so the
# residual is judged relative to the predictions' size.

prediction = model.predict(X_explain)
base_value = explainer.expected_value_
residual = np.abs(phi.sum(axis=1) + base_value - prediction).max()
print(f"base value v(∅) = {base_value:.3f}")
print(f"largest efficiency residual: {residual:.1e}")
assert residual <= 1e-10 * np.abs(prediction).max()

# %%
# The same values by brute force: for one row, tabulate the value function on
# all 2**10 = 1024 coalitions with scikit-learn's ``rbf_kernel`` restricted to
# the coalition's columns, and apply the factorial formula. This check uses
# nothing from skshapley's kernel code, and also verifies the other axioms
# from the game table.

ridge = model[-1]
Z_train = model[0].transform(X_train)
z = model[0].transform(X_explain.iloc[:1])


def kernel_game(mask):
    """``v(S) = sum_i alpha_i k_S(z, Z_i)``: the kernel on the columns in S."""
    if not mask.any():
        return ridge.dual_coef_.sum()  # every factor is 1
    kernel = rbf_kernel(z[:, mask], Z_train[:, mask], gamma=gamma)
    return (kernel @ ridge.dual_coef_)[0]


brute_force = shapley_values(kernel_game, X.shape[1])
difference = np.abs(brute_force - phi.iloc[0].to_numpy()).max()
print(f"row {X_explain.index[0]}: quadrature vs enumeration, max |diff| = "
      f"{difference:.1e}")  # fmt: skip
assert difference <= 1e-10 * np.abs(prediction).max()
assert check_axioms(kernel_game, phi.iloc[0], X.shape[1]).holds(atol=1e-9)

# %%
# Global and local views
# ----------------------
# The mean absolute attribution ranks the features over the explained rows;
# one row's signed attributions say which features pushed its prediction up
# or down from the base value.
#
# Read them against this value function's base value. With no feature known,
# every training row counts as a perfect match (all factors 1), so
# ``v(∅) = sum_i alpha_i`` is not the average prediction: here it lies above
# every explained prediction, knowing a feature mostly lowers the value, and
# most attributions are negative. They answer "how does knowing ``x_j`` change
# the kernel sum", which is what this (standard) product-kernel game defines.

assert base_value > prediction.max()
print(f"share of negative attributions: {(phi < 0).to_numpy().mean():.0%}")

print(importance(phi).to_string(float_format=three_decimals))
ImportanceDisplay.from_values(phi)

# %%
# The first explained row's waterfall starts at that base value, above every
# prediction, and most of its steps go down.

first = X_explain.index[0]
print(f"row {first}: prediction {prediction[0]:.2f} = base {base_value:.2f} + ")
by_size = phi.loc[first].sort_values(key=np.abs, ascending=False)
print(by_size.to_frame("phi").to_string(float_format=three_decimals))
WaterfallDisplay.from_values(phi.loc[first], base_value, x_row=X_explain.loc[first])

# %%
# Grouped attributions
# --------------------
# The six blood-serum measurements ``s1`` ... ``s6`` are correlated and may be
# best read as one player. With ``groups=``, each group is one player whose
# kernel factor is the product of its members' factors: the exact Shapley
# values of that smaller game, not a sum of the members' values.

serum = [f"s{k}" for k in range(1, 7)]
grouped = ProductKernelExplainer(model, groups={"serum": serum}).fit()
phi_grouped = grouped.explain(X_explain)
print(phi_grouped.head().to_string(float_format=three_decimals))

# The grouped values add up to the same total, the prediction minus the base.
residual = np.abs(phi_grouped.sum(axis=1) - phi.sum(axis=1)).max()
print(f"grouped vs ungrouped totals, max |diff|: {residual:.1e}")
assert residual <= 1e-10 * np.abs(prediction).max()

# %%
# The grouped value of the serum block generally differs from the sum of its
# members' values, because it also takes their interactions with the other
# features as a block. The brute-force check on the 5-player quotient game
# confirms it: a group is present in a coalition when all its members are.

columns = list(X.columns)
players = [[columns.index(name) for name in serum]] + [
    [j] for j, name in enumerate(columns) if name not in serum
]


def grouped_game(mask):
    members = np.zeros(len(columns), dtype=bool)
    for present, group in zip(mask, players, strict=True):
        members[group] = present
    return kernel_game(members)


brute_force = shapley_values(grouped_game, len(players))
difference = np.abs(brute_force - phi_grouped.iloc[0].to_numpy()).max()
serum_sum = phi.iloc[0][serum].sum()
print(f"row {first}: serum group {phi_grouped.iloc[0]['serum']:.3f}, "
      f"sum of s1..s6 {serum_sum:.3f}; vs enumeration {difference:.1e}")  # fmt: skip
assert difference <= 1e-10 * np.abs(prediction).max()
