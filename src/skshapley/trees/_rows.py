"""Rows as a tree model reads them: cast to float32 where it compares in
float32, its missing value marked as NaN, category codes rounded as its
library rounds them."""

import math

import numpy as np

from .._contract.input import float32_unless_float
from . import _tree_core
from ._table import TreeEnsemble


def casts_to_float32(ensemble: TreeEnsemble, X) -> bool:
    """Whether the model compares ``X`` (the rows as given) in float32.

    Where its library always casts (``float32_inputs``), or, for LightGBM,
    unless every column of ``X`` is a float64 one (its cast depends on
    ``X``'s own dtypes, lost in the float64 copy).
    """
    return ensemble.float32_inputs or (
        ensemble.float32_unless_float and float32_unless_float(X)
    )


def rounded_to_float32(rows: np.ndarray, ensemble: TreeEnsemble) -> bool:
    """Round validated ``rows`` (our own copy) to float32, in place.

    False if that gave NaN or infinity where the model has no rule for them.
    """
    has_nan, has_inf = _tree_core.round_to_float32(rows)
    return not (
        (has_nan and not ensemble.allow_nan) or (has_inf and not ensemble.allow_inf)
    )


def mark_as_the_model_reads(
    rows: np.ndarray, ensemble: TreeEnsemble, to_float32: bool
) -> None:
    """Mark the model's missing value as NaN and round category codes, in place."""
    missing = ensemble.missing_value
    if not math.isnan(missing):
        if to_float32:  # XGBoost compares float32 inputs with float32(missing)
            missing = float(np.float32(missing))
        rows[np.equal(rows, missing)] = np.nan
    if ensemble.categorical_features:
        columns = list(ensemble.categorical_features)
        rounding = np.floor if ensemble.category_rounding == "floor" else np.trunc
        rows[:, columns] = rounding(rows[:, columns])
