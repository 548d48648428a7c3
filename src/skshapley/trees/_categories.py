"""Rows as the trees read them: categorical features as the model's category codes.

A parsed ensemble says how its model reads categories
(``TreeEnsemble.category_input``):

* ``"values"`` (scikit-learn's trees, which have no categories): every
  column, pandas categories included, is read as numbers;
* ``"codes"`` (XGBoost, LightGBM): numbers in a categorical feature are
  category codes already; a pandas ``category`` column is recoded by value
  to positions in the training categories (``category_levels``), and is
  refused for a numeric feature, as both libraries refuse it;
* ``"lookup"`` (HistGradientBoosting, whose OrdinalEncoder reads values):
  every value of a categorical feature, of any type (strings, numbers,
  pandas categories, objects of mixed types), is looked up by value in the
  training categories; its code is its position there.

Categories the model did not see in training become missing values (and so
follow the model's missing-value rule), or raise a ``ValueError`` where the
model refuses them (``unknown_categories="error"``). Every other column goes
through :mod:`skshapley._input`: real numbers or one clear error. The result
is a new float64 array; the caller's data is never modified.
"""

import reprlib

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .._input import array_values, frame_values, real_values
from ._table import TreeEnsemble


def tree_values(X, ensemble: TreeEnsemble) -> np.ndarray:
    """``X`` as a new float64 array, categorical features as category codes.

    Parameters
    ----------
    X : pandas.DataFrame or array-like of shape (n_samples, n_features)
        A DataFrame already in the model's column order, or any array-like
        (NumPy arrays of objects hold strings in categorical features).
    ensemble : TreeEnsemble
        The parsed model: its ``category_input``, ``categorical_features``,
        ``category_levels`` and ``unknown_categories``.

    Returns
    -------
    values : ndarray of shape (n_samples, n_features), dtype float64
        The values the trees route on; NaN where missing.
    """
    if isinstance(X, pd.DataFrame):
        return _frame_codes(X, ensemble)
    if ensemble.category_input == "lookup" and ensemble.categorical_features:
        try:
            array = np.asarray(X.toarray() if sp.issparse(X) else X)
        except (TypeError, ValueError):  # ragged lists: array_values says so
            array = None
        if array is not None and array.shape[1:] == (ensemble.n_features,):
            return _lookup_columns(array, ensemble)
    return array_values(X)  # numbers (codes where categorical), or an error


def _frame_codes(X: pd.DataFrame, ensemble: TreeEnsemble) -> np.ndarray:
    """A DataFrame's columns as float64, the model's category columns recoded."""
    if ensemble.category_input == "values":
        return frame_values(X)
    levels = ensemble.category_levels or (None,) * X.shape[1]
    if ensemble.category_input == "lookup":
        recoded = list(ensemble.categorical_features)
    else:  # "codes": pandas categories, and the features learned as them
        recoded = [
            j
            for j, dtype in enumerate(X.dtypes)
            if isinstance(dtype, pd.CategoricalDtype) or levels[j] is not None
        ]
    values = np.empty(X.shape, dtype=np.float64)
    plain = np.setdiff1d(np.arange(X.shape[1]), recoded)
    values[:, plain] = frame_values(X.iloc[:, plain])
    for j in recoded:
        column = X.iloc[:, j]
        if ensemble.category_input == "codes":
            values[:, j] = _pandas_codes(column, j, levels[j], ensemble)
        else:
            values[:, j] = lookup_codes(
                column,
                levels[j],
                f"Column {column.name!r} of X",
                ensemble.unknown_categories,
            )
    return values


def _lookup_columns(array: np.ndarray, ensemble: TreeEnsemble) -> np.ndarray:
    """A 2-D array's columns as float64, categorical features looked up."""
    categorical = list(ensemble.categorical_features)
    plain = np.setdiff1d(np.arange(array.shape[1]), categorical)
    values = np.empty(array.shape, dtype=np.float64)
    values[:, plain] = real_values(array[:, plain], "X")
    for j in categorical:
        values[:, j] = lookup_codes(
            array[:, j],
            ensemble.category_levels[j],
            f"Column {j} of X",
            ensemble.unknown_categories,
        )
    return values


