"""The rows a user passes, as float64 values: real numbers or one clear error.

DataFrame columns are converted each by its own dtype (by the plans of
``columns.py``, with :func:`real_values`), and an error names the column;
arrays, lists and sparse matrices are converted as a whole. Only real
numbers are accepted (including booleans, nullable pandas dtypes and object
columns holding numbers). Complex numbers, strings, dates
and durations are refused rather than silently truncated or parsed (NumPy
drops imaginary parts and reads the string "1.5" as 1.5). Missing values
(NaN, None, ``pd.NA``) become NaN. Every result is a new array: the caller's
data is never modified through it.
"""

import json
import reprlib
from collections.abc import Callable, Sequence

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .frames import default_index

# Python and NumPy types that would convert to a float by dropping or
# parsing something, or that are not quantities: refused in object arrays.
_NOT_REAL = (str, bytes, complex, np.complexfloating, np.datetime64, np.timedelta64)


def check_unique_columns(columns: Sequence[str]) -> None:
    """Raise a ValueError naming the DataFrame columns that appear twice."""
    duplicated = pd.Index(columns)
    repeated = duplicated[duplicated.duplicated()].unique().tolist()
    if repeated:
        raise ValueError(
            f"X's column names must be unique; repeated: {repeated}. Drop or "
            "rename the duplicates."
        )


def as_pandas(X):
    """A dataframe of another library (polars, pyarrow, ...) as pandas.

    A pandas Series is one row (a one-row DataFrame); a lazy polars frame is
    refused with a TypeError saying to collect it.

    Its columns are then matched by name, as a pandas DataFrame's are; read
    as an array, a frame with its columns in another order would be
    explained wrongly. Read through the Arrow stream protocol (pandas 3),
    the dataframe interchange protocol, or the frame's ``to_pandas``;
    anything else is returned as it is.
    """
    if isinstance(X, pd.DataFrame):
        return X
    if isinstance(X, pd.Series):
        # One row, as ``X.iloc[i]`` or ``X.loc[label]`` gives it: its index
        # names the columns, its name labels the row.
        return X.to_frame().T.infer_objects()
    if callable(getattr(X, "collect", None)) and hasattr(X, "collect_schema"):
        raise TypeError(
            f"X is a lazy {type(X).__name__}: its rows are not computed yet. "
            "Pass X.collect() (the rows to explain) instead."
        )
    if hasattr(X, "__arrow_c_stream__") and hasattr(pd.DataFrame, "from_arrow"):
        return pd.DataFrame.from_arrow(X)
    if hasattr(X, "__dataframe__"):
        return pd.api.interchange.from_dataframe(X)
    if hasattr(X, "columns") and hasattr(X, "to_pandas"):
        return X.to_pandas()
    return X


def frame_slices(X) -> tuple[int, pd.Index, Callable[[slice], pd.DataFrame]] | None:
    """A polars DataFrame or pyarrow Table as pandas, one slice of rows at a time.

    Returns its number of rows, its row labels (a pyarrow table's pandas
    index, from its metadata; else 0, 1, ...) and a function giving the
    pandas DataFrame of a slice of rows (the labels of the whole label the
    result); None for anything else. Converted slice by slice, memory is
    bounded by the slices.
    """
    module = type(X).__module__
    if module.startswith("polars") and hasattr(X, "height"):  # not a LazyFrame
        index = default_index(X.height)
    elif module.startswith("pyarrow") and callable(getattr(X, "select", None)):
        index = _arrow_index(X)
    else:
        return None

    def rows_of(rows: slice) -> pd.DataFrame:
        return as_pandas(X.slice(rows.start, rows.stop - rows.start))

    return len(index), index, rows_of


def _arrow_index(table) -> pd.Index:
    """A pyarrow table's row labels: the pandas index its metadata records.

    Only the index's own columns are converted (a range index is in the
    metadata alone).
    """
    metadata = (table.schema.metadata or {}).get(b"pandas")
    stored = json.loads(metadata)["index_columns"] if metadata else []
    columns = [column for column in stored if isinstance(column, str)]
    if not stored:
        return default_index(table.num_rows)
    return as_pandas(table.select(columns)).index


