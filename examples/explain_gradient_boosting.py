"""
Explaining a gradient-boosted classifier
========================================

Train scikit-learn's ``HistGradientBoostingClassifier`` on the breast cancer
dataset that ships with scikit-learn, explain its log-odds with
:class:`skshapley.TreeExplainer`, check that each row's attributions add up,
with the base value, to the model's raw output, and read them with
:func:`skshapley.importance` and the four figures of
:mod:`skshapley.plotting`: importance bars, a beeswarm, a waterfall of one
prediction and a dependence plot.
"""

# %%
# Fit the model. Boosted classifiers are explained on their raw output, the
# log-odds of the positive class: probabilities are not a sum of trees.
import numpy as np
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import train_test_split

from skshapley import TreeExplainer, importance
from skshapley.plotting import (
    BeeswarmDisplay,
    DependenceDisplay,
    ImportanceDisplay,
    WaterfallDisplay,
)

X, y = load_breast_cancer(return_X_y=True, as_frame=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
model = HistGradientBoostingClassifier(max_iter=100, random_state=0)
model.fit(X_train, y_train)
print(f"test accuracy: {model.score(X_test, y_test):.3f}")

# sphinx_gallery_thumbnail_number = 2

# %%
# Explain the test rows. The result is a DataFrame: one row per sample (the
# test set's index), one column per feature.
explainer = TreeExplainer(model).fit()
phi = explainer.explain(X_test)
print(f"explained {phi.shape[0]} rows x {phi.shape[1]} features")
print(f"raw output explained: {explainer.raw_output_}")
print(f"base value (log-odds of an average row): {explainer.expected_value_:.4f}")

# %%
# Efficiency: attributions plus the base value give the model's log-odds.
margin = model.decision_function(X_test)
residual = np.abs(phi.sum(axis=1) + explainer.expected_value_ - margin).max()
print(f"largest efficiency residual: {residual:.1e}")
assert residual < 1e-10 * np.abs(margin).max()

# %%
# Global importance
# -----------------
# :func:`~skshapley.importance` ranks the features by their mean absolute
# attribution, and gives the signed mean, which says in which direction a
# feature pushes on average.
table = importance(phi)
print(table.head(8).round(3))
assert (table["rank"].to_numpy() == np.arange(1, len(table) + 1)).all()

# %%
# The same table as bars: the long grey bar is the mean ``|phi|``, the thin
# coloured one inside it the signed mean.
ImportanceDisplay.from_values(phi, max_display=10, raw_output=explainer.raw_output_)

# %%
# The beeswarm shows every explained row: one point per row and feature, placed
# by its attribution and coloured by the feature's value. For the top
# features, large values (red) push the log-odds of a benign tumour down.
BeeswarmDisplay.from_values(
    phi, X_test, max_display=10, raw_output=explainer.raw_output_
)

# %%
# One prediction
# --------------
# A waterfall walks from the base value to this row's log-odds, one feature at
# a time, the largest contributions first; the smallest are summed in one bar.
row = phi.index[0]
print(f"row {row}: log-odds {margin[0]:+.3f} = base {explainer.expected_value_:+.3f}")
print(phi.loc[row].sort_values(key=np.abs, ascending=False).head(6).round(3))
WaterfallDisplay.from_values(
    phi.loc[row],
    explainer.expected_value_,
    x_row=X_test.loc[row],
    raw_output=explainer.raw_output_,
)

# %%
# One feature
# -----------
# A dependence plot draws a feature's attribution against its value, over all
# explained rows; the colour is the feature it seems to interact with most.
top_feature = table.index[0]
DependenceDisplay.from_values(
    phi, X_test, top_feature, raw_output=explainer.raw_output_
)
