"""final_estimator: what is explained inside pipelines, searches and wrappers."""

import numpy as np
import pytest
from sklearn.calibration import CalibratedClassifierCV
from sklearn.compose import TransformedTargetRegressor
from sklearn.ensemble import (
    BaggingRegressor,
    RandomForestClassifier,
    StackingRegressor,
    VotingRegressor,
)
from sklearn.exceptions import NotFittedError
from sklearn.experimental import enable_halving_search_cv  # noqa: F401
from sklearn.model_selection import (
    GridSearchCV,
    HalvingGridSearchCV,
    HalvingRandomSearchCV,
    RandomizedSearchCV,
)
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import MinMaxScaler, StandardScaler
from sklearn.tree import DecisionTreeClassifier, DecisionTreeRegressor

from skshapley import ProductKernelExplainer, TreeExplainer, UnsupportedModelError
from skshapley._contract.pipeline import final_estimator

RNG = np.random.default_rng(0)
X = RNG.normal(size=(60, 3))
Y = X[:, 0] + X[:, 1] * X[:, 2]


def tree():
    return DecisionTreeRegressor(max_depth=3, random_state=0)


def test_plain_model_has_no_preprocessing():
    model = tree().fit(X, Y)
    assert final_estimator(model) == (None, model)


def test_pipeline_steps_are_chained_and_passthrough_dropped():
    model = Pipeline(
        [
            ("scale", StandardScaler()),
            ("nothing", "passthrough"),
            ("inner", make_pipeline(MinMaxScaler(), None, DecisionTreeRegressor())),
        ]
    ).fit(X, Y)
    preprocess, final = final_estimator(model)
    assert final is model[-1][-1]
    assert [step for _, step in preprocess.steps] == [model[0], model[-1][0]]
    np.testing.assert_array_equal(
        preprocess.transform(X), model[-1][0].transform(model[0].transform(X))
    )

    only = Pipeline([("skip", "passthrough"), ("tree", tree())]).fit(X, Y)
    assert final_estimator(only) == (None, only[-1])


@pytest.mark.parametrize(
    "search",
    [
        GridSearchCV(tree(), {"max_depth": [1, 2]}, cv=2),
        RandomizedSearchCV(tree(), {"max_depth": [1, 2]}, n_iter=2, cv=2),
        HalvingGridSearchCV(tree(), {"max_depth": [1, 2]}, cv=2, min_resources=20),
        HalvingRandomSearchCV(
            tree(), {"max_depth": [1, 2]}, n_candidates=2, cv=2, min_resources=20
        ),
    ],
    ids=lambda search: type(search).__name__,
)
def test_searches_give_their_best_estimator(search):
    search.fit(X, Y)
    assert final_estimator(search) == (None, search.best_estimator_)
    # A search inside a pipeline, and a pipeline inside a search.
    scaled = make_pipeline(StandardScaler(), search).fit(X, Y)
    assert final_estimator(scaled)[1] is scaled[-1].best_estimator_
    assert TreeExplainer(scaled).fit().n_features_in_ == 3


def test_search_not_refitted_or_not_fitted():
    search = GridSearchCV(tree(), {"max_depth": [1, 2]}, cv=2, refit=False)
    with pytest.raises(NotFittedError):
        final_estimator(search)
    with pytest.raises(UnsupportedModelError, match="refit=True"):
        final_estimator(search.fit(X, Y))
    with pytest.raises(NotFittedError):
        final_estimator(make_pipeline(StandardScaler(), tree()))


@pytest.mark.parametrize(
    ("model", "instead"),
    [
        (TransformedTargetRegressor(tree(), func=np.exp, inverse_func=np.log),
         r"\.regressor_ \(the values are then in the transformed target space\)"),
        (CalibratedClassifierCV(DecisionTreeClassifier(), cv=2),
         r"\.calibrated_classifiers_\[0\]\.estimator"),
        (VotingRegressor([("a", tree()), ("b", DecisionTreeRegressor())]),
         r"each of \.estimators_"),
        (StackingRegressor([("a", tree())], cv=2), r"each of \.estimators_"),
        (BaggingRegressor(tree(), n_estimators=2), "RandomForestRegressor"),
    ],
    ids=lambda value: type(value).__name__ if not isinstance(value, str) else "",
)  # fmt: skip
def test_wrappers_we_cannot_explain_say_what_to_pass(model, instead):
    y = Y > 0 if isinstance(model, CalibratedClassifierCV) else np.abs(Y) + 1
    model.fit(X, y)
    name = type(model).__name__
    for explainer in (TreeExplainer, ProductKernelExplainer):
        with pytest.raises(UnsupportedModelError, match=instead) as info:
            explainer(make_pipeline(StandardScaler(), model)).fit()
        assert str(info.value).startswith(f"A {name} cannot be explained exactly")
        assert "\n" not in str(info.value)


def test_last_step_passthrough_and_malformed_steps():
    model = make_pipeline(StandardScaler(), RandomForestClassifier(n_estimators=2))
    model.fit(X, Y > 0)
    model.steps[-1] = ("last", "passthrough")
    with pytest.raises(UnsupportedModelError, match="last step is 'passthrough'"):
        final_estimator(model)
    model.steps = "junk"
    with pytest.raises(ValueError, match="malformed"):
        final_estimator(model)
