"""Parser for XGBoost's tree boosters (``gbtree`` and ``dart``).

The parser reads the model's own JSON (``Booster.save_raw("json")``), so
skshapley never imports xgboost. What XGBoost 3.2 does when it predicts
(``src/predictor/predict_fn.h``, ``src/common/categorical.h``,
``src/learner.cc``), and how the table reproduces it:

* Inputs are float32. A numerical node sends ``x`` left iff
  ``x < split_condition`` (float32, strict); the table stores the float32
  just below the condition, so ``x <= threshold`` is the same test for every
  float32 ``x``. ``±inf`` are ordinary values there (``inplace_predict``,
  which the scikit-learn wrappers' ``predict`` uses, accepts them; a
  ``DMatrix`` rejects them unless ``missing=inf``).
* Missing (NaN) goes to the left child iff ``default_left``.
* A categorical node lists the categories that go RIGHT; every other
  category code, negative codes and codes of 2**24 - 1 or more go left, and
  a non-integral code is truncated toward zero first. The table sends its
  bitset left and everything else right, so the children are swapped and
  the bitset holds the listed categories. Non-integral codes are the one
  thing the table cannot follow (it sends them right, i.e. to XGBoost's
  left child, while XGBoost looks up ``int(float32(x))``; flooring the
  float32 codes before routing would match); category codes are integers
  in practice.
* Pandas category columns: XGBoost (>= 3.1) stores the training categories
  (the JSON's ``cats``) and re-codes prediction frames by value against
  them; they are the table's ``category_levels``.
* A leaf's value is its ``split_conditions`` entry (the C++ model loads the
  leaf value from there); ``dart`` multiplies tree ``t`` by
  ``weight_drop[t]``.
* Cover is the node's ``sum_hessian``, what ``pred_contribs=True`` uses.
* ``learner_model_param.base_score`` is stored in output space (one value
  per output since XGBoost 3.1, a scalar before): the margin adds the
  objective's ``ProbToMargin`` of it, computed in float32 as XGBoost does.
* Tree ``t`` adds to output ``tree_info[t]`` (class or target).
"""

import json

import numpy as np
from sklearn.exceptions import NotFittedError

from ._table import BITSET_WORDS, concatenate_trees

_IDENTITY_REGRESSION = (
    "reg:squarederror",
    "reg:linear",
    "reg:squaredlogerror",
    "reg:pseudohubererror",
    "reg:absoluteerror",
    "reg:quantileerror",
)
_LOG_LINK = (
    "count:poisson",
    "reg:gamma",
    "reg:tweedie",
    "survival:cox",
    "survival:aft",
)
# Objective -> (link from base_score to the margin, raw_output); the links
# are the objectives' ProbToMargin in XGBoost 3.2.
_OBJECTIVES = {
    **dict.fromkeys(_IDENTITY_REGRESSION, ("identity", "value")),
    "reg:logistic": ("logit", "log-odds"),
    "binary:logistic": ("logit", "log-odds"),
    "binary:logitraw": ("identity", "log-odds"),
    "binary:hinge": ("identity", "margin"),
    **dict.fromkeys(_LOG_LINK, ("log", "log")),
    # Multiclass base scores are stored as margins already (InitEstimation
    # of the softmax objective); ProbToMargin is the identity.
    "multi:softprob": ("identity", "margin"),
    "multi:softmax": ("identity", "margin"),
    **dict.fromkeys(
        ("rank:pairwise", "rank:ndcg", "rank:map"), ("identity", "ranking score")
    ),
}

# XGBoost's kRtEps: the logistic base score is clamped to [eps, 1 - eps].
_LOGISTIC_EPS = np.float32(1e-6)


