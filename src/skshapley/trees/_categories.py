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
through :mod:`skshapley._contract.input`: real numbers or one clear error. The result
is a new float64 array; the caller's data is never modified.
"""

import reprlib
from functools import partial

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .._contract.columns import ColumnReading, Reader
from .._contract.input import array_values, real_values
from ._table import TreeEnsemble


def tree_values(X, ensemble: TreeEnsemble) -> np.ndarray:
    """An array-like ``X`` as a new float64 array, categorical features as codes.

    DataFrames are read by :func:`tree_reading`'s plan instead.

    Parameters
    ----------
    X : array-like of shape (n_samples, n_features)
        Any array-like (NumPy arrays of objects hold strings in categorical
        features).
    ensemble : TreeEnsemble
        The parsed model: its ``category_input``, ``categorical_features``,
        ``category_levels`` and ``unknown_categories``.

    Returns
    -------
    values : ndarray of shape (n_samples, n_features), dtype float64
        The values the trees route on; NaN where missing.
    """
    if ensemble.category_input == "lookup" and ensemble.categorical_features:
        try:
            array = np.asarray(X.toarray() if sp.issparse(X) else X)
        except (TypeError, ValueError):  # ragged lists: array_values says so
            array = None
        if array is not None and array.shape[1:] == (ensemble.n_features,):
            return _lookup_columns(array, ensemble)
    return array_values(X)  # numbers (codes where categorical), or an error


def tree_reading(ensemble: TreeEnsemble) -> ColumnReading:
    """How the trees read a DataFrame's columns: the model's category codes.

    Column names have underscores for spaces where the model's library
    reads them so; the model's category columns (and, for ``"codes"``,
    every pandas category column) are recoded, every other column is read
    as numbers.
    """
    recoder = None
    if ensemble.category_input != "values":
        recoder = partial(_category_reader, ensemble)
    return ColumnReading(recoder, ensemble.spaces_in_names_as_underscores)


def _category_reader(ensemble: TreeEnsemble, j: int, label, dtype) -> Reader | None:
    """The reader of feature ``j``'s column (``label``) if it is recoded."""
    levels = (ensemble.category_levels or (None,) * ensemble.n_features)[j]
    if ensemble.category_input == "lookup":
        if j not in ensemble.categorical_features:
            return None
        where = f"Column {label!r} of X"
        return partial(
            lookup_codes,
            levels=levels,
            where=where,
            unknown=ensemble.unknown_categories,
        )
    # "codes": pandas categories, and the features learned as them.
    if not isinstance(dtype, pd.CategoricalDtype) and levels is None:
        return None
    return partial(_pandas_codes, name=label, j=j, levels=levels, ensemble=ensemble)


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


def _pandas_codes(
    column: pd.Series, *, name, j: int, levels, ensemble: TreeEnsemble
) -> np.ndarray:
    """XGBoost's and LightGBM's codes of the column ``name``, a pandas category.

    Counted in the training categories where the model has them, else as
    pandas counts them; numbers in a column the model learned as a category
    are refused (see :func:`_check_category_column`).
    """
    is_category = isinstance(column.dtype, pd.CategoricalDtype)
    categorical = j in ensemble.categorical_features
    _check_category_column(name, is_category, categorical, levels)
    if levels is None:
        return _missing_as_nan(column.cat.codes.to_numpy())
    where = f"Column {name!r} of X"
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
