"""Parser for XGBoost's tree boosters (``gbtree`` and ``dart``).

The parser reads the model's own JSON (``Booster.save_raw("json")``), or
the same document read from a file (``_xgboost_file``), so skshapley never
imports xgboost; every field it reads is checked first
(``_xgboost_document``). What XGBoost (2.0 to 3.4) does when it predicts
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
  a non-negative non-integral code is truncated toward zero first. The
  table sends its bitset left and everything else right, so the children
  are swapped (:func:`._table.swap_children`) and the bitset holds the
  listed categories. The table alone would send non-integral codes right;
  the explainer floors the float32 values of categorical features before
  routing (``category_rounding="floor"``), which for non-negative codes is
  XGBoost's truncation and keeps negative ones negative.
* Pandas category columns: XGBoost (>= 3.1) stores the training categories
  (the JSON's ``cats``) and re-codes prediction frames by value against
  them; they are the table's ``category_levels``.
* A leaf's value is its ``split_conditions`` entry (the C++ model loads the
  leaf value from there); DART multiplies tree ``t`` by ``weight_drop[t]``
  (where each release writes it: :func:`_forest`).
* Cover is the node's ``sum_hessian``, what ``pred_contribs=True`` uses.
* ``learner_model_param.base_score`` is stored in output space (one value
  per output since XGBoost 3.1, a scalar before): the margin adds the
  objective's ``ProbToMargin`` of it, computed in float32 as XGBoost does.
* Tree ``t`` adds to output ``tree_info[t]`` (class or target).
"""

import itertools
import json

import numpy as np
from sklearn.exceptions import NotFittedError

from ...._contract.outputs import class_output_names, regression_output_names
from ...._errors import UnsupportedModelError
from ...._runtime.limits import INT32_MAX, MAX_FEATURES, MAX_OUTPUTS
from ..._table import TreeEnsemble, concatenate_trees
from . import document as doc
from .document import MalformedModel
from .fields import check_known_fields
from .trees import parse_tree

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
    # XGBoost >= 3.3: one target per expectile; targets after the first
    # predict softplus increments over the previous one (non-crossing).
    "reg:expectileerror": ("increments", "margin"),
    **dict.fromkeys(_LOG_LINK, ("log", "log")),
    # Multiclass base scores are stored as margins already (InitEstimation
    # of the softmax objective); ProbToMargin is the identity.
    "multi:softprob": ("identity", "margin"),
    "multi:softmax": ("identity", "margin"),
    **dict.fromkeys(
        ("rank:pairwise", "rank:ndcg", "rank:map"), ("identity", "ranking score")
    ),
}

# XGBoost's kRtEps: the logistic base score is clamped to [eps, 1 - eps];
# expectiles' increments are at least eps.
_RT_EPS = np.float32(1e-6)


def parse_xgboost(model) -> TreeEnsemble:
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
    best = None if model is booster else booster.attr("best_iteration")
    # A Booster's missing value is a DMatrix setting, not stored in it.
    missing = getattr(model, "missing", None)
    return parse_document(
        json.loads(bytes(booster.save_raw(raw_format="json"))),
        source="the XGBoost model",
        missing_value=np.nan if missing is None else float(missing),
        classes=getattr(model, "classes_", None),
        best_iteration=None if best is None else int(best),
    )


