"""
Many rows at once: a heatmap and a decision plot
================================================

A beeswarm shows every row's attributions feature by feature; two other
figures show them row by row. :class:`~skshapley.plotting.HeatmapDisplay`
draws one column per row and one line per feature, coloured by the Shapley
value, with the rows' outputs above; similar explanations are put side by
side, so that groups of rows explained alike show as blocks.
:class:`~skshapley.plotting.DecisionDisplay` draws one line per row, from
the base value at the bottom to the row's prediction at the top, adding
one feature's Shapley value at each step; for a classifier explained on its
log-odds it can show the path on the probability scale.
"""

# %%
# A gradient-boosted classifier, explained on its log-odds (the raw output
# its probabilities are computed from).
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import GradientBoostingClassifier
from sklearn.model_selection import train_test_split

from skshapley import TreeExplainer
from skshapley.plotting import DecisionDisplay, HeatmapDisplay

X, y = load_breast_cancer(return_X_y=True, as_frame=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
model = GradientBoostingClassifier(n_estimators=50, max_depth=3, random_state=0)
model.fit(X_train, y_train)
explainer = TreeExplainer(model).fit()
phi = explainer.explain(X_test)
print(f"explained {phi.shape[0]} rows; raw output: {explainer.raw_output_}")

# %%
# The heatmap
# -----------
# Rows ordered by similarity (a hierarchical clustering of their Shapley
# values): the blue block on the left are rows that every top feature
# pushes towards "malignant" (class 0); the line above is each row's
# log-odds, which the attributions add up to.
heatmap = HeatmapDisplay.from_explainer(explainer, X_test, max_display=8)
line = heatmap.f_ax_.get_lines()[-1].get_ydata()
margin = model.decision_function(X_test)
assert np.allclose(line, margin[heatmap.rows_])
print(f"top features: {heatmap.features_[:3]}")

# %%
# Ordered by prediction instead, the line above rises from left to right,
# and the heatmap shows which features carry the rows across the boundary.
by_prediction = HeatmapDisplay.from_explainer(
    explainer, X_test, max_display=8, row_order="prediction"
)
assert np.all(np.diff(margin[by_prediction.rows_]) >= -1e-9)

# %%
# The decision plot
# -----------------
# Forty rows, on the probability scale: each line starts at the probability
# of an average row (the sigmoid of the base value) and ends at the row's
# predicted probability of "benign". The most uncertain row is highlighted.
rows = X_test.iloc[:40]
probability = model.predict_proba(rows)[:, 1]
uncertain = int(np.argmin(np.abs(probability - 0.5)))
decision = DecisionDisplay.from_explainer(
    explainer, rows, link="logit", highlight=uncertain, max_display=12
)
ends = np.array([line.get_xdata()[-1] for line in decision.lines_])
assert np.allclose(ends, probability)
print(f"highlighted row {rows.index[uncertain]}: p = {probability[uncertain]:.3f}")

# %%
# One row alone is labelled with its feature values, as a waterfall is.
DecisionDisplay.from_explainer(
    explainer, rows.iloc[[uncertain]], link="logit", max_display=12
)
