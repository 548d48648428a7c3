"""Parser for scikit-learn's HistGradientBoostingRegressor and -Classifier.

What the predictors do (sklearn/ensemble/_hist_gradient_boosting/_predictor.pyx,
``_predict_one_from_raw_data``), on the float64 columns the predictors see:

* NaN follows ``missing_go_to_left``. For a feature without NaN in training,
  the grower sets it to the child with more training samples, so copying the
  flag reproduces predict-time routing exactly.
* Numerical splits go left iff ``x <= num_threshold`` (float64; a threshold of
  +inf is the "non-missing left, NaN right" split).
* Categorical splits look up the category code in the node's row
  ``bitset_idx`` of ``raw_left_cat_bitsets``: in it, left; else in the
  feature's ``known_cat_bitsets`` row, right; else (unknown) by the missing
  rule, like NaN and negative codes.

Categorical features always pass through the model's ``_preprocessor``: a
ColumnTransformer that puts the categorical columns first and encodes each
with an OrdinalEncoder, whose codes are positions in its ``categories_``
(values of any type: numbers, strings; unknown values become NaN, so they
also follow the missing rule). The table's features are the original column
indices; its bitsets hold those codes, and the ensemble keeps each column's
categories (``category_levels``) so that the explainer looks the input's
values up in them as the encoder does (``category_input="lookup"``).

Leaf values already include the learning rate (the grower's
``_apply_shrinkage``).
"""

import numpy as np
import pandas as pd
from sklearn.ensemble._hist_gradient_boosting.common import PREDICTOR_RECORD_DTYPE

from ..._contract.malformed import checked_count, malformed_model_errors
from ..._contract.outputs import class_output_names, regression_output_names
from ..._errors import UnsupportedModelError
from ..._runtime.limits import MAX_FEATURES
from .._table import (
    BITSET_WORDS,
    N_CATEGORIES,
    ParsedTree,
    TreeEnsemble,
    category_bitset,
    concatenate_trees,
    in_category_bitset,
    swap_children,
)
from .sklearn import fitted_feature_names

_RAW_OUTPUTS = {"IdentityLink": "value", "LogLink": "log", "LogitLink": "log-odds"}


@malformed_model_errors
def parse_hist_gradient_boosting(model) -> TreeEnsemble:
    """Convert a fitted HistGradientBoosting model into a :class:`TreeEnsemble`.

    Parameters
    ----------
    model : HistGradientBoostingRegressor or HistGradientBoostingClassifier
        A fitted model. Tree ``k`` of each boosting iteration adds to raw
        output ``k``: one output for regression and binary classification,
        one per class for multiclass classification.

    Returns
    -------
    TreeEnsemble
        Routes rows of the model's original input columns (categorical
        features as their codes, NaN allowed) exactly as
        ``model._raw_predict``; its raw output is
        ``model._raw_predict(X)`` and its base offset
        ``model._baseline_prediction``.

    Raises
    ------
    ValueError
        If the model's attributes are malformed (a tampered file).
    """
    column_of, categories = _column_map(model)
    n_outputs = len(np.ravel(model._baseline_prediction))
    trees = []
    for iteration in model._predictors:
        if len(iteration) != n_outputs:
            raise ValueError(
                f"An iteration of the model has {len(iteration)} trees for "
                f"{n_outputs} outputs; the model file may be corrupt."
            )
        for k, predictor in enumerate(iteration):
            nodes = _checked_nodes(predictor, len(column_of))
            internal = nodes["is_leaf"] == 0
            tree = ParsedTree(
                feature=np.where(internal, column_of[nodes["feature_idx"]], -1),
                threshold=nodes["num_threshold"],
                left=np.where(internal, nodes["left"].astype(np.intp), -1),
                right=np.where(internal, nodes["right"].astype(np.intp), -1),
                missing_left=nodes["missing_go_to_left"].copy(),
                # Cover: the node's training sample count (unweighted, even with
                # sample_weight; hessian sums are not stored). It is what
                # sklearn's own partial dependence and shap's TreeExplainer
                # (node_sample_weight = count) use.
                cover=nodes["count"],
                value=np.where(internal, 0.0, nodes["value"])[:, None],
                output=k,
                is_categorical=(internal & (nodes["is_categorical"] == 1)).astype(
                    np.uint8
                ),
                category_bitset=np.zeros((len(nodes), BITSET_WORDS), np.uint32),
            )
            for u in np.flatnonzero(tree.is_categorical):
                f = nodes["feature_idx"][u]
                if categories[f] is None:
                    raise UnsupportedModelError(
                        "Categorical splits on features that bypass the model's "
                        "internal OrdinalEncoder are not supported."
                    )
                left_codes = _checked_bitsets(predictor)[nodes["bitset_idx"][u]]
                known_codes = _known_codes(model, f)
                _set_categorical_node(
                    tree, u, len(categories[f]), left_codes, known_codes
                )
            trees.append(tree)

    if not trees:
        raise ValueError("The model has no trees; the model file may be corrupt.")
    if hasattr(model, "classes_"):
        output_names = class_output_names(model.classes_.tolist(), n_outputs)
    else:
        output_names = regression_output_names(1)
    return concatenate_trees(
        trees,
        base_offset=np.ravel(model._baseline_prediction),
        n_features=model.n_features_in_,
        float32_inputs=False,
        allow_nan=True,
        # Numerical columns accept ±inf; sklearn rejects inf in categorical
        # columns (its OrdinalEncoder), where the table would treat it as an
        # unknown category.
        allow_inf=True,
        output_names=output_names,
        raw_output=_RAW_OUTPUTS.get(type(model._loss.link).__name__, "margin"),
        feature_names=fitted_feature_names(model),
        **_category_fields(column_of, categories, model.n_features_in_),
    )