def parse_document(
    document,
    *,
    source: str,
    missing_value: float = np.nan,
    classes=None,
    best_iteration: int | None = None,
) -> TreeEnsemble:
    """Convert an XGBoost model document into a :class:`TreeEnsemble`.

    Parameters
    ----------
    document : dict
        What XGBoost saves (``{"learner": ..., "version": ...}``), decoded
        from JSON or UBJSON; it is checked field by field.
    source : str
        What the document is, for messages ("model.json").
    missing_value : float, default=nan
        The input value that is missing besides NaN (XGBoost's ``missing``).
    classes : array-like or None, default=None
        Class labels of a scikit-learn wrapper, for the outputs' names.
    best_iteration : int or None, default=None
        Predict with the first ``best_iteration + 1`` iterations only.

    Raises
    ------
    ValueError
        ``"<source> is not a valid XGBoost model: <what is wrong>"`` if a
        field the trees need is missing, has the wrong type or length, or
        is out of range (children forming no tree, features or outputs
        beyond the model's, non-finite leaf values, base score or covers).
    TypeError, sklearn.exceptions.NotFittedError
        As :func:`parse_xgboost`; also ``TypeError`` for a field that the
        XGBoost releases skshapley knows do not write where predictions are
        read from (:mod:`._xgboost_fields`).
    """
    try:
        ensemble = _ensemble(document, missing_value, classes, best_iteration)
    except MalformedModel as exc:
        raise ValueError(f"{source} is not a valid XGBoost model: {exc}.") from exc
    # After the parse, whose refusals say more (a multi-output tree's
    # fields, say, are unknown here but refused there by what they are).
    check_known_fields(document, source)
    return ensemble


def _ensemble(document, missing_value, classes, best_iteration):
    learner = doc.mapping(document, "learner", "")
    forest, path, weight_drop = _forest(learner)
    param = doc.mapping(learner, "learner_model_param", "learner")
    ppath = "learner.learner_model_param"
    n_features = doc.integer(param, "num_feature", ppath, low=1, high=MAX_FEATURES)
    n_classes = doc.integer(param, "num_class", ppath, low=0, high=MAX_OUTPUTS)
    n_targets = doc.integer(
        param, "num_target", ppath, low=1, high=MAX_OUTPUTS, default=1
    )
    if n_classes > 1 and n_targets > 1:
        raise MalformedModel(f"{ppath} has both classes and targets")
    n_outputs = max(n_classes, n_targets, 1)
    objective = doc.text(
        doc.mapping(learner, "objective", "learner"), "name", "learner.objective"
    )
    if objective not in _OBJECTIVES:
        raise UnsupportedModelError(
            f"XGBoost objective {objective!r:.60} is not supported: its base "
            "score's link to the margin is unknown."
        )
    link, raw_output = _OBJECTIVES[objective]
    base_offset = _base_margin(doc.text(param, "base_score", ppath), link, n_outputs)

    trees_json = doc.sequence(forest, "trees", path)
    tree_info = doc.numbers(forest, "tree_info", path, np.int64, length=len(trees_json))
    if np.any((tree_info < 0) | (tree_info >= n_outputs)):
        raise MalformedModel(
            f"{path}.tree_info names outputs outside 0 to {n_outputs - 1}"
        )
    n_trees = _n_trees_used(forest, path, tree_info, best_iteration)
    if n_trees == 0:
        raise NotFittedError("The XGBoost model has no trees.")
    trees = [
        parse_tree(
            trees_json[t],
            doc.join(f"{path}.trees", t),
            int(tree_info[t]),
            np.float32(1) if weight_drop is None else weight_drop[t],
            n_features,
        )
        for t in range(n_trees)
    ]
    return concatenate_trees(
        trees,
        base_offset=base_offset,
        n_features=n_features,
        float32_inputs=True,
        allow_nan=True,
        allow_inf=True,
        output_names=_output_names(classes, n_classes, n_targets),
        raw_output=raw_output,
        # The wrappers' feature_names_in_ are their Booster's feature_names
        # (none when fitted on an array).
        feature_names=_feature_names(learner, n_features),
        category_input="codes",
        category_levels=_category_levels(forest, path, n_features),
        # XGBoost looks categories up as floor(float32(x)); it refuses
        # categories it did not see in training.
        categorical_features=_categorical_features(learner, trees),
        category_rounding="floor",
        unknown_categories="error",
        missing_value=missing_value,
    )


