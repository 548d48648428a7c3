"""Interventional TreeExplainer against brute force from the model's own output.

The oracle (``tests/naive.py``) predicts, with the model's own ``predict``,
``decision_function`` or ``predict_proba``, all 2**d hybrid rows (the
explained row on a coalition's features, a background row elsewhere), averages
them over the whole background and applies the factorial formula. It knows
nothing of trees: a leaf reached by a wrong route, a missing value sent the
wrong way or a wrong Beta weight shows as a difference.
"""

import numpy as np
import pandas as pd
import pytest
from naive import interventional_shapley
from sklearn.compose import ColumnTransformer
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import (
    GradientBoostingClassifier,
    HistGradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skshapley import TreeExplainer

# The oracle averages 2**d predictions over the background and weighs them by
# factorials: a few hundred roundings of the output's scale.
RTOL = 1e-12


def regression_data(n=200, d=6, seed=0):
    X, y = make_regression(n, d, n_informative=d, noise=1.0, random_state=seed)
    return X.astype(np.float32).astype(float), y


def classification_data(n=300, d=6, n_classes=2, seed=0):
    X, y = make_classification(
        n, d, n_informative=4, n_classes=n_classes, random_state=seed
    )
    return X.astype(np.float32).astype(float), y


def check_against_brute_force(explainer, predict, rows, background, players=None):
    """explain(rows) equals the oracle on every row, relative to the output scale."""
    phi = explainer.explain(rows).to_numpy()
    n_rows = len(rows)
    scale = np.abs(np.asarray(predict(background), dtype=float)).max()
    for r in range(n_rows):
        row = rows.iloc[[r]] if isinstance(rows, pd.DataFrame) else rows[r]
        expected = interventional_shapley(predict, row, background, players)
        # explain's columns are (output, player): the oracle's is (player, output).
        np.testing.assert_allclose(
            phi[r], expected.T.ravel(), rtol=0, atol=RTOL * scale
        )
    return phi


def test_random_forest_regressor():
    X, y = regression_data()
    model = RandomForestRegressor(n_estimators=5, max_depth=6, random_state=0)
    model.fit(X, y)
    background = X[:30]
    explainer = TreeExplainer(model, feature_perturbation="interventional")
    check_against_brute_force(
        explainer.fit(background), model.predict, X[100:104], background
    )


def test_random_forest_probabilities():
    X, y = classification_data(n_classes=3)
    model = RandomForestClassifier(n_estimators=4, max_depth=5, random_state=0)
    model.fit(X, y)
    background = X[:25]
    explainer = TreeExplainer(model, feature_perturbation="interventional")
    check_against_brute_force(
        explainer.fit(background), model.predict_proba, X[100:103], background
    )


@pytest.mark.parametrize("n_classes", [2, 3])
def test_gradient_boosting_margins(n_classes):
    X, y = classification_data(n_classes=n_classes)
    model = GradientBoostingClassifier(n_estimators=8, max_depth=3, random_state=0)
    model.fit(X, y)
    background = X[:25]
    explainer = TreeExplainer(model, feature_perturbation="interventional")
    check_against_brute_force(
        explainer.fit(background), model.decision_function, X[100:103], background
    )


def test_hist_gradient_boosting_missing_values():
    # NaN in the explained rows and in the background, in features that had
    # NaN in training (learned direction) and one that had none (right).
    X, y = regression_data(n=400, d=5)
    X[::7, 0] = np.nan
    model = HistGradientBoostingRegressor(max_iter=10, max_depth=4, random_state=0)
    model.fit(X, y)
    background = X[:30].copy()
    background[::3, 4] = np.nan
    rows = X[200:204].copy()
    rows[0, 0] = np.nan
    rows[1, 4] = np.nan
    explainer = TreeExplainer(model, feature_perturbation="interventional")
    check_against_brute_force(
        explainer.fit(background), model.predict, rows, background
    )


def test_hist_gradient_boosting_categories():
    # String categories, missing ones in the rows and in the background:
    # routed through the model's own encoding.
    rng = np.random.default_rng(0)
    n = 400
    X = pd.DataFrame(
        {
            "a": rng.normal(size=n),
            "colour": pd.Categorical(rng.choice(["red", "green", "blue", "grey"], n)),
            "b": rng.normal(size=n),
            "c": rng.normal(size=n),
        }
    )
    effect = X["colour"].map({"red": 2.0, "green": -1.0, "blue": 0.5, "grey": 0.0})
    y = X["a"] * effect.astype(float) + X["b"]
    model = HistGradientBoostingRegressor(
        max_iter=10, max_depth=4, categorical_features="from_dtype", random_state=0
    ).fit(X, y)
    background = X.iloc[:20].copy()
    background.loc[3, "colour"] = np.nan
    rows = X.iloc[200:203].copy()
    rows.loc[201, "colour"] = np.nan
    explainer = TreeExplainer(model, feature_perturbation="interventional")
    check_against_brute_force(
        explainer.fit(background), model.predict, rows, background
    )


def test_hist_gradient_boosting_classifier():
    X, y = classification_data(n_classes=3)
    model = HistGradientBoostingClassifier(max_iter=5, max_depth=3, random_state=0)
    model.fit(X, y)
    background = X[:20]
    explainer = TreeExplainer(model, feature_perturbation="interventional")
    check_against_brute_force(
        explainer.fit(background), model.decision_function, X[100:102], background
    )


def test_xgboost():
    xgb = pytest.importorskip("xgboost")
    X, y = regression_data(d=6)
    X[::9, 2] = np.nan
    model = xgb.XGBRegressor(n_estimators=10, max_depth=4, tree_method="hist")
    model.fit(X, y)
    background, rows = X[:25], X[100:103]
    explainer = TreeExplainer(model, feature_perturbation="interventional")
    phi = explainer.fit(background).explain(rows).to_numpy()
    scale = np.abs(explainer.raw_predict(background)).max()
    for r in range(len(rows)):
        # XGBoost sums its margins in float32: its own predict is the oracle
        # to float32's precision (a few units in 1e-7 of the scale) ...
        own = interventional_shapley(
            lambda hybrid: model.predict(hybrid, output_margin=True),
            rows[r],
            background,
        )
        np.testing.assert_allclose(phi[r], own[:, 0], rtol=0, atol=1e-5 * scale)
        # ... and the parsed trees' float64 sums, with the same routing,
        # to rounding (a cross-check of the arithmetic, not of the routing).
        parsed = interventional_shapley(explainer.raw_predict, rows[r], background)
        np.testing.assert_allclose(phi[r], parsed[:, 0], rtol=0, atol=RTOL * scale)


def test_lightgbm():
    lgb = pytest.importorskip("lightgbm")
    X, y = classification_data(n_classes=3)
    X[::9, 1] = np.nan
    model = lgb.LGBMClassifier(n_estimators=5, num_leaves=8, verbose=-1)
    model.fit(X, y)
    background = X[:20]

    def raw_score(rows):
        return model.predict(rows, raw_score=True)

    explainer = TreeExplainer(model, feature_perturbation="interventional")
    check_against_brute_force(
        explainer.fit(background), raw_score, X[100:102], background
    )


def pipeline_and_data():
    rng = np.random.default_rng(1)
    n = 300
    X = pd.DataFrame(
        {
            "size": rng.normal(size=n),
            "kind": rng.choice(["a", "b", "c"], n),
            "age": rng.normal(size=n),
        }
    )
    y = X["size"] * (X["kind"] == "b") + X["age"]
    preprocess = ColumnTransformer(
        [
            ("kind", OneHotEncoder(), ["kind"]),
            ("num", StandardScaler(), ["size", "age"]),
        ]
    )
    model = make_pipeline(
        preprocess, RandomForestRegressor(n_estimators=4, max_depth=5, random_state=0)
    ).fit(X, y)
    return model, X


def test_pipeline_with_input_groups():
    # Players are the raw input columns: the one-hot columns of "kind" act
    # together, and the oracle replaces whole raw columns.
    model, X = pipeline_and_data()
    background = X.iloc[:25]
    explainer = TreeExplainer(
        model, feature_perturbation="interventional", groups="input"
    )
    phi = check_against_brute_force(
        explainer.fit(background), model.predict, X.iloc[100:103], background
    )
    assert phi.shape == (3, 3)


def test_pipeline_preprocessed_features():
    # Players are the preprocessed features: the oracle replaces them in the
    # transformed rows and predicts with the final model.
    model, X = pipeline_and_data()
    background = X.iloc[:25]
    transformed = model[:-1].transform(background)
    rows = model[:-1].transform(X.iloc[100:102])
    explainer = TreeExplainer(model, feature_perturbation="interventional")
    phi = explainer.fit(background).explain(X.iloc[100:102]).to_numpy()
    scale = np.abs(model.predict(background)).max()
    for r in range(2):
        expected = interventional_shapley(model[-1].predict, rows[r], transformed)
        np.testing.assert_allclose(phi[r], expected[:, 0], rtol=0, atol=RTOL * scale)


def test_groups():
    X, y = regression_data(d=7)
    model = RandomForestRegressor(n_estimators=4, max_depth=6, random_state=0)
    model.fit(X, y)
    background = X[:20]
    groups = {"first": [0, 3], "second": [1, 5, 6]}
    explainer = TreeExplainer(
        model, feature_perturbation="interventional", groups=groups
    ).fit(background)
    # The players: the groups, then the features in no group.
    players = [[0, 3], [1, 5, 6], [2], [4]]
    assert list(explainer.player_names_) == ["first", "second", "x2", "x4"]
    check_against_brute_force(explainer, model.predict, X[100:103], background, players)


def test_expected_value_is_the_mean_raw_prediction():
    X, y = classification_data(n_classes=3)
    model = GradientBoostingClassifier(n_estimators=5, max_depth=3, random_state=0)
    model.fit(X, y)
    background = X[:40]
    explainer = TreeExplainer(model, feature_perturbation="interventional")
    explainer.fit(background)
    expected = model.decision_function(background).mean(axis=0)
    np.testing.assert_allclose(
        explainer.expected_value_.to_numpy(), expected, rtol=1e-13
    )
    assert explainer.n_background_ == 40
    # Efficiency: each row sums, with the base value, to the raw output.
    phi = explainer.explain(X[100:110])
    total = phi.T.groupby(level="output").sum().T + explainer.expected_value_
    np.testing.assert_allclose(total, model.decision_function(X[100:110]), rtol=1e-12)


def test_describe_names_the_background():
    X, y = regression_data()
    model = RandomForestRegressor(n_estimators=2, max_depth=3, random_state=0)
    explainer = TreeExplainer(model.fit(X, y), feature_perturbation="interventional")
    facts = explainer.fit(X[:17]).describe()
    assert facts["value function"].startswith("interventional")
    assert facts["background data"] == "17 rows"


def test_without_background():
    X, y = regression_data()
    model = RandomForestRegressor(n_estimators=2, max_depth=3).fit(X, y)
    explainer = TreeExplainer(model, feature_perturbation="interventional")
    with pytest.raises(ValueError, match=r"fit\(X_background\)"):
        explainer.fit()


def test_empty_background():
    X, y = regression_data()
    model = RandomForestRegressor(n_estimators=2, max_depth=3).fit(X, y)
    explainer = TreeExplainer(model, feature_perturbation="interventional")
    with pytest.raises(ValueError, match="no rows"):
        explainer.fit(X[:0])


def test_background_with_other_columns():
    X, y = regression_data(d=3)
    frame = pd.DataFrame(X, columns=["a", "b", "c"])
    model = RandomForestRegressor(n_estimators=2, max_depth=3).fit(frame, y)
    explainer = TreeExplainer(model, feature_perturbation="interventional")
    other = frame.rename(columns={"c": "z"})
    with pytest.raises(
        ValueError, match=r"background.*missing: \['c'\].*unknown: \['z'\]"
    ):
        explainer.fit(other)


def test_unknown_value_function():
    X, y = regression_data()
    model = RandomForestRegressor(n_estimators=2, max_depth=3).fit(X, y)
    with pytest.raises(ValueError, match=r"interventional.*got 'observational'"):
        TreeExplainer(model, feature_perturbation="observational").fit(X)


def test_background_by_name_and_reordered():
    # DataFrame columns are matched by name, as in explain.
    X, y = regression_data(d=4)
    frame = pd.DataFrame(X, columns=["a", "b", "c", "d"])
    model = RandomForestRegressor(n_estimators=3, max_depth=4, random_state=0)
    model.fit(frame, y)
    explainer = TreeExplainer(model, feature_perturbation="interventional")
    reordered = explainer.fit(frame.iloc[:20, ::-1]).explain(frame.iloc[50:53])
    same = TreeExplainer(model, feature_perturbation="interventional")
    expected = same.fit(frame.iloc[:20]).explain(frame.iloc[50:53])
    pd.testing.assert_frame_equal(reordered, expected)


def test_pickle_clone_and_no_rows():
    import pickle

    from sklearn.base import clone

    X, y = regression_data()
    model = RandomForestRegressor(n_estimators=3, max_depth=4, random_state=0)
    explainer = TreeExplainer(model.fit(X, y), feature_perturbation="interventional")
    explainer.fit(X[:30])
    expected = explainer.explain(X[50:55])
    again = pickle.loads(pickle.dumps(explainer))
    pd.testing.assert_frame_equal(again.explain(X[50:55]), expected)
    refitted = clone(explainer).fit(X[:30])
    pd.testing.assert_frame_equal(refitted.explain(X[50:55]), expected)
    assert explainer.explain(X[:0]).shape == (0, X.shape[1])
