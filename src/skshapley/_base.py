"""What every explainer shares: the input contract and the output frames.

An explainer is a scikit-learn estimator wrapping a fitted ``model``: the
constructor stores parameters, ``fit`` parses the model, ``explain`` returns
a pandas DataFrame with one row per sample and one column per feature (or a
``(output, feature)`` MultiIndex for several outputs).
"""

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator


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
        unknown_categories: str = "missing",
    ):
        """``X`` as a float64 array in the model's column order, and its index.

        DataFrame columns are matched by name; categorical columns become
        their codes (missing or unknown: NaN) if ``categories_as_codes``,
        counted in ``category_levels[j]`` (the training categories) where it
        is given, else their values; categories missing from
        ``category_levels[j]`` are missing values, or an error if
        ``unknown_categories == "error"``. The caller's data is copied, never
        modified.
        """
        if isinstance(X, pd.DataFrame) and not self._columns_by_name:
            index = X.index  # the model knows no names: columns by position
        elif isinstance(X, pd.DataFrame):
            index = X.index
            columns = [str(column) for column in X.columns]
            expected = list(self.feature_names_in_)
            missing = [name for name in expected if name not in columns]
            unknown = [name for name in columns if name not in expected]
            if missing or unknown:
                raise ValueError(
                    "X's columns must be the model's features; "
                    f"missing: {missing}, unknown: {unknown}."
                )
            X = X.set_axis(columns, axis=1)[expected]
        else:
            index = None
        if isinstance(X, pd.DataFrame) and categories_as_codes:
            levels = category_levels or [None] * X.shape[1]
            X = pd.DataFrame(
                {
                    column: _category_codes(X[column], level, unknown_categories)
                    for column, level in zip(X.columns, levels, strict=True)
                },
                index=X.index,
            )
        try:
            array = np.array(X, dtype=np.float64, copy=True, order="C")
        except (TypeError, ValueError) as exc:
            raise ValueError(
                "X must be an array-like of numbers (categories as their codes)."
            ) from exc
        if array.ndim != 2 or array.shape[1] != self.n_features_in_:
            raise ValueError(
                f"X must have shape (n_samples, {self.n_features_in_}), the "
                f"model's number of features; got shape {array.shape}."
            )
        if not allow_nan and np.isnan(array).any():
            raise ValueError(
                "X contains NaN, and the model has no rule for missing values."
            )
        if not allow_inf and np.isinf(array).any():
            raise ValueError("X contains infinity, which the model rejects.")
        if index is None:
            index = pd.RangeIndex(len(array))
        return array, index

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


def _category_codes(column: pd.Series, levels, unknown: str) -> pd.Series:
    """A categorical column's codes as floats (NaN where missing); others as is.

    With ``levels`` (the training categories), codes are positions in it, as
    the model counts them; values it does not list are missing, or raise a
    ``ValueError`` if ``unknown == "error"``.
    """
    if not isinstance(column.dtype, pd.CategoricalDtype):
        return column
    if levels is not None:
        recoded = column.cat.set_categories(list(levels))
        unseen = column[recoded.isna() & column.notna()].unique().tolist()
        if unseen and unknown == "error":
            raise ValueError(
                f"Column {column.name!r} has categories the model did not see "
                f"in training: {unseen}."
            )
        column = recoded
    codes = column.cat.codes.astype(np.float64)
    return codes.where(codes >= 0)


def _model_name(model) -> str:
    """The model's class name; a pipeline's steps joined by arrows."""
    steps = getattr(model, "steps", None)
    if isinstance(steps, list):
        return " → ".join(type(step).__name__ for _, step in steps)
    return type(model).__name__
