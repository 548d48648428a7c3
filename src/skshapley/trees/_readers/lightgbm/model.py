"""Parser for LightGBM's boosters and its scikit-learn wrappers.

The trees are read from LightGBM's text format (``Booster.model_to_string``
for models in memory, the file itself for model files), read and checked by
:mod:`._lightgbm_text` without LightGBM. What prediction does
(LightGBM 4.x, ``include/LightGBM/tree.h`` and the C API's dense-row reader),
checked value by value against ``Booster.predict``:

* Inputs are compared in float64 (numpy float64 input is passed through; the
  Python package only casts non-float arrays, to float32).
* Before any tree sees a row, every value with ``|x| <= kZeroThreshold`` is
  replaced by 0.0; ``kZeroThreshold`` is the float ``1e-35f`` widened to
  double (1.0000000180025095e-35).
* ``NumericalDecision``: with ``missing_type`` "None" or "Zero", NaN becomes
  0.0. Then, if the type is "Zero" and ``|x| <= kZeroThreshold``, or it is
  "NaN" and ``x`` is NaN, the row goes to the default side
  (``default_left``); otherwise left iff ``x <= threshold``.
* ``CategoricalDecision``: NaN and codes whose ``int`` truncation is negative
  go right, whatever the missing type; otherwise ``c = int(x)`` (truncation
  toward zero) goes left iff bit ``c`` of the split's bitset is set (the
  words ``cat_threshold[cat_boundaries[k]:cat_boundaries[k + 1]]``, ``k`` the
  node's threshold), else right.

The table expresses this with:

* missing type "None": NaN goes where 0.0 goes (``0 <= threshold``);
* "Zero": zero-as-missing (bit 1: ``|x| <= ZERO_AS_MISSING``, which is
  ``kZeroThreshold``) to the default side, NaN too;
* "NaN": NaN to the default side;
* the replacement of tiny values by 0.0 only changes a route when the
  threshold lies in ``[-kZeroThreshold, kZeroThreshold)``; such thresholds
  are moved to the equivalent ``kZeroThreshold`` (threshold >= 0) or just
  below ``-kZeroThreshold`` (threshold < 0), which routes every non-NaN
  value as LightGBM does;
* categorical nodes: the node's bitset as the left bitset, NaN right.

The explainer (not the table) reproduces the truncation of non-integral
category codes (LightGBM sends 2.5 where 2 goes, -0.5 where 0 goes; the table
alone would send them right): it truncates the values of the ensemble's
``categorical_features`` before routing (``category_rounding="trunc"``).

LightGBM numbers a tree's internal nodes ``0..num_leaves-2`` (root 0) and
its leaves ``~0..~(num_leaves-1)``; the table keeps the internal nodes'
numbers and puts leaf ``l`` at ``num_leaves - 1 + l``.

Cover is the nodes' sample count (``internal_count``, ``leaf_count``): what
LightGBM's own ``pred_contrib`` TreeSHAP and its ``ExpectedValue`` use
(``internal_weight``, the hessian sum, is not).

LightGBM's datasets replace spaces in column names by underscores: the
model's feature ``a_b`` is the DataFrame column ``a b`` its wrapper predicts
on, and the explainer matches columns that way too. Classifiers have
``num_class`` outputs, output ``k`` for the wrapper's ``classes_[k]``, even if
fewer classes were seen in training (``predict_proba`` has ``num_class``
columns too).

``boost_from_average`` (and, in random-forest mode, the per-tree bias) is
already added to the leaf values of the first trees, so the base offset is
zero. In random-forest mode (``average_output``) the leaf values are divided
by the number of iterations: the raw output is what ``predict`` transforms
(LightGBM's own ``raw_score=True`` and ``pred_contrib=True`` return the
un-averaged sum, the number of iterations times larger). DART models are
saved with their trees' final weights, so they need nothing special.
"""

import numpy as np

from ...._contract.outputs import regression_output_names
from ...._errors import UnsupportedModelError
from ..._table import (
    BITSET_WORDS,
    N_CATEGORIES,
    ZERO_AS_MISSING,
    ParsedTree,
    TreeEnsemble,
    concatenate_trees,
)
from .text import RAW_OUTPUTS, LightGBMTextModel, read_model_text


