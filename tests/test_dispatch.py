"""Which explainer ``skshapley.Explainer`` and ``skshapley.explain`` choose.

Tree ensembles go to TreeExplainer and product-kernel models to
ProductKernelExplainer; any other model with a response method, or a
callable, to ExactExplainer for at most ``max_players`` players, else to
PermutationExplainer. ``explain(..., background=)`` fits each as its value
function allows; the values are checked against the explainer built by hand
and, for linear models, against the closed form ``w_j (x_j - mean z_j)``.
"""

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import make_column_transformer
from sklearn.ensemble import (
    GradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestRegressor,
    VotingRegressor,
)
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import LinearRegression, LogisticRegression, Ridge
from sklearn.neighbors import KNeighborsClassifier
from sklearn.neural_network import MLPRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.svm import SVR
from sklearn.tree import DecisionTreeClassifier

import skshapley
from skshapley import (
    ExactExplainer,
    PermutationExplainer,
    ProductKernelExplainer,
    TreeExplainer,
)

METHODS = {
    TreeExplainer: "tree",
    ProductKernelExplainer: "kernel",
    ExactExplainer: "exact",
    PermutationExplainer: "permutation",
}


def numbers(n=60, d=3, seed=0):
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(rng.normal(size=(n, d)), columns=[f"f{j}" for j in range(d)])
    return X, X["f0"] - X["f1"] * X["f2"] + 0.1 * rng.normal(size=n)


def mixed(n=60, seed=0):
    """Two numeric columns and a string one, with a label that uses all three."""
    rng = np.random.default_rng(seed)
    X = pd.DataFrame(
        {
            "size": rng.normal(size=n),
            "age": rng.normal(size=n),
            "colour": rng.choice(["red", "green", "blue"], size=n),
        }
    )
    return X, (X["size"] + (X["colour"] == "red") > 0.5).to_numpy()


def one_hot_logistic():
    X, y = mixed()
    encode = make_column_transformer(
        (OneHotEncoder(), ["colour"]), remainder="passthrough"
    )
    return make_pipeline(encode, LogisticRegression()).fit(X, y), X


def fitted(model, data=numbers, classify=False):
    X, y = data()
    return model.fit(X, y > 0 if classify else y), X


def xgboost_model():
    xgboost = pytest.importorskip("xgboost")
    return fitted(xgboost.XGBRegressor(n_estimators=5, max_depth=2))


def lightgbm_model():
    lightgbm = pytest.importorskip("lightgbm")
    model = lightgbm.LGBMClassifier(n_estimators=5, min_child_samples=5, verbose=-1)
    return fitted(model, classify=True)


def callable_model():
    X, _ = numbers()
    return (lambda rows: np.asarray(rows)[:, 0] * np.asarray(rows)[:, 1]), X


CASES = {
    "random_forest": (
        lambda: fitted(RandomForestRegressor(n_estimators=3, random_state=0)),
        TreeExplainer,
    ),
    "gradient_boosting": (
        lambda: fitted(GradientBoostingClassifier(n_estimators=3), classify=True),
        TreeExplainer,
    ),
    "hist_gradient_boosting": (
        lambda: fitted(HistGradientBoostingRegressor(max_iter=3)),
        TreeExplainer,
    ),
    "decision_tree": (
        lambda: fitted(DecisionTreeClassifier(max_depth=2), classify=True),
        TreeExplainer,
    ),
    "xgboost": (xgboost_model, TreeExplainer),
    "lightgbm": (lightgbm_model, TreeExplainer),
    "kernel_ridge": (lambda: fitted(KernelRidge(kernel="rbf")), ProductKernelExplainer),
    "svr": (lambda: fitted(SVR()), ProductKernelExplainer),
    "gaussian_process": (
        lambda: fitted(GaussianProcessRegressor()),
        ProductKernelExplainer,
    ),
    "logistic": (
        lambda: fitted(LogisticRegression(), classify=True),
        ExactExplainer,
    ),
    "mlp": (
        lambda: fitted(MLPRegressor(hidden_layer_sizes=(4,), max_iter=50)),
        ExactExplainer,
    ),
    "k_neighbours": (
        lambda: fitted(KNeighborsClassifier(n_neighbors=3), classify=True),
        ExactExplainer,
    ),
    "scaled_logistic": (
        lambda: fitted(
            make_pipeline(StandardScaler(), LogisticRegression()), classify=True
        ),
        ExactExplainer,
    ),
    "one_hot_logistic": (one_hot_logistic, ExactExplainer),
    "voting": (
        lambda: fitted(VotingRegressor([("a", Ridge()), ("b", LinearRegression())])),
        ExactExplainer,
    ),
    "callable": (callable_model, ExactExplainer),
    "twenty_features": (
        lambda: fitted(Ridge(), lambda: numbers(d=20)),
        PermutationExplainer,
    ),
}


