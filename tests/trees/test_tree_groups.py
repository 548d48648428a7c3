"""TreeExplainer with feature groups: the exact Shapley values of the game of groups.

Oracle: shap's path-dependent value function by its recursive definition,
a coalition of groups holding all their features, and Shapley values by
enumerating the coalitions of groups (tests/naive.py).
"""

import numpy as np
import pandas as pd
import pytest
from naive import path_dependent_shapley
from sklearn.datasets import load_diabetes, load_iris
from sklearn.ensemble import (
    GradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestRegressor,
)

from skshapley import TreeExplainer

# The oracle sums 2**n_players differences of values of the model's scale.
RTOL = 1e-12


def diabetes():
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    return X.iloc[:150], y.iloc[:150]


def models():
    X, y = diabetes()
    with_nan = X.copy()
    with_nan.iloc[::7, 2] = np.nan
    iris = load_iris(as_frame=True)
    return {
        "forest": (
            RandomForestRegressor(n_estimators=4, max_depth=6, random_state=0).fit(
                X, y
            ),
            X,
        ),
        "hist_gbr_nan": (
            HistGradientBoostingRegressor(max_iter=5, random_state=0).fit(with_nan, y),
            with_nan,
        ),
        "gbc_multiclass": (
            GradientBoostingClassifier(n_estimators=3, random_state=0).fit(
                iris.data, iris.target
            ),
            iris.data,
        ),
    }


MODELS = models()
GROUPS = {
    "forest": {"blood": ["s1", "s2", "s3", "s4", "s5", "s6"], "body": ["bmi", "bp"]},
    "hist_gbr_nan": {"size": ["bmi", "bp", "s5"]},
    "gbc_multiclass": {"petal": ["petal length (cm)", "petal width (cm)"]},
}


@pytest.mark.parametrize("name", list(MODELS))
def test_groups_equal_enumeration_over_groups(name):
    model, X = MODELS[name]
    explainer = TreeExplainer(model, groups=GROUPS[name]).fit()
    rows = X.iloc[[0, 5, 7]]
    phi = explainer.explain(rows)
    names = list(explainer.feature_names_in_)
    players = [
        [names.index(column) for column in GROUPS[name][group]]
        if group in GROUPS[name]
        else [names.index(group)]
        for group in explainer.player_names_
    ]
    n_outputs = len(explainer.output_names_)
    for row, x in enumerate(rows.to_numpy()):
        expected = path_dependent_shapley(explainer.ensemble_, x, players)
        actual = phi.iloc[row].to_numpy().reshape(n_outputs, len(players)).T
        scale = np.abs(expected).max()
        np.testing.assert_allclose(actual, expected, rtol=0, atol=RTOL * scale)


def test_group_names_lead_and_efficiency_holds():
    model, X = MODELS["forest"]
    explainer = TreeExplainer(model, groups=GROUPS["forest"]).fit()
    phi = explainer.explain(X)
    assert list(phi.columns) == ["blood", "body", "age", "sex"]
    np.testing.assert_allclose(
        phi.sum(axis=1) + explainer.expected_value_, model.predict(X), rtol=1e-12
    )


def test_singleton_groups_change_nothing():
    model, X = MODELS["forest"]
    plain = TreeExplainer(model).fit().explain(X)
    singletons = {name: [name] for name in X.columns}
    grouped = TreeExplainer(model, groups=singletons).fit().explain(X)
    pd.testing.assert_frame_equal(grouped, plain, check_exact=True)


def test_xgboost_and_lightgbm_groups_sum_to_their_margins():
    xgboost = pytest.importorskip("xgboost")
    lightgbm = pytest.importorskip("lightgbm")
    X, y = diabetes()
    groups = {"blood": ["s1", "s2", "s3"], "body": ["bmi", "bp"]}
    for model, margin in [
        (xgboost.XGBRegressor(n_estimators=10, max_depth=4).fit(X, y),
         lambda m: m.predict(X, output_margin=True)),
        (lightgbm.LGBMRegressor(n_estimators=10, verbose=-1).fit(X, y),
         lambda m: m.predict(X, raw_score=True)),
    ]:  # fmt: skip
        explainer = TreeExplainer(model, groups=groups).fit()
        phi = explainer.explain(X)
        total = phi.sum(axis=1) + explainer.expected_value_
        np.testing.assert_allclose(total, explainer.raw_predict(X), rtol=1e-12)
        np.testing.assert_allclose(total, margin(model), rtol=1e-5)
        x = X.to_numpy()[3]
        names = list(explainer.feature_names_in_)
        players = [[names.index(c) for c in groups.get(p, [p])] for p in phi.columns]
        expected = path_dependent_shapley(explainer.ensemble_, x, players)[:, 0]
        np.testing.assert_allclose(
            phi.iloc[3], expected, rtol=0, atol=RTOL * np.abs(expected).max()
        )


def test_bad_groups():
    model, _ = MODELS["forest"]
    with pytest.raises(ValueError, match="two groups"):
        TreeExplainer(model, groups={"a": ["s1"], "b": ["s1"]}).fit()
    with pytest.raises(ValueError, match="'nothing'"):
        TreeExplainer(model, groups={"a": ["nothing"]}).fit()
    with pytest.raises(TypeError, match="mapping"):
        TreeExplainer(model, groups=[["s1", "s2"]]).fit()
