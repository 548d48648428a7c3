"""The agnostic explainers' value function: what reaches the model, and bad input.

What the model receives (its columns, their dtypes, NaN), what it returns
(methods, output names and shapes, non-finite values), the background, the
number of model rows, the estimator contract, and every error the issue
lists, for ExactExplainer and PermutationExplainer alike.
"""

import pickle

import numpy as np
import pandas as pd
import pytest
from naive import interventional_index
from sklearn.base import BaseEstimator, RegressorMixin, clone
from sklearn.compose import make_column_transformer
from sklearn.datasets import make_classification
from sklearn.exceptions import NotFittedError
from sklearn.linear_model import LinearRegression, LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.svm import SVC

from skshapley import (
    ExactExplainer,
    PermutationExplainer,
    ProductKernelExplainer,
    TreeExplainer,
    UnsupportedModelError,
)
from skshapley.agnostic import _explainer

EXPLAINERS = [ExactExplainer, PermutationExplainer]


def numbers(n=6, d=3, seed=0, columns=None):
    """Normal rows, as a DataFrame when ``columns`` are given."""
    values = np.random.default_rng(seed).normal(size=(n, d))
    return values if columns is None else pd.DataFrame(values, columns=columns)


def linear(X):
    return np.asarray(X, dtype=float) @ np.array([1.0, -2.0, 0.5])


