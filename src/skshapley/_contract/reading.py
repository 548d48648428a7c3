"""Reading rows as a fitted model's features: columns, shapes, values and a
pipeline's preprocessing.

DataFrame columns are matched by name (by position if the model knows no
names) and converted by the plan of their column set (see ``columns.py``);
other inputs are converted whole. NaN and infinity are refused where the
model has no rule for them, naming the column. A pipeline's raw input goes
through its preprocessing first. The caller's data is copied, never
modified.
"""

from collections.abc import Callable

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.pipeline import Pipeline

from .columns import (
    NUMBERS,
    ColumnPlan,
    ColumnPlans,
    ColumnReading,
    column_plan,
    matched_positions,
)
from .frames import default_index
from .input import as_pandas, check_unique_columns


class InputReader:
    """Reads rows as the features of a fitted explainer's model.

    Parameters
    ----------
    model_features : tuple of (ndarray of str, bool)
        The final model's features, and whether rows are matched to them
        by name.
    input_features : tuple of (ndarray of str, bool)
        The input's columns (a pipeline's raw input), likewise.
    preprocess : Pipeline or None
        A pipeline's preprocessing steps, or None.

    The plans of the column sets read so far are remembered, not pickled.
    """

    def __init__(
        self,
        model_features: tuple[np.ndarray, bool],
        input_features: tuple[np.ndarray, bool],
        preprocess: Pipeline | None,
    ):
        self.model_features = model_features
        self.input_features = input_features
        self.preprocess = preprocess
        self._plans = ColumnPlans()

    def __getstate__(self) -> dict:
        # The plans hold locks and pandas objects: rebuilt after unpickling.
        return {**self.__dict__, "_plans": None}

    def __setstate__(self, state: dict) -> None:
        self.__dict__.update(state, _plans=ColumnPlans())

    def validated(
        self,
        X,
        values: Callable[[object], np.ndarray],
        *,
        allow_nan: bool,
        allow_inf: bool,
        reading: ColumnReading = NUMBERS,
        check_values: bool = True,
    ) -> tuple[np.ndarray, pd.Index]:
        """``X`` as a new float64 array in the model's column order, and its index.

        DataFrame columns are converted as ``reading`` says (the same at
        every call); other inputs by ``values``. NaN and infinity are
        refused as ``allow_nan`` and ``allow_inf`` say, unless
        ``check_values`` is False (the caller checks the array itself).
        """
        X = as_pandas(X)
        if isinstance(X, pd.DataFrame):
            index = X.index
            plan = self._plans.plan(
                X,
                lambda labels, dtypes: self._column_plan(X, labels, dtypes, reading),
            )
            array = plan.values(X)
        else:
            array = values(X)
            check_shape(array.shape, len(self.model_features[0]))
            index = default_index(len(array))
        if check_values:
            self.check_values(array, allow_nan=allow_nan, allow_inf=allow_inf)
        return array, index

    def preprocessed(
        self, X, prepared: Callable[[object], tuple[np.ndarray, pd.Index]]
    ) -> tuple[np.ndarray, pd.Index]:
        """``X`` through the pipeline's preprocessing, then ``prepared``.

        DataFrame columns are matched by name, as for any model, and the
        result keeps ``X``'s index.
        """
        X = as_pandas(X)
        index = None
        names, by_name = self.input_features
        if isinstance(X, pd.DataFrame):
            index = X.index
            X = self.columns(X, self.input_features)
            X = X if by_name else X.to_numpy()
        elif by_name:
            # Rows by position, for a pipeline fitted on named columns: name
            # them, as scikit-learn would warn about an array otherwise.
            array = None if sp.issparse(X) else np.asarray(X)
            if array is not None and array.dtype.kind in "US":  # mixed lists
                array = np.asarray(X, dtype=object)
            if array is not None and array.ndim == 2:
                check_shape(array.shape, len(names))
                X = pd.DataFrame(array, columns=list(names))
        if _n_rows(X) == 0:  # preprocessing may refuse no rows: its output's shape
            transformed = np.empty((0, len(self.model_features[0])))
        else:
            transformed = _transformed(self.preprocess, X)
        try:
            rows, default = prepared(transformed)
        except ValueError as exc:
            raise ValueError(f"After the pipeline's preprocessing: {exc}") from exc
        return rows, default if index is None else index

    def columns(self, X: pd.DataFrame, features: tuple) -> pd.DataFrame:
        """A DataFrame's columns as ``features``, in their order.

        ``features`` is ``(names, by_name)``: the names of the columns
        expected, and whether they are matched by name (else by position).
        """
        positions = _feature_positions(X.columns, X.shape, features)
        names, by_name = features
        if not by_name:
            return X
        return X.iloc[:, positions].set_axis(list(names), axis=1)

    def check_values(self, array: np.ndarray, *, allow_nan: bool, allow_inf: bool):
        """Raise if ``array`` holds NaN or infinity where the model refuses them."""
        if (allow_nan and allow_inf) or np.isfinite(array).all():
            return  # one pass over the values in the common case
        if not allow_nan:
            self._refuse(
                np.isnan(array),
                "NaN (or a missing value), and the model has no rule for "
                "missing values",
            )
        if not allow_inf:
            self._refuse(np.isinf(array), "infinity, which the model rejects")

    def _refuse(self, found: np.ndarray, what: str) -> None:
        """Raise a ValueError naming the first column where ``found`` is set."""
        columns = np.flatnonzero(found.any(axis=0))
        if len(columns):
            name = self.model_features[0][columns[0]]
            raise ValueError(f"X contains {what} (column {name!r}).")

    def _column_plan(
        self, X: pd.DataFrame, labels: list, dtypes: list, reading: ColumnReading
    ) -> ColumnPlan:
        """The plan that reads ``X``'s columns as the model's features.

        Raises the errors of :meth:`columns` for columns that do not fit.
        """
        labels = reading.labels(labels)
        positions = _feature_positions(labels, X.shape, self.model_features)
        if self.model_features[1]:
            labels = [str(label) for label in labels]
        return column_plan(positions, labels, dtypes, reading)


