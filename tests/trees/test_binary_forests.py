"""Binary scikit-learn tree classifiers have one output: ``classes_[1]``.

A decision tree, extra tree, random forest or extra-trees classifier on two
classes is explained as its positive class's probability, ``predict_proba``'s
second column (the other column's values are exactly its negatives), like
every other binary classifier. Oracles that know nothing of the parsed
trees: the model's own ``predict_proba``, shap's class-1 values and
brute-force enumeration of the interventional game over the model's
``predict_proba``.
"""

import numpy as np
import pandas as pd
import pytest
from naive import (
    interaction_index_by_definition,
    interventional_interactions,
    interventional_shapley,
    interventional_table,
)
from sklearn.ensemble import ExtraTreesClassifier, RandomForestClassifier
from sklearn.tree import DecisionTreeClassifier, ExtraTreeClassifier

from skshapley import TreeExplainer
from skshapley.games import INDICES

# Sums of a few hundred probabilities (<= 1) and factorial weights: a few
# hundred roundings of 1e-16; a wrong leaf column is off by ~1e-1.
ATOL = 1e-12

# shap's recursion divides by cover ratios and unwinds them: a few digits
# of float64 lost on unequal covers (tests/trees/test_sklearn_models.py).
SHAP_ATOL = 1e-9

MODELS = {
    "decision_tree": lambda: DecisionTreeClassifier(max_depth=4, random_state=0),
    "extra_tree": lambda: ExtraTreeClassifier(max_depth=4, random_state=0),
    "random_forest": lambda: RandomForestClassifier(4, max_depth=3, random_state=0),
    "extra_trees": lambda: ExtraTreesClassifier(4, max_depth=3, random_state=0),
}
LABELS = {"ints": [0, 1], "text": ["no", "yes"]}


def fitted(name, labels):
    """The model fitted on 5 features and two classes labelled ``labels``."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(150, 5))
    y = X[:, 0] + X[:, 1] * X[:, 2] + 0.3 * rng.normal(size=150) > 0
    return MODELS[name]().fit(X, np.asarray(LABELS[labels])[y.astype(int)]), X


def positive(model):
    """The positive class's probability: what the explainer explains."""
    return lambda X: model.predict_proba(X)[:, 1]


@pytest.mark.parametrize("labels", LABELS)
@pytest.mark.parametrize("perturbation", ["tree_path_dependent", "interventional"])
@pytest.mark.parametrize("name", MODELS)
def test_one_output_named_the_positive_class(name, perturbation, labels):
    model, X = fitted(name, labels)
    explainer = TreeExplainer(model, feature_perturbation=perturbation)
    explainer.fit(*((X[:30],) if perturbation == "interventional" else ()))
    positive_class = model.classes_[1].item()
    assert explainer.output_names_ == (positive_class,)
    assert type(explainer.output_names_[0]) is type(positive_class)
    assert explainer.raw_output_ == "probability"
    assert type(explainer.expected_value_) is float
    rows = X[100:120]
    raw = explainer.raw_predict(rows)
    np.testing.assert_allclose(raw, positive(model)(rows), rtol=0, atol=ATOL)
    phi = explainer.explain(rows)
    assert list(phi.columns) == [f"x{j}" for j in range(5)]
    total = phi.sum(axis=1) + explainer.expected_value_
    np.testing.assert_allclose(total, raw, rtol=0, atol=ATOL)
    pd.testing.assert_frame_equal(explainer.explain(rows, output=positive_class), phi)
    with pytest.raises(ValueError, match="is not one of the model's outputs"):
        explainer.explain(rows, output=model.classes_[0])


@pytest.mark.parametrize("name", MODELS)
def test_path_dependent_values_and_interactions_equal_shaps_class_1(name):
    shap = pytest.importorskip("shap")
    model, X = fitted(name, "ints")
    explainer = TreeExplainer(model).fit()
    rows = X[100:110]
    reference = shap.TreeExplainer(model, feature_perturbation="tree_path_dependent")
    values = reference.shap_values(rows)  # (n, d, 2): both classes
    interactions = reference.shap_interaction_values(rows)  # (n, d, d, 2)
    # shap's class 0 is the negative of class 1: nothing is lost.
    np.testing.assert_allclose(values[..., 0], -values[..., 1], atol=SHAP_ATOL)
    np.testing.assert_allclose(
        interactions[..., 0], -interactions[..., 1], atol=SHAP_ATOL
    )
    np.testing.assert_allclose(
        explainer.explain(rows), values[..., 1], rtol=0, atol=SHAP_ATOL
    )
    assert explainer.expected_value_ == pytest.approx(
        reference.expected_value[1], abs=SHAP_ATOL
    )
    got = explainer.explain_interactions(rows).to_numpy().reshape(len(rows), 5, 5)
    np.testing.assert_allclose(got, interactions[..., 1], rtol=0, atol=SHAP_ATOL)


@pytest.mark.parametrize("name", MODELS)
def test_interventional_values_and_interactions_equal_the_brute_force(name):
    model, X = fitted(name, "text")
    background, rows = X[:20], X[100:103]
    explainer = TreeExplainer(model, feature_perturbation="interventional")
    explainer.fit(background)
    predict = positive(model)
    assert explainer.expected_value_ == pytest.approx(
        predict(background).mean(), abs=ATOL
    )
    phi = explainer.explain(rows).to_numpy()
    got = explainer.explain_interactions(rows).to_numpy().reshape(len(rows), 5, 5)
    for r, row in enumerate(rows):
        expected = interventional_shapley(predict, row, background)
        np.testing.assert_allclose(phi[r], expected[:, 0], rtol=0, atol=ATOL)
        expected = interventional_interactions(predict, row, background)
        np.testing.assert_allclose(got[r], expected[0], rtol=0, atol=ATOL)


@pytest.mark.parametrize("name", MODELS)
def test_interaction_indices_of_the_positive_class(name):
    model, X = fitted(name, "ints")
    background, rows = X[:20], X[100:102]
    explainer = TreeExplainer(model, feature_perturbation="interventional")
    explainer.fit(background)
    players = [[j] for j in range(5)]
    tables = [
        interventional_table(positive(model), row, background, players)[:, 0]
        for row in rows
    ]
    for index in INDICES:
        frame = explainer.explain_interactions(rows, index=index, order=2)
        for r, table in enumerate(tables):
            expected = interaction_index_by_definition(table, 5, index, 2)
            assert len(frame.columns) == len(expected)
            for label, coalition in zip(frame.columns, expected, strict=True):
                assert frame.iloc[r][label] == pytest.approx(
                    expected[coalition], abs=ATOL
                ), (index, coalition)
    # Path-dependent: an efficient index sums to the positive probability.
    frame = TreeExplainer(model).fit().explain_interactions(rows, index="k-SII")
    np.testing.assert_allclose(
        frame.sum(axis=1), positive(model)(rows), rtol=0, atol=ATOL
    )
