"""ExactExplainer against brute force, closed forms and the tree explainer.

The oracle (``tests/naive.py``) builds every hybrid row (the explained row
on a coalition's features, a background row elsewhere) with plain NumPy or
pandas, predicts them with the model's own method, averages over the
background and applies each index's definition. It knows nothing of the
explainer's batching, ordering or solver: a hybrid row built wrongly, a
mean over the wrong rows or a wrong weight shows as a difference.
"""

import numpy as np
import pandas as pd
import pytest
from naive import interventional_index
from sklearn.compose import make_column_transformer
from sklearn.datasets import make_classification, make_regression
from sklearn.ensemble import (
    GradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestClassifier,
    RandomForestRegressor,
)
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.neighbors import KNeighborsClassifier, KNeighborsRegressor
from sklearn.neural_network import MLPRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skshapley import ExactExplainer, TreeExplainer

# Both sides average the same model outputs over the background and weigh
# 2**d table entries: a few hundred roundings of the output's scale.
RTOL = 1e-12
INDICES = ["shapley", "banzhaf", "loo"]


def regression(n=120, d=4, seed=0, n_targets=1):
    return make_regression(
        n, d, n_informative=d, n_targets=n_targets, noise=1.0, random_state=seed
    )


def classification(n=150, d=4, n_classes=2, seed=0):
    return make_classification(
        n,
        d,
        n_informative=3,
        n_redundant=0,
        n_classes=n_classes,
        n_clusters_per_class=1,
        random_state=seed,
    )


def row_of(rows, r):
    """Row ``r`` as the oracle takes it: a one-row frame, or a 1-D array."""
    return rows.iloc[[r]] if isinstance(rows, pd.DataFrame) else rows[r]


def assert_oracle(explainer, predict, rows, background, players=None):
    """explain(rows) equals the oracle's index, relative to the output scale."""
    phi = explainer.explain(rows).to_numpy()
    scale = np.abs(np.asarray(predict(background), dtype=float)).max()
    for r in range(len(rows)):
        expected = interventional_index(
            predict, row_of(rows, r), background, explainer.index, players
        )
        # Columns are (output, player); the oracle's rows are players.
        np.testing.assert_allclose(
            phi[r], expected.T.ravel(), rtol=0, atol=RTOL * scale
        )
    return phi


@pytest.mark.parametrize("index", INDICES)
def test_regressor_each_index_is_its_definition(index):
    X, y = regression(d=5)
    model = KNeighborsRegressor(n_neighbors=4).fit(X, y)
    background = X[:12]
    explainer = ExactExplainer(model, index=index).fit(background)
    assert explainer.output_names_ == ("target",)
    assert explainer.raw_output_ == "predict"
    assert_oracle(explainer, model.predict, X[60:63], background)


@pytest.mark.parametrize("index", INDICES)
def test_multi_target_regressor(index):
    X, y = regression(n_targets=2)
    model = MLPRegressor(hidden_layer_sizes=(6,), max_iter=300, random_state=0).fit(
        X / 100, y / 100
    )
    background = X[:10] / 100
    explainer = ExactExplainer(model, index=index).fit(background)
    assert explainer.output_names_ == ("target 0", "target 1")
    assert list(explainer.expected_value_.index) == ["target 0", "target 1"]
    assert_oracle(explainer, model.predict, X[70:72] / 100, background)


@pytest.mark.parametrize(
    ("n_classes", "response_method", "method", "n_outputs"),
    [
        # A binary classifier: the positive class only, whichever method (as
        # every explainer and scikit-learn's displays show it).
        (2, "auto", "predict_proba", 1),
        (2, "decision_function", "decision_function", 1),
        (3, "predict_proba", "predict_proba", 3),
        (3, "decision_function", "decision_function", 3),
        (3, ["decision_function", "predict_proba"], "decision_function", 3),
    ],
)
def test_logistic_regression(n_classes, response_method, method, n_outputs):
    X, y = classification(n_classes=n_classes)
    labels = np.array(["low", "mid", "high"])[y]
    model = LogisticRegression().fit(X, labels)
    background = X[:10]
    explainer = ExactExplainer(model, response_method=response_method).fit(background)
    assert explainer.raw_output_ == method
    classes = tuple(model.classes_)
    assert explainer.output_names_ == (classes[1:] if n_outputs == 1 else classes)
    assert all(type(name) is str for name in explainer.output_names_)
    response = getattr(model, method)

    def positive(X):  # a binary classifier's probability: its positive class's
        return response(X)[:, 1]

    binary_probability = method == "predict_proba" and n_classes == 2
    assert_oracle(
        explainer, positive if binary_probability else response, X[80:83], background
    )