def check_shape(shape: tuple[int, ...], n_features: int) -> None:
    """Raise unless ``shape`` is (n_samples, n_features)."""
    if len(shape) != 2 or shape[1] != n_features:
        raise ValueError(
            f"X must have shape (n_samples, {n_features}), the "
            f"model's number of features; got shape {shape}."
        )


def _feature_positions(labels, shape: tuple, features: tuple) -> np.ndarray:
    """The column of X (``labels``, ``shape``) read as each feature.

    ``features`` is ``(names, by_name)``. By name: the columns must be
    exactly the names, in any order; else by position: unique columns, as
    many as the names. Raises a ValueError naming what is wrong.
    """
    names, by_name = features
    if by_name:
        return matched_positions(labels, names)
    # The model knows no names: by position.
    check_unique_columns([str(label) for label in labels])
    check_shape(shape, len(names))
    return np.arange(len(names))


def _n_rows(X) -> int | None:
    """The rows of a 2-D input, None for another (refused downstream)."""
    shape = getattr(X, "shape", None)
    return shape[0] if shape is not None and len(shape) == 2 else None


def _transformed(preprocess: Pipeline, X):
    """``X`` through the pipeline's preprocessing, as the final model reads it."""
    try:
        return preprocess.transform(X)
    # A pipeline read from a file may hold steps whose attributes have the
    # wrong type or shape; scikit-learn then fails with a lookup or type error.
    except (AttributeError, IndexError, KeyError, TypeError) as exc:
        raise ValueError(
            f"The pipeline's preprocessing failed on X ({type(exc).__name__}: "
            f"{exc}): check X's columns and types; otherwise the model is "
            "malformed (its file may be corrupt)."
        ) from exc
