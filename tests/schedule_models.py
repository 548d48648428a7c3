"""Models whose trees the kernels walk in several chunks, and their rows.

Shared by the tests of the tree kernels' schedules (path-dependent and
interventional): each model has enough trees and nodes for several chunks.
"""

import numpy as np
from sklearn.ensemble import (
    ExtraTreesClassifier,
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    RandomForestRegressor,
)

ROW_COUNTS = (1, 2, 31, 33, 100)


def data(n, seed, missing=False, categories=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 6))
    if categories:
        X[:, 0] = rng.integers(0, categories, size=n)
    if missing:
        X[rng.random(X.shape) < 0.1] = np.nan
    return X


def forest():
    X = data(300, 0)
    y = X[:, 0] + X[:, 1] * X[:, 2]
    return RandomForestRegressor(30, max_depth=8, random_state=0).fit(X, y), X


def boosting():
    X = data(300, 1)
    y = np.digitize(X[:, 0] + X[:, 3], [-0.5, 0.5])  # three classes
    return GradientBoostingClassifier(n_estimators=15, max_depth=3).fit(X, y), X


def multiclass_forest():
    # A leaf holds one value per class: trees of several outputs.
    X = data(300, 3)
    y = np.digitize(X[:, 1] - X[:, 4], [-0.5, 0.5])
    return ExtraTreesClassifier(20, max_depth=6, random_state=0).fit(X, y), X


def hist_gradient_boosting():
    # Categories 0..4 seen in training; rows below add an unknown one (7).
    X = data(400, 2, missing=True, categories=5)
    y = (np.nan_to_num(X[:, 1]) + (X[:, 0] == 2) > 0).astype(int)
    model = HistGradientBoostingClassifier(
        max_iter=30, categorical_features=[0], random_state=0
    ).fit(X, y)
    return model, X


# Each builder, and whether its model has a rule for missing values.
MODELS = {
    "forest": (forest, True),
    "multiclass boosting": (boosting, False),
    "multiclass forest": (multiclass_forest, True),
    "categories and missing values": (hist_gradient_boosting, True),
}