def test_k_neighbors_classifier_banzhaf():
    X, y = classification(n_classes=3, d=5)
    model = KNeighborsClassifier(n_neighbors=5).fit(X, y)
    background = X[:8]
    explainer = ExactExplainer(model, index="banzhaf").fit(background)
    assert explainer.raw_output_ == "predict_proba"
    assert_oracle(explainer, model.predict_proba, X[90:93], background)


def interacting(X):
    """A callable with an AND-like interaction and a redundant pair."""
    X = np.asarray(X, dtype=float)
    return X[:, 0] * X[:, 1] + np.maximum(X[:, 2], X[:, 3]) + np.sin(X[:, 4])


@pytest.mark.parametrize("index", INDICES)
def test_callable_on_arrays(index):
    rng = np.random.default_rng(0)
    background, rows = rng.normal(size=(9, 5)), rng.normal(size=(3, 5))
    explainer = ExactExplainer(interacting, index=index).fit(background)
    assert explainer.raw_output_ == "the callable's output"
    assert list(explainer.feature_names_in_) == [f"x{j}" for j in range(5)]
    assert not explainer.columns_by_name_
    assert_oracle(explainer, interacting, rows, background)


def test_callable_with_two_outputs_on_frames():
    rng = np.random.default_rng(1)
    names = ["a", "b", "c"]
    background = pd.DataFrame(rng.normal(size=(7, 3)), columns=names)
    rows = pd.DataFrame(rng.normal(size=(3, 3)), columns=names, index=[5, 9, 2])

    def two_outputs(X):
        X = np.asarray(X, dtype=float)
        return np.column_stack([X[:, 0] * X[:, 2], np.exp(X[:, 1]) - X[:, 0]])

    explainer = ExactExplainer(two_outputs).fit(background)
    assert explainer.columns_by_name_
    assert list(explainer.player_names_) == names
    assert explainer.output_names_ == ("target 0", "target 1")
    phi = assert_oracle(explainer, two_outputs, rows, background)
    reordered = explainer.explain(rows[["c", "a", "b"]])
    np.testing.assert_array_equal(reordered.to_numpy(), phi)
    pd.testing.assert_index_equal(reordered.index, rows.index)


@pytest.mark.parametrize("index", INDICES)
def test_groups_are_players_of_the_quotient_game(index):
    X, y = regression(d=5, seed=2)
    X, y = X / X.std(), y / y.std()
    model = MLPRegressor(hidden_layer_sizes=(5,), max_iter=2000, random_state=0)
    model.fit(X, y)
    background, rows = X[:8], X[50:52]
    groups = {"first": [0, 3], "last": ["x4", "x1"]}
    explainer = ExactExplainer(model, groups=groups, index=index).fit(background)
    assert list(explainer.player_names_) == ["first", "last", "x2"]
    assert_oracle(explainer, model.predict, rows, background, [[0, 3], [4, 1], [2]])


def string_pipeline_data(n=90, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "dose": rng.normal(size=n),
            "color": rng.choice(["red", "green", "blue"], size=n),
            "age": rng.uniform(20, 80, size=n),
        },
        index=[f"r{i}" for i in range(n)],
    )
    y = (X["dose"] + (X["color"] == "red") * X["age"] / 40 > 1).astype(int)
    return X, y


def string_pipeline():
    X, y = string_pipeline_data()
    encode = make_column_transformer(
        (OneHotEncoder(), ["color"]), (StandardScaler(), ["dose", "age"])
    )
    return make_pipeline(encode, LogisticRegression()).fit(X, y), X


def test_pipeline_with_a_string_column_explains_its_input_columns():
    model, X = string_pipeline()
    background, rows = X.iloc[:10], X.iloc[40:43]
    explainer = ExactExplainer(model).fit(background)
    assert list(explainer.player_names_) == ["dose", "color", "age"]
    assert explainer.columns_by_name_

    def positive(X):  # a binary classifier: its positive class's probability
        return model.predict_proba(X)[:, 1]

    phi = assert_oracle(explainer, positive, rows, background)
    reordered = explainer.explain(rows[["age", "color", "dose"]])
    np.testing.assert_array_equal(reordered.to_numpy(), phi)
    pd.testing.assert_index_equal(reordered.index, rows.index)


