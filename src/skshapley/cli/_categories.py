"""Columns read from a file as the model's categories, as its ``predict`` reads them.

XGBoost and LightGBM models fitted on pandas categories record each such
column's training categories, and look a prediction frame's values up in
them, by value (HistGradientBoosting does the same with its categorical
features' categories). A CSV file holds no categories (its columns arrive as text
or numbers) and a Parquet file holds them only sometimes, so the command
turns each column that the model learned as a category into a pandas
category of its values, typed as the training categories are (the text
``"3"`` of a CSV column matches the training category ``3``, and the number
``3`` matches ``"3"``). The explainer then looks the values up exactly as
for the same DataFrame in Python; a value the model did not see follows the
model's own rule (LightGBM: missing; XGBoost: refused, naming it).
"""

import numpy as np
import pandas as pd

from .._contract.pipeline import final_estimator
from .._errors import UnsupportedModelError
from ..trees._readers.dispatch import parse_model


def model_categories(model) -> dict[str, tuple]:
    """The training categories of each column ``model`` learned as a category.

    For XGBoost and LightGBM models fitted on pandas categories, and for
    HistGradientBoosting's categorical features (whose values are looked up
    by value too: the text ``"1"`` of a file is not its category ``1``).
    Empty for other models and for pipelines, whose own steps read the
    columns.
    """
    try:
        preprocess, estimator = final_estimator(model)
        if preprocess is not None:
            return {}
        ensemble = parse_model(estimator)
    except (UnsupportedModelError, TypeError, ValueError):
        return {}  # the explainer says why, if it matters
    if ensemble.category_input == "values" or ensemble.category_levels is None:
        return {}
    names = ensemble.feature_names or ()
    return {
        name: tuple(levels)
        for name, levels in zip(names, ensemble.category_levels, strict=False)
        if levels is not None
    }


def as_model_categories(data: pd.DataFrame, categories: dict) -> pd.DataFrame:
    """``data`` with the columns named in ``categories`` as pandas categories.

    A new frame (the caller's is not modified); other columns, and columns
    already of a category dtype, are left as they are.
    """
    columns = {
        name: _as_category(data[name], levels)
        for name, levels in categories.items()
        if name in data.columns
        and not isinstance(data[name].dtype, pd.CategoricalDtype)
    }
    return data.assign(**columns) if columns else data


def _as_category(column: pd.Series, levels: tuple) -> pd.Series:
    """One column's values, typed as ``levels``, as a pandas category."""
    present = column.dropna()
    if all(isinstance(level, str) for level in levels):
        if present.dtype.kind in "iuf":
            # Integral numbers as written ("3", not "3.0": a NaN in the
            # column makes pandas read its integers as floats).
            integral = bool(np.all(np.mod(present.to_numpy(), 1) == 0))
            text = present.astype("int64" if integral else object).astype(str)
            column = text.reindex(column.index)
    elif all(isinstance(level, int | float) for level in levels):
        numbers = pd.to_numeric(present, errors="coerce")
        if numbers.notna().all():  # every value a number: compare as numbers
            column = numbers.reindex(column.index)
    return column.astype("category")
