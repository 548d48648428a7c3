"""Parsers for scikit-learn's decision trees, forests, gradient boosting and
isolation forests.

Models may come from files (skops), so every attribute is checked (type,
shape, range) before it is used, and no scikit-learn method runs on a model
before its trees have passed the table's checks: gradient boosting's initial
prediction is computed from its constant initial estimator's attributes, not
by calling ``predict``.
"""

from numbers import Real

import numpy as np
from sklearn._loss.link import BaseLink
from sklearn.dummy import DummyClassifier, DummyRegressor
from sklearn.tree import BaseDecisionTree
from sklearn.tree._tree import Tree

from ..._contract.malformed import (
    checked_classes,
    checked_count,
    checked_numbers,
    malformed_model_errors,
)
from ..._contract.outputs import class_output_names, regression_output_names
from ..._errors import UnsupportedModelError
from ..._runtime.limits import MAX_FEATURES, MAX_OUTPUTS
from .._table import ParsedTree, TreeEnsemble, concatenate_trees


def _checked_tree(estimator) -> Tree:
    """The ``tree_`` of a fitted scikit-learn tree."""
    if not isinstance(estimator, BaseDecisionTree) or not isinstance(
        getattr(estimator, "tree_", None), Tree
    ):
        raise ValueError(
            "The model's estimators must be fitted scikit-learn decision trees; "
            f"got {type(estimator).__name__}."
        )
    return estimator.tree_


def _parsed_tree(tree_: Tree, value, output=0) -> ParsedTree:
    """The nodes of one fitted ``sklearn.tree._tree.Tree``.

    ``value`` has shape (n_nodes, width): the leaf values, already weighted.
    """
    return ParsedTree(
        feature=np.where(tree_.children_left >= 0, tree_.feature, -1),
        threshold=tree_.threshold,
        left=tree_.children_left,
        right=tree_.children_right,
        missing_left=getattr(tree_, "missing_go_to_left", np.zeros(tree_.node_count)),
        cover=tree_.weighted_n_node_samples,
        value=value,
        output=output,
    )