def _category_fields(column_of, categories, n_features: int) -> dict:
    """The ensemble's category fields: each original column's categories."""
    levels = [None] * n_features
    for f, values in enumerate(categories):
        if values is not None:
            levels[column_of[f]] = tuple(values)
    return {
        "category_input": "lookup",
        "category_levels": tuple(levels),
        "categorical_features": tuple(
            j for j, values in enumerate(levels) if values is not None
        ),
        "unknown_categories": "missing",
    }


def _set_categorical_node(
    tree: ParsedTree, u: int, n_categories: int, left_codes, known_codes
) -> None:
    """Write node ``u``'s split, on the category codes, into ``tree``.

    In sklearn, category code ``c`` (0 .. ``n_categories - 1``) goes left if
    it is in ``left_codes``, else right if it is in ``known_codes``, else by
    the missing rule; NaN (missing or unknown values) follows the missing
    rule. The table sends every value outside its bitset right (NaN by
    ``missing_left``), so if sklearn's missing side is left the children
    are swapped; the bitset then lists the codes on the other side.
    """
    missing_left = bool(tree.missing_left[u])
    if missing_left:
        swap_children(tree, u)
    other_side = []
    for code in range(n_categories):
        if in_category_bitset(left_codes, code):
            goes_left = True
        elif in_category_bitset(known_codes, code):
            goes_left = False
        else:
            goes_left = missing_left
        if goes_left != missing_left:
            other_side.append(code)
    tree.category_bitset[u] |= category_bitset(other_side)


def _checked_nodes(predictor, n_features: int) -> np.ndarray:
    """A predictor's node records, checked against scikit-learn's layout.

    Children are checked with the table; here the record layout and the
    split features, which index the column map.
    """
    nodes = predictor.nodes
    if (
        not isinstance(nodes, np.ndarray)
        or nodes.dtype != PREDICTOR_RECORD_DTYPE
        or nodes.ndim != 1
        or len(nodes) == 0
    ):
        raise ValueError(
            "The model's tree predictors must hold non-empty node arrays of "
            "scikit-learn's record type; the model file may be corrupt."
        )
    internal = nodes["is_leaf"] == 0
    if np.any(nodes["feature_idx"][internal] >= n_features):
        raise ValueError(
            "A tree of the model splits on a feature it does not have; the "
            "model file may be corrupt."
        )
    return nodes


def _checked_bitsets(predictor) -> np.ndarray:
    """A predictor's left-category bitsets: uint32 rows of 8 words."""
    bitsets = predictor.raw_left_cat_bitsets
    if (
        not isinstance(bitsets, np.ndarray)
        or bitsets.dtype != np.uint32
        or bitsets.ndim != 2
        or bitsets.shape[1] != BITSET_WORDS
    ):
        raise ValueError(
            "The model's category bitsets must be uint32 rows of 8 words; the "
            "model file may be corrupt."
        )
    return bitsets


def _known_codes(model, feature: int) -> np.ndarray:
    """The bitset of the category codes seen in training for ``feature``.

    What the bin mapper's ``make_known_categories_bitsets`` gives, computed
    here: it writes bits without bounds checks, so codes from a file are
    checked (integers 0..255) first.
    """
    codes = np.asarray(model._bin_mapper.bin_thresholds_[feature], dtype=np.float64)
    if codes.ndim != 1 or not np.all(
        (codes >= 0) & (codes < N_CATEGORIES) & (codes == np.floor(codes))
    ):
        raise ValueError(
            f"The categories of feature {feature} must be the codes 0..255; the "
            "model file may be corrupt."
        )
    return category_bitset(codes)


def _column_map(model):
    """Original column of each predictor feature, and its categories.

    Returns ``column_of`` (intp array over the predictors' features) and
    ``categories`` (per predictor feature: the OrdinalEncoder's categories,
    code ``c`` standing for ``categories[c]``, without the missing value; or
    None for numerical features).
    """
    n_features = checked_count(model, "n_features_in_", MAX_FEATURES)
    preprocessor = getattr(model, "_preprocessor", None)
    if preprocessor is None:
        return np.arange(n_features), [None] * n_features

    column_of = np.empty(n_features, dtype=np.intp)
    for name, _, columns in preprocessor.transformers_:
        column_of[preprocessor.output_indices_[name]] = np.arange(n_features)[columns]
    categories = [None] * n_features
    encoder = preprocessor.named_transformers_["encoder"]
    start = preprocessor.output_indices_["encoder"].start
    for i, values in enumerate(encoder.categories_):
        values = list(values)
        if values and pd.isna(values[-1]):  # NaN is the last, code-less entry
            values = values[:-1]
        if len(values) > N_CATEGORIES:
            raise ValueError(
                f"Categorical feature {column_of[start + i]} has {len(values)} "
                f"categories, more than HistGradientBoosting's {N_CATEGORIES - 1}; "
                "the model file may be corrupt."
            )
        categories[start + i] = values
    return column_of, categories