def parse_xgboost(model):
    """Convert a fitted XGBoost tree model into a :class:`TreeEnsemble`.

    Parameters
    ----------
    model : xgboost.XGBModel or xgboost.Booster
        ``XGBRegressor``, ``XGBClassifier``, ``XGBRanker``, ``XGBRF*`` or a
        ``Booster`` with booster ``gbtree`` or ``dart``.

    Returns
    -------
    TreeEnsemble
        Its raw output is the margin, ``predict(X, output_margin=True)``,
        with the trees the model's default prediction uses: a scikit-learn
        wrapper trained with early stopping predicts with the first
        ``best_iteration + 1`` iterations, a ``Booster`` with all of them
        (``Booster.predict`` ignores ``best_iteration``). Inputs are float32
        (category codes for categorical features); NaN and the wrapper's
        ``missing`` value are missing.

    Raises
    ------
    TypeError
        For what the table cannot reproduce exactly: the ``gblinear``
        booster, multi-output trees (``multi_strategy="multi_output_tree"``),
        unknown objectives, categories above 255.
    sklearn.exceptions.NotFittedError
        If a ``Booster`` holds no trees.
    """
    booster = model.get_booster() if hasattr(model, "get_booster") else model
    learner = json.loads(bytes(booster.save_raw(raw_format="json")))["learner"]
    gradient_booster = learner["gradient_booster"]
    kind = gradient_booster["name"]
    if kind == "dart":
        weight_drop = gradient_booster["weight_drop"]
        gradient_booster = gradient_booster["gbtree"]
    elif kind == "gbtree":
        weight_drop = None
    else:
        raise TypeError(
            f"XGBoost booster {kind!r} is not supported: only tree boosters "
            "('gbtree', 'dart') are sums of trees."
        )
    missing = getattr(model, "missing", None)
    forest = gradient_booster["model"]
    trees_json = forest["trees"]
    n_trees = _n_trees_used(model, booster, forest)
    if n_trees == 0:
        raise NotFittedError("The XGBoost model has no trees.")

    param = learner["learner_model_param"]
    objective = learner["objective"]["name"]
    if objective not in _OBJECTIVES:
        raise TypeError(
            f"XGBoost objective {objective!r} is not supported: its base score's "
            "link to the margin is unknown."
        )
    link, raw_output = _OBJECTIVES[objective]
    n_outputs = max(int(param["num_class"]), int(param.get("num_target", 1)), 1)

    trees = []
    for t in range(n_trees):
        tree_json = trees_json[t]
        if int(tree_json["tree_param"].get("size_leaf_vector", 1)) > 1:
            raise TypeError(
                "XGBoost multi-output trees (multi_strategy='multi_output_tree') "
                "are not supported; train with one_output_per_tree."
            )
        weight = 1.0 if weight_drop is None else float(np.float32(weight_drop[t]))
        trees.append(_tree(tree_json, int(forest["tree_info"][t]), weight))

    return concatenate_trees(
        trees,
        base_offset=_base_margin(param["base_score"], link, n_outputs),
        n_features=int(param["num_feature"]),
        float32_inputs=True,
        allow_nan=True,
        allow_inf=True,
        output_names=_output_names(model, param),
        raw_output=raw_output,
        # The wrappers' feature_names_in_ are their Booster's feature_names
        # (None when fitted on an array).
        feature_names=_feature_names(booster),
        categories_as_codes=True,
        category_levels=_category_levels(learner),
        # XGBoost looks categories up as floor(float32(x)); it refuses
        # categories it did not see in training.
        categorical_features=tuple(
            sorted(
                {
                    int(tree["feature"][u])
                    for tree in trees
                    for u in np.flatnonzero(tree.get("is_categorical", []))
                }
            )
        ),
        category_rounding="floor",
        unknown_categories="error",
        # A Booster's missing value is a DMatrix setting, not stored in it.
        missing_value=float(np.nan if missing is None else missing),
    )


def xgboost_categories(model):
    """The training categories XGBoost stored, per feature.

    XGBoost 3.1+ records the categories of pandas category columns seen in
    training and re-codes prediction frames by category VALUE: a row's code
    is the value's position in the training categories (unknown values are
    an error, missing ones NaN). Returns a list with one entry per feature:
    the list of training category values (position = code), or None where
    the model recorded none (numerical features, or categorical features fed
    as codes).
    """
    booster = model.get_booster() if hasattr(model, "get_booster") else model
    return _categories(
        json.loads(bytes(booster.save_raw(raw_format="json")))["learner"]
    )


def _category_levels(learner):
    """``category_levels`` for the table: tuples per feature, or None."""
    categories = _categories(learner)
    if all(levels is None for levels in categories):
        return None
    return tuple(None if levels is None else tuple(levels) for levels in categories)


def _categories(learner):
    gradient_booster = learner["gradient_booster"]
    if gradient_booster["name"] == "dart":
        gradient_booster = gradient_booster["gbtree"]
    n_features = int(learner["learner_model_param"]["num_feature"])
    encodings = gradient_booster.get("model", {}).get("cats", {}).get("enc", [])
    categories = [None] * n_features
    for j, column in enumerate(encodings):
        if "offsets" in column:  # strings: UTF-8 bytes cut at the offsets
            data = bytes(column["values"])
            offsets = column["offsets"]
            values = [
                data[offsets[i] : offsets[i + 1]].decode("utf-8")
                for i in range(len(offsets) - 1)
            ]
        else:
            values = list(column["values"])
        if values:
            categories[j] = values
    return categories


def _n_trees_used(model, booster, forest):
    """Trees the model's default ``predict`` uses (see :func:`parse_xgboost`)."""
    n_trees = len(forest["trees"])
    if model is booster:
        return n_trees
    best = booster.attr("best_iteration")
    if best is None:
        return n_trees
    iterations = int(best) + 1
    indptr = forest.get("iteration_indptr")
    if indptr is not None:
        return int(indptr[min(iterations, len(indptr) - 1)])
    per_iteration = max(1, max(forest["tree_info"], default=0) + 1) * int(
        forest["gbtree_model_param"]["num_parallel_tree"]
    )
    return min(n_trees, iterations * per_iteration)