def _common_fields(model, raw_output, output_names, base_offset) -> dict:
    return {
        "base_offset": base_offset,
        "n_features": checked_count(model, "n_features_in_", MAX_FEATURES),
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
    if names is None:
        return None
    names = np.asarray(names, dtype=object)
    if names.shape != (checked_count(model, "n_features_in_", MAX_FEATURES),):
        raise ValueError(
            f"The model has {names.size} feature names for {model.n_features_in_} "
            "features; the model file may be corrupt."
        )
    return tuple(str(name) for name in names)


def _check_single_output_classifier(model):
    if checked_count(model, "n_outputs_", MAX_OUTPUTS) != 1:
        raise UnsupportedModelError(
            f"{type(model).__name__} with {model.n_outputs_} outputs is not "
            "supported: multi-output classifiers have no single raw output. "
            "Multi-output regressors are supported."
        )


def _tree_values(estimator, scale, width, columns=slice(None)):
    """Leaf values of a tree in the form its ensemble averages them.

    ``width`` is the number of the ensemble's classes or targets, which every
    tree must have; ``columns`` selects the ones explained (a binary
    classifier's positive class).
    """
    value = _checked_tree(estimator).value  # (n_nodes, n_outputs, n_classes)
    # Classifier trees store class fractions: their predict_proba.
    value = value[:, 0, :] if hasattr(estimator, "classes_") else value[:, :, 0]
    if value.shape[1] != width:
        raise ValueError(
            f"A tree of the model has {value.shape[1]} outputs; the model has "
            f"{width}. The model file may be corrupt."
        )
    return value[:, columns] * scale


def _estimator_list(model) -> list:
    """A forest's trees (or the tree itself), as a non-empty list."""
    estimators = getattr(model, "estimators_", [model])
    if not isinstance(estimators, list) or not estimators:
        raise ValueError(
            "The forest's estimators_ must be a non-empty list of trees; got "
            f"{type(estimators).__name__}."
        )
    return estimators


@malformed_model_errors
def parse_tree_or_forest(model) -> TreeEnsemble:
    """Parse a decision tree, random forest or extra-trees ensemble.

    Forests average their trees: each tree's values are divided by the
    number of trees. Classifiers explain ``predict_proba``: a binary one its
    positive class's column (``classes_[1]``; the other class's values are
    their negatives), else one output per class. Regressors explain
    ``predict`` (one output per target).
    """
    estimators = _estimator_list(model)
    if hasattr(model, "classes_"):
        _check_single_output_classifier(model)
        classes = checked_classes(model)
        width = len(classes)
        binary = width == 2
        n_outputs = 1 if binary else width
        columns = slice(1, 2) if binary else slice(None)  # the positive class
        output_names = class_output_names(classes.tolist(), n_outputs)
        raw_output = "probability"
    else:
        width = n_outputs = checked_count(model, "n_outputs_", MAX_OUTPUTS)
        columns = slice(None)
        output_names = regression_output_names(n_outputs)
        raw_output = "value"
    scale = 1.0 / len(estimators)
    trees = [
        _parsed_tree(estimator.tree_, _tree_values(estimator, scale, width, columns))
        for estimator in estimators
    ]
    return concatenate_trees(
        trees, **_common_fields(model, raw_output, output_names, np.zeros(n_outputs))
    )


@malformed_model_errors
def parse_gradient_boosting(model) -> TreeEnsemble:
    """Parse a GradientBoostingRegressor or GradientBoostingClassifier.

    The raw output is the regression value, or the log-odds (binary) / the
    per-class scores (multiclass) of ``decision_function``. The initial
    estimator's prediction, which must be constant, is the base offset.
    """
    init = model.init_
    if not (
        (isinstance(init, str) and init == "zero")
        or isinstance(init, DummyClassifier | DummyRegressor)
    ):
        raise UnsupportedModelError(
            f"{type(model).__name__} with init={type(init).__name__} is not "
            "supported: only a constant initial prediction (init=None, "
            "'zero' or a Dummy estimator) is a sum of trees."
        )
    estimators = model.estimators_  # (n_estimators, n_outputs)
    if hasattr(model, "classes_"):
        classes = checked_classes(model)
        n_outputs = 1 if len(classes) == 2 else len(classes)
        output_names = class_output_names(classes.tolist(), n_outputs)
        raw_output = "log-odds" if n_outputs == 1 else "margin"
    else:
        n_outputs = 1
        output_names = regression_output_names(1)
        raw_output = "value"
    if (
        not isinstance(estimators, np.ndarray)
        or estimators.ndim != 2
        or estimators.shape[0] == 0
        or estimators.shape[1] != n_outputs
    ):
        raise ValueError(
            f"The model's estimators_ must be an array of shape (n_estimators, "
            f"{n_outputs}) of trees; got {getattr(estimators, 'shape', None)}."
        )
    learning_rate = model.learning_rate
    if isinstance(learning_rate, bool) or not isinstance(learning_rate, Real):
        raise ValueError(
            f"The model's learning_rate must be a number; got {learning_rate!r}."
        )
    trees = [
        _parsed_tree(
            estimator.tree_,
            _tree_values(estimator, learning_rate, 1),
            output=k,
        )
        for row in estimators
        for k, estimator in enumerate(row)
    ]
    base_offset = _initial_prediction(model, init, n_outputs)
    return concatenate_trees(
        trees, **_common_fields(model, raw_output, output_names, base_offset)
    )


def _initial_prediction(model, init, n_outputs) -> np.ndarray:
    """The constant initial raw prediction, from the initial estimator's state.

    What scikit-learn's ``_init_raw_predictions`` computes, without calling
    ``predict`` or ``predict_proba``: the link of DummyRegressor's
    ``constant_`` or of DummyClassifier's ``class_prior_`` (clipped to
    ``[eps, 1 - eps]``, the positive class's alone for binary models).
    """
    if isinstance(init, str):  # "zero"
        return np.zeros(n_outputs)
    if isinstance(init, DummyRegressor):
        predictions = checked_numbers(init.constant_, "init_.constant_", shape=(1, 1))
    else:
        if init.strategy != "prior":
            raise UnsupportedModelError(
                f"{type(model).__name__} with init=DummyClassifier(strategy="
                f"{init.strategy!r}) is not supported: only strategy='prior' "
                "gives a constant initial prediction that skshapley reads."
            )
        n_classes = len(model.classes_)
        prior = checked_numbers(
            init.class_prior_, "init_.class_prior_", shape=(n_classes,)
        )
        eps = np.finfo(np.float64).eps
        prior = np.clip(prior, eps, 1 - eps)
        predictions = prior[1:] if n_outputs == 1 else prior[None, :]
    link = model._loss.link
    if not isinstance(link, BaseLink):
        raise ValueError(
            f"The model's loss has a link of type {type(link).__name__}; the "
            "model file may be corrupt."
        )
    raw = np.asarray(link.link(predictions), dtype=np.float64).reshape(-1)
    if raw.shape != (n_outputs,):
        raise ValueError("The model's initial prediction has the wrong shape.")
    return raw


def _average_path_length(n_samples: np.ndarray) -> np.ndarray:
    """``c(n)``: the average path length of an unsuccessful search in a
    binary search tree of ``n`` points (Liu et al., 2008), as scikit-learn
    defines it: 0 for ``n <= 1``, 1 for ``n = 2``, else
    ``2 (ln(n - 1) + euler_gamma) - 2 (n - 1) / n``.
    """
    n = np.asarray(n_samples, dtype=np.float64)
    with np.errstate(divide="ignore", invalid="ignore"):
        general = 2.0 * (np.log(n - 1.0) + np.euler_gamma) - 2.0 * (n - 1.0) / n
    return np.select([n <= 1, n == 2], [0.0, 1.0], general)


def _node_depths(left: np.ndarray, right: np.ndarray) -> np.ndarray:
    """Edges from the root (node 0) to each node, level by level.

    Safe on arrays that do not form a tree (the table checks them later):
    children out of range are skipped, each level is deduplicated and there
    are at most as many levels as nodes.
    """
    n_nodes = len(left)
    depth = np.zeros(n_nodes)
    level = np.zeros(1, dtype=np.intp)
    for edges in range(1, n_nodes):
        children = np.concatenate([left[level], right[level]])
        level = np.unique(children[(children > 0) & (children < n_nodes)])
        if not len(level):
            break
        depth[level] = edges
    return depth


def _isolation_tree(estimator, features, n_features: int, scale: float):
    """One isolation tree, its leaf values the corrected path lengths.

    A leaf at depth ``h`` holding ``n`` training points has path length
    ``h + c(n)``; a tree grown on a subset of the features has its feature
    indices mapped back to the model's columns through ``features`` (as
    scikit-learn does when ``max_features`` is below the number of
    features).
    """
    tree_ = _checked_tree(estimator)
    left, right = tree_.children_left, tree_.children_right
    length = _node_depths(left, right) + _average_path_length(tree_.n_node_samples)
    parsed = _parsed_tree(tree_, (scale * length)[:, None])
    features = np.asarray(features)
    if features.ndim != 1 or features.dtype.kind not in "iu":
        raise ValueError(
            "The model's estimators_features_ must hold 1-D integer arrays; "
            f"got {features.dtype} of shape {features.shape}."
        )
    if len(features) != n_features:  # the tree saw X[:, features]
        internal = parsed.feature >= 0
        parsed.feature[internal] = features[parsed.feature[internal]]
    return parsed


@malformed_model_errors
def parse_isolation_forest(model) -> TreeEnsemble:
    """Parse an IsolationForest; its raw output is the average path length.

    The mean over trees of ``h(x) + c(n)``, the depth of the leaf ``x``
    reaches plus ``c`` of the number of training points there: what
    ``score_samples`` turns into ``-2 ** (-length / c(max_samples_))``. A
    shorter path is more anomalous.
    """
    estimators = _estimator_list(model)
    n_features = checked_count(model, "n_features_in_", MAX_FEATURES)
    features = model.estimators_features_
    if not isinstance(features, list) or len(features) != len(estimators):
        raise ValueError(
            "The model's estimators_features_ must be a list of one array per "
            "tree; the model file may be corrupt."
        )
    scale = 1.0 / len(estimators)
    trees = [
        _isolation_tree(estimator, columns, n_features, scale)
        for estimator, columns in zip(estimators, features, strict=True)
    ]
    return concatenate_trees(
        trees,
        **_common_fields(
            model, "average path length", regression_output_names(1), np.zeros(1)
        ),
    )