def test_numpy_rows_for_a_model_fitted_without_names():
    X, y = regression(d=3, seed=3)
    model = KNeighborsRegressor(n_neighbors=3).fit(X, y)
    explainer = ExactExplainer(model).fit(X[:10])
    assert not explainer.columns_by_name_
    assert explainer.n_features_in_ == 3
    phi = assert_oracle(explainer, model.predict, X[30:33], X[:10])
    assert list(explainer.explain(X[30:33]).columns) == ["x0", "x1", "x2"]
    # A DataFrame's columns are taken by position for such a model.
    frame = pd.DataFrame(X[30:33], columns=["p", "q", "r"])
    np.testing.assert_array_equal(explainer.explain(frame).to_numpy(), phi)


# Linear models: Shapley values have the closed form w_j (x_j - mean_z z_j).


def test_linear_regression_closed_form():
    X, y = regression(d=6, seed=4)
    model = LinearRegression().fit(X, y)
    background, rows = X[:15], X[40:45]
    phi = ExactExplainer(model).fit(background).explain(rows).to_numpy()
    expected = model.coef_ * (rows - background.mean(axis=0))
    scale = np.abs(model.predict(background)).max()
    np.testing.assert_allclose(phi, expected, rtol=0, atol=RTOL * scale)


@pytest.mark.parametrize("n_classes", [2, 3])
def test_logistic_regression_decision_function_closed_form(n_classes):
    X, y = classification(n_classes=n_classes, d=5, seed=5)
    model = LogisticRegression().fit(X, y)
    background, rows = X[:12], X[60:64]
    explainer = ExactExplainer(model, response_method="decision_function")
    phi = explainer.fit(background).explain(rows).to_numpy()
    gaps = rows - background.mean(axis=0)  # (rows, features)
    # (rows, classes, features), flattened as the frame's (output, player).
    expected = (model.coef_[None] * gaps[:, None, :]).reshape(len(rows), -1)
    scale = np.abs(model.decision_function(background)).max()
    np.testing.assert_allclose(phi, expected, rtol=0, atol=RTOL * scale)


# Trees: the same interventional game as TreeExplainer's, computed by a
# different route (model calls on hybrid rows vs walks of the trees).


def tree_cases():
    """(fitted model, response_method, its training data), one per tree family."""
    values = regression(d=5, seed=6)
    classes = classification(n_classes=3, d=5, seed=6)
    labels = classification(n_classes=2, d=5, seed=7)
    cases = {
        "random_forest_regressor": (
            RandomForestRegressor(4, max_depth=5, random_state=0),
            "auto",
            values,
        ),
        "random_forest_classifier": (
            RandomForestClassifier(4, max_depth=4, random_state=0),
            "predict_proba",
            classes,
        ),
        # One output each: the positive class's probability.
        "random_forest_binary": (
            RandomForestClassifier(4, max_depth=4, random_state=0),
            "predict_proba",
            labels,
        ),
        "gradient_boosting_binary": (
            GradientBoostingClassifier(n_estimators=5, random_state=0),
            "decision_function",
            labels,
        ),
        "gradient_boosting_multiclass": (
            GradientBoostingClassifier(n_estimators=3, random_state=0),
            "decision_function",
            classes,
        ),
        "hist_gradient_boosting": (
            HistGradientBoostingRegressor(max_iter=5, random_state=0),
            "auto",
            values,
        ),
    }
    return [
        pytest.param(model.fit(*data), method, data[0], id=name)
        for name, (model, method, data) in cases.items()
    ]


@pytest.mark.parametrize("groups", [None, {"pair": [1, 3]}])
@pytest.mark.parametrize(("model", "response_method", "X"), tree_cases())
def test_trees_equal_the_interventional_tree_explainer(
    model, response_method, X, groups
):
    background, rows = X[:15], X[100:104]
    exact = ExactExplainer(model, response_method=response_method, groups=groups)
    exact.fit(background)
    tree = TreeExplainer(model, feature_perturbation="interventional", groups=groups)
    tree.fit(background)
    assert exact.output_names_ == tree.output_names_
    scale = np.abs(tree.raw_predict(background)).max()
    pd.testing.assert_frame_equal(
        exact.explain(rows), tree.explain(rows), rtol=0, atol=RTOL * scale
    )
    np.testing.assert_allclose(
        exact.expected_value_, tree.expected_value_, rtol=0, atol=RTOL * scale
    )


