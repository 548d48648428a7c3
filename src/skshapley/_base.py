"""What every explainer shares: the input contract and the output frames.

An explainer is a scikit-learn estimator wrapping a fitted ``model``: the
constructor stores parameters, ``fit`` parses the model, ``explain`` returns
a pandas DataFrame with one row per sample and one column per feature (or a
``(output, feature)`` MultiIndex for several outputs).
"""

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from ._input import array_values, check_unique_columns, frame_values


class BaseExplainer(BaseEstimator):
    """Input validation and output construction for the explainers.

    Subclasses set ``feature_names_in_``, ``n_features_in_``,
    ``output_names_`` and ``_columns_by_name`` in ``fit``.
    """

    def _validate_X(
        self,
        X,
        *,
        allow_nan: bool,
        allow_inf: bool,
        categories_as_codes: bool = False,
        category_levels=None,
        categorical_features=(),
        unknown_categories: str = "missing",
    ) -> tuple[np.ndarray, pd.Index]:
        """``X`` as a new float64 array in the model's column order, and its index.

        DataFrame columns are matched by name (by position if the model
        knows no names) and converted one by one (see
        :func:`~skshapley._input.frame_values`: category columns become
        their values, or their codes if ``categories_as_codes``, counted in
        ``category_levels[j]`` where it is given; categories missing from it
        are missing values, or an error if ``unknown_categories ==
        "error"``). Anything else is read as an array of real numbers. The
        caller's data is copied, never modified.
        """
        if isinstance(X, pd.DataFrame):
            index = X.index
            array = frame_values(
                self._model_columns(X),
                categories_as_codes=categories_as_codes,
                category_levels=category_levels,
                categorical_features=categorical_features,
                unknown_categories=unknown_categories,
            )
        else:
            array = array_values(X)
            self._check_shape(array.shape)
            index = pd.RangeIndex(len(array))
        self._check_values(array, allow_nan=allow_nan, allow_inf=allow_inf)
        return array, index

    def _model_columns(self, X: pd.DataFrame) -> pd.DataFrame:
        """A DataFrame's columns as the model's features, in the model's order."""
        columns = [str(column) for column in X.columns]
        check_unique_columns(columns)
        if not self._columns_by_name:  # the model knows no names: by position
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

    def _summary(self) -> dict[str, str]:
        """Facts about the fitted explainer, in words, for reports.

        The explainer, the model, what is explained and the number of
        features; subclasses add their value function and its parameters.
        """
        outputs = ", ".join(str(name) for name in self.output_names_)
        return {
            "explainer": type(self).__name__,
            "model": _model_name(self.model),
            "output explained": f"{self.raw_output_} ({outputs})",
            "features": str(self.n_features_in_),
        }

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


def _model_name(model) -> str:
    """The model's class name; a pipeline's steps joined by arrows.

    Models read from XGBoost or LightGBM files describe themselves.
    """
    description = getattr(model, "description", None)
    if isinstance(description, str):
        return description
    steps = getattr(model, "steps", None)
    if isinstance(steps, list):
        return " → ".join(type(step).__name__ for _, step in steps)
    return type(model).__name__