def _forest(learner):
    """The trees' object, its path, and DART's tree weights (float32) or None.

    XGBoost has written DART's tree weights, ``weight_drop``, in three
    places: up to 3.2 a ``"dart"`` booster holds them beside its
    ``gbtree`` (whose ``model`` holds the trees); 3.3 writes a ``"gbtree"``
    booster with them beside its ``model``; 3.4 inside ``model``. XGBoost 3.4
    reads all three; older releases do not read the newer places (3.2 takes
    a 3.4 DART model for an unweighted one). The weights are read from
    wherever the writer put them; a document with weights in two places is
    refused, since releases disagree on which wins. An empty list means no
    weights, as in XGBoost 3.4 (a tree booster trained without dropout).
    """
    path = "learner.gradient_booster"
    gradient_booster = doc.mapping(learner, "gradient_booster", "learner")
    kind = doc.text(gradient_booster, "name", path)
    if kind not in ("gbtree", "dart"):
        raise UnsupportedModelError(
            f"XGBoost booster {kind!r:.60} is not supported: only tree boosters "
            "('gbtree', 'dart') are sums of trees."
        )
    owner, owner_path = gradient_booster, path
    if kind == "dart":
        owner, owner_path = doc.mapping(owner, "gbtree", path), f"{path}.gbtree"
    forest = doc.mapping(owner, "model", owner_path)
    forest_path = f"{owner_path}.model"
    places = [
        (parent, parent_path)
        for parent, parent_path in ((gradient_booster, path), (forest, forest_path))
        if "weight_drop" in parent
    ]
    if len(places) > 1:
        raise MalformedModel(
            f"{path}.weight_drop and {forest_path}.weight_drop are both present "
            "(XGBoost releases disagree on which one holds the tree weights)"
        )
    if not places:
        return forest, forest_path, None
    ((parent, parent_path),) = places
    weight_drop = doc.numbers(parent, "weight_drop", parent_path, np.float32)
    n_trees = len(doc.sequence(forest, "trees", forest_path))
    if len(weight_drop) and len(weight_drop) != n_trees:
        raise MalformedModel(
            f"{parent_path}.weight_drop has {len(weight_drop)} entries for "
            f"{n_trees} trees"
        )
    if not np.all(np.isfinite(weight_drop)):
        raise MalformedModel(f"{parent_path}.weight_drop holds non-finite weights")
    return forest, forest_path, weight_drop if len(weight_drop) else None


def _n_trees_used(forest, path, tree_info, best_iteration):
    """Trees the model's default ``predict`` uses (see :func:`parse_xgboost`)."""
    n_trees = len(tree_info)
    param = doc.mapping(forest, "gbtree_model_param", path)
    ppath = f"{path}.gbtree_model_param"
    doc.integer(param, "num_trees", ppath, low=n_trees, high=n_trees)
    per_tree = doc.integer(param, "num_parallel_tree", ppath, low=1, high=INT32_MAX)
    indptr = doc.numbers(forest, "iteration_indptr", path, np.int64, required=False)
    if len(indptr) and (
        indptr[0] != 0 or indptr[-1] != n_trees or np.any(np.diff(indptr) < 0)
    ):
        raise MalformedModel(
            f"{path}.iteration_indptr must rise from 0 to the number of trees, "
            f"{n_trees}"
        )
    if best_iteration is None:
        return n_trees
    iterations = best_iteration + 1
    if len(indptr):
        return int(indptr[min(iterations, len(indptr) - 1)])
    per_iteration = (int(tree_info.max(initial=0)) + 1) * per_tree
    return min(n_trees, iterations * per_iteration)


def _category_levels(forest, path, n_features):
    """``category_levels`` for the table: tuples per feature, or None."""
    categories = _categories(forest, path, n_features)
    if all(levels is None for levels in categories):
        return None
    return tuple(None if levels is None else tuple(levels) for levels in categories)