def parse_lightgbm(model) -> TreeEnsemble:
    """Convert a LightGBM model into a :class:`TreeEnsemble`.

    Parameters
    ----------
    model : lightgbm.Booster, LGBMRegressor, LGBMClassifier, LGBMRanker or \
            LightGBMTextModel
        A trained model (the wrappers' ``booster_`` is read), or a model
        file read by :func:`read_model_file`. Tree ``t`` adds to output
        ``t % num_tree_per_iteration``: one output, or one per class for
        multiclass objectives.

    Returns
    -------
    TreeEnsemble
        Routes float64 rows (NaN and ±inf allowed; pandas categorical
        columns as their codes) as ``predict`` does, up to the iteration
        ``predict`` uses by default: ``best_iteration`` if early stopping
        recorded one, else all. Its raw output is ``predict(X,
        raw_score=True)`` (divided by the number of iterations in
        random-forest mode); the base offset is zero.

    Raises
    ------
    UnsupportedModelError
        (a ``TypeError``) For linear trees (``linear_tree=True``: leaves are
        linear models, not constants), or categorical splits that send a
        category above 255 left (the table's bitsets hold 0..255).
    ValueError
        If the model's text is not a valid LightGBM model.
    """
    if isinstance(model, LightGBMTextModel):
        parsed, wrapper = model, None
    else:
        booster = getattr(model, "booster_", model)
        # Booster.predict's default: best_iteration if > 0, else every one.
        text = booster.model_to_string(num_iteration=booster.best_iteration)
        parsed = read_model_text(text)
        wrapper = model if model is not booster else None
    n_iterations = parsed.n_trees // parsed.n_outputs
    scale = 1.0 / n_iterations if parsed.average_output else 1.0
    trees = _table_trees(parsed.trees, scale, parsed.n_outputs)
    objective = parsed.objective.split()
    name = objective[0] if objective else ""
    return concatenate_trees(
        trees,
        base_offset=np.zeros(parsed.n_outputs),
        n_features=parsed.n_features,
        float32_inputs=False,
        float32_unless_float=True,
        allow_nan=True,
        allow_inf=True,
        output_names=_output_names(wrapper, parsed.n_outputs, name),
        raw_output=_raw_output(objective),
        feature_names=_feature_names(wrapper, parsed.feature_names),
        category_input="codes",
        spaces_in_names_as_underscores=True,
        **_categorical_features(parsed),
    )


def _categorical_features(parsed) -> dict:
    """Which features LightGBM treats as categorical, and their categories.

    Categorical features are those whose ``feature_infos`` list values, and
    any feature of a categorical split. LightGBM truncates their values to
    integers before routing; for pandas categorical columns it counts codes
    in the training categories (``pandas_categorical``, one list per
    categorical column, in order).
    """
    split_on = set(parsed.trees["split_feature"][list(parsed.trees["category_words"])])
    fields = {
        "categorical_features": tuple(
            sorted(split_on.union(parsed.categorical_features))
        ),
        "category_rounding": "trunc",
    }
    levels = parsed.pandas_categorical
    if levels and len(levels) == len(parsed.categorical_features):
        per_feature = [None] * parsed.n_features
        for j, categories in zip(parsed.categorical_features, levels, strict=True):
            per_feature[j] = tuple(categories)
        fields["category_levels"] = tuple(per_feature)
    return fields


def _table_trees(trees, scale, n_outputs) -> list[ParsedTree]:
    """The :class:`ParsedTree` of each checked tree (see the module docstring)."""
    if trees["is_linear"].any():
        raise UnsupportedModelError(
            "LightGBM models with linear trees (linear_tree=True) are not "
            "supported: their leaves are linear models of the features, "
            "not constants, so paths are not product games."
        )
    n_leaves = trees["num_leaves"]
    n_internal = n_leaves - 1
    n_nodes = n_internal + n_leaves
    node_start = np.cumsum(n_nodes) - n_nodes
    # Table positions of the internal nodes and of the leaves.
    tree_of_internal = np.repeat(np.arange(len(n_leaves)), n_internal)
    internal = node_start[tree_of_internal] + _local(n_internal)
    tree_of_leaf = np.repeat(np.arange(len(n_leaves)), n_leaves)
    leaf = (node_start + n_internal)[tree_of_leaf] + _local(n_leaves)

    total = int(n_nodes.sum())
    arrays = {
        "feature": np.full(total, -1, dtype=np.intp),
        "threshold": np.zeros(total),
        "left": np.full(total, -1, dtype=np.intp),
        "right": np.full(total, -1, dtype=np.intp),
        "missing_left": np.zeros(total, dtype=np.uint8),
        "is_categorical": np.zeros(total, dtype=np.uint8),
        "category_bitset": np.zeros((total, BITSET_WORDS), dtype=np.uint32),
        "cover": np.ones(total),
        "value": np.zeros((total, 1)),
    }
    arrays["feature"][internal] = trees["split_feature"]
    for key, children in (("left", "left_child"), ("right", "right_child")):
        child = trees[children]  # local: leaves after the internal nodes
        arrays[key][internal] = np.where(
            child >= 0, child, n_internal[tree_of_internal] + ~child
        )
    arrays["cover"][internal] = trees["internal_count"]
    arrays["cover"][leaf] = trees["leaf_count"]
    arrays["value"][leaf, 0] = trees["leaf_value"] * scale
    threshold, missing_left = _numerical_rules(
        trees["threshold"], trees["decision_type"]
    )
    arrays["threshold"][internal] = threshold
    arrays["missing_left"][internal] = missing_left
    for u, words in trees["category_words"].items():
        _set_categorical_node(arrays, internal[u], words)

    bounds = node_start[1:]
    split = {key: np.split(array, bounds) for key, array in arrays.items()}
    return [
        ParsedTree(
            **{key: parts[t] for key, parts in split.items()}, output=t % n_outputs
        )
        for t in range(len(n_leaves))
    ]


