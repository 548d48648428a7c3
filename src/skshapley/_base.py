"""What every explainer shares: the protocol, the input contract, the output frames.

An explainer is a scikit-learn estimator wrapping a fitted ``model``: the
constructor stores parameters, ``fit`` parses the model, ``explain`` returns
a pandas DataFrame with one row per sample and one column per feature (or a
``(output, feature)`` MultiIndex for several outputs). What reports and the
command line read of an explainer is public and documented here:
``describe()``, ``base_value_meaning``, ``columns_by_name_``, the
``progress`` callback of ``explain`` and the fitted attributes.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator
from sklearn.utils.validation import check_is_fitted

from ._input import array_values, check_unique_columns, frame_values
from ._naming import model_name
from ._threads import effective_n_threads

# Rows in the first chunk of an explanation observed by a progress callback;
# later chunks are sized to take about _CHUNK_SECONDS each, so that Python
# handles Ctrl-C (SIGINT, seen only between calls into compiled code) within
# about that time, and progress moves steadily.
_FIRST_CHUNK_ROWS = 64
_CHUNK_SECONDS = 0.5


@dataclass(frozen=True)
class QuadratureUse:
    """The quadrature behind some explained rows.

    Attributes
    ----------
    n_points : int
        The most Gauss–Legendre points any game used.
    error_bound : float or None
        A bound on the absolute quadrature error of every value (0.0 when
        every game used an exact rule); None where it is not computed.
    """

    n_points: int
    error_bound: float | None

    def merged(self, other: "QuadratureUse") -> "QuadratureUse":
        """The quadrature of both sets of rows: the larger points and bound."""
        bounds = (self.error_bound, other.error_bound)
        return QuadratureUse(
            max(self.n_points, other.n_points),
            None if None in bounds else max(bounds),
        )


class BaseExplainer(BaseEstimator):
    """The explainer protocol, input validation and output construction.

    Subclasses set ``feature_names_in_``, ``n_features_in_``,
    ``output_names_``, ``raw_output_``, ``player_names_``,
    ``expected_value_`` and ``columns_by_name_`` in ``fit``, name the
    attribute that marks them fitted in ``_fitted_attribute``, and implement
    ``_prepared`` (validated rows) and ``_explain_rows`` (the values of
    validated rows).
    """

    #: What the base value ``expected_value_`` is, in words, for reports.
    base_value_meaning: ClassVar[str] = ""

    # The fitted attribute that check_is_fitted looks for.
    _fitted_attribute: ClassVar[str] = ""

    def explain(
        self, X, *, progress: Callable[[int, int], None] | None = None
    ) -> pd.DataFrame:
        """Shapley values of the model's output for each row of ``X``.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
            The rows to explain. DataFrame columns are matched by name.
        progress : callable, default=None
            If given, ``progress(n_done, n_total)`` is called after each
            chunk of rows. Rows are then explained in chunks of about half a
            second each (the first of 64 rows), so that a keyboard interrupt
            is handled between chunks; the values are those of one call.

        Returns
        -------
        phi : pandas.DataFrame
            One row per sample (``X``'s index) and one column per player
            (feature, or group), or columns ``(output, player)`` for several
            outputs. Each row sums, with ``expected_value_``, to the raw
            output. Where the quadrature depends on the rows (kernel
            models), ``phi.attrs`` mirrors the explainer's
            ``n_quadrature_points_`` and ``quadrature_error_bound_``.
        """
        check_is_fitted(self, self._fitted_attribute)
        X, index = self._prepared(X)
        n_threads = effective_n_threads(self.n_jobs)
        values = np.zeros((len(X), len(self.output_names_), len(self.player_names_)))
        if progress is None or len(X) == 0:
            quadrature = self._explain_rows(X, values, n_threads)
        else:
            quadrature = self._explain_in_chunks(X, values, n_threads, progress)
        self._record(quadrature)
        phi = self._frame(values, index, self.player_names_)
        if quadrature is not None:
            phi.attrs["n_quadrature_points"] = quadrature.n_points
            phi.attrs["quadrature_error_bound"] = quadrature.error_bound
        return phi

    def describe(self) -> dict[str, str]:
        """Facts about the fitted explainer, in words, for reports.

        Returns
        -------
        facts : dict of str to str
            The explainer, the model, the output explained and the number
            of features; the explainers add their value function, its
            background data and the quadrature they use.
        """
        check_is_fitted(self, self._fitted_attribute)
        outputs = ", ".join(str(name) for name in self.output_names_)
        return {
            "explainer": type(self).__name__,
            "model": model_name(self.model),
            "output explained": f"{self.raw_output_} ({outputs})",
            "features": str(self.n_features_in_),
        }

    def _explain_rows(
        self, X: np.ndarray, values: np.ndarray, n_threads: int
    ) -> QuadratureUse | None:
        """Add the values of the validated rows ``X`` to ``values``.

        ``values`` has shape (n_samples, n_outputs, n_players) and starts at
        zero. Returns the quadrature used, if it depends on the rows.
        """
        raise NotImplementedError

    def _record(self, quadrature: QuadratureUse | None) -> None:
        """Keep what an explanation reports about itself (nothing by default)."""

    def _explain_in_chunks(self, X, values, n_threads, progress):
        """``_explain_rows`` over chunks of about ``_CHUNK_SECONDS`` each."""
        n_samples = len(X)
        quadrature = None
        done, size = 0, _FIRST_CHUNK_ROWS
        while done < n_samples:
            rows = slice(done, min(done + size, n_samples))
            began = time.perf_counter()
            used = self._explain_rows(X[rows], values[rows], n_threads)
            seconds = time.perf_counter() - began
            quadrature = used if quadrature is None else quadrature.merged(used)
            done = rows.stop
            progress(done, n_samples)
            rate = size / max(seconds, 1e-3)
            size = max(1, int(np.clip(rate * _CHUNK_SECONDS, size // 4, size * 4)))
        return quadrature

    def _validate_X(
        self, X, *, allow_nan: bool, allow_inf: bool
    ) -> tuple[np.ndarray, pd.Index]:
        """``X`` as a new float64 array in the model's column order, and its index.

        DataFrame columns are matched by name (by position if the model
        knows no names), then converted by :meth:`_values`. The caller's
        data is copied, never modified.
        """
        if isinstance(X, pd.DataFrame):
            index = X.index
            array = self._values(self._model_columns(X))
        else:
            array = self._values(X)
            self._check_shape(array.shape)
            index = pd.RangeIndex(len(array))
        self._check_values(array, allow_nan=allow_nan, allow_inf=allow_inf)
        return array, index

    def _values(self, X) -> np.ndarray:
        """``X`` as a new float64 array of real numbers, or a ValueError.

        ``X`` is a DataFrame in the model's column order (converted column
        by column, see :func:`~skshapley._input.frame_values`) or any
        array-like. Explainers whose models read other values (the tree
        package's category codes) override this.
        """
        if isinstance(X, pd.DataFrame):
            return frame_values(X)
        return array_values(X)

    def _model_columns(self, X: pd.DataFrame) -> pd.DataFrame:
        """A DataFrame's columns as the model's features, in the model's order."""
        columns = [str(column) for column in X.columns]
        check_unique_columns(columns)
        if not self.columns_by_name_:  # the model knows no names: by position
            self._check_shape(X.shape)
            return X
        expected = list(self.feature_names_in_)
        missing = [name for name in expected if name not in columns]
        unknown = [name for name in columns if name not in expected]
        if missing or unknown:
            raise ValueError(
                "X's columns must be the model's features; "
                f"missing: {missing}, unknown: {unknown}."
            )
        return X.set_axis(columns, axis=1)[expected]

    def _check_shape(self, shape: tuple[int, ...]) -> None:
        """Raise unless ``shape`` is (n_samples, n_features_in_)."""
        if len(shape) != 2 or shape[1] != self.n_features_in_:
            raise ValueError(
                f"X must have shape (n_samples, {self.n_features_in_}), the "
                f"model's number of features; got shape {shape}."
            )

    def _check_values(self, array: np.ndarray, *, allow_nan: bool, allow_inf: bool):
        """Raise if ``array`` holds NaN or infinity where the model refuses them."""
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
            name = self.feature_names_in_[columns[0]]
            raise ValueError(f"X contains {what} (column {name!r}).")

    def __sklearn_clone__(self):
        """A new unfitted explainer of the same (fitted) model.

        ``sklearn.base.clone`` would otherwise clone the wrapped model into
        an unfitted copy; the model is what is explained, not a
        hyperparameter to refit.
        """
        return type(self)(**self.get_params(deep=False))

    def _frame(self, values: np.ndarray, index, players=None) -> pd.DataFrame:
        """A DataFrame of values of shape (n_samples, n_outputs, n_players).

        The players are the features unless named. The DataFrame wraps
        ``values`` without copying it.
        """
        n_samples, n_outputs, n_features = values.shape
        players = list(self.feature_names_in_ if players is None else players)
        if n_outputs == 1:
            columns = pd.Index(players)
        else:
            columns = pd.MultiIndex.from_product(
                [list(self.output_names_), players], names=["output", "feature"]
            )
        flat = values.reshape(n_samples, n_outputs * n_features)
        return pd.DataFrame(flat, index=index, columns=columns, copy=False)

    def _per_output(self, values: np.ndarray):
        """A float for one output, else a Series indexed by output name."""
        if len(values) == 1:
            return float(values[0])
        return pd.Series(values, index=list(self.output_names_), name="base value")


def feature_names(names, n_features: int) -> tuple[np.ndarray, bool]:
    """The model's feature names, or ``x0, x1, ...`` if it has none.

    Also says whether the names are the model's own, so that DataFrame
    columns are matched by name (else by position, as scikit-learn does).
    """
    if names is None:
        return np.asarray([f"x{j}" for j in range(n_features)], dtype=object), False
    return np.asarray([str(name) for name in names], dtype=object), True
