"""
Interactions of any order: the strongest triples of features
============================================================

Shapley values split a prediction among features; pairwise interaction
values say which two features act together. Interaction indices of higher
order go further: the k-SII values of order 3 split each prediction among
single features, pairs and triples, and add up to it exactly. Here a
gradient-boosted model of disease progression (scikit-learn's diabetes data)
is explained at order 3, and the triples that matter most across the rows are
drawn.
"""

# %%
# The model and its third-order k-SII values: one column per coalition of at
# most three features, the empty coalition holding the base value.
import matplotlib.pyplot as plt
import numpy as np
from sklearn.datasets import load_diabetes
from sklearn.ensemble import GradientBoostingRegressor

from skshapley import TreeExplainer

X, y = load_diabetes(return_X_y=True, as_frame=True)
model = GradientBoostingRegressor(n_estimators=200, max_depth=4, random_state=0).fit(
    X, y
)
explainer = TreeExplainer(model).fit()
k_sii = explainer.explain_interactions(X, index="k-SII", order=3)
print(f"{k_sii.shape[1]} coalitions per row")

# %%
# Efficiency: every row's values add up to the model's prediction.
residual = np.abs(k_sii.sum(axis=1) - model.predict(X)).max()
print(f"largest |sum - prediction|: {residual:.1e}")
assert residual < 1e-9

# %%
# The strongest triples
# ---------------------
# The mean absolute value of each triple over the rows, the ten largest:
# how much of the predictions three features make together beyond what
# they make alone and in pairs.
triples = k_sii.loc[:, [len(c) == 3 for c in k_sii.columns]]
strength = triples.abs().mean().sort_values()[-10:]
labels = [" × ".join(c) for c in strength.index]
fig, ax = plt.subplots(figsize=(7, 4.5), layout="constrained")
ax.barh(labels, strength.to_numpy(), color="#1f77b4")
ax.set_xlabel("mean |k-SII| over the rows (progression units)")
ax.set_title("The ten strongest triples, k-SII of order 3")
plt.show()

# %%
# How much each size carries: the mean, over the rows, of the total absolute
# value of the coalitions of one, two and three features. Trees of depth 4
# split on up to four features in a row, and a sizeable share of what they
# do comes from three features at once.
for size in (1, 2, 3):
    of_size = k_sii.loc[:, [len(c) == size for c in k_sii.columns]]
    total = of_size.abs().sum(axis=1).mean()
    print(f"coalitions of {size}: mean total |value| {total:7.2f}")
