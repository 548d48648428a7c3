"""
Interventional values and interactions of one model
===================================================

Fit a gradient-boosted model to simulated bicycle rentals, explain it
against a background population with
``feature_perturbation="interventional"``, compare with the path-dependent
values, and find what the model combines with
:meth:`~skshapley.TreeExplainer.explain_interactions`: the rush hours
matter on working days only, and the interaction values find that pair and
show its shape.
"""

# %%
# Simulated rentals: two rush-hour peaks on working days, one broad midday
# peak on other days, more rentals when it feels warm and fewer when it is
# humid. ``temperature`` and ``feels_like`` are almost the same measurement
# (correlation 0.98); the rentals follow ``feels_like``.
import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.model_selection import train_test_split

from skshapley import TreeExplainer
from skshapley.plotting import InteractionDisplay

rng = np.random.default_rng(0)
n_rows = 5000
hour = rng.integers(0, 24, n_rows)
workday = (rng.random(n_rows) < 5 / 7).astype(int)
temperature = rng.normal(15, 8, n_rows)
feels_like = temperature + rng.normal(0, 1.5, n_rows)
humidity = rng.uniform(20, 100, n_rows)
rush = np.exp(-((hour - 8) ** 2) / 2) + np.exp(-((hour - 17.5) ** 2) / 2)
midday = np.exp(-((hour - 14) ** 2) / 18)
rentals = (
    50
    + 150 * workday * rush
    + 80 * (1 - workday) * midday
    + 4 * np.clip(feels_like, 0, 30)
    - 0.5 * humidity
    + rng.normal(0, 10, n_rows)
)
X = pd.DataFrame(
    {
        "hour": hour,
        "workday": workday,
        "temperature": temperature,
        "feels_like": feels_like,
        "humidity": humidity,
    }
)
X_train, X_test, y_train, y_test = train_test_split(X, rentals, random_state=0)
model = GradientBoostingRegressor(n_estimators=150, max_depth=4, random_state=0)
model.fit(X_train, y_train)
print(f"test R^2: {model.score(X_test, y_test):.3f}")

# %%
# Explain against a background
# ----------------------------
# The interventional value function compares each row with a background
# population: here every training row, not a sample of them (the cost grows
# with rows plus background rows, not their product). The base value is the
# mean prediction over the background, and each row's values add up to its
# prediction minus that mean.
interventional = TreeExplainer(model, feature_perturbation="interventional")
interventional.fit(X_train)
rows = X_test.iloc[:200]
phi = interventional.explain(rows)
print(f"background rows: {interventional.n_background_}")
print(f"base value: {interventional.expected_value_:.2f}")
mean_prediction = model.predict(X_train).mean()
assert abs(interventional.expected_value_ - mean_prediction) < 1e-9
residual = np.abs(
    phi.sum(axis=1) + interventional.expected_value_ - model.predict(rows)
).max()
print(f"largest efficiency residual: {residual:.1e}")
assert residual < 1e-9

# %%
# The path-dependent values of the same model, for comparison: mean
# absolute value per feature. Here the two agree closely, because the trees
# hardly use ``temperature`` (the rentals follow ``feels_like``): both value
# functions give it little. Where the model splits on both of two
# correlated features, they can disagree; the user guide's page "Choosing a
# value function" shows such a case and explains it.
path_dependent = TreeExplainer(model).fit()
comparison = pd.DataFrame(
    {
        "path-dependent": path_dependent.explain(rows).abs().mean(),
        "interventional": phi.abs().mean(),
    }
)
print(comparison.round(2))
assert comparison["interventional"].idxmax() == "hour"
assert (
    comparison["interventional"]["temperature"]
    < 0.1 * comparison["interventional"]["feels_like"]
)

# %%
# Interactions
# ------------
# ``explain_interactions`` gives each row's features x features matrix, in
# shap's convention: half of each pair's Shapley interaction index off the
# diagonal, each feature's main effect on it, and every row of a matrix adds
# up to that feature's Shapley value.
interactions = interventional.explain_interactions(rows)
print(
    f"interaction table: {interactions.shape[0]} rows (row, feature) x "
    f"{interactions.shape[1]} features"
)
sums = interactions.sum(axis=1).to_numpy().reshape(phi.shape)
assert np.abs(sums - phi.to_numpy()).max() < 1e-9

# %%
# The mean absolute matrix over the rows, as a heatmap: the diagonal holds
# the main effects, and the strongest pair by far is ``hour`` with
# ``workday``, the pair that the simulation multiplies.
n_features = phi.shape[1]
stack = interactions.to_numpy().reshape(len(rows), n_features, n_features)
InteractionDisplay.from_values(stack, feature_names=list(phi.columns))
mean_abs = pd.DataFrame(
    np.abs(stack).mean(axis=0), index=phi.columns, columns=phi.columns
)
upper = np.triu(np.ones(mean_abs.shape, dtype=bool), k=1)
pairs = 2 * mean_abs.where(upper).stack().sort_values(ascending=False)
print("strongest pairs (mean |interaction index|):")
print(pairs.head(3).round(2))
assert pairs.index[0] == ("hour", "workday")

# %%
# The shape of the interaction: ``hour``'s main effect is its value shared
# by every day, and the ``hour`` x ``workday`` index moves the rush hours up
# on working days and down on other days (and the midday the other way).
main_effect = pd.Series(np.diagonal(stack, axis1=1, axis2=2)[:, 0], index=rows.index)
pair_index = 2 * pd.Series(stack[:, 0, 1], index=rows.index)
figure, (left, right) = plt.subplots(1, 2, figsize=(10, 4), sharey=True)
left.scatter(rows["hour"], main_effect, s=12, color="#555555")
left.set(xlabel="hour", ylabel="rentals", title="main effect of hour")
for day, colour, label in ((1, "#d62728", "working day"), (0, "#1f77b4", "other day")):
    chosen = rows["workday"] == day
    right.scatter(
        rows["hour"][chosen], pair_index[chosen], s=12, color=colour, label=label
    )
right.set(xlabel="hour", title="interaction index of hour and workday")
right.legend(frameon=False)
figure.tight_layout()
rush_hours = rows["hour"].isin([8, 17, 18])
on_workdays = pair_index[rush_hours & (rows["workday"] == 1)].mean()
on_other_days = pair_index[rush_hours & (rows["workday"] == 0)].mean()
print(
    "rush hours, mean interaction index: "
    f"{on_workdays:+.1f} on working days, {on_other_days:+.1f} on other days"
)
assert on_workdays > 0 > on_other_days
