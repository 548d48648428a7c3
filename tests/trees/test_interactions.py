"""TreeExplainer.explain_interactions, path-dependent: the exact interaction index.

Oracles: shap's path-dependent value function by its recursive definition
(tests/naive.py), its Shapley interaction index by enumerating every
coalition; shap's ``shap_interaction_values`` and XGBoost's
``pred_interactions`` where they are exact; and, on trees 100 levels deep,
efficiency against the model's own output and the Shapley values of
``explain`` (another kernel).
"""

import numpy as np
import pandas as pd
import pytest
from crafted_trees import chain
from naive import (
    cast_inputs,
    coalition_of_players,
    interactions_by_enumeration,
    path_dependent_value,
    table_of,
)
from sklearn.datasets import load_diabetes, load_iris
from sklearn.ensemble import (
    GradientBoostingClassifier,
    GradientBoostingRegressor,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skshapley import TreeExplainer

# The oracle sums 2**d second differences of values of the model's scale
# (targets ~1e2 for diabetes): a few hundred roundings.
RTOL = 1e-12


def brute_force(explainer, x, players):
    """shap's interaction matrices of one row, (n_outputs, n_players, n_players).

    ``players`` lists each player's features (positions in the model's input).
    """
    table = explainer.ensemble_
    x = cast_inputs(table, x[None])[0]
    d = len(players)
    return np.stack(
        [
            interactions_by_enumeration(
                table_of(
                    lambda S, k=k: path_dependent_value(
                        table, x, coalition_of_players(players, sum(1 << p for p in S))
                    )[k],
                    d,
                ),
                d,
            )
            for k in range(table.n_outputs)
        ]
    )


def matrices(frame, n_outputs):
    """A result frame as an array (n_samples, n_outputs, n_players, n_players)."""
    n_players = frame.shape[1] // n_outputs
    values = frame.to_numpy().reshape(-1, n_players, n_outputs, n_players)
    return values.transpose(0, 2, 1, 3)


def diabetes(n_features=6, n=200):
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    return X.iloc[:n, :n_features], y.iloc[:n]


def sklearn_models():
    X, y = diabetes()
    with_nan = X.copy()
    with_nan.iloc[::5, 1] = np.nan
    with_nan.iloc[::7, 3] = np.nan
    categorical = X.copy()
    categorical["sex"] = (categorical["sex"] > 0).astype(int) + 2 * (
        categorical["bmi"] > 0
    ).astype(int)
    iris = load_iris(as_frame=True)
    return {
        "forest": (
            RandomForestRegressor(n_estimators=4, max_depth=6, random_state=0),
            X,
            y,
        ),
        # A leaf of three values: the walk's sums per output.
        "forest_multiclass": (
            RandomForestClassifier(n_estimators=3, max_depth=5, random_state=0),
            iris.data,
            iris.target,
        ),
        "gbc_multiclass": (
            GradientBoostingClassifier(n_estimators=3, max_depth=3, random_state=0),
            iris.data,
            iris.target,
        ),
        "hist_nan": (HistGradientBoostingRegressor(max_iter=5), with_nan, y),
        "hist_categorical": (
            HistGradientBoostingRegressor(max_iter=5, categorical_features=["sex"]),
            categorical,
            y,
        ),
    }


def booster_models():
    xgboost = pytest.importorskip("xgboost")
    lightgbm = pytest.importorskip("lightgbm")
    X, y = diabetes()
    binary = (y > y.median()).astype(int)
    return {
        "xgboost": (
            xgboost.XGBRegressor(n_estimators=5, max_depth=4, random_state=0),
            X,
            y,
        ),
        "xgboost_binary": (
            xgboost.XGBClassifier(n_estimators=5, max_depth=3, random_state=0),
            X,
            binary,
        ),
        "lightgbm": (
            lightgbm.LGBMRegressor(n_estimators=5, num_leaves=8, verbose=-1),
            X,
            y,
        ),
    }


@pytest.mark.parametrize(
    "name",
    [
        "forest",
        "forest_multiclass",
        "gbc_multiclass",
        "hist_nan",
        "hist_categorical",
        "boosters",
    ],
)
def test_equal_the_brute_force_interaction_index(name):
    cases = booster_models() if name == "boosters" else {name: sklearn_models()[name]}
    for model, X, y in cases.values():
        model.fit(X, y)
        explainer = TreeExplainer(model).fit()
        rows = X.iloc[:4]
        got = matrices(
            explainer.explain_interactions(rows), len(explainer.output_names_)
        )
        players = [[j] for j in range(X.shape[1])]
        for r in range(len(rows)):
            expected = brute_force(explainer, rows.to_numpy()[r], players)
            scale = np.abs(expected).max()
            np.testing.assert_allclose(got[r], expected, rtol=0, atol=RTOL * scale)


def test_rows_sum_to_explain_and_matrices_are_symmetric():
    model, X, y = sklearn_models()["gbc_multiclass"]
    model.fit(X, y)
    explainer = TreeExplainer(model).fit()
    frame = explainer.explain_interactions(X.iloc[::10])
    phi = explainer.explain(X.iloc[::10])
    # Two kernels (the interaction walk and explain's) agree to rounding.
    for output in explainer.output_names_:
        block = frame[output]
        by_row = block.sum(axis=1).unstack("feature")[block.columns]
        np.testing.assert_allclose(by_row, phi[output], rtol=0, atol=1e-13)
    values = matrices(frame, 3)
    np.testing.assert_array_equal(values, values.transpose(0, 1, 3, 2))


def test_layout_output_and_groups():
    model, X, y = sklearn_models()["gbc_multiclass"]
    model.fit(X, y)
    groups = {"petal": ["petal length (cm)", "petal width (cm)"]}
    explainer = TreeExplainer(model, groups=groups).fit()
    rows = X.iloc[[3, 70, 140]]
    frame = explainer.explain_interactions(rows)
    players = list(explainer.player_names_)
    assert players == ["petal", "sepal length (cm)", "sepal width (cm)"]
    assert frame.index.names == ["row", "feature"]
    assert frame.index.tolist() == [(r, p) for r in rows.index for p in players]
    pd.testing.assert_index_equal(frame.columns, explainer.explain(rows).columns)
    one = explainer.explain_interactions(rows, output=2)
    pd.testing.assert_frame_equal(one, frame[2].rename_axis(columns=None))
    # The game of groups, not sums of the members' values.
    position = {name: j for j, name in enumerate(X.columns)}
    members = [[position[c] for c in groups["petal"]], [0], [1]]
    got = matrices(frame, 3)
    for r in range(len(rows)):
        expected = brute_force(explainer, rows.to_numpy()[r], members)
        np.testing.assert_allclose(got[r], expected, rtol=0, atol=1e-13)


def test_pipeline_and_input_groups():
    X, y = diabetes()
    model = make_pipeline(
        StandardScaler(), GradientBoostingRegressor(n_estimators=5, random_state=0)
    ).fit(X, y)
    explainer = TreeExplainer(model, groups="input").fit()
    frame = explainer.explain_interactions(X.iloc[:5])
    phi = explainer.explain(X.iloc[:5])
    pd.testing.assert_index_equal(frame.columns, phi.columns)
    by_row = frame.sum(axis=1).unstack("feature")[phi.columns]
    np.testing.assert_allclose(by_row, phi, rtol=0, atol=1e-12 * np.abs(y).max())
    inner = TreeExplainer(model[-1]).fit()
    np.testing.assert_allclose(
        frame, inner.explain_interactions(model[0].transform(X.iloc[:5])), atol=1e-12
    )


def test_efficiency_and_symmetry_on_deep_paths():
    # 150 splits in a row over 100 features: paths of 100 distinct players.
    model = chain(150, n_features=100)
    rows = np.full((5, 100), 2.0)  # to the bottom
    rows[1] = 1.0  # leaves at depth 100
    rows[2, 40] = rows[3, 99] = rows[4, 0] = 0.0  # at depths 40, 99, 0
    explainer = TreeExplainer(model).fit()
    values = matrices(explainer.explain_interactions(rows), 1)[:, 0]
    raw = model.predict(rows)
    scale = np.abs(raw).max()
    total = values.sum(axis=(1, 2)) + explainer.expected_value_
    # 10**4 entries, each a sum of products of ~100 factors: rounding only
    # (measured ~1e-16 relative).
    np.testing.assert_allclose(total, raw, rtol=0, atol=1e-12 * scale)
    np.testing.assert_allclose(
        values.sum(axis=2), explainer.explain(rows), rtol=0, atol=1e-12 * scale
    )
    np.testing.assert_array_equal(values, values.transpose(0, 2, 1))


def test_equal_shaps_interaction_values():
    shap = pytest.importorskip("shap")
    X, y = diabetes(n_features=10)
    for model in (
        RandomForestRegressor(n_estimators=5, max_depth=5, random_state=0),
        GradientBoostingRegressor(n_estimators=10, max_depth=3, random_state=0),
    ):
        model.fit(X, y)
        rows = X.iloc[:20]
        expected = shap.TreeExplainer(model).shap_interaction_values(rows)
        got = matrices(TreeExplainer(model).fit().explain_interactions(rows), 1)[:, 0]
        # shap's recursion divides by cover ratios: exact on shallow trees
        # to ~1e-12 relative; 1e-6 of the target's scale is the bar.
        np.testing.assert_allclose(got, expected, rtol=0, atol=1e-6 * np.abs(y).max())


def test_equal_xgboosts_pred_interactions():
    xgboost = pytest.importorskip("xgboost")
    X, y = diabetes(n_features=8)
    X = X.astype(np.float32)
    model = xgboost.XGBRegressor(n_estimators=20, max_depth=4, random_state=0)
    model.fit(X, y)
    rows = X.iloc[:30]
    native = model.get_booster().predict(xgboost.DMatrix(rows), pred_interactions=True)
    got = matrices(TreeExplainer(model).fit().explain_interactions(rows), 1)[:, 0]
    # XGBoost computes in float32: agreement to float32 rounding of the
    # output's scale.
    np.testing.assert_allclose(
        got, native[:, :-1, :-1], rtol=0, atol=1e-5 * np.abs(y).max()
    )
