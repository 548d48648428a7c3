"""
Explaining a gradient-boosted classifier
========================================

Train scikit-learn's ``HistGradientBoostingClassifier`` on the breast cancer
dataset that ships with scikit-learn, explain its log-odds with
:class:`skshapley.TreeExplainer`, and check what the explanation promises:
each row's attributions add up, with the base value, to the model's raw
output.
"""

# %%
# Fit the model. Boosted classifiers are explained on their raw output, the
# log-odds of the positive class: probabilities are not a sum of trees.
import numpy as np
import pandas as pd
from sklearn.datasets import load_breast_cancer
from sklearn.ensemble import HistGradientBoostingClassifier
from sklearn.model_selection import train_test_split

from skshapley import TreeExplainer

X, y = load_breast_cancer(return_X_y=True, as_frame=True)
X_train, X_test, y_train, y_test = train_test_split(X, y, random_state=0)
model = HistGradientBoostingClassifier(max_iter=100, random_state=0)
model.fit(X_train, y_train)
print(f"test accuracy: {model.score(X_test, y_test):.3f}")

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
# Global importance (mean absolute attribution) with the signed mean, which
# says in which direction a feature pushes on average.
importance = pd.DataFrame(
    {"mean |phi|": phi.abs().mean(), "mean phi": phi.mean()}
).sort_values("mean |phi|", ascending=False)
print(importance.head(8).round(3))

# %%
# One prediction, feature by feature: signed contributions to the log-odds.
row = phi.index[0]
print(f"\nrow {row}: log-odds {margin[0]:+.3f} = base {explainer.expected_value_:+.3f}")
print(phi.loc[row].sort_values(key=np.abs, ascending=False).head(6).round(3))
