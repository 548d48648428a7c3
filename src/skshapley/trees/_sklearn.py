"""Parsers for scikit-learn's decision trees, forests and gradient boosting."""

import numpy as np
import pandas as pd
from sklearn.dummy import DummyClassifier, DummyRegressor

from ._table import TreeEnsemble, concatenate_trees


def _tree_arrays(tree_, value, output=0) -> dict:
    """Node arrays of one fitted ``sklearn.tree._tree.Tree``.

    ``value`` has shape (n_nodes, width): the leaf values, already weighted.
    """
    return {
        "feature": np.where(tree_.children_left >= 0, tree_.feature, -1),
        "threshold": tree_.threshold,
        "left": tree_.children_left,
        "right": tree_.children_right,
        "missing_left": getattr(
            tree_, "missing_go_to_left", np.zeros(tree_.node_count)
        ),
        "cover": tree_.weighted_n_node_samples,
        "value": value,
        "output": output,
    }


def _common_fields(model, raw_output, output_names, base_offset) -> dict:
    return {
        "base_offset": base_offset,
        "n_features": model.n_features_in_,
        "float32_inputs": True,
        "allow_nan": model.__sklearn_tags__().input_tags.allow_nan,
        "allow_inf": False,
        "output_names": tuple(np.asarray(output_names).tolist()),
        "raw_output": raw_output,
        "feature_names": fitted_feature_names(model),
    }


def fitted_feature_names(model) -> tuple[str, ...] | None:
    """The column names a scikit-learn estimator was fitted with, if any."""
    names = getattr(model, "feature_names_in_", None)
    return None if names is None else tuple(str(name) for name in names)


def _check_single_output_classifier(model):
    if model.n_outputs_ != 1:
        raise TypeError(
            f"{type(model).__name__} with {model.n_outputs_} outputs is not "
            "supported: multi-output classifiers have no single raw output. "
            "Multi-output regressors are supported."
        )


def _tree_values(estimator, scale):
    """Leaf values of a tree in the form its ensemble averages them."""
    value = estimator.tree_.value  # (n_nodes, n_outputs, n_classes)
    if hasattr(estimator, "classes_"):
        # Classifier trees store class fractions: their predict_proba.
        return value[:, 0, :] * scale
    return value[:, :, 0] * scale


def parse_tree_or_forest(model) -> TreeEnsemble:
    """Parse a decision tree, random forest or extra-trees ensemble.

    Forests average their trees: each tree's values are divided by the
    number of trees. Classifiers explain ``predict_proba`` (one output per
    class), regressors ``predict`` (one output per target).
    """
    estimators = getattr(model, "estimators_", [model])
    is_classifier = hasattr(model, "classes_")
    if is_classifier:
        _check_single_output_classifier(model)
        output_names = model.classes_
        raw_output = "probability"
    else:
        output_names = (
            ["target"] if model.n_outputs_ == 1 else
            [f"target {k}" for k in range(model.n_outputs_)]
        )  # fmt: skip
        raw_output = "value"
    scale = 1.0 / len(estimators)
    trees = [
        _tree_arrays(estimator.tree_, _tree_values(estimator, scale))
        for estimator in estimators
    ]
    n_outputs = len(output_names)
    return concatenate_trees(
        trees, **_common_fields(model, raw_output, output_names, np.zeros(n_outputs))
    )


def parse_gradient_boosting(model) -> TreeEnsemble:
    """Parse a GradientBoostingRegressor or GradientBoostingClassifier.

    The raw output is the regression value, or the log-odds (binary) / the
    per-class scores (multiclass) of ``decision_function``. The initial
    estimator's prediction, which must be constant, is the base offset.
    """
    init = model.init_
    if not (init == "zero" or isinstance(init, DummyClassifier | DummyRegressor)):
        raise TypeError(
            f"{type(model).__name__} with init={type(init).__name__} is not "
            "supported: only a constant initial prediction (init=None, "
            "'zero' or a Dummy estimator) is a sum of trees."
        )
    estimators = model.estimators_  # (n_estimators, n_outputs)
    n_outputs = estimators.shape[1]
    trees = [
        _tree_arrays(
            estimator.tree_,
            estimator.tree_.value[:, 0, :1] * model.learning_rate,
            output=k,
        )
        for row in estimators
        for k, estimator in enumerate(row)
    ]
    if hasattr(model, "classes_"):
        output_names = model.classes_[1:] if n_outputs == 1 else model.classes_
        raw_output = "log-odds" if n_outputs == 1 else "margin"
    else:
        output_names = ["target"]
        raw_output = "value"
    base_offset = _initial_prediction(model, trees, n_outputs)
    return concatenate_trees(
        trees, **_common_fields(model, raw_output, output_names, base_offset)
    )


def _initial_prediction(model, trees, n_outputs) -> np.ndarray:
    """The constant initial raw prediction: raw output minus the trees' sum."""
    probe = np.zeros((1, model.n_features_in_))
    if hasattr(model, "feature_names_in_"):
        probe = pd.DataFrame(probe, columns=model.feature_names_in_)
    raw = (
        model.decision_function(probe)
        if hasattr(model, "classes_")
        else model.predict(probe)
    )
    tree_sum = np.zeros(n_outputs)
    for tree in trees:
        node = 0
        while tree["left"][node] >= 0:
            go_left = np.float32(0.0) <= tree["threshold"][node]
            node = tree["left"][node] if go_left else tree["right"][node]
        tree_sum[tree["output"]] += tree["value"][node, 0]
    return np.reshape(raw, -1)[:n_outputs] - tree_sum
