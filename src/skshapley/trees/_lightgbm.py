"""Parser for LightGBM's boosters and its scikit-learn wrappers.

The trees are read from ``Booster.dump_model()``. What prediction does
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
  toward zero) goes left iff ``c`` is in the split's bitset (the categories
  listed in the dumped threshold ``"0||3||5"``), else right.

The table expresses this with:

* missing type "None": NaN goes where 0.0 goes (``0 <= threshold``);
* "Zero": zero-as-missing (bit 1) to the default side, NaN too;
* "NaN": NaN to the default side;
* the replacement of tiny values by 0.0 only changes a route when the
  threshold lies in ``[-kZeroThreshold, kZeroThreshold)``; such thresholds
  are moved to the equivalent ``kZeroThreshold`` (threshold >= 0) or just
  below ``-kZeroThreshold`` (threshold < 0), which routes every non-NaN
  value as LightGBM does;
* categorical nodes: the dumped categories as the left bitset, NaN right.

The explainer (not the table) reproduces the truncation of non-integral category
codes (LightGBM sends 2.5 where 2 goes, -0.5 where 0 goes; the table sends
them right), and, on "Zero" nodes, values with
``1e-35 < |x| <= kZeroThreshold`` (LightGBM: missing; the table, whose
zero-as-missing bound is 1e-35: compared with the threshold).

Cover is the nodes' sample count (``internal_count``, ``leaf_count``): what
LightGBM's own ``pred_contrib`` TreeSHAP and its ``ExpectedValue`` use
(``internal_weight``, the hessian sum, is not).

``boost_from_average`` (and, in random-forest mode, the per-tree bias) is
already added to the leaf values of the first trees, so the base offset is
zero. In random-forest mode (``average_output``) the leaf values are divided
by the number of iterations: the raw output is what ``predict`` transforms
(LightGBM's own ``raw_score=True`` and ``pred_contrib=True`` return the
un-averaged sum, the number of iterations times larger). DART models are
saved with their trees' final weights, so they need nothing special.
"""

import numpy as np

from ._table import BITSET_WORDS, concatenate_trees

# LightGBM's kZeroThreshold: ``const double kZeroThreshold = 1e-35f``.
_K_ZERO = float(np.float32(1e-35))

_MISSING_TYPES = ("None", "Zero", "NaN")

_RAW_OUTPUTS = {
    "regression": "value",
    "regression_l1": "value",
    "huber": "value",
    "fair": "value",
    "quantile": "value",
    "mape": "value",
    "poisson": "log",
    "gamma": "log",
    "tweedie": "log",
    "binary": "log-odds",
    "cross_entropy": "log-odds",
    "multiclassova": "log-odds",
    "multiclass": "margin",
    "lambdarank": "ranking score",
    "rank_xendcg": "ranking score",
}


