"""The rows of a call, a slice at a time: how many, their labels, and each
slice prepared as the explainer reads it.

DataFrames (polars and pyarrow ones too, converted to pandas slice by
slice), 2-D arrays and sparse matrices are prepared (validated, converted, a
pipeline's preprocessing applied) one slice at a time, so that memory is
bounded by the slices; lists and the like, already copies, at once.
"""

from collections.abc import Callable

import numpy as np
import pandas as pd
import scipy.sparse as sp

from .frames import default_index
from .input import as_pandas, frame_slices

#: ``prepared(part, start)``: the prepared rows of ``part``, the call's rows
#: from ``start`` on.
Prepare = Callable[[object, int], object]


def row_source(
    X, prepared: Prepare, prepared_whole: Callable[[object], tuple[object, pd.Index]]
) -> tuple[int, pd.Index, Callable[[slice], object]]:
    """``X``'s number of rows, its index, and its prepared rows by slice.

    ``prepared`` prepares a slice; ``prepared_whole`` prepares an input
    that is not sliced (a list, say) and gives its index too.
    """
    slices = frame_slices(X)
    if slices is not None:
        n_samples, index, frame_rows = slices
        return n_samples, index, _sliced(frame_rows, prepared)
    X = as_pandas(X)
    if sp.issparse(X):
        X = X.tocsr()  # sliced by rows (no copy if it is CSR already)
    if not _sliceable(X):
        rows, index = prepared_whole(X)
        return len(rows), index, rows.__getitem__
    n_samples = X.shape[0]
    index = X.index if isinstance(X, pd.DataFrame) else default_index(n_samples)

    def part_of(rows: slice):
        if rows.start == 0 and rows.stop >= n_samples:
            return X  # every row: slicing a DataFrame costs more than a row
        return X.iloc[rows] if isinstance(X, pd.DataFrame) else X[rows]

    return n_samples, index, _sliced(part_of, prepared)


def _sliced(part_of: Callable[[slice], object], prepared: Prepare):
    """Prepared rows by slice, from a function giving the input's slices."""

    def rows_of(rows: slice):
        return prepared(part_of(rows), rows.start)

    return rows_of


def _sliceable(X) -> bool:
    """Whether ``X`` is sliced by rows before it is converted (not a list)."""
    return (
        isinstance(X, pd.DataFrame)
        or sp.issparse(X)
        or (isinstance(X, np.ndarray) and X.ndim == 2)
    )
