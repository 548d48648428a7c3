"""Fitted explainers shared by the plotting tests; matplotlib draws off screen."""

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_diabetes, load_iris
from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor
from sklearn.kernel_ridge import KernelRidge

from skshapley import ProductKernelExplainer, TreeExplainer

try:
    import matplotlib
except ImportError:  # the tests skip themselves (importorskip)
    matplotlib = None
else:
    matplotlib.use("Agg")


@pytest.fixture(autouse=True)
def _close_figures():
    """Close every figure a test opened."""
    yield
    if matplotlib is not None:
        import matplotlib.pyplot as plt

        plt.close("all")


@pytest.fixture(scope="session")
def diabetes():
    """A boosted regressor's explainer and 120 rows with a non-default index."""
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    model = GradientBoostingRegressor(n_estimators=25, max_depth=3, random_state=0)
    explainer = TreeExplainer(model.fit(X, y)).fit()
    rows = X.iloc[:120].set_axis(pd.Index(np.arange(120) + 1000, name="patient"))
    return explainer, rows


@pytest.fixture(scope="session")
def iris():
    """A three-class boosted classifier's explainer (outputs 0, 1, 2) and X."""
    X, y = load_iris(return_X_y=True, as_frame=True)
    model = GradientBoostingClassifier(n_estimators=10, max_depth=2, random_state=0)
    return TreeExplainer(model.fit(X, y)).fit(), X


@pytest.fixture(scope="session")
def kernel():
    """A kernel ridge regression's explainer and 40 rows."""
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    model = KernelRidge(kernel="rbf", gamma=1.0, alpha=0.1).fit(X.iloc[:150], y[:150])
    return ProductKernelExplainer(model).fit(), X.iloc[150:190]
