"""What every explainer inherits from the contract: its input half and its
output half.

The input half splits the model from its pipeline and parses it, fits its
features and players, and reads rows (a slice at a time, within
``max_memory``) as the final model's features; the output half builds the
result frames. The work is done by the contract's functions and its
:class:`~skshapley._contract.reading.InputReader`; these methods hold what
the explainer knows (its model, its preprocessing, its reader) and call
them. :class:`~skshapley._base.BaseExplainer` mixes both in and declares
what each explainer implements.
"""

from collections.abc import Callable
from typing import ClassVar

import numpy as np
import pandas as pd
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_is_fitted

from .._errors import UnsupportedModelError
from .._runtime.chunks import check_background_bytes, rows_per_chunk
from .columns import NUMBERS, ColumnReading
from .features import fitted_features, fitted_players
from .frames import FrameLayout
from .input import array_values
from .pipeline import final_estimator
from .reading import InputReader
from .rows import row_source


class InputMixin:
    """What every explainer accepts: models, their features, and rows.

    Mixed into :class:`~skshapley._base.BaseExplainer`, which declares what
    the explainers implement (``_parse``, ``_prepared``, ``_placed``,
    ``_row_bytes``) and the ``_fitted_attribute``.
    """

    @classmethod
    def _refusal(cls, model) -> UnsupportedModelError | None:
        """The error :meth:`fit` would raise for ``model``'s kind, or None.

        By the class's parser: a pipeline is judged by its final step, and a
        model of a supported kind that is not fitted, or is malformed, is
        supported (``fit`` says what is wrong with it).
        """
        try:
            cls._parse(final_estimator(model)[1])
        except UnsupportedModelError as exc:
            return exc
        except NotFittedError:
            # An unfitted pipeline is of its last step's kind.
            if isinstance(model, Pipeline) and model.steps:
                return cls._refusal(model.steps[-1][1])
            return None  # parsers check the kind first: fit reports it
        except ValueError:  # a malformed model of a supported kind
            return None
        return None

    def __sklearn_clone__(self):
        """A new unfitted explainer of the same (fitted) model.

        ``sklearn.base.clone`` would otherwise clone the wrapped model into
        an unfitted copy; the model is what is explained, not a
        hyperparameter to refit.
        """
        return type(self)(**self.get_params(deep=False))

    def _parsed_model(self):
        """The model to explain, parsed by the class's ``_parse``.

        That is a pipeline's last step or a search's best model; the
        preprocessing steps (None if there are none) are kept for
        :meth:`_prepared_input`. An unsupported final model is named as
        what the wrapper holds.
        """
        try:
            self._preprocess, model = final_estimator(self.model)
        except NotFittedError:  # an unfitted pipeline: is it of our kind?
            refused = self._refusal(self.model)
            if refused is not None:
                raise refused from None
            raise
        try:
            return self._parse(model)
        except UnsupportedModelError as exc:
            if model is self.model:
                raise
            raise UnsupportedModelError(
                f"{exc} It is the model in the {type(self.model).__name__}."
            ) from exc

    def _fit_players(self, names: np.ndarray, by_name: bool) -> np.ndarray | None:
        """Set the input, feature and player attributes; each feature's player.

        ``names`` are the features the parsed model reads (its own names if
        ``by_name``); see :mod:`~skshapley._contract.features`. Returns each
        feature's player, or None if every feature is a player of its own.
        """
        features = fitted_features(self._preprocess, names, by_name)
        self._model_features = features.model
        self.feature_names_in_ = features.input_names
        self.columns_by_name_ = features.input_by_name
        self.n_features_in_ = len(features.input_names)
        self._reader = InputReader(
            features.model,
            (features.input_names, features.input_by_name),
            self._preprocess,
        )
        players, self.player_names_ = fitted_players(
            self.groups, self._preprocess, features
        )
        return players

    def _prepared_input(self, X) -> tuple[np.ndarray, pd.Index]:
        """The final model's validated rows and ``X``'s index.

        ``X`` is the model's input: a pipeline's raw input goes through its
        preprocessing before the explainer's ``_prepared`` validates what
        the final model reads.
        """
        if self._preprocess is None:
            return self._prepared(X)
        return self._reader.preprocessed(X, self._prepared)

    def _validate_X(
        self,
        X,
        *,
        allow_nan: bool,
        allow_inf: bool,
        reading: ColumnReading = NUMBERS,
        check_values: bool = True,
    ) -> tuple[np.ndarray, pd.Index]:
        """``X`` as a new float64 array in the model's column order, and its index.

        As :meth:`~skshapley._contract.reading.InputReader.validated` reads
        it; arrays and lists through :meth:`_values`.
        """
        return self._reader.validated(
            X,
            self._values,
            allow_nan=allow_nan,
            allow_inf=allow_inf,
            reading=reading,
            check_values=check_values,
        )

    def _values(self, X) -> np.ndarray:
        """An array-like ``X`` as a new float64 array of real numbers, or a ValueError.

        Explainers whose models read other values (the tree package's
        category codes) override this.
        """
        return array_values(X)

    def _row_source(self, X) -> tuple[int, pd.Index, Callable[[slice], object]]:
        """``X``'s number of rows, its index, and its prepared rows by slice."""
        return row_source(
            X,
            lambda part, start: self._placed(self._prepared_input(part)[0], start),
            self._prepared_input,
        )

    def _rows_per_chunk(self, extra_bytes: int = 0) -> int:
        """Rows explained at a time: ``_row_bytes`` and ``extra_bytes`` each."""
        return rows_per_chunk(self.max_memory, self._row_bytes() + extra_bytes)

    def _check_background_bytes(self, n_rows: int, copies: int, name: str) -> None:
        """Refuse a background whose ``copies`` exceed half of ``max_memory``."""
        check_background_bytes(
            self.max_memory, n_rows, self.n_features_in_, copies, name
        )

    def _validated_background(self, X) -> np.ndarray:
        """``fit``'s background ``X``: its rows as the model reads them, after
        refusing a background whose two copies exceed half of ``max_memory``,
        an invalid one (the message names it) and one without rows."""
        n_rows = np.shape(X)[0] if np.ndim(X) == 2 else 0
        self._check_background_bytes(n_rows, 2, "(fit's X)")
        try:
            background, _ = self._prepared_input(X)
        except ValueError as exc:
            raise ValueError(f"The background data (fit's X): {exc}") from exc
        if len(background) == 0:
            raise ValueError("The background data (fit's X) has no rows.")
        return background

    def _check_fitted(self) -> None:
        """Raise ``NotFittedError`` unless the explainer is fitted.

        scikit-learn's ``check_is_fitted`` decides by the fitted attribute's
        presence; looking for it first spares every call its tag lookups.
        """
        if self._fitted_attribute not in self.__dict__:
            check_is_fitted(self, self._fitted_attribute)