# Efficiency and what the base value and the raw output are.


@pytest.mark.parametrize(
    ("response_method", "method"),
    [("auto", "predict_proba"), ("decision_function", "decision_function")],
)
def test_efficiency_base_value_and_raw_output(response_method, method):
    X, y = classification(n_classes=3, d=5, seed=8)
    model = make_pipeline(StandardScaler(), LogisticRegression()).fit(X, y)
    background, rows = X[:11], X[70:76]
    explainer = ExactExplainer(model, response_method=response_method)
    explainer.fit(background)
    own = getattr(model, method)
    np.testing.assert_allclose(
        explainer.expected_value_.to_numpy(),
        own(background).mean(axis=0),
        rtol=1e-15,  # one mean of the same numbers, maybe summed in another order
        atol=0,
    )
    np.testing.assert_allclose(explainer.raw_predict(rows), own(rows), rtol=1e-15)
    phi = explainer.explain(rows)
    for k, output in enumerate(explainer.output_names_):
        gap = own(rows)[:, k] - explainer.expected_value_[output]
        np.testing.assert_allclose(
            phi[output].sum(axis=1), gap, rtol=RTOL, atol=RTOL * np.abs(gap).max()
        )


def test_efficiency_of_a_single_output_with_a_float_base_value():
    X, y = regression(d=6, seed=9)
    model = MLPRegressor(hidden_layer_sizes=(8,), max_iter=2000, random_state=0).fit(
        X / 100, y / 100
    )
    background, rows = X[:10] / 100, X[50:58] / 100
    explainer = ExactExplainer(model).fit(background)
    assert isinstance(explainer.expected_value_, float)
    total = explainer.explain(rows).sum(axis=1) + explainer.expected_value_
    np.testing.assert_allclose(total, model.predict(rows), rtol=RTOL, atol=0)


# Leave-one-out beside any index.


@pytest.mark.parametrize("index", INDICES)
def test_leave_one_out_is_the_loo_index(index):
    rng = np.random.default_rng(2)
    background = pd.DataFrame(rng.normal(size=(6, 5)), columns=list("abcde"))
    rows = pd.DataFrame(rng.normal(size=(4, 5)), columns=list("abcde"))
    explainer = ExactExplainer(interacting, index=index).fit(background)
    loo = explainer.leave_one_out(rows)
    expected = ExactExplainer(interacting, index="loo").fit(background).explain(rows)
    pd.testing.assert_frame_equal(loo, expected, rtol=0, atol=1e-12)
    for r in range(len(rows)):
        oracle = interventional_index(interacting, rows.iloc[[r]], background, "loo")
        np.testing.assert_allclose(loo.iloc[r], oracle[:, 0], rtol=0, atol=1e-12)


def test_leave_one_out_of_one_output():
    X, y = classification(n_classes=3, d=4, seed=10)
    model = LogisticRegression().fit(X, y)
    explainer = ExactExplainer(model).fit(X[:8])
    every = explainer.leave_one_out(X[30:33])
    one = explainer.leave_one_out(X[30:33], output=2)
    pd.testing.assert_frame_equal(one, every[2].rename_axis(columns=None))


def test_leave_one_out_has_no_player_limit():
    # LOO costs p * n_background + 1 rows: 22 players are fine, and on an
    # additive model LOO is the closed form w_j (x_j - mean_z z_j).
    rng = np.random.default_rng(3)
    weights = rng.normal(size=22)
    background, rows = rng.normal(size=(4, 22)), rng.normal(size=(2, 22))
    explainer = ExactExplainer(lambda X: X @ weights, index="loo").fit(background)
    expected = weights * (rows - background.mean(axis=0))
    np.testing.assert_allclose(
        explainer.explain(rows).to_numpy(), expected, rtol=0, atol=1e-12
    )
    with pytest.raises(ValueError, match="max_players"):
        ExactExplainer(lambda X: X @ weights).fit(background)
