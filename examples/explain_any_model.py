"""
Any model: leave-one-out beside Shapley on a fitted classifier
==============================================================

Explain a logistic regression's probabilities on the breast cancer data with
:class:`~skshapley.ExactExplainer`, which only calls the model, and set the
leave-one-out attributions of the same value function beside the Shapley
values: where the model's evidence is redundant leave-one-out gives each
feature almost nothing, where the features act together it credits each
with the joint effect, and its values do not add up to the prediction. Then
estimate the values of all 30 features with
:class:`~skshapley.PermutationExplainer`, with standard errors.
"""

# %%
# The model and its background
# ----------------------------
# The ten "mean" measurements of the cell nuclei; radius, perimeter and area
# measure the same thing (correlations of 0.99 and more). What is explained
# is ``predict_proba``'s probability of class 1, benign, against 100
# training rows.
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skshapley import ExactExplainer, PermutationExplainer

X_all, y = load_breast_cancer(return_X_y=True, as_frame=True)
X = X_all.iloc[:, :10].copy()
X.columns = X.columns.str.removeprefix("mean ")
print(X[["radius", "perimeter", "area"]].corr().round(3).to_string())

model = make_pipeline(StandardScaler(), LogisticRegression()).fit(X, y)
background = X.sample(100, random_state=0)
explainer = ExactExplainer(model).fit(background)
base = explainer.expected_value_
print(explainer.describe())

# %%
# Two tumours, two attributions
# -----------------------------
# Row 0 is malignant beyond doubt for the model; row 3 is a closer call.
# ``leave_one_out`` uses the same value function and background as
# ``explain``.

rows = X.iloc[[0, 3]]
prediction = model.predict_proba(rows)[:, 1]
phi = explainer.explain(rows, output=1)
loo = explainer.leave_one_out(rows, output=1)
side_by_side = pd.concat({"Shapley": phi.T, "leave-one-out": loo.T}, axis=1)
print(side_by_side.round(3).to_string())
sums = pd.DataFrame(
    {
        "Shapley": phi.sum(axis=1),
        "leave-one-out": loo.sum(axis=1),
        "f(x) - base": prediction - base,
    }
)
print(sums.round(3).to_string())

# Shapley values add up to the prediction minus the base value, to rounding.
np.testing.assert_allclose(sums["Shapley"], sums["f(x) - base"], atol=1e-12)

# %%
# Row 0 sits in the flat tail of the logistic curve (probability 0.001): any
# nine measurements say "malignant" without the tenth, so removing one
# changes almost nothing. Leave-one-out gives every feature almost nothing,
# the three size measurements included, and its values cover less than a
# fifth of the drop; Shapley shares the drop among them.
assert prediction[0] < 0.01
assert abs(sums["leave-one-out"].iloc[0]) < abs(sums["f(x) - base"].iloc[0]) / 5
for size in ("radius", "perimeter", "area"):
    assert abs(loo[size].iloc[0]) < abs(phi[size].iloc[0]) / 10

# %%
# Row 3 sits where the curve is steep: several measurements are needed
# together to bring the probability that low, and removing any one of them
# loses most of the effect. Leave-one-out credits each with it, and its
# values add up to more than the whole drop.
assert abs(sums["leave-one-out"].iloc[1]) > 1.5 * abs(sums["f(x) - base"].iloc[1])
assert abs(loo["smoothness"].iloc[1]) > abs(phi["smoothness"].iloc[1])

# %%
# The figure sets the two attributions of each row side by side, with their
# sums against the drop they should add up to (black line).

figure, axes = plt.subplots(1, 2, figsize=(10, 4.2), sharey=True, layout="constrained")
labels = [*X.columns, "sum"]
position = np.arange(len(labels))
for ax, row, p in zip(axes, range(len(rows)), prediction, strict=True):
    for offset, (name, values, color) in zip(
        (-0.2, 0.2),
        (("Shapley", phi, "tab:blue"), ("leave-one-out", loo, "tab:orange")),
        strict=True,
    ):
        heights = [*values.iloc[row], values.iloc[row].sum()]
        ax.barh(position + offset, heights, height=0.4, label=name, color=color)
    ax.vlines(prediction[row] - base, position[-1] - 0.4, position[-1] + 0.4, "black")
    ax.axvline(0.0, color="grey", linewidth=0.8)
    ax.set_title(f"row {rows.index[row]}: P(benign) = {p:.3f}")
    ax.set_xlabel("attribution to P(benign)")