def _tree(tree_json, output, weight):
    """Node arrays of one tree, reachable nodes only, in preorder.

    Pruned trees keep deleted nodes in their arrays; walking from the root
    drops them.
    """
    left_json = tree_json["left_children"]
    right_json = tree_json["right_children"]
    order = []
    stack = [0]
    while stack:
        node = stack.pop()
        order.append(node)
        if left_json[node] >= 0:
            stack.extend((right_json[node], left_json[node]))
    order = np.array(order, dtype=np.intp)
    new_index = np.full(len(left_json), -1, dtype=np.intp)
    new_index[order] = np.arange(len(order))

    left_old = np.asarray(left_json, dtype=np.intp)[order]
    right_old = np.asarray(right_json, dtype=np.intp)[order]
    internal = left_old >= 0
    condition = np.asarray(tree_json["split_conditions"], dtype=np.float32)[order]
    threshold = np.nextafter(condition, np.float32(-np.inf)).astype(np.float64)
    cover = np.asarray(tree_json["sum_hessian"], dtype=np.float64)[order]
    if not np.all(cover[internal] > 0):
        raise TypeError(
            "XGBoost tree with a split node of zero hessian sum: its cover ratios "
            "(the path-dependent weights) are undefined."
        )
    tree = {
        "feature": np.where(
            internal, np.asarray(tree_json["split_indices"], dtype=np.intp)[order], -1
        ),
        "threshold": np.where(internal, threshold, 0.0),
        "left": np.where(internal, new_index[np.maximum(left_old, 0)], -1),
        "right": np.where(internal, new_index[np.maximum(right_old, 0)], -1),
        "missing_left": np.asarray(tree_json["default_left"], dtype=np.uint8)[order],
        "is_categorical": np.zeros(len(order), dtype=np.uint8),
        "category_bitset": np.zeros((len(order), BITSET_WORDS), dtype=np.uint32),
        "cover": cover,
        # float32 leaf times float32 weight is exact in float64.
        "value": np.where(internal, 0.0, condition.astype(np.float64) * weight)[
            :, None
        ],
        "output": output,
    }
    _set_categorical_nodes(tree, tree_json, new_index)
    return tree


def _set_categorical_nodes(tree, tree_json, new_index):
    """Categorical splits: listed categories go right in XGBoost.

    The table sends the bitset's categories left and every other value
    (unlisted, negative, >= 256, NaN by the missing rule) right, so each
    categorical node's children are swapped and its missing rule flipped.
    """
    segments = tree_json.get("categories_segments", [])
    sizes = tree_json.get("categories_sizes", [])
    categories = tree_json.get("categories", [])
    for old, begin, size in zip(
        tree_json.get("categories_nodes", []), segments, sizes, strict=True
    ):
        u = new_index[old]
        if u < 0:  # a deleted node
            continue
        listed = categories[begin : begin + size]
        if max(listed) >= 32 * BITSET_WORDS:
            raise TypeError(
                f"XGBoost categorical split on category {max(listed)}: the tree "
                f"table's bitsets hold categories 0..{32 * BITSET_WORDS - 1} only."
            )
        tree["is_categorical"][u] = 1
        tree["left"][u], tree["right"][u] = tree["right"][u], tree["left"][u]
        tree["missing_left"][u] ^= 1
        tree["threshold"][u] = 0.0
        for c in listed:
            tree["category_bitset"][u, c // 32] |= np.uint32(1 << (c % 32))


def _base_margin(base_score, link, n_outputs):
    """The margin's constant term, in float32 as XGBoost computes it.

    ``base_score`` is '[v0,v1,...]' (XGBoost >= 3.1) or a scalar (older
    models, broadcast to every output).
    """
    values = np.array(
        [float(v) for v in base_score.strip("[]").split(",")], dtype=np.float32
    )
    if len(values) == 1:
        values = np.repeat(values, n_outputs)
    with np.errstate(divide="ignore"):
        if link == "logit":
            values = np.clip(values, _LOGISTIC_EPS, np.float32(1) - _LOGISTIC_EPS)
            values = -np.log(np.float32(1) / values - np.float32(1))
        elif link == "log":
            values = np.log(values)
    return values.astype(np.float32).astype(np.float64)


def _feature_names(booster):
    names = booster.feature_names
    return None if names is None else tuple(str(name) for name in names)


def _output_names(model, param):
    """Class labels, class indices, or "target" / "target k"."""
    n_classes = int(param["num_class"])
    n_targets = int(param.get("num_target", 1))
    classes = getattr(model, "classes_", None)
    if classes is not None:
        classes = np.asarray(classes).tolist()
        return tuple(classes if n_classes > 1 else classes[1:])
    if n_classes > 1:
        return tuple(range(n_classes))
    if n_targets > 1:
        return tuple(f"target {k}" for k in range(n_targets))
    return ("target",)
