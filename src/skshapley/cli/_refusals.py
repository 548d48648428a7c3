"""Which column of the data the model refuses, when its error does not say.

scikit-learn's transformers check the values they get, and their errors
("could not convert string to float: 'abc'", "Input X contains NaN") name
neither the column nor the row. :func:`refused_columns` finds them by
calling the model on a few rows: the first row refused (by bisection over
the rows, about ``log2(n_rows)`` calls), then a row the model accepts with
one column at a time taken from the refused row.
"""

from collections.abc import Callable
from dataclasses import dataclass

import numpy as np
import pandas as pd

# What the model raises for data it cannot take: scikit-learn raises
# ValueError for values (text, NaN, unknown categories) and TypeError for
# types it cannot compare or mix (an encoder given text and numbers).
REFUSALS = (ValueError, TypeError)


@dataclass(frozen=True)
class Refusal:
    """A column whose value alone, in an accepted row, makes the model fail."""

    column: str
    row: object  # the refused row's label
    value: object
    error: Exception

    def describe(self) -> str:
        """``column 'bmi' (row 3: 'abc'): <the model's error>``."""
        message = " ".join(str(self.error).split()).rstrip(".")
        value = self.value.item() if isinstance(self.value, np.generic) else self.value
        shown = "a missing value" if pd.isna(value) else repr(value)
        return (
            f"column {self.column!r} (row {self.row!r}: {shown}): "
            f"{type(self.error).__name__}: {message}"
        )


def refused_columns(
    predict: Callable, X: pd.DataFrame, reference: pd.DataFrame | None = None
) -> list[Refusal]:
    """The columns of ``X``'s first refused row that the model refuses alone.

    ``predict(rows)`` raises one of :data:`REFUSALS` for ``X``. A row it
    accepts is needed to try each column alone: ``X``'s first row if the
    refused row comes later, else ``reference``'s first row (background
    rows, which the model took), with ``X``'s columns. Empty when there is
    no such row, or when no column is refused alone (values refused only
    together, or an error that is not about values).
    """
    first = _first_refused(predict, X)
    accepted = [X.iloc[:1]] if first > 0 else []
    if reference is not None and set(X.columns) <= set(reference.columns):
        accepted.append(reference.iloc[:1][X.columns])
    base = next((rows for rows in accepted if _error(predict, rows) is None), None)
    if base is None:
        return []
    refused = []
    for column in X.columns:
        trial = base.copy()
        trial[column] = X[column].iloc[first : first + 1].to_numpy()
        error = _error(predict, trial)
        if error is not None:
            refused.append(
                Refusal(column, X.index[first], X[column].iloc[first], error)
            )
    return refused


def _first_refused(predict: Callable, X: pd.DataFrame) -> int:
    """The position of the first row that ``predict`` refuses (``X`` is refused).

    By bisection: the shortest refused start of ``X`` ends with it.
    """
    accepted, refused = 0, len(X)  # X[:accepted] is accepted, X[:refused] not
    while refused - accepted > 1:
        middle = (accepted + refused) // 2
        if _error(predict, X.iloc[:middle]) is None:
            accepted = middle
        else:
            refused = middle
    return refused - 1


def _error(predict: Callable, rows: pd.DataFrame) -> Exception | None:
    """The error ``predict(rows)`` raises, or None."""
    try:
        predict(rows)
    except REFUSALS as exc:
        return exc
    return None