def array_values(X) -> np.ndarray:
    """An array-like (array, list, sparse matrix) as a new C-ordered float64 array."""
    if type(X) is np.ndarray and X.dtype == np.float64:
        return np.array(X, order="C")  # the common case, in a third of the time
    if sp.issparse(X):
        X = X.toarray()
    try:
        array = np.asarray(X)
    except (TypeError, ValueError) as exc:  # ragged lists, odd objects
        raise ValueError(
            f"X must be a 2-D array-like of numbers, got {type(X).__name__} "
            f"that NumPy cannot read as an array: {exc}"
        ) from exc
    values = real_values(array, "X")
    if np.may_share_memory(values, array):
        values = values.copy()
    return np.asarray(values, order="C")  # (ascontiguousarray makes 0-d 1-D)


def real_values(values, where: str) -> np.ndarray:
    """A NumPy array or pandas Series as float64, or a ValueError.

    ``where`` names the values in messages ("X", "Column 'age' of X"). The
    result may share memory with ``values``: copy it before writing.
    """
    dtype = values.dtype
    kind = dtype.kind
    if kind in "biuf":
        if isinstance(values, np.ndarray):
            return values.astype(np.float64, copy=False)
        return values.to_numpy(dtype=np.float64, na_value=np.nan)
    if kind == "c":
        raise ValueError(
            f"{where} holds complex numbers (dtype {dtype}); only real numbers "
            "are accepted. Pass the real part explicitly if that is what is meant."
        )
    if kind in "mM":
        raise ValueError(
            f"{where} holds dates or durations (dtype {dtype}); only numbers are "
            "accepted. Convert them explicitly, e.g. to seconds."
        )
    if kind in "US":
        raise ValueError(
            f"{where} holds strings (dtype {dtype}); only numbers are accepted. "
            "Convert them explicitly, e.g. with astype(float)."
        )
    return _object_values(np.asarray(values, dtype=object), where)


def _object_values(values: np.ndarray, where: str) -> np.ndarray:
    """Objects (numbers, missing values) as float64; anything else is refused."""
    missing = pd.isna(values)
    out = np.full(values.shape, np.nan)
    present = values[~missing]
    refused = [kind for kind in set(map(type, present)) if issubclass(kind, _NOT_REAL)]
    if refused:
        # Show a value that is no number at all ('abc') rather than a number
        # written as text ('32.1'), when the column holds both.
        offenders = [value for value in present if type(value) in refused]
        offending = next(
            (value for value in offenders if not _is_number(value)), offenders[0]
        )
    else:
        try:
            out[~missing] = present.astype(np.float64)
            return out
        except (TypeError, ValueError, OverflowError):
            offending = next(
                (value for value in present if not _is_number(value)), present
            )
    raise ValueError(
        f"{where} must hold real numbers (as float64); it holds "
        f"{reprlib.repr(offending)} ({type(offending).__name__})."
    )


def _is_number(value) -> bool:
    """Whether ``float(value)`` works (what NumPy calls on objects)."""
    try:
        float(value)
    except (TypeError, ValueError, OverflowError):
        return False
    return True


def float32_unless_float(X) -> bool:
    """Whether LightGBM's input cast rounds ``X`` to float32.

    LightGBM casts a NumPy array that is not float32 or float64 (integers,
    booleans) to float32, and a DataFrame to ``np.result_type`` of its
    columns' types and float32. Object arrays are read as float64 (by the
    scikit-learn wrapper's ``check_array``). Category columns, which enter
    as small integer codes, are left out: whichever type LightGBM gives
    them, their codes are exact in float32.
    """
    if isinstance(X, pd.DataFrame):
        types = [
            getattr(dtype, "numpy_dtype", dtype)
            for dtype in X.dtypes
            if not isinstance(dtype, pd.CategoricalDtype)
        ]
        try:
            return np.result_type(*types, np.float32) == np.float32
        except TypeError:  # not numbers: refused when X is validated
            return False
    dtype = getattr(X, "dtype", None)
    if dtype is None:
        try:
            dtype = np.asarray(X).dtype
        except (TypeError, ValueError):  # refused when X is validated
            return False
    return dtype.kind in "biuf" and dtype not in (np.float32, np.float64)