@pytest.mark.filterwarnings("ignore::sklearn.exceptions.ConvergenceWarning")
@pytest.mark.parametrize("case", list(CASES))
def test_each_family_goes_to_its_explainer(case):
    build, expected = CASES[case]
    model, X = build()
    explainer = skshapley.Explainer(model)
    assert type(explainer) is expected
    assert explainer.method_ == METHODS[expected]
    assert explainer.model is model
    # The choice explains the model: fitted as its value function needs,
    # its values add up to the output it explains.
    background = None if expected in (TreeExplainer, ProductKernelExplainer) else X
    explainer = explainer.fit() if background is None else explainer.fit(background)
    rows = X.iloc[:3]
    phi = explainer.explain(rows)
    n_outputs = len(explainer.output_names_)
    totals = phi.to_numpy().reshape(3, n_outputs, -1).sum(axis=2)
    expected_value = np.atleast_1d(np.asarray(explainer.expected_value_))
    raw = np.asarray(explainer.raw_predict(rows)).reshape(3, n_outputs)
    # Efficiency to rounding (outputs of order 1, a few dozen terms).
    np.testing.assert_allclose(totals + expected_value, raw, rtol=0, atol=1e-9)


def test_the_method_names():
    assert {cls: cls.method_ for cls in METHODS} == METHODS


@pytest.mark.parametrize(
    ("d", "params", "expected"),
    [
        (16, {}, ExactExplainer),
        (17, {}, PermutationExplainer),
        (5, {"max_players": 4}, PermutationExplainer),
        (5, {"max_players": 5}, ExactExplainer),
        (20, {"max_players": 20}, ExactExplainer),
        # Six groups of the twenty features are six players.
        (20, {"groups": {f"g{k}": [f"f{j}" for j in range(k, 20, 6)]
                         for k in range(6)}},
         ExactExplainer),
        # Two groups and the eighteen features in none: twenty players.
        (20, {"groups": {"a": ["f0"], "b": ["f1"]}}, PermutationExplainer),
        (5, {"groups": {"a": ["f0", "f1"]}, "max_players": 4}, ExactExplainer),
        (5, {"groups": {"a": ["f0"]}, "max_players": 4}, PermutationExplainer),
    ],
)  # fmt: skip
def test_the_number_of_players_chooses(d, params, expected):
    model, _ = fitted(Ridge(), lambda: numbers(d=d))
    explainer = skshapley.Explainer(model, **params)
    assert type(explainer) is expected
    # Passed as given, but for max_players, which the sampler does not take.
    if expected is PermutationExplainer:
        params = {key: value for key, value in params.items() if key != "max_players"}
    chosen = explainer.get_params(deep=False)
    assert {key: chosen[key] for key in params} == params


def test_the_parameters_reach_the_chosen_explainer():
    model, _ = fitted(LogisticRegression(), classify=True)
    explainer = skshapley.Explainer(
        model, response_method="decision_function", index="banzhaf", max_players=3
    )
    assert explainer.get_params(deep=False) == {
        **ExactExplainer(model).get_params(deep=False),
        "response_method": "decision_function",
        "index": "banzhaf",
        "max_players": 3,
    }
    explainer = skshapley.Explainer(
        model, n_permutations=3, random_state=1, max_players=2
    )
    assert type(explainer) is PermutationExplainer
    assert explainer.get_params(deep=False) == {
        **PermutationExplainer(model).get_params(deep=False),
        "n_permutations": 3,
        "random_state": 1,
    }
    # Those of another explainer are refused by its constructor.
    with pytest.raises(TypeError, match="n_permutations"):
        skshapley.Explainer(model, n_permutations=3)


def test_a_callable_with_unknown_players_goes_to_the_exact_explainer():
    # Its number of features is known only from the background: fit says
    # there are too many, and where to go.
    X, _ = numbers(d=17)
    explainer = skshapley.Explainer(lambda rows: np.asarray(rows)[:, 0])
    assert type(explainer) is ExactExplainer
    with pytest.raises(ValueError, match="PermutationExplainer"):
        explainer.fit(X)


# --- explain(model, X, background=...) -----------------------------------------


def linear_closed_form(model, X, background) -> np.ndarray:
    """``w_j (x_j - mean_z z_j)``: the interventional Shapley values of a
    linear model, for its (raw) output."""
    return model.coef_ * (X.to_numpy() - background.to_numpy().mean(axis=0))


