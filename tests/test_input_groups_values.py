"""Per-input values through a ColumnTransformer equal the game of input columns.

The issue's pipeline, ``ColumnTransformer(OneHotEncoder + StandardScaler +
SimpleImputer(add_indicator=True))`` with a dropped column, in front of each
tree family and of kernel models, explained from a raw DataFrame with a
string column and NaNs. The groups come from ``input_groups``; the oracle is
built independently from the transformed model (tests/naive.py): the game
whose players are the raw input columns, a coalition of inputs holding all
their transformed columns, valued by the path-dependent recursive definition
(trees) or by scikit-learn's own kernel functions (kernels), with Shapley
values by enumerating the coalitions of inputs.
"""

import numpy as np
import pandas as pd
import pytest
from naive import kernel_shapley_of_players, path_dependent_shapley
from sklearn.compose import make_column_transformer
from sklearn.datasets import load_diabetes
from sklearn.ensemble import (
    GradientBoostingRegressor,
    HistGradientBoostingRegressor,
    RandomForestRegressor,
)
from sklearn.impute import SimpleImputer
from sklearn.kernel_ridge import KernelRidge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.svm import SVR

from skshapley import ProductKernelExplainer, TreeExplainer
from skshapley._contract.input_groups import input_groups

# The oracle sums 2**n_inputs differences of values of the model's scale.
RTOL = 1e-12
# Efficiency: the engine's values summed against the model's own prediction.
EFFICIENCY_RTOL = 1e-10
ROWS = [0, 3, 7, 11]


def raw_data():
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    X, y = X.iloc[:160].copy(), y.iloc[:160]
    X["sex"] = np.select([X["s6"] < -0.02, X["s6"] > 0.02], ["f", "m"], "x")
    X.loc[X.index[::6], "bmi"] = np.nan
    X["id"] = np.arange(len(X), dtype=float)  # dropped by the preprocessing
    return X[["age", "sex", "bmi", "bp", "s5", "id"]], y


def preprocessing():
    return make_column_transformer(
        (OneHotEncoder(handle_unknown="ignore"), ["sex"]),
        (StandardScaler(), ["age", "bp", "s5"]),
        (SimpleImputer(add_indicator=True), ["bmi"]),
        remainder="drop",
    )


def final_models():
    models = {
        "forest": RandomForestRegressor(n_estimators=4, max_depth=6, random_state=0),
        "gradient_boosting": GradientBoostingRegressor(n_estimators=6, random_state=0),
        "hist_gradient_boosting": HistGradientBoostingRegressor(
            max_iter=6, random_state=0
        ),
    }
    try:
        import xgboost
    except ImportError:
        pass
    else:
        models["xgboost"] = xgboost.XGBRegressor(n_estimators=6, max_depth=4)
    try:
        import lightgbm
    except ImportError:
        pass
    else:
        models["lightgbm"] = lightgbm.LGBMRegressor(
            n_estimators=6, min_child_samples=5, verbose=-1
        )
    return models


def positions_of_inputs(pipeline, X):
    """Each raw input's transformed-column positions, in X's column order."""
    groups = input_groups(pipeline[:-1], list(X.columns))
    names = list(pipeline[:-1].get_feature_names_out())
    return {name: [names.index(c) for c in groups[name]] for name in X.columns}


def per_input_values(explainer_class, pipeline, X):
    """Values of the game of input columns, through explicit ``groups=``.

    Dropped inputs hold no transformed column: they are dummies, so their
    column is zeros.
    """
    positions = positions_of_inputs(pipeline, X)
    groups = {name: members for name, members in positions.items() if members}
    explainer = explainer_class(pipeline[-1], groups=groups).fit()
    phi = explainer.explain(pipeline[:-1].transform(X)).set_axis(X.index)
    return phi.reindex(columns=X.columns, fill_value=0.0), explainer