def mixed_frame(n=40, seed=0):
    """A numeric, a string and a categorical column, and a binary target."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "dose": rng.normal(size=n),
            "color": rng.choice(["red", "green", "blue"], size=n),
            "size": pd.Categorical(rng.choice(["S", "M", "L"], size=n)),
        },
        index=[f"r{i}" for i in range(n)],
    )
    y = ((X["color"] == "red") ^ (X["size"] == "L") ^ (X["dose"] > 0)).astype(int)
    return X, y


def mixed_pipeline():
    X, y = mixed_frame()
    encode = make_column_transformer(
        (OneHotEncoder(), ["color", "size"]), (StandardScaler(), ["dose"])
    )
    return make_pipeline(encode, LogisticRegression()).fit(X, y), X


# Which method is explained.


def test_auto_picks_predict_proba_then_decision_function_then_predict():
    X, y = make_classification(60, 3, n_informative=3, n_redundant=0, random_state=0)
    background = X[:5]
    for model, method in [
        (LogisticRegression().fit(X, y), "predict_proba"),
        (SVC().fit(X, y), "decision_function"),  # no predict_proba by default
        (LinearRegression().fit(X, y), "predict"),
    ]:
        explainer = ExactExplainer(model).fit(background)
        assert explainer.raw_output_ == method
        expected = getattr(model, method)(X[10:14])
        if method == "predict_proba":  # a binary classifier: its positive class
            expected = expected[:, 1]
        np.testing.assert_allclose(explainer.raw_predict(X[10:14]), expected)


def test_a_list_takes_the_first_method_the_model_has():
    X, y = numbers(30), numbers(30, d=1, seed=1)[:, 0]
    model = LinearRegression().fit(X, y)
    explainer = ExactExplainer(
        model, response_method=["predict_proba", "decision_function", "predict"]
    ).fit(X[:5])
    assert explainer.raw_output_ == "predict"
    assert explainer.output_names_ == ("target",)


@pytest.mark.parametrize("explainer_class", EXPLAINERS)
def test_a_model_without_the_method(explainer_class):
    X, y = numbers(30), numbers(30, d=1, seed=1)[:, 0]
    model = LinearRegression().fit(X, y)
    for response_method, named in [
        ("predict_proba", ["predict_proba"]),
        (
            ["predict_proba", "decision_function"],
            ["predict_proba", "decision_function"],
        ),
    ]:
        explainer = explainer_class(model, response_method=response_method)
        with pytest.raises(ValueError, match="response_method") as caught:
            explainer.fit(X[:5])
        message = str(caught.value)
        assert "LinearRegression" in message
        assert all(method in message for method in named)


class Methodless:
    """An object with no response method, and not callable."""


def test_an_object_with_no_method_is_no_model():
    # Not a model at all: the error every explainer raises for a model it
    # does not explain, naming what it explains.
    with pytest.raises(UnsupportedModelError, match="predict_proba"):
        ExactExplainer(Methodless()).fit(numbers())


@pytest.mark.parametrize("response_method", ["transform", "proba", ["transform"]])
def test_a_bad_response_method(response_method):
    X, y = numbers(30), numbers(30, d=1, seed=1)[:, 0]
    model = LinearRegression().fit(X, y)
    with pytest.raises(ValueError, match="response_method must be"):
        ExactExplainer(model, response_method=response_method).fit(X[:5])


def test_a_callable_takes_only_auto():
    with pytest.raises(ValueError, match="response_method"):
        ExactExplainer(linear, response_method="predict").fit(numbers())


# Output names and shapes.


@pytest.mark.parametrize(
    ("width", "names"),
    [
        (None, ("target",)),
        (1, ("target 0",)),
        (3, ("target 0", "target 1", "target 2")),
    ],
)
def test_a_callables_outputs_are_named_by_their_shape(width, names):
    def f(X):
        out = linear(X)
        return (
            out
            if width is None
            else np.column_stack([out * (k + 1) for k in range(width)])
        )

    explainer = ExactExplainer(f).fit(numbers())
    assert explainer.output_names_ == names
    expected = np.asarray(f(numbers())).mean(axis=0)
    np.testing.assert_allclose(
        np.ravel(explainer.expected_value_), np.ravel(expected), rtol=1e-15
    )


@pytest.mark.parametrize("explainer_class", EXPLAINERS)
def test_a_callable_returning_the_wrong_shape(explainer_class):
    def fixed(X):
        return np.zeros((3, 7))

    with pytest.raises(ValueError, match="callable") as caught:
        explainer_class(fixed).fit(numbers(n=5))
    assert "(3, 7)" in str(caught.value)


class Widening(RegressorMixin, BaseEstimator):
    """Predicts one value per row, or two once ``wide`` is set."""

    def fit(self, X, y):
        self.n_features_in_ = np.shape(X)[1]
        self.wide = False
        return self

    def predict(self, X):
        out = np.asarray(X, dtype=float).sum(axis=1)
        return np.column_stack([out, out]) if self.wide else out


@pytest.mark.parametrize("explainer_class", EXPLAINERS)
def test_a_model_whose_output_shape_changes(explainer_class):
    X = numbers(n=5)
    model = Widening().fit(X, None)
    explainer = explainer_class(model).fit(X)
    assert explainer.output_names_ == ("target",)
    model.wide = True
    with pytest.raises(ValueError, match="predict") as caught:
        explainer.explain(numbers(n=2, seed=1))
    assert ", 2)" in str(caught.value)  # the shape received: (n, 2)


# Non-finite outputs name the row.


@pytest.mark.parametrize("explainer_class", EXPLAINERS)
def test_non_finite_output_names_the_row_of_x(explainer_class):
    rows = pd.DataFrame(
        [[0.1, 0.2, 0.3], [9.0, 0.5, 0.6], [0.7, 0.8, 0.9]],
        columns=["a", "b", "c"],
        index=["first", "second", "third"],
    )

    def blows_up(X):
        X = np.asarray(X, dtype=float)
        return np.where(X[:, 0] == 9.0, np.nan, X.sum(axis=1))

    explainer = explainer_class(blows_up).fit(numbers(columns=["a", "b", "c"]))
    with pytest.raises(ValueError, match="second"):
        explainer.explain(rows)


@pytest.mark.parametrize("explainer_class", EXPLAINERS)
def test_non_finite_output_names_the_background_row(explainer_class):
    background = numbers(n=5, columns=["a", "b", "c"])
    background.index = [f"z{i}" for i in range(5)]
    background.loc["z3", "b"] = 50.0

    def blows_up(X):
        X = np.asarray(X, dtype=float)
        return np.where(X[:, 1] == 50.0, np.inf, X.sum(axis=1))

    with pytest.raises(ValueError, match="z3"):
        explainer_class(blows_up).fit(background)


# What the model receives.


def test_nan_reaches_the_model():
    # The callable reads NaN as 2: the closed form of a linear model holds
    # on those values, so the NaN went to the model unchanged.
    weights = np.array([1.0, -2.0, 0.5])

    def reads_nan(X):
        return np.nan_to_num(np.asarray(X, dtype=float), nan=2.0) @ weights

    background, rows = numbers(n=7), numbers(n=3, seed=1)
    background[2, 1], rows[0, 0], rows[1, 2] = np.nan, np.nan, np.nan
    phi = ExactExplainer(reads_nan).fit(background).explain(rows).to_numpy()
    filled = np.nan_to_num(rows, nan=2.0) - np.nan_to_num(background, nan=2.0).mean(0)
    np.testing.assert_allclose(phi, weights * filled, rtol=0, atol=1e-14)


def test_a_callable_receives_the_backgrounds_columns_and_dtypes():
    X, _ = mixed_frame()
    seen = []

    def score(frame):
        seen.append(frame)
        red = (frame["color"] == "red").to_numpy(dtype=float)
        large = (frame["size"] == "L").to_numpy(dtype=float)
        return red * frame["dose"].to_numpy() + large

    background, rows = X.iloc[:6], X.iloc[20:23]
    explainer = ExactExplainer(score).fit(background)
    phi = explainer.explain(rows[["size", "dose", "color"]])
    assert all(list(frame.columns) == ["dose", "color", "size"] for frame in seen)
    assert all(isinstance(frame["size"].dtype, pd.CategoricalDtype) for frame in seen)
    for r in range(len(rows)):
        expected = interventional_index(score, rows.iloc[[r]], background, "shapley")
        np.testing.assert_allclose(phi.iloc[r], expected[:, 0], rtol=0, atol=1e-14)


@pytest.mark.parametrize("explainer_class", EXPLAINERS)
def test_categorical_and_string_columns_through_a_pipeline(explainer_class):
    model, X = mixed_pipeline()
    background, rows = X.iloc[:8], X.iloc[25:28]
    explainer = explainer_class(model).fit(background)
    assert list(explainer.player_names_) == ["dose", "color", "size"]
    # A binary classifier: one output, the positive class's probability.
    assert explainer.output_names_ == (1,)
    phi = explainer.explain(rows)
    total = phi.sum(axis=1) + explainer.expected_value_
    np.testing.assert_allclose(total, model.predict_proba(rows)[:, 1], atol=1e-12)
    if explainer_class is ExactExplainer:
        for r in range(len(rows)):
            expected = interventional_index(
                lambda X: model.predict_proba(X)[:, 1],
                rows.iloc[[r]],
                background,
                "shapley",
            )
            np.testing.assert_allclose(
                phi.iloc[r], expected.T.ravel(), rtol=0, atol=1e-12
            )


@pytest.mark.parametrize("explainer_class", EXPLAINERS)
def test_the_callers_data_is_not_modified(explainer_class):
    model, X = mixed_pipeline()
    background, rows = X.iloc[:8].copy(), X.iloc[25:28].copy()
    background_before, rows_before = background.copy(), rows.copy()
    explainer = explainer_class(model).fit(background)
    explainer.explain(rows)
    explainer.leave_one_out(rows)
    explainer.raw_predict(rows)
    pd.testing.assert_frame_equal(background, background_before)
    pd.testing.assert_frame_equal(rows, rows_before)
    array, array_before = numbers(n=4), numbers(n=4)
    callable_explainer = explainer_class(linear).fit(array)
    callable_explainer.explain(array)
    np.testing.assert_array_equal(array, array_before)


# The background.


@pytest.mark.parametrize("explainer_class", EXPLAINERS)
def test_fit_needs_a_background(explainer_class):
    with pytest.raises(ValueError, match=r"fit\(X_background\)"):
        explainer_class(linear).fit(None)
    with pytest.raises(ValueError, match=r"fit\(X_background\)"):
        explainer_class(linear).fit()
    with pytest.raises(ValueError, match=r"(?i)empty|0 rows|0 sample|no rows"):
        explainer_class(linear).fit(np.empty((0, 3)))


@pytest.mark.parametrize("explainer_class", EXPLAINERS)
def test_columns_of_the_background_and_of_x_are_named(explainer_class):
    model, X = mixed_pipeline()
    with pytest.raises(ValueError, match="weight"):
        explainer_class(model).fit(X.assign(weight=1.0))
    with pytest.raises(ValueError, match="color"):
        explainer_class(model).fit(X.drop(columns="color"))
    explainer = explainer_class(model).fit(X.iloc[:5])
    with pytest.raises(ValueError, match="height"):
        explainer.explain(X.iloc[:2].assign(height=1.0))
    with pytest.raises(ValueError, match="dose"):
        explainer.explain(X.iloc[:2].drop(columns="dose"))


def test_background_size_and_base_value():
    background = numbers(n=9)
    explainer = ExactExplainer(linear).fit(background)
    assert explainer.n_background_ == 9
    assert explainer.expected_value_ == pytest.approx(
        linear(background).mean(), abs=1e-15
    )


# Players.


def test_too_many_players_points_to_the_alternatives():
    background = numbers(d=6)
    with pytest.raises(ValueError, match="PermutationExplainer") as caught:
        ExactExplainer(lambda X: X.sum(axis=1), max_players=5).fit(background)
    message = str(caught.value)
    for word in ("6", "5", "max_players", "PermutationExplainer", "groups"):
        assert word in message
    groups = {"ab": [0, 1], "cd": [2, 3]}
    grouped = ExactExplainer(lambda X: X.sum(axis=1), max_players=5, groups=groups)
    assert len(grouped.fit(background).player_names_) == 4


def test_max_players_is_at_most_20():
    with pytest.raises(ValueError, match="20"):
        ExactExplainer(linear, max_players=21).fit(numbers())


def test_groups_input_is_each_input_column():
    model, X = mixed_pipeline()
    background, rows = X.iloc[:6], X.iloc[30:32]
    by_default = ExactExplainer(model).fit(background).explain(rows)
    by_input = ExactExplainer(model, groups="input").fit(background).explain(rows)
    pd.testing.assert_frame_equal(by_input, by_default, check_exact=True)


def test_an_unknown_index():
    with pytest.raises(ValueError, match="index"):
        ExactExplainer(linear, index="owen").fit(numbers())


# Model rows per explained row.


@pytest.mark.parametrize(
    ("index", "per_row"),
    [
        ("shapley", (2**4 - 2) * 5 + 1),
        ("banzhaf", (2**4 - 2) * 5 + 1),
        ("loo", 4 * 5 + 1),
    ],
)
def test_model_rows_per_explained_row(index, per_row):
    calls = []

    def counted(X):
        calls.append(len(X))
        return np.asarray(X, dtype=float).prod(axis=1)

    explainer = ExactExplainer(counted, index=index).fit(numbers(n=5, d=4))
    assert sum(calls) <= 5 + 1  # the background (once), and a probe row
    calls.clear()
    explainer.explain(numbers(n=3, d=4, seed=1))
    assert sum(calls) == 3 * per_row
    assert explainer.describe()["model evaluations per row"].replace(",", "") == str(
        per_row
    )
    assert explainer.n_evaluations_per_row_ == per_row  # counted calls: a bound


@pytest.mark.parametrize("explainer_class", EXPLAINERS)
@pytest.mark.parametrize("blocks", [0, 1, 3])
def test_model_calls_stay_within_the_memory_budget(
    monkeypatch, explainer_class, blocks
):
    # The budget in hybrid blocks (n_background rows of d float64 each); 0
    # still sends one block at a time. The explained row itself may ride
    # along with the first call. The values do not depend on the budget.
    d, n_background = 4, 5
    background, rows = numbers(n=n_background, d=d), numbers(n=3, d=d, seed=1)
    calls = []

    def counted(X):
        calls.append(len(X))
        return np.asarray(X, dtype=float).prod(axis=1)

    params = {"random_state": 0} if explainer_class is PermutationExplainer else {}

    def explained():
        explainer = explainer_class(counted, **params).fit(background)
        calls.clear()
        return explainer.explain(rows)

    unlimited = explained()
    monkeypatch.setattr(_explainer, "_CALL_BYTES", blocks * n_background * 8 * d)
    limited = explained()
    assert max(calls) <= max(blocks, 1) * n_background + 1
    pd.testing.assert_frame_equal(limited, unlimited, check_exact=True)


# The estimator contract.


@pytest.mark.parametrize("explainer_class", EXPLAINERS)
def test_not_fitted(explainer_class):
    explainer = explainer_class(linear)
    for method in (explainer.explain, explainer.raw_predict, explainer.leave_one_out):
        with pytest.raises(NotFittedError):
            method(numbers())
    with pytest.raises(NotFittedError):
        explainer.describe()


@pytest.mark.parametrize(
    ("explainer_class", "params"),
    [
        (ExactExplainer, {"index": "banzhaf", "max_players": 8}),
        (PermutationExplainer, {"n_permutations": 3, "random_state": 4}),
    ],
)
def test_clone_params_and_pickle_give_the_same_values(explainer_class, params):
    model, X = mixed_pipeline()
    background, rows = X.iloc[:6], X.iloc[10:13]
    explainer = explainer_class(model, **params).fit(background)
    phi = explainer.explain(rows)
    assert explainer.get_params()["model"] is model
    assert {k: explainer.get_params()[k] for k in params} == params
    cloned = clone(explainer)
    assert not hasattr(cloned, "expected_value_")
    pd.testing.assert_frame_equal(cloned.fit(background).explain(rows), phi)
    restored = pickle.loads(pickle.dumps(explainer))
    pd.testing.assert_frame_equal(restored.explain(rows), phi, check_exact=True)
    assert restored.expected_value_ == explainer.expected_value_  # one output


def test_describe_says_what_is_explained():
    model, X = mixed_pipeline()
    facts = ExactExplainer(model, index="loo").fit(X.iloc[:7]).describe()
    assert facts["explainer"] == "ExactExplainer"
    assert facts["value function"] == (
        "interventional: predict_proba averaged over 7 background rows"
    )
    assert facts["background data"] == "7 rows"
    assert facts["index"] == "leave-one-out"
    for index, words in [("shapley", "Shapley"), ("banzhaf", "Banzhaf")]:
        explainer = ExactExplainer(model, index=index).fit(X.iloc[:7])
        assert explainer.describe()["index"] == words


def test_method_names_the_family():
    assert ExactExplainer.method_ == "exact"
    assert PermutationExplainer.method_ == "permutation"
    assert TreeExplainer.method_ == "tree"
    assert ProductKernelExplainer.method_ == "kernel"


@pytest.mark.parametrize("explainer_class", EXPLAINERS)
def test_no_interaction_values(explainer_class):
    explainer = explainer_class(linear).fit(numbers())
    assert not explainer.supports_interactions
    with pytest.raises(NotImplementedError):
        explainer.explain_interactions(numbers())
