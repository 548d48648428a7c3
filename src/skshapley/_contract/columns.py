"""A DataFrame's columns matched to the model's features, once per column set.

For a few rows, matching a DataFrame's columns by name (unique names, none
missing or unknown, the model's order) and choosing how each column becomes
float64 cost far more than converting the values. A :class:`ColumnPlan` is
that work done for one set of columns; :class:`ColumnPlans`, kept on a
fitted explainer, remembers the plans of the last few column sets, keyed by
the columns' names, the types of the names and the columns' dtypes, so that
later calls with equal columns only convert. Errors are never remembered: a
column set that fails is matched again, and fails again, at every call.
"""

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pandas as pd

from .input import check_unique_columns, real_values

#: Reads one column (a Series) of X as float64 values, or raises a ValueError.
Reader = Callable[[pd.Series], np.ndarray]

# Column sets remembered per fitted explainer. A service sees one or two (a
# frame, the same frame with a column recast); when the columns change at
# every call, a plan saves nothing and only the newest few are kept.
_MAX_PLANS = 8


@dataclass(frozen=True)
class ColumnReading:
    """How a model reads a DataFrame's columns, beyond numbers matched by name.

    Attributes
    ----------
    recoder : callable or None, default=None
        ``recoder(j, label, dtype)`` returns the :data:`Reader` of the
        column read as feature ``j`` (``label`` names it in messages,
        ``dtype`` is its dtype) if the model reads it otherwise than as a
        number (category codes), else None. A plan is reused for columns
        of equal dtypes, so the reader must read anything else it needs
        (the categories) from the column it is given.
    underscores : bool, default=False
        Whether the model reads spaces in column names as underscores
        (LightGBM's datasets do).
    """

    recoder: Callable[[int, object, object], Reader | None] | None = None
    underscores: bool = False

    def labels(self, columns: Sequence) -> list:
        """The column names as the model reads them."""
        if self.underscores:
            return [str(column).replace(" ", "_") for column in columns]
        return list(columns)


#: Every column read as numbers, names as they are: what most models read.
NUMBERS = ColumnReading()


@dataclass(frozen=True)
class ColumnPlan:
    """How to read a DataFrame of one column set as the model's features.

    Attributes
    ----------
    positions : ndarray of shape (n_features,), dtype intp
        The column of X read as each feature, in the model's order.
    plain : ndarray of dtype intp
        The features whose columns have a NumPy numeric dtype (booleans
        included): converted together.
    readers : tuple of (int, Reader)
        Every other feature with its reader, in the order they are read:
        numbers first, then the recoded columns, each in the model's order.
    """

    positions: np.ndarray
    plain: np.ndarray
    readers: tuple

    def values(self, X: pd.DataFrame) -> np.ndarray:
        """``X``'s features as a new C-ordered float64 array; X is not modified."""
        values = np.empty((len(X), len(self.positions)))
        if not self.readers:
            # Numbers only: NumPy gathers the columns straight into the
            # result (X's values are a view where X holds one float block).
            numbers = X.to_numpy(dtype=np.float64)
            np.take(numbers, self.positions, axis=1, out=values, mode="clip")
            return values
        if len(self.plain):
            plain = X.iloc[:, self.positions[self.plain]]
            values[:, self.plain] = plain.to_numpy(dtype=np.float64)
        for j, read in self.readers:
            values[:, j] = read(X.iloc[:, self.positions[j]])
        return values


def column_plan(
    positions: np.ndarray,
    labels: Sequence,
    dtypes: Sequence,
    reading: ColumnReading,
) -> ColumnPlan:
    """The plan that reads the columns ``positions`` as the model's features.

    ``labels`` and ``dtypes`` are those of X's columns (labels as the
    messages name them); each feature's column is a number column unless
    ``reading.recoder`` gives it a reader.
    """
    plain, numbers, recoded = [], [], []
    for j, position in enumerate(positions):
        label, dtype = labels[position], dtypes[position]
        recode = None if reading.recoder is None else reading.recoder(j, label, dtype)
        if recode is not None:
            recoded.append((j, recode))
        elif isinstance(dtype, np.dtype) and dtype.kind in "biuf":
            plain.append(j)
        else:
            numbers.append((j, _number_reader(f"Column {label!r} of X")))
    return ColumnPlan(
        np.asarray(positions, dtype=np.intp),
        np.asarray(plain, dtype=np.intp),
        tuple(numbers + recoded),
    )


def _number_reader(where: str) -> Reader:
    """Reads a column of numbers of any dtype (``where`` names it in errors)."""

    def read(column: pd.Series) -> np.ndarray:
        return real_values(column, where)

    return read


def matched_positions(labels: Sequence, names: Sequence[str]) -> np.ndarray:
    """The position in ``labels`` of each of ``names``, or a ValueError.

    ``labels`` are a DataFrame's column names, compared as text; they must
    be unique and be exactly ``names``, in any order. The error names the
    repeated, missing and unknown columns.
    """
    columns = [str(label) for label in labels]
    check_unique_columns(columns)
    expected = list(names)
    missing = [name for name in expected if name not in columns]
    unknown = [name for name in columns if name not in expected]
    if missing or unknown:
        raise ValueError(
            "X's columns must be the model's features; "
            f"missing: {missing}, unknown: {unknown}."
        )
    position = {column: j for j, column in enumerate(columns)}
    return np.array([position[name] for name in expected], dtype=np.intp)


class ColumnPlans:
    """The plans of the last few column sets an explainer read.

    A fitted explainer keeps one; fitting again starts a new one, and
    pickles and copies of the explainer leave it out.
    """

    def __init__(self):
        self._plans: dict[tuple, ColumnPlan] = {}
        # Explainers may serve several threads at once.
        self._lock = threading.Lock()

    def plan(
        self, X: pd.DataFrame, build: Callable[[list, list], ColumnPlan]
    ) -> ColumnPlan:
        """The plan of ``X``'s column set: remembered, or ``build(labels, dtypes)``.

        The key is exact: the columns' names as text (what they are
        matched by) and the types of the names (what messages show), and
        their dtypes (what the conversion depends on).
        """
        labels, dtypes = X.columns.tolist(), X.dtypes.tolist()
        key = (tuple(map(str, labels)), tuple(map(type, labels)), tuple(dtypes))
        with self._lock:
            plan = self._plans.get(key)
        if plan is None:
            plan = build(labels, dtypes)  # raises for columns that do not fit
            with self._lock:
                if len(self._plans) >= _MAX_PLANS:
                    del self._plans[next(iter(self._plans))]  # the oldest
                self._plans[key] = plan
        return plan