axes[0].set_yticks(position, labels)
axes[0].invert_yaxis()
axes[0].legend(frameon=False)

# %%
# Over many rows
# --------------
# Both rows are typical. On 200 rows, the leave-one-out values (computed
# alone with ``index="loo"``: 10 coalitions per row instead of 1024) add up
# to a small part of ``f(x) - base`` where the probability is saturated near
# 0 or 1, and to about twice it where the curve is steep. The Shapley values
# always add up to all of it.

loo_only = ExactExplainer(model, index="loo").fit(background)
many = X.iloc[:200]
change = model.predict_proba(many)[:, 1] - base
share = loo_only.explain(many, output=1).sum(axis=1) / change
probability = pd.cut(base + change, [0, 0.01, 0.1, 0.9, 0.99, 1], include_lowest=True)
by_probability = share.groupby(probability, observed=True).agg(["median", "size"])
by_probability.columns = ["median sum(LOO) / (f(x) - base)", "rows"]
print(by_probability.round(2).to_string())
saturated = by_probability.iloc[[0, -1], 0]
steep = by_probability.iloc[[1, 2, 3], 0]
assert (saturated < 0.5).all()
assert (steep > 1).all()

# %%
# An additive model proves nothing
# --------------------------------
# On the log-odds (``decision_function``) the logistic regression is
# additive: every feature adds the same to every coalition, and
# leave-one-out equals Shapley. A check run only there could not tell them
# apart.

log_odds = ExactExplainer(model, response_method="decision_function").fit(background)
difference = (log_odds.explain(rows) - log_odds.leave_one_out(rows)).abs()
print(f"log-odds: largest |Shapley - leave-one-out| = {difference.max().max():.1e}")
assert difference.max().max() < 1e-12

# %%
# All 30 features: sampled orderings
# ----------------------------------
# With 30 features, ``2**30`` coalitions per row are too many for
# ``ExactExplainer``; :class:`~skshapley.PermutationExplainer` samples
# orderings (each walked forwards and backwards) and returns standard errors.
# Its values add up exactly to the prediction whatever the sample.

model_30 = make_pipeline(StandardScaler(), LogisticRegression()).fit(X_all, y)
sampler = PermutationExplainer(model_30, n_permutations=20, random_state=0)
sampler.fit(X_all.sample(100, random_state=0))
phi_30, std_30 = sampler.explain(X_all.iloc[[0, 3]], output=1, return_std=True)
estimates = pd.DataFrame({"value": phi_30.iloc[1], "standard error": std_30.iloc[1]})
print(estimates.reindex(phi_30.iloc[1].abs().nlargest(8).index).round(4).to_string())
total = phi_30.sum(axis=1) + sampler.expected_value_
residual = (total - model_30.predict_proba(X_all.iloc[[0, 3]])[:, 1]).abs().max()
print(f"efficiency residual: {residual:.1e}")
assert residual < 1e-12

# %%
# On the ten features, where the exact values are known, the sampling error
# falls like one over the square root of the orderings: the error times
# ``sqrt(n_permutations)`` stays about the same.

first = X.iloc[:10]
exact = explainer.explain(first, output=1)
errors = {}
for n_permutations in (2, 8, 32, 128):
    estimate = PermutationExplainer(
        model, n_permutations=n_permutations, random_state=0
    )
    estimate = estimate.fit(background).explain(first, output=1)
    errors[n_permutations] = float(np.sqrt(((estimate - exact) ** 2).mean().mean()))
convergence = pd.DataFrame({"RMS error": errors}).rename_axis("n_permutations")
convergence["RMS error x sqrt(n)"] = convergence["RMS error"] * np.sqrt(list(errors))
print(convergence.round(4).to_string())
assert errors[128] < errors[2] / 4