def _categories(forest, path, n_features):
    """Per feature, the training categories XGBoost recorded, or None."""
    cats = doc.member(forest, "cats", path, {}, required=False)
    encodings = doc.sequence(cats, "enc", f"{path}.cats", required=False)
    if len(encodings) > n_features:
        raise MalformedModel(
            f"{path}.cats.enc has {len(encodings)} entries for {n_features} features"
        )
    categories = [None] * n_features
    for j, column in enumerate(encodings):
        cpath = doc.join(f"{path}.cats.enc", j)
        if isinstance(column, dict) and "offsets" in column:
            values = _strings(column, cpath)
        else:
            doc.numbers(column, "values", cpath, np.float64)
            values = doc.sequence(column, "values", cpath)
        if values:
            categories[j] = values
    _check_lookup(cats, f"{path}.cats", categories)
    return categories


def _check_lookup(cats, path, categories):
    """The index XGBoost searches categories with must fit them exactly.

    XGBoost finds a prediction frame's category by binary search through
    ``sorted_idx``, the order of each feature's categories within its
    ``feature_segments``; an index that does not sort them (a file edited
    by hand) would send values to other categories than their own, and
    repeated categories make the search ambiguous: both are refused.
    """
    if all(levels is None for levels in categories):
        return
    sizes = [0 if levels is None else len(levels) for levels in categories]
    segments = doc.numbers(cats, "feature_segments", path, np.int64)
    expected = np.concatenate([[0], np.cumsum(sizes)])
    if len(segments) < len(expected) or np.any(segments[: len(expected)] != expected):
        raise MalformedModel(
            f"{path}.feature_segments must count each feature's categories "
            f"({expected.tolist()[:12]}), got {segments.tolist()[:12]}"
        )
    order = doc.numbers(cats, "sorted_idx", path, np.int64, length=int(expected[-1]))
    for j, levels in enumerate(categories):
        if levels is None:
            continue
        local = order[expected[j] : expected[j + 1]]
        if sorted(local.tolist()) != list(range(len(levels))):
            raise MalformedModel(
                f"{path}.sorted_idx is not an order of feature {j}'s categories"
            )
        ranked = [levels[k] for k in local]
        if any(a >= b for a, b in itertools.pairwise(ranked)):
            raise MalformedModel(
                f"{path}.sorted_idx does not sort feature {j}'s categories, or "
                "they repeat (XGBoost finds a category by it)"
            )


def _strings(column, path):
    """String categories: UTF-8 bytes cut at the offsets."""
    data = doc.numbers(column, "values", path, np.uint8).tobytes()
    offsets = doc.numbers(column, "offsets", path, np.int64).tolist()
    if not offsets and not data:
        return []
    if (
        not offsets
        or offsets[0] != 0
        or offsets[-1] != len(data)
        or offsets != sorted(offsets)
    ):
        raise MalformedModel(
            f"{path}.offsets must rise from 0 to the {len(data)} bytes of its values"
        )
    try:
        return [data[a:b].decode("utf-8") for a, b in itertools.pairwise(offsets)]
    except UnicodeDecodeError as exc:
        raise MalformedModel(f"{path}.values is not UTF-8") from exc


def _base_margin(base_score, link, n_outputs):
    """The margin's constant term, in float32 as XGBoost computes it.

    ``base_score`` is '[v0,v1,...]' (XGBoost >= 3.1) or a scalar (older
    models, broadcast to every output).
    """
    try:
        with np.errstate(over="ignore"):  # beyond float32: inf, refused below
            values = np.array(
                [float(v) for v in base_score.strip("[]").split(",")],
                dtype=np.float32,
            )
    except ValueError as exc:
        raise MalformedModel(
            f"learner.learner_model_param.base_score {base_score!r:.60} is not "
            "a number or a list of numbers"
        ) from exc
    if len(values) == 1:
        values = np.repeat(values, n_outputs)
    if link == "logit" and not np.all((values >= 0) & (values <= 1)):
        # A probability (0 and 1 are clamped below); XGBoost refuses to
        # load other values too.
        raise MalformedModel(
            f"learner.learner_model_param.base_score {base_score!r:.60} must "
            "be in [0, 1] for a logistic objective"
        )
    with np.errstate(divide="ignore", invalid="ignore", over="ignore"):
        if link == "logit":
            values = np.clip(values, _RT_EPS, np.float32(1) - _RT_EPS)
            values = -np.log(np.float32(1) / values - np.float32(1))
        elif link == "log":
            values = np.log(values)
        elif link == "increments":
            values = _softplus_increments(values)
    if len(values) != n_outputs or not np.all(np.isfinite(values)):
        raise MalformedModel(
            f"learner.learner_model_param.base_score {base_score!r:.60} does not "
            f"give {n_outputs} finite margin(s)"
        )
    return values.astype(np.float32).astype(np.float64)