@pytest.mark.parametrize("name", list(final_models()))
def test_tree_values_per_input_equal_the_game_of_inputs(name):
    X, y = raw_data()
    pipeline = make_pipeline(preprocessing(), final_models()[name]).fit(X, y)
    phi, explainer = per_input_values(TreeExplainer, pipeline, X)
    transformed = pipeline[:-1].transform(X.iloc[ROWS])
    players = list(positions_of_inputs(pipeline, X).values())
    for row, x in zip(ROWS, transformed, strict=True):
        expected = path_dependent_shapley(explainer.ensemble_, x, players)[:, 0]
        scale = np.abs(expected).max()
        np.testing.assert_allclose(
            phi.loc[row].to_numpy(), expected, rtol=0, atol=RTOL * scale
        )
    assert (phi["id"] == 0).all()
    total = phi.sum(axis=1) + explainer.expected_value_
    raw = explainer.raw_predict(pipeline[:-1].transform(X))
    np.testing.assert_allclose(total, raw, rtol=EFFICIENCY_RTOL)
    predicted = pipeline.predict(X)
    # XGBoost predicts in float32: its own output agrees to float32's precision.
    rtol = 1e-6 if predicted.dtype == np.float32 else EFFICIENCY_RTOL
    np.testing.assert_allclose(total, predicted, rtol=rtol)


@pytest.mark.parametrize(
    "model",
    [KernelRidge(kernel="rbf", gamma=0.1, alpha=0.1), SVR(C=50.0, gamma=0.2)],
    ids=["kernel_ridge", "svr"],
)
def test_kernel_values_per_input_equal_the_game_of_inputs(model):
    X, y = raw_data()
    pipeline = make_pipeline(preprocessing(), model).fit(X, y)
    transformed = pipeline[:-1].transform(X.iloc[ROWS])
    players = list(positions_of_inputs(pipeline, X).values())
    phi, explainer = per_input_values(ProductKernelExplainer, pipeline, X.iloc[ROWS])
    for row, x in zip(ROWS, transformed, strict=True):
        expected = kernel_shapley_of_players(pipeline[-1], x, players)[:, 0]
        scale = np.abs(expected).max()
        np.testing.assert_allclose(
            phi.loc[row].to_numpy(), expected, rtol=0, atol=RTOL * scale
        )
    total = phi.sum(axis=1) + explainer.expected_value_
    np.testing.assert_allclose(
        total, pipeline.predict(X.iloc[ROWS]), rtol=EFFICIENCY_RTOL
    )


def test_scaled_kernel_ridge_per_input_is_per_column():
    X, y = raw_data()
    X = X.drop(columns=["sex"])
    pipeline = make_pipeline(StandardScaler(), KernelRidge(kernel="rbf", gamma=0.1))
    pipeline.fit(X.fillna(0.0), y)
    assert input_groups(pipeline[:-1], list(X.columns)) == {
        name: [name] for name in X.columns
    }
    x = pipeline[:-1].transform(X.fillna(0.0).iloc[:1])[0]
    players = [[j] for j in range(X.shape[1])]
    phi = ProductKernelExplainer(pipeline).fit().explain(X.fillna(0.0).iloc[:1])
    expected = kernel_shapley_of_players(pipeline[-1], x, players)[:, 0]
    np.testing.assert_allclose(
        phi.iloc[0].to_numpy(), expected, rtol=0, atol=RTOL * np.abs(expected).max()
    )


def test_per_input_values_are_not_sums_of_the_dummies_values():
    """The game of inputs differs from summing the one-hot columns' values."""
    X, y = raw_data()
    pipeline = make_pipeline(preprocessing(), SVR(C=50.0, gamma=0.2)).fit(X, y)
    phi, _ = per_input_values(ProductKernelExplainer, pipeline, X.iloc[ROWS])
    dummies = ProductKernelExplainer(pipeline).fit().explain(X.iloc[ROWS])
    summed = dummies.filter(like="onehotencoder__sex").sum(axis=1)
    assert not np.allclose(phi["sex"], summed, rtol=1e-6, atol=0)
    pd.testing.assert_series_equal(
        phi.sum(axis=1), dummies.sum(axis=1), check_exact=False, rtol=1e-12
    )