def parse_lightgbm(model):
    """Convert a LightGBM model into a :class:`TreeEnsemble`.

    Parameters
    ----------
    model : lightgbm.Booster, LGBMRegressor, LGBMClassifier or LGBMRanker
        A trained model (the wrappers' ``booster_`` is read). Tree ``t``
        adds to output ``t % num_tree_per_iteration``: one output, or one per
        class for multiclass objectives.

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
    TypeError
        For linear trees (``linear_tree=True``: leaves are linear models, not
        constants), or categorical splits that send a category above 255
        left (the table's bitsets hold 0..255).
    """
    booster = getattr(model, "booster_", model)
    # Booster.predict's default: best_iteration if > 0, else every iteration.
    dump = booster.dump_model(num_iteration=booster.best_iteration)
    n_per_iteration = dump["num_tree_per_iteration"]
    tree_info = dump["tree_info"]
    n_iterations = max(1, len(tree_info) // n_per_iteration)
    scale = 1.0 / n_iterations if dump.get("average_output", False) else 1.0
    trees = [
        _tree_arrays(
            info["tree_structure"], scale, info["tree_index"] % n_per_iteration
        )
        for info in tree_info
    ]
    if not trees:
        raise TypeError("The LightGBM model has no trees.")

    objective = str(dump.get("objective", "")).split()
    name = objective[0] if objective else ""
    return concatenate_trees(
        trees,
        base_offset=np.zeros(n_per_iteration),
        n_features=booster.num_feature(),
        float32_inputs=False,
        allow_nan=True,
        allow_inf=True,
        output_names=_output_names(model, n_per_iteration, name),
        raw_output=_raw_output(objective),
        feature_names=_feature_names(model, booster),
        categories_as_codes=True,
        float32_unless_float=True,
        **_categorical_features(dump, booster, trees),
    )


def _categorical_features(dump, booster, trees) -> dict:
    """Which features LightGBM treats as categorical, and their categories.

    Categorical features are those whose ``feature_infos`` list values, and
    any feature of a categorical split. LightGBM truncates their values to
    integers before routing; for pandas categorical columns it counts codes
    in the training categories (``pandas_categorical``, one list per
    categorical column, in order).
    """
    infos = dump.get("feature_infos", {})
    categorical = [
        j
        for j, name in enumerate(dump["feature_names"])
        if isinstance(infos.get(name), dict) and infos[name].get("values")
    ]
    split_on = {
        int(tree["feature"][u])
        for tree in trees
        for u in np.flatnonzero(tree["is_categorical"])
    }
    fields = {
        "categorical_features": tuple(sorted(split_on.union(categorical))),
        "category_rounding": "trunc",
    }
    pandas_categorical = getattr(booster, "pandas_categorical", None)
    if pandas_categorical and len(pandas_categorical) == len(categorical):
        levels = [None] * booster.num_feature()
        for j, categories in zip(categorical, pandas_categorical, strict=True):
            levels[j] = tuple(categories)
        fields["category_levels"] = tuple(levels)
    return fields


def _tree_arrays(structure, scale, output) -> dict:
    """Node arrays of one dumped tree, nodes numbered in preorder."""
    nodes = []
    stack = [(structure, -1, False)]  # (node, parent index, is right child)
    left, right = [], []
    while stack:
        node, parent, is_right = stack.pop()
        index = len(nodes)
        nodes.append(node)
        left.append(-1)
        right.append(-1)
        if parent >= 0:
            (right if is_right else left)[parent] = index
        if "leaf_value" not in node:
            # Right pushed first: the left child gets the next index.
            stack.append((node["right_child"], index, True))
            stack.append((node["left_child"], index, False))

    n_nodes = len(nodes)
    tree = {
        "feature": np.full(n_nodes, -1, dtype=np.intp),
        "threshold": np.zeros(n_nodes),
        "left": np.array(left, dtype=np.intp),
        "right": np.array(right, dtype=np.intp),
        "missing_left": np.zeros(n_nodes, dtype=np.uint8),
        "is_categorical": np.zeros(n_nodes, dtype=np.uint8),
        "category_bitset": np.zeros((n_nodes, BITSET_WORDS), dtype=np.uint32),
        "cover": np.ones(n_nodes),
        "value": np.zeros((n_nodes, 1)),
        "output": output,
    }
    for u, node in enumerate(nodes):
        if "leaf_value" in node:
            if "leaf_coeff" in node or "leaf_const" in node:
                raise TypeError(
                    "LightGBM models with linear trees (linear_tree=True) are not "
                    "supported: their leaves are linear models of the features, "
                    "not constants, so paths are not product games."
                )
            tree["value"][u, 0] = node["leaf_value"] * scale
            # A tree without splits records no count; its cover is unused.
            tree["cover"][u] = node.get("leaf_count", 1)
            continue
        tree["feature"][u] = node["split_feature"]
        tree["cover"][u] = node["internal_count"]
        if node["decision_type"] == "==":
            _set_categorical_node(tree, u, node)
        else:
            _set_numerical_node(tree, u, node)
    return tree


def _set_numerical_node(tree, u, node):
    threshold = float(node["threshold"])
    # LightGBM replaces |x| <= kZeroThreshold by 0.0 before routing: the
    # threshold is moved to where the table, comparing x itself, routes every
    # non-NaN value the same way.
    if -_K_ZERO <= threshold < _K_ZERO:
        threshold = _K_ZERO if threshold >= 0 else np.nextafter(-_K_ZERO, -np.inf)
    tree["threshold"][u] = threshold
    missing_type = node["missing_type"]
    if missing_type not in _MISSING_TYPES:
        raise TypeError(f"Unknown LightGBM missing_type {missing_type!r}.")
    if missing_type == "None":
        # NaN is replaced by 0.0.
        tree["missing_left"][u] = threshold >= 0.0
    else:
        rule = int(bool(node["default_left"]))
        if missing_type == "Zero":
            rule |= 2
        tree["missing_left"][u] = rule


def _set_categorical_node(tree, u, node):
    """The dumped categories go left; NaN, negative and others go right."""
    tree["is_categorical"][u] = 1
    tree["missing_left"][u] = 0
    for category in str(node["threshold"]).split("||"):
        c = int(category)
        if not 0 <= c < 32 * BITSET_WORDS:
            raise TypeError(
                f"A categorical split on feature {node['split_feature']} sends "
                f"category {c} left; the tree table's category bitsets hold "
                f"categories 0..{32 * BITSET_WORDS - 1} only."
            )
        tree["category_bitset"][u, c // 32] |= np.uint32(1 << (c % 32))


def _raw_output(objective) -> str:
    """What the raw score is, from the dumped objective ("binary sigmoid:1")."""
    name = objective[0] if objective else ""
    options = dict(token.split(":", 1) for token in objective[1:] if ":" in token)
    if "sqrt" in objective[1:]:
        return "margin"  # reg_sqrt: predict squares the raw score
    if float(options.get("sigmoid", 1.0)) != 1.0:
        return "margin"  # predict applies sigmoid(sigmoid * raw)
    return _RAW_OUTPUTS.get(name, "margin")


def _output_names(model, n_outputs, objective) -> tuple:
    classes = getattr(model, "classes_", None)
    if classes is not None:
        classes = np.asarray(classes).tolist()
        return tuple(classes[1:] if len(classes) == 2 else classes)
    # A raw Booster's class labels are LightGBM's own: 0..num_class-1, and 1
    # for the positive class of "binary".
    if objective.startswith("multiclass"):
        return tuple(range(n_outputs))
    if objective == "binary":
        return (1,)
    if n_outputs == 1:
        return ("target",)
    return tuple(f"target {k}" for k in range(n_outputs))


def _feature_names(model, booster):
    """The column names the model was trained with, if it had any.

    The wrappers' ``feature_names_in_`` exists only when they were fitted on a
    DataFrame. A Booster always has names; LightGBM's defaults
    ``Column_0, Column_1, ...`` mean it had none.
    """
    if model is not booster:
        try:
            names = model.feature_names_in_
        except AttributeError:
            return None
        return tuple(str(name) for name in names)
    names = [str(name) for name in booster.feature_name()]
    if names == [f"Column_{j}" for j in range(len(names))]:
        return None
    return tuple(names)