def _categorical_features(learner, trees):
    """The categorical features, sorted: declared ``"c"`` or split by category.

    XGBoost splits a feature by category only if its declared type is
    ``"c"``, and then never by threshold. The table floors such a feature's
    values before every split on it (XGBoost truncates at categorical
    splits only), so a file that mixes both kinds on one feature, or splits
    a feature declared numeric by category, is refused: explained, it would
    not add up to XGBoost's prediction.
    """
    by_category, by_threshold = set(), set()
    for tree in trees:
        internal = tree.feature >= 0
        kinds = np.zeros(len(tree.feature), bool)
        if tree.is_categorical is not None:
            kinds = tree.is_categorical.astype(bool)
        by_category.update(tree.feature[internal & kinds].tolist())
        by_threshold.update(tree.feature[internal & ~kinds].tolist())
    both = sorted(by_category & by_threshold)
    if both:
        raise MalformedModel(
            f"feature {both[0]} is split both by category and by threshold "
            "(XGBoost splits a feature one way only)"
        )
    types = doc.sequence(learner, "feature_types", "learner", required=False)
    # (A feature beyond the types is refused with the table's checks.)
    numeric = [j for j in sorted(by_category) if j < len(types) and types[j] != "c"]
    if numeric:
        j = numeric[0]
        raise MalformedModel(
            f"feature {j} is split by category, but learner.feature_types "
            f"declares it {types[j]!r:.20}, not 'c' (categorical)"
        )
    # Declared categorical but never split on (say, an uninformative pandas
    # category column): read as a category too, so that the data's column
    # is accepted as XGBoost accepts it (its values are 0).
    declared = {j for j, kind in enumerate(types) if kind == "c"}
    return tuple(sorted(by_category | declared))


def _softplus_increments(values):
    """Expectile base scores to margins: ``ProbToMargin`` of XGBoost 3.3-3.4.

    The first target's margin is its base score; target ``j``'s is the
    inverse softplus of its gap to target ``j - 1``, less ``kRtEps`` and at
    least ``kRtEps``, in float32.
    """
    margins = values.copy()
    gaps = np.maximum(values[1:] - values[:-1] - _RT_EPS, _RT_EPS)
    margins[1:] = gaps + np.log(-np.expm1(-gaps))
    return margins


def _feature_names(learner, n_features):
    """The feature names saved with the model, or None; types are checked too."""
    names = None
    for key in ("feature_names", "feature_types"):
        values = doc.sequence(learner, key, "learner", required=False)
        if values and (
            len(values) != n_features or not all(isinstance(v, str) for v in values)
        ):
            raise MalformedModel(
                f"learner.{key} must be {n_features} strings, one per feature"
            )
        if key == "feature_names" and values:
            names = tuple(values)
    return names


def _output_names(classes, n_classes, n_targets):
    """Class labels, class indices, or "target" / "target k"."""
    if classes is not None:
        return class_output_names(np.asarray(classes).tolist(), max(n_classes, 1))
    if n_classes > 1:
        return tuple(range(n_classes))
    return regression_output_names(n_targets)