class FramesMixin:
    """Builds an explainer's result frames from arrays of values.

    What an explainer remembers of past calls is left out of pickles and
    copies: a frame layout is kept only for the very names it was built
    from (the column plans are its reader's, see ``reading.py``).
    """

    _remembered: ClassVar[tuple[str, ...]] = ("_frame_layout",)

    def __getstate__(self) -> dict:
        """The explainer's state without what it remembers of past calls.

        Column plans and frame layouts are rebuilt after unpickling (or
        copying): they are cheap, and hold locks and pandas objects that
        need not travel.
        """
        state = super().__getstate__()
        return {
            key: value for key, value in state.items() if key not in self._remembered
        }

    def _frame(self, values: np.ndarray, index, players: np.ndarray) -> pd.DataFrame:
        """A DataFrame of values of shape (n_samples, n_outputs, n_players).

        The columns are the ``players`` (the explainer's ``player_names_``);
        the DataFrame wraps ``values`` without copying it.
        """
        return self._layout(players).frame(values, index)

    def _layout(self, players: np.ndarray) -> FrameLayout:
        """The layout of frames of ``players``: built again only after a fit."""
        layout = self.__dict__.get("_frame_layout")
        if layout is None or not layout.describes(players, self.output_names_):
            layout = FrameLayout(players, self.output_names_)
            self._frame_layout = layout
        return layout

    def _per_output(self, values: np.ndarray):
        """A float for one output, else a Series indexed by output name."""
        if len(values) == 1:
            return float(values[0])
        return pd.Series(values, index=list(self.output_names_), name="base value")


def refusal(explainer_class: type, model) -> UnsupportedModelError | None:
    """The error ``explainer_class(model).fit()`` would raise for ``model``'s kind.

    None if the explainer explains that kind of model (see
    :meth:`~skshapley._base.BaseExplainer.supports`).
    """
    return explainer_class._refusal(model)