def _local(sizes) -> np.ndarray:
    """``0..sizes[0]-1, 0..sizes[1]-1, ...``."""
    return np.arange(int(sizes.sum())) - np.repeat(np.cumsum(sizes) - sizes, sizes)


def _numerical_rules(threshold, decision):
    """Thresholds and missing-value rules of numerical nodes."""
    # LightGBM replaces |x| <= kZeroThreshold by 0.0 before routing: such
    # thresholds are moved to where the table, comparing x itself, routes
    # every non-NaN value the same way.
    tiny = (threshold >= -ZERO_AS_MISSING) & (threshold < ZERO_AS_MISSING)
    shifted = np.where(
        threshold >= 0, ZERO_AS_MISSING, np.nextafter(-ZERO_AS_MISSING, -np.inf)
    )
    threshold = np.where(tiny, shifted, threshold)
    missing_type = (decision >> 2) & 3  # 0 None, 1 Zero, 2 NaN
    default_left = (decision >> 1) & 1
    rule = np.where(
        missing_type == 0,
        threshold >= 0.0,  # None: NaN is replaced by 0.0
        default_left | np.where(missing_type == 1, 2, 0),
    )
    return threshold, rule


def _set_categorical_node(arrays, u, words):
    """The bitset's categories go left; NaN, negative and others go right."""
    arrays["is_categorical"][u] = 1
    arrays["threshold"][u] = 0.0
    arrays["missing_left"][u] = 0
    beyond = np.flatnonzero(words[BITSET_WORDS:])
    if len(beyond):
        word = BITSET_WORDS + beyond[0]
        bit = int(words[word]) & -int(words[word])  # the lowest set bit
        raise UnsupportedModelError(
            f"A categorical split on feature {arrays['feature'][u]} sends "
            f"category {32 * word + bit.bit_length() - 1} left; the tree "
            f"table's category bitsets hold categories "
            f"0..{N_CATEGORIES - 1} only."
        )
    words = words[:BITSET_WORDS]
    arrays["category_bitset"][u, : len(words)] = words


def _raw_output(objective) -> str:
    """What the raw score is, from the objective line ("binary sigmoid:1")."""
    name = objective[0] if objective else ""
    options = dict(token.split(":", 1) for token in objective[1:] if ":" in token)
    if "sqrt" in objective[1:]:
        return "margin"  # reg_sqrt: predict squares the raw score
    if float(options.get("sigmoid", 1.0)) != 1.0:
        return "margin"  # predict applies sigmoid(sigmoid * raw)
    return RAW_OUTPUTS.get(name, "margin")


def _output_names(wrapper, n_outputs, objective) -> tuple:
    """Class labels of the outputs, else LightGBM's own names for them.

    Output ``k`` is LightGBM's label ``k`` (the wrapper's ``classes_[k]``;
    for "binary", the one output is label 1). A classifier fitted on fewer
    classes than ``num_class`` still has ``num_class`` outputs (its
    ``predict_proba`` has that many columns): the labels it never saw are
    named ``"unseen class k"``.
    """
    classes = getattr(wrapper, "classes_", None)
    if classes is not None:
        classes = np.asarray(classes).tolist()
        labels = range(1, 2) if n_outputs == 1 else range(n_outputs)
        return tuple(
            classes[k] if k < len(classes) else f"unseen class {k}" for k in labels
        )
    # A raw Booster's class labels are LightGBM's own: 0..num_class-1, and 1
    # for the positive class of "binary".
    if objective.startswith("multiclass"):
        return tuple(range(n_outputs))
    if objective == "binary":
        return (1,)
    return regression_output_names(n_outputs)


def _feature_names(wrapper, names):
    """The column names the model was trained with, if it had any.

    The wrappers' ``feature_names_in_`` exists only when they were fitted on a
    DataFrame. A Booster always has names; LightGBM's defaults
    ``Column_0, Column_1, ...`` mean it had none.
    """
    if wrapper is not None:
        try:
            return tuple(str(name) for name in wrapper.feature_names_in_)
        except AttributeError:
            return None
    if list(names) == [f"Column_{j}" for j in range(len(names))]:
        return None
    return tuple(names)
