"""Hybrid rows: an explained row's values on some features, background rows elsewhere.

The rows are gathered column by column from one table (the background
followed by the explained rows), so that every column keeps its dtype:
numbers, strings and pandas categories reach the model as they were given.
A table whose columns share one NumPy numeric dtype is gathered as one 2-D
array, the fast and common case.
"""

import numpy as np
import pandas as pd


class HybridRows:
    """The background followed by explained rows, from which hybrids are gathered.

    Parameters
    ----------
    background : pandas.DataFrame of shape (n_background, n_features)
        The background rows, columns in the model's order.
    X : pandas.DataFrame of shape (n_rows, n_features)
        The explained rows, same columns.
    by_name : bool
        Whether the model reads a DataFrame with these column names (else
        a NumPy array).
    """

    def __init__(self, background: pd.DataFrame, X: pd.DataFrame, by_name: bool):
        table = pd.concat([background, X], ignore_index=True)
        self.n_background = len(background)
        self._names = list(background.columns)
        self._by_name = by_name
        dtypes = set(table.dtypes)
        dtype = dtypes.pop() if len(dtypes) == 1 else None
        if isinstance(dtype, np.dtype) and dtype.kind in "biuf":
            # Column-major, as hybrids are built column by column.
            self._array = np.asfortranarray(table.to_numpy())
            self._columns = None
        else:
            self._array = None
            self._columns = [
                column.array
                if isinstance(column.dtype, pd.api.extensions.ExtensionDtype)
                else column.to_numpy()
                for _, column in table.items()
            ]

    def differs(self, row: int) -> np.ndarray:
        """Where each background row differs from explained ``row``.

        Shape (n_background, n_features); two missing values are equal. A
        hybrid row is the same whichever of the equal features it takes from
        the explained row, so such coalitions need one evaluation.
        """
        n_background = self.n_background
        if self._columns is None:
            background = self._array[:n_background]
            x = self._array[n_background + row]
            same = background == x
            if background.dtype.kind == "f":
                same |= np.isnan(background) & np.isnan(x)
            return ~same
        differs = np.empty((n_background, len(self._columns)), dtype=bool)
        for j, column in enumerate(self._columns):
            background, x = column[:n_background], column[n_background + row]
            equal = background == x
            if hasattr(equal, "fillna"):  # a nullable dtype's missing values
                equal = equal.fillna(False)
            same = np.asarray(equal, dtype=bool) | (pd.isna(background) & pd.isna(x))
            differs[:, j] = ~same
        return differs

    def hybrids(
        self,
        row: int,
        features: np.ndarray,
        pairs: tuple[np.ndarray, np.ndarray],
        *,
        with_row: bool,
    ):
        """Hybrid rows of explained ``row``, for the model.

        Hybrid ``k`` takes the row's values on the features of coalition
        ``pairs[0][k]`` (``features``: (n_coalitions, n_features), boolean)
        and background row ``pairs[1][k]``'s elsewhere; ``with_row`` appends
        the row itself. A DataFrame with the model's column names if the
        model reads names, else a NumPy array.
        """
        coalition, background = pairs
        n_rows, n_features = len(coalition) + with_row, features.shape[1]
        if self._columns is None:
            # Column by column (a column-major array): a gather and a masked
            # fill of contiguous memory each, the fastest way NumPy has.
            x = self._array[self.n_background + row]
            columns = np.empty((n_features, n_rows), self._array.dtype)
            for j, (column, takes_x) in enumerate(
                zip(self._array.T, features.T, strict=True)
            ):
                np.take(column, background, out=columns[j, : len(coalition)])
                np.copyto(columns[j, : len(coalition)], x[j], where=takes_x[coalition])
                columns[j, len(coalition) :] = x[j]
            rows = columns.T
            if not self._by_name:
                return rows
            return pd.DataFrame(rows, columns=self._names, copy=False)
        index = np.where(
            features[coalition], self.n_background + row, background[:, None]
        )
        if with_row:
            index = np.vstack([index, np.full(n_features, self.n_background + row)])
        frame = pd.DataFrame(
            {
                name: column.take(index[:, j])
                for j, (name, column) in enumerate(
                    zip(self._names, self._columns, strict=True)
                )
            }
        )
        return frame if self._by_name else frame.to_numpy()