def test_explain_a_linear_model_with_a_background():
    X, y = numbers(d=5)
    model = LinearRegression().fit(X, y)
    background, rows = X.iloc[:25], X.iloc[40:]
    phi = skshapley.explain(model, rows, background=background)
    # Rounding of 2**5 - 2 averages of 25 predictions each: 1e-12 relative.
    expected = linear_closed_form(model, rows, background)
    np.testing.assert_allclose(phi.to_numpy(), expected, rtol=1e-12, atol=1e-13)
    assert list(phi.columns) == list(X.columns)
    assert phi.index.equals(rows.index)


def test_explain_samples_permutations_for_many_features():
    # On a linear model every order gives the same marginal contributions:
    # the sampled values are the closed form whatever the orders drawn.
    X, y = numbers(d=20)
    model = LinearRegression().fit(X, y)
    background, rows = X.iloc[:15], X.iloc[50:]
    phi = skshapley.explain(
        model, rows, background=background, n_permutations=2, random_state=3
    )
    expected = linear_closed_form(model, rows, background)
    np.testing.assert_allclose(phi.to_numpy(), expected, rtol=1e-11, atol=1e-12)
    by_hand = PermutationExplainer(model, n_permutations=2, random_state=3)
    pd.testing.assert_frame_equal(phi, by_hand.fit(background).explain(rows))


def test_explain_a_logistic_pipeline_with_a_background():
    model, X = one_hot_logistic()
    background, rows = X.iloc[:20], X.iloc[30:34]
    phi = skshapley.explain(model, rows, background=background)
    expected = ExactExplainer(model).fit(background).explain(rows)
    pd.testing.assert_frame_equal(phi, expected)
    # A binary classifier: one output (the positive class), plain columns.
    assert list(phi.columns) == ["size", "age", "colour"]


def test_explain_a_tree_model_with_a_background_is_interventional():
    model, X = fitted(RandomForestRegressor(n_estimators=4, random_state=0))
    background, rows = X.iloc[:30], X.iloc[30:]
    phi = skshapley.explain(model, rows, background=background)
    interventional = TreeExplainer(model, feature_perturbation="interventional")
    pd.testing.assert_frame_equal(phi, interventional.fit(background).explain(rows))
    # Not the path-dependent values, which need no background.
    path_dependent = skshapley.explain(model, rows)
    pd.testing.assert_frame_equal(
        path_dependent, TreeExplainer(model).fit().explain(rows)
    )
    assert np.abs(phi.to_numpy() - path_dependent.to_numpy()).max() > 1e-3
    # Saying it again is no conflict.
    again = skshapley.explain(
        model, rows, background=background, feature_perturbation="interventional"
    )
    pd.testing.assert_frame_equal(again, phi)


def test_a_tree_background_with_path_dependent_values_is_a_conflict():
    model, X = fitted(RandomForestRegressor(n_estimators=2, random_state=0))
    with pytest.raises(
        ValueError, match=r"background= is for .*interventional"
    ) as info:
        skshapley.explain(
            model, X, background=X, feature_perturbation="tree_path_dependent"
        )
    assert "tree_path_dependent" in str(info.value)


def test_a_kernel_model_takes_a_background():
    # Changed by issue 35: a background gives the interventional value
    # function (it was refused), and its base value is the mean prediction.
    model, X = fitted(SVR())
    phi = skshapley.explain(model, X.iloc[:3], background=X.iloc[:20])
    explainer = skshapley.Explainer(model, feature_perturbation="interventional")
    explainer.fit(X.iloc[:20])
    pd.testing.assert_frame_equal(phi, explainer.explain(X.iloc[:3]))
    assert explainer.expected_value_ == pytest.approx(model.predict(X.iloc[:20]).mean())


@pytest.mark.parametrize("case", ["logistic", "callable", "twenty_features"])
def test_a_model_agnostic_explainer_needs_a_background(case):
    model, X = CASES[case][0]()
    with pytest.raises(ValueError, match="pass background=") as info:
        skshapley.explain(model, X)
    assert CASES[case][1].__name__ in str(info.value)


def test_a_malformed_feature_count_is_unknown_or_an_error():
    # A model read from a file may hold anything: a count that is no count
    # is unknown (the exact explainer's fit checks the players), and an
    # attribute that fails is the model's error, not an internal one.
    model, _ = fitted(LogisticRegression(), classify=True)
    model.n_features_in_ = "3"
    assert type(skshapley.Explainer(model, max_players=2)) is ExactExplainer

    class Broken:
        def predict(self, X):
            return np.zeros(len(X))

        @property
        def n_features_in_(self):
            raise TypeError("'>' not supported")

    with pytest.raises(ValueError, match="Broken is malformed"):
        skshapley.Explainer(Broken())