def _pandas_codes(column: pd.Series, j: int, levels, ensemble: TreeEnsemble):
    """XGBoost's and LightGBM's codes of a pandas category column.

    Counted in the training categories where the model has them, else as
    pandas counts them; numbers in a column the model learned as a category
    are refused (see :func:`_check_category_column`).
    """
    is_category = isinstance(column.dtype, pd.CategoricalDtype)
    categorical = j in ensemble.categorical_features
    _check_category_column(column.name, is_category, categorical, levels)
    if levels is None:
        return _missing_as_nan(column.cat.codes.to_numpy())
    where = f"Column {column.name!r} of X"
    return lookup_codes(column, levels, where, ensemble.unknown_categories)


def _check_category_column(name, is_category: bool, categorical: bool, levels):
    """Refuse a category column for a numeric feature, and the converse.

    For models that read category codes: a code is not the value it stands
    for, and a feature learned as a pandas category is looked up by value in
    its training categories (XGBoost and LightGBM refuse both mismatches).
    """
    if is_category and not categorical:
        raise ValueError(
            f"Column {name!r} of X is a pandas category, but the model learned "
            f"feature {name!r} as numeric: pass its values as numbers (the "
            "model would read the category codes, not the values)."
        )
    if not is_category and levels is not None:
        raise ValueError(
            f"Column {name!r} of X must be a pandas category: the model learned "
            f"feature {name!r} as one, with categories {list(levels)[:10]}. "
            "Convert it with astype('category'), or pass a NumPy array of its "
            "category codes."
        )


def lookup_codes(values, levels, where: str, unknown: str) -> np.ndarray:
    """Positions of ``values`` in the training categories ``levels``, as floats.

    Values are matched by equality (``"1"`` is not ``1``; ``1`` is
    ``1.0``), as scikit-learn's encoders and pandas do. Missing values are
    NaN; so are values not in ``levels`` (unknown categories), unless
    ``unknown == "error"``, which raises a ``ValueError`` naming them.

    Parameters
    ----------
    values : pandas.Series or ndarray of shape (n_samples,)
        One column of X: a pandas category, strings, numbers or objects.
    levels : sequence
        The training categories, distinct, in code order.
    where : str
        The column, for messages ("Column 'sex' of X").
    unknown : {"missing", "error"}
        What the model does with categories it did not see in training.

    Returns
    -------
    codes : ndarray of shape (n_samples,), dtype float64
    """
    index = pd.Index(list(levels), dtype=object)
    if not index.is_unique:
        raise ValueError(
            f"The model's categories of {where.lower()} repeat a value; the "
            "model file may be corrupt."
        )
    if isinstance(getattr(values, "dtype", None), pd.CategoricalDtype):
        # Look up each category once, then index by pandas' codes (-1: missing).
        pandas_codes = values.cat.codes.to_numpy()
        found = index.get_indexer(values.cat.categories.astype(object))
        codes = np.append(found, -1)[pandas_codes]
        present = pandas_codes >= 0
    elif _numbers(values) and _numbers(numeric := pd.Index(list(levels))):
        # Numbers among numbers: the same equality, hashed as float64
        # (several times faster than as Python objects).
        numbers = np.asarray(values, dtype=np.float64)
        codes = numeric.astype(np.float64).get_indexer(numbers)
        present = ~np.isnan(numbers)
    else:
        codes = index.get_indexer(np.asarray(values, dtype=object))
        present = ~pd.isna(np.asarray(values, dtype=object))
    unseen = present & (codes < 0)
    if unknown == "error" and unseen.any():
        offending = pd.unique(np.asarray(values, dtype=object)[unseen]).tolist()
        raise ValueError(
            f"{where} has categories the model did not see in training and "
            f"has no rule for: {reprlib.repr(offending)}; it knows "
            f"{reprlib.repr(list(levels))}."
        )
    return _missing_as_nan(codes)


def _numbers(values) -> bool:
    """Whether an array, Series or Index holds NumPy-typed real numbers only."""
    dtype = getattr(values, "dtype", None)
    return isinstance(dtype, np.dtype) and dtype.kind in "biuf"


def _missing_as_nan(codes: np.ndarray) -> np.ndarray:
    """Integer codes as floats, with pandas' missing code -1 as NaN."""
    codes = codes.astype(np.float64)
    codes[codes < 0] = np.nan
    return codes
