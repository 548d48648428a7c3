"""What every explainer shares: the protocol, the input contract, the output frames.

An explainer is a scikit-learn estimator wrapping a fitted ``model``: the
constructor stores parameters, ``fit`` parses the model, ``explain`` returns
a pandas DataFrame with one row per sample and one column per feature (or a
``(output, feature)`` MultiIndex for several outputs). What reports and the
command line read of an explainer is public and documented here:
``supports(model)``, ``describe()``, ``base_value_meaning``,
``columns_by_name_``, ``supports_interactions``, the ``progress`` and
``output`` arguments of ``explain`` and ``explain_interactions`` and the
fitted attributes.
"""

import time
from collections.abc import Callable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.base import BaseEstimator
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import Pipeline
from sklearn.utils.validation import check_is_fitted

from ._contract.columns import (
    NUMBERS,
    ColumnPlan,
    ColumnPlans,
    ColumnReading,
    column_plan,
    matched_positions,
)
from ._contract.frames import FrameLayout, default_index
from ._contract.groups import feature_players
from ._contract.input import array_values, as_pandas, check_unique_columns, frame_slices
from ._contract.input_groups import input_groups
from ._contract.naming import model_name
from ._contract.outputs import output_position
from ._contract.pipeline import final_estimator
from ._errors import UnsupportedModelError
from ._runtime.dask import is_dask_collection, lazy_explanation
from ._runtime.memory import parse_memory
from ._runtime.progress import progress_callback
from ._runtime.threads import effective_n_threads

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

    Subclasses call ``_parsed_model`` in ``fit`` (it splits a pipeline or
    search into its preprocessing and the model to parse, and parses it with
    the class's ``_parse``, the parser of its final models, which raises
    :class:`~skshapley.UnsupportedModelError` for others), then
    ``_fit_players`` with the parsed model's feature names (it sets
    ``feature_names_in_``, ``n_features_in_``, ``columns_by_name_`` and
    ``player_names_``), and set ``output_names_``, ``raw_output_`` and
    ``expected_value_``; they name the attribute that marks them fitted in
    ``_fitted_attribute``, and implement ``_prepared`` (the final model's
    validated rows), ``_explain_rows`` (the values of validated rows) and
    ``_raw_rows`` (their raw output). A pipeline's raw input goes through its
    preprocessing first (``_prepared_input``), in one implementation for
    every explainer.
    """

    #: What the base value ``expected_value_`` is, in words, for reports.
    base_value_meaning: ClassVar[str] = ""

    #: Whether :meth:`explain_interactions` is implemented (``_interaction_rows``).
    supports_interactions: ClassVar[bool] = False

    # The fitted attribute that check_is_fitted looks for.
    _fitted_attribute: ClassVar[str] = ""

    # What an explainer remembers of past calls (see _contract/columns.py, frames.py),
    # left out of pickles and copies. Fitting forgets the column plans; a
    # frame layout is kept only for the very names it was built from.
    _remembered: ClassVar[tuple[str, ...]] = ("_plans", "_frame_layout")

    # The parser of the models the explainer reads (a pipeline's final step).
    _parse: ClassVar[Callable[[object], object]]

    @classmethod
    def supports(cls, model) -> bool:
        """Whether the explainer explains ``model``.

        True if and only if :meth:`fit` would not raise
        :class:`~skshapley.UnsupportedModelError`: a pipeline is judged by
        its final step. A model of a supported kind that is not fitted, or
        is malformed, is supported (``fit`` says what is wrong with it).

        Parameters
        ----------
        model : estimator
            A model, or a ``Pipeline`` ending in one.

        Returns
        -------
        supported : bool
            Whether the explainer explains this kind of model.

        Examples
        --------
        >>> from sklearn.linear_model import LinearRegression
        >>> from sklearn.tree import DecisionTreeRegressor
        >>> from skshapley import TreeExplainer
        >>> TreeExplainer.supports(DecisionTreeRegressor().fit([[0.0]], [1.0]))
        True
        >>> TreeExplainer.supports(LinearRegression())
        False
        """
        return cls._refusal(model) is None

    @classmethod
    def _refusal(cls, model) -> UnsupportedModelError | None:
        """The error :meth:`fit` would raise for ``model``'s kind, or None."""
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

    def explain(
        self,
        X,
        *,
        output=None,
        progress: bool | Callable[[int, int], None] | None = None,
    ) -> pd.DataFrame:
        """Shapley values of the model's output for each row of ``X``.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
            The rows to explain. DataFrame columns are matched by name.
        output : object, default=None
            One of ``output_names_`` (a class label, say): the values of
            that output only, as a DataFrame with one column per player,
            which sums with ``expected_value_[output]`` to that output. By
            default every output's values.
        progress : bool or callable, default=None
            True shows a progress bar on stderr (rows done, percent, rows
            per second and time left; in a terminal or a notebook). A
            callable is called as ``progress(n_done, n_total)`` after each
            chunk of rows. Rows are then explained in chunks of about half a
            second each (the first of 64 rows), so that a keyboard interrupt
            is handled between chunks; the values are those of one call.
            None or False: no progress (chunks as ``max_memory`` allows).

        Returns
        -------
        phi : pandas.DataFrame
            One row per sample (``X``'s index) and one column per player
            (feature, or group), or columns ``(output, player)`` for several
            outputs unless ``output`` picks one. Each row sums, with
            ``expected_value_``, to the raw output. Where the quadrature
            depends on the rows (kernel models), ``phi.attrs`` mirrors the
            explainer's ``n_quadrature_points_`` and
            ``quadrature_error_bound_``.
        """
        if is_dask_collection(X):  # a lazy result, computed by Dask
            return lazy_explanation(self, X, output=output, progress=progress)
        progress = progress_callback(progress)
        (phi,) = self._explained(
            X, output, progress, lambda X, out, n: self._explain_rows(X, out[0], n)
        )
        return phi

    def _explained(
        self,
        X,
        output,
        progress: Callable[[int, int], None] | None,
        explain_rows: Callable,
        n_results: int = 1,
    ) -> list[pd.DataFrame]:
        """``n_results`` frames of per-row values, as :meth:`explain` returns them.

        ``explain_rows(X, out, n_threads)`` fills ``out``, of shape
        (n_results, n_rows, n_outputs, n_players), for validated rows ``X``
        (all of them, or one chunk at a time with ``progress``), and returns
        their :class:`QuadratureUse` or None.
        """
        self._check_fitted()
        n_outputs, n_players = len(self.output_names_), len(self.player_names_)
        n_samples, index, rows_of = self._row_source(X)
        n_threads = self._n_threads()
        if output is None:
            results = np.zeros((n_results, n_samples, n_outputs, n_players))

            def compute(rows):
                return explain_rows(rows_of(rows), results[:, rows], n_threads)

            max_rows = self._rows_per_chunk()
        else:
            # One output kept: the others' values live in a chunk's buffer
            # only, whose rows count in the budget.
            position = output_position(self.output_names_, output)
            results = np.zeros((n_results, n_samples, 1, n_players))

            def compute(rows):
                chunk = np.zeros(
                    (n_results, rows.stop - rows.start, n_outputs, n_players)
                )
                used = explain_rows(rows_of(rows), chunk, n_threads)
                results[:, rows] = chunk[:, :, [position]]
                return used

            max_rows = self._rows_per_chunk(8 * n_results * n_outputs * n_players)
        quadrature = self._in_chunks(n_samples, compute, progress, max_rows)
        self._record(quadrature)
        # Each frame gets its own view of X's index: renaming one renames
        # neither X's nor another frame's.
        return [
            _with_quadrature(
                self._frame(values, index.view(), self.player_names_), quadrature
            )
            for values in results
        ]

    def explain_interactions(
        self,
        X,
        *,
        output=None,
        progress: bool | Callable[[int, int], None] | None = None,
    ) -> pd.DataFrame:
        """Shapley interaction values of the model's output for each row of ``X``.

        In shap's convention: for players ``i != j``, the entry is half the
        Shapley interaction index of ``i`` and ``j`` (so the matrix is
        symmetric), and the diagonal holds the main effects, so that each
        row of a sample's matrix sums to that player's Shapley value.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
            The rows to explain. DataFrame columns are matched by name.
        output : object, default=None
            One of ``output_names_``: that output's values only. By default
            every output's values.
        progress : bool or callable, default=None
            True shows a progress bar on stderr; a callable is called as
            ``progress(n_done, n_total)`` after each chunk of rows (chunks of
            about half a second each, as in :meth:`explain`).

        Returns
        -------
        interactions : pandas.DataFrame
            ``n_samples * n_players`` rows indexed by ``(row, feature)``
            (``X``'s index, then the players), and the columns of
            :meth:`explain`: one per player, or ``(output, player)`` for
            several outputs unless ``output`` picks one. The entries of
            row ``(r, i)`` sum to ``explain(X).loc[r, i]``.

        Raises
        ------
        NotImplementedError
            If the explainer has no interaction values
            (``supports_interactions`` is False).
        MemoryError
            If the result (``n_samples * n_players**2 * n_outputs`` doubles)
            cannot be allocated; nothing is computed then. Beyond the result,
            values are computed in chunks of rows whose interaction arrays
            and input take at most half of ``max_memory``.
        ValueError
            If ``max_memory`` is less than one row needs (the message says
            how much).

        Examples
        --------
        >>> from sklearn.datasets import load_diabetes
        >>> from sklearn.ensemble import RandomForestRegressor
        >>> from skshapley import TreeExplainer
        >>> X, y = load_diabetes(return_X_y=True, as_frame=True)
        >>> model = RandomForestRegressor(n_estimators=5, random_state=0).fit(X, y)
        >>> explainer = TreeExplainer(model).fit()
        >>> interactions = explainer.explain_interactions(X.iloc[:3])
        >>> interactions.shape
        (30, 10)
        >>> phi = explainer.explain(X.iloc[:3])
        >>> bool(abs(interactions.sum(axis=1).unstack() - phi).max().max() < 1e-9)
        True
        """
        if not self.supports_interactions:
            raise NotImplementedError(
                f"{type(self).__name__} has no interaction values "
                "(supports_interactions is False)."
            )
        if is_dask_collection(X):
            raise TypeError(
                "explain_interactions returns its values in memory; for a Dask "
                "collection, explain its partitions (X.map_partitions) instead."
            )
        self._check_fitted()
        progress = progress_callback(progress)
        picked = slice(None)
        if output is not None:
            picked = [output_position(self.output_names_, output)]
        n_players, n_outputs = len(self.player_names_), len(self.output_names_)
        # The interaction matrices of a chunk's rows are kept until laid out.
        max_rows = self._rows_per_chunk(extra_bytes=self._interaction_row_bytes())
        n_samples, index, rows_of = self._row_source(X)
        result = _allocated(
            n_samples, n_players, 1 if output is not None else n_outputs
        )
        n_threads = self._n_threads()

        def compute(rows: slice) -> QuadratureUse | None:
            chunk = np.zeros((rows.stop - rows.start, n_outputs, n_players, n_players))
            used = self._interaction_rows(rows_of(rows), chunk, n_threads)
            # (row, output, i, j) -> (row, i, output, j): the frame's layout.
            result[rows] = chunk[:, picked].transpose(0, 2, 1, 3)
            return used

        quadrature = self._in_chunks(n_samples, compute, progress, max_rows)
        self._record(quadrature)
        rows = self._layout(self.player_names_).interaction_rows(index)
        values = result.reshape(n_samples * n_players, result.shape[2], n_players)
        return _with_quadrature(
            self._frame(values, rows, self.player_names_), quadrature
        )

    def raw_predict(self, X) -> np.ndarray:
        """The model's raw output: what :meth:`explain` attributes.

        Computed from the parsed model, as :meth:`explain` sees it, so that
        efficiency can always be checked: each row of ``explain(X)`` sums,
        with ``expected_value_``, to it.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
            The rows to predict.

        Returns
        -------
        raw : ndarray of shape (n_samples,) or (n_samples, n_outputs)
            The output named by ``raw_output_``: regression values, class
            probabilities (forests), log-odds or class scores (boosting),
            decision functions (SVC) or latent means (Gaussian process
            classifiers); one column per output of ``output_names_``.
        """
        self._check_fitted()
        n_samples, _, rows_of = self._row_source(X)
        out = np.empty((n_samples, len(self.output_names_)))

        def compute(rows: slice) -> None:
            out[rows] = self._raw_rows(rows_of(rows))

        # Chunks of rows whose input copies take half of max_memory: what an
        # explanation keeps per row beyond them is not needed here.
        input_bytes = BaseExplainer._row_bytes(self)
        max_rows = max(1, parse_memory(self.max_memory) // (2 * input_bytes))
        self._in_chunks(n_samples, compute, None, max_rows)
        return out[:, 0] if out.shape[1] == 1 else out

    def describe(self) -> dict[str, str]:
        """Facts about the fitted explainer, in words, for reports.

        Returns
        -------
        facts : dict of str to str
            The explainer, the model, the output explained and the number
            of features; the explainers add their value function, its
            background data and the quadrature they use.
        """
        self._check_fitted()
        outputs = ", ".join(str(name) for name in self.output_names_)
        return {
            "explainer": type(self).__name__,
            "model": model_name(self.model),
            "output explained": f"{self.raw_output_} ({outputs})",
            "features": str(self.n_features_in_),
        }

    def _check_fitted(self) -> None:
        """Raise ``NotFittedError`` unless the explainer is fitted.

        scikit-learn's ``check_is_fitted`` decides by the fitted attribute's
        presence; looking for it first spares every call its tag lookups.
        """
        if self._fitted_attribute not in self.__dict__:
            check_is_fitted(self, self._fitted_attribute)

    def _row_source(self, X) -> tuple[int, pd.Index, Callable[[slice], object]]:
        """``X``'s number of rows, its index, and its prepared rows by slice.

        DataFrames (polars and pyarrow ones too, converted to pandas slice
        by slice), 2-D arrays and sparse matrices are prepared (validated, converted, a
        pipeline's preprocessing applied) one slice at a time, so that
        memory is bounded by the slices; lists and the like, already copies,
        at once.
        """
        slices = frame_slices(X)
        if slices is not None:
            n_samples, index, frame_rows = slices
            return n_samples, index, self._sliced_rows(frame_rows)
        X = as_pandas(X)
        if sp.issparse(X):
            X = X.tocsr()  # sliced by rows (no copy if it is CSR already)
        if not _sliceable(X):
            prepared, index = self._prepared_input(X)
            return len(prepared), index, prepared.__getitem__
        n_samples = X.shape[0]
        index = X.index if isinstance(X, pd.DataFrame) else default_index(n_samples)

        def part_of(rows: slice):
            if rows.start == 0 and rows.stop >= n_samples:
                return X  # every row: slicing a DataFrame costs more than a row
            return X.iloc[rows] if isinstance(X, pd.DataFrame) else X[rows]

        return n_samples, index, self._sliced_rows(part_of)

    def _sliced_rows(self, part_of: Callable[[slice], object]):
        """Prepared rows by slice, from a function giving the input's slices."""

        def rows_of(rows: slice):
            return self._placed(self._prepared_input(part_of(rows))[0], rows.start)

        return rows_of

    def _check_background_bytes(self, n_rows: int, copies: int, name: str) -> None:
        """Refuse a background whose float64 copies exceed half of ``max_memory``.

        ``copies`` is how many the explainer works with at once (kept from
        ``fit``, and those its explanations gather from); ``name`` names the
        data in the message ("X_background").
        """
        row_bytes = 8 * copies * self.n_features_in_
        needed = n_rows * row_bytes
        budget = parse_memory(self.max_memory) // 2
        if needed > budget:
            raise ValueError(
                f"The background data {name} of {n_rows:,} rows and "
                f"{self.n_features_in_:,} features needs {needed:,} bytes as "
                f"{copies} float64 copies, and max_memory allows {budget:,} (half "
                f"of it). Pass a sample of the background (about "
                f"{max(1, budget // row_bytes):,} rows fit; hundreds of rows "
                "usually estimate the values well), or raise max_memory to at "
                f"least {2 * needed:,} bytes."
            )

    def _rows_per_chunk(self, extra_bytes: int = 0) -> int:
        """Rows explained at a time, so that they take half of ``max_memory``.

        ``extra_bytes`` are kept per row beyond ``_row_bytes`` (interaction
        matrices). The other half is left to the explainer's own bounded buffers (the
        model calls of the model-agnostic explainers, say). Raises a
        ValueError if one row needs more.
        """
        budget = parse_memory(self.max_memory)
        row_bytes = self._row_bytes() + extra_bytes
        if 2 * row_bytes > budget:
            raise ValueError(
                f"max_memory={self.max_memory!r} ({budget:,} bytes) is too small: "
                f"explaining one row needs {2 * row_bytes:,} bytes (half of "
                "max_memory goes to the rows of a chunk)."
            )
        return budget // (2 * row_bytes)

    def _row_bytes(self) -> int:
        """Working bytes per explained row, beyond its values.

        Its input as float64, through the conversions and a pipeline's
        preprocessing (a few copies of the larger of the input and the
        model's features); explainers that keep more per row add it.
        """
        n_model_features = len(self._model_features[0])
        return 8 * 3 * max(self.n_features_in_, n_model_features)

    def _interaction_row_bytes(self) -> int:
        """Working bytes per row of interaction values, beyond ``_row_bytes``.

        Its matrices, kept until the chunk's rows are laid out.
        """
        return 8 * len(self.output_names_) * len(self.player_names_) ** 2

    def _placed(self, rows, start: int):
        """Prepared ``rows`` that are the call's rows from ``start`` on.

        Explainers whose values depend on a row's position in the call (the
        permutation explainer's seeds) keep it; others need not.
        """
        return rows

    def _n_threads(self) -> int:
        """The threads of the compiled code, from ``n_jobs`` (checked)."""
        return effective_n_threads(self.n_jobs)

    def _explain_rows(
        self, X: np.ndarray, values: np.ndarray, n_threads: int
    ) -> QuadratureUse | None:
        """Add the values of the validated rows ``X`` to ``values``.

        ``values`` has shape (n_samples, n_outputs, n_players) and starts at
        zero. Returns the quadrature used, if it depends on the rows.
        """
        raise NotImplementedError

    def _raw_rows(self, X: np.ndarray) -> np.ndarray:
        """The raw output of the validated rows ``X``, shape (n_samples, n_outputs)."""
        raise NotImplementedError

    def _record(self, quadrature: QuadratureUse | None) -> None:
        """Keep what an explanation reports about itself (nothing by default)."""

    def _interaction_rows(
        self, X: np.ndarray, out: np.ndarray, n_threads: int
    ) -> QuadratureUse | None:
        """Add the interaction values of the validated rows ``X`` to ``out``.

        ``out`` has shape (n_samples, n_outputs, n_players, n_players) and
        starts at zero; it receives each row's full symmetric matrices in
        shap's convention (``out.sum(axis=3)`` is the Shapley values).
        Returns the quadrature used, if it depends on the rows. Explainers
        that implement it set ``supports_interactions``.
        """
        raise NotImplementedError

    def _in_chunks(
        self,
        n_samples: int,
        compute: Callable[[slice], QuadratureUse | None],
        progress: Callable[[int, int], None] | None,
        max_rows: int,
    ) -> QuadratureUse | None:
        """``compute(rows)`` over chunks of rows that cover ``range(n_samples)``.

        Chunks have at most ``max_rows`` rows. With a ``progress`` callback,
        called after each chunk, they are sized to take about
        ``_CHUNK_SECONDS`` each; without, they have ``max_rows`` rows.
        No rows are one empty chunk, without progress: ``X``'s columns are
        still checked and the quadrature (of no games) still recorded.
        Returns the quadrature of all chunks merged.
        """
        if n_samples == 0:
            return compute(slice(0, 0))
        quadrature = None
        done = 0
        size = max_rows if progress is None else min(_FIRST_CHUNK_ROWS, max_rows)
        while done < n_samples:
            rows = slice(done, min(done + size, n_samples))
            began = time.perf_counter()
            used = compute(rows)
            seconds = time.perf_counter() - began
            quadrature = used if quadrature is None else quadrature.merged(used)
            done = rows.stop
            if progress is not None:
                progress(done, n_samples)
                rate = size / max(seconds, 1e-3)
                size = max(1, int(np.clip(rate * _CHUNK_SECONDS, size // 4, size * 4)))
                size = min(size, max_rows)
        return quadrature

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
            refusal = self._refusal(self.model)
            if refusal is not None:
                raise refusal from None
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
        ``by_name``). Without preprocessing they are the input; with it, the
        input is the pipeline's, and the features are named by the
        preprocessing's ``get_feature_names_out()``. Returns each feature's
        player, or None if every feature is a player of its own.
        """
        self.__dict__.pop("_plans", None)  # of the model fitted before, if any
        if self._preprocess is None:
            self._model_features = (names, by_name)
            self.feature_names_in_, self.columns_by_name_ = names, by_name
            self.n_features_in_ = len(names)
        else:
            self.n_features_in_ = self._preprocess.n_features_in_
            self.feature_names_in_, self.columns_by_name_ = feature_names(
                getattr(self._preprocess, "feature_names_in_", None),
                self.n_features_in_,
            )
            named = _names_out(self._preprocess, names)
            # A model that knows its names is matched by them (as its library
            # spells them); errors on one that does not name the features as
            # the preprocessing does.
            self._model_features = (names if by_name else named, by_name)
            names = named
        if isinstance(self.groups, str):
            if self.groups != "input":
                raise ValueError(
                    'groups must be a mapping {group_name: [columns]}, "input" '
                    f"or None; got {self.groups!r}."
                )
            players, self.player_names_ = self._input_players(names)
        else:
            players, self.player_names_ = feature_players(self.groups, names)
        return players

    def _input_players(self, names: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
        """Players of ``groups="input"``: the raw input columns, in input order.

        Each preprocessed feature belongs to the input column it comes from;
        an input column the preprocessing drops is a player with no
        features (a dummy, valued 0).
        """
        if self._preprocess is None:
            return None, names
        groups = input_groups(self._preprocess, list(self.feature_names_in_))
        position = {str(name): j for j, name in enumerate(names)}
        traced = [str(member) for members in groups.values() for member in members]
        if not set(traced) <= set(position):
            raise ValueError(
                "groups='input': the pipeline's preprocessing traces features "
                f"it does not output ({sorted(set(traced) - set(position))[:5]}); "
                "the model is malformed (its file may be corrupt)."
            )
        players = np.full(len(names), -1, dtype=np.intp)
        for player, members in enumerate(groups.values()):
            players[[position[str(member)] for member in members]] = player
        if (players < 0).any():
            raise ValueError(
                "groups='input': the preprocessed features "
                f"{list(names[players < 0])} come from no input column."
            )
        return players, np.asarray(list(groups), dtype=object)

    def _prepared_input(self, X) -> tuple[np.ndarray, pd.Index]:
        """The final model's validated rows and ``X``'s index.

        ``X`` is the model's input: a pipeline's raw input goes through its
        preprocessing (DataFrame columns matched by name, as for any model)
        before the explainer's ``_prepared`` validates what the final model
        reads.
        """
        if self._preprocess is None:
            return self._prepared(X)
        X = as_pandas(X)
        index = None
        if isinstance(X, pd.DataFrame):
            index = X.index
            X = self._columns(X, (self.feature_names_in_, self.columns_by_name_))
            X = X if self.columns_by_name_ else X.to_numpy()
        elif self.columns_by_name_:
            # Rows by position, for a pipeline fitted on named columns: name
            # them, as scikit-learn would warn about an array otherwise.
            array = None if sp.issparse(X) else np.asarray(X)
            if array is not None and array.dtype.kind in "US":  # mixed lists
                array = np.asarray(X, dtype=object)
            if array is not None and array.ndim == 2:
                self._check_shape(array.shape, self.n_features_in_)
                X = pd.DataFrame(array, columns=list(self.feature_names_in_))
        transformed = _transformed(self._preprocess, X)
        try:
            rows, default_index = self._prepared(transformed)
        except ValueError as exc:
            raise ValueError(f"After the pipeline's preprocessing: {exc}") from exc
        return rows, default_index if index is None else index

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

        DataFrame columns are matched by name (by position if the model
        knows no names) and converted as ``reading`` says, by the plan of
        their column set (see :mod:`~skshapley._contract.columns`); other inputs by
        :meth:`_values`. ``reading`` must be the same at every call between
        two fits. The caller's data is copied, never modified. NaN and
        infinity are refused as ``allow_nan`` and ``allow_inf`` say, unless
        ``check_values`` is False (the caller checks the array itself).
        """
        X = as_pandas(X)
        if isinstance(X, pd.DataFrame):
            index = X.index
            array = (
                self._column_plans()
                .plan(
                    X,
                    lambda labels, dtypes: self._column_plan(
                        X, labels, dtypes, reading
                    ),
                )
                .values(X)
            )
        else:
            array = self._values(X)
            self._check_shape(array.shape, len(self._model_features[0]))
            index = default_index(len(array))
        if check_values:
            self._check_values(array, allow_nan=allow_nan, allow_inf=allow_inf)
        return array, index

    def _column_plan(
        self, X: pd.DataFrame, labels: list, dtypes: list, reading: ColumnReading
    ) -> ColumnPlan:
        """The plan that reads ``X``'s columns as the model's features.

        Raises the errors of :meth:`_columns` for columns that do not fit.
        """
        labels = reading.labels(labels)
        positions = self._feature_positions(labels, X.shape, self._model_features)
        if self._model_features[1]:
            labels = [str(label) for label in labels]
        return column_plan(positions, labels, dtypes, reading)

    def _column_plans(self) -> ColumnPlans:
        """The plans of the column sets read since the explainer was fitted."""
        plans = self.__dict__.get("_plans")
        if plans is None:
            plans = self._plans = ColumnPlans()
        return plans

    def _values(self, X) -> np.ndarray:
        """An array-like ``X`` as a new float64 array of real numbers, or a ValueError.

        Explainers whose models read other values (the tree package's
        category codes) override this.
        """
        return array_values(X)

    def _columns(self, X: pd.DataFrame, features: tuple) -> pd.DataFrame:
        """A DataFrame's columns as ``features``, in their order.

        ``features`` is ``(names, by_name)``: the names of the columns
        expected, and whether they are matched by name (else by position).
        """
        positions = self._feature_positions(X.columns, X.shape, features)
        names, by_name = features
        if not by_name:
            return X
        return X.iloc[:, positions].set_axis(list(names), axis=1)

    def _feature_positions(self, labels, shape: tuple, features: tuple) -> np.ndarray:
        """The column of X (``labels``, ``shape``) read as each feature.

        ``features`` is ``(names, by_name)``. By name: the columns must be
        exactly the names, in any order; else by position: unique columns,
        as many as the names. Raises a ValueError naming what is wrong.
        """
        names, by_name = features
        if by_name:
            return matched_positions(labels, names)
        # The model knows no names: by position.
        check_unique_columns([str(label) for label in labels])
        self._check_shape(shape, len(names))
        return np.arange(len(names))

    def _check_shape(self, shape: tuple[int, ...], n_features: int) -> None:
        """Raise unless ``shape`` is (n_samples, n_features)."""
        if len(shape) != 2 or shape[1] != n_features:
            raise ValueError(
                f"X must have shape (n_samples, {n_features}), the "
                f"model's number of features; got shape {shape}."
            )

    def _check_values(self, array: np.ndarray, *, allow_nan: bool, allow_inf: bool):
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
            name = self._model_features[0][columns[0]]
            raise ValueError(f"X contains {what} (column {name!r}).")

    def __sklearn_clone__(self):
        """A new unfitted explainer of the same (fitted) model.

        ``sklearn.base.clone`` would otherwise clone the wrapped model into
        an unfitted copy; the model is what is explained, not a
        hyperparameter to refit.
        """
        return type(self)(**self.get_params(deep=False))

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


def _sliceable(X) -> bool:
    """Whether ``X`` is sliced by rows before it is converted (not a list)."""
    return (
        isinstance(X, pd.DataFrame)
        or sp.issparse(X)
        or (isinstance(X, np.ndarray) and X.ndim == 2)
    )


def _allocated(n_samples: int, n_players: int, n_outputs: int) -> np.ndarray:
    """The interaction result, (n_samples, n_players, n_outputs, n_players).

    Allocated before anything is computed; a MemoryError says its size.
    """
    shape = (n_samples, n_players, n_outputs, n_players)
    try:
        return np.empty(shape)
    except MemoryError as exc:
        size = 8 * n_samples * n_players**2 * n_outputs
        raise MemoryError(
            f"The interaction values of {n_samples} rows, {n_players} players "
            f"and {n_outputs} outputs need {size / 2**30:.1f} GiB, which could "
            "not be allocated: explain fewer rows at a time, or group features."
        ) from exc


def in_shap_convention(out: np.ndarray, phi: np.ndarray) -> None:
    """Make ``out`` shap's interaction values, in place.

    ``out`` (..., n_players, n_players) holds full Shapley interaction
    indices off the diagonal (its diagonal is overwritten); ``phi`` (...,
    n_players) the Shapley values. Off the diagonal, half the index; on it,
    the main effect ``phi_j`` minus the row's other entries, so that each
    row sums to ``phi_j``.
    """
    phi = np.array(phi)  # it may be a view of out's diagonal
    diagonal = np.einsum("...jj->...j", out)
    diagonal[...] = 0.0
    out /= 2.0
    diagonal[...] = phi - out.sum(axis=-1)


def _with_quadrature(frame: pd.DataFrame, quadrature: QuadratureUse | None):
    """``frame``, its ``attrs`` noting the quadrature if it depends on the rows."""
    if quadrature is not None:
        frame.attrs["n_quadrature_points"] = quadrature.n_points
        frame.attrs["quadrature_error_bound"] = quadrature.error_bound
    return frame


def feature_names(names, n_features: int) -> tuple[np.ndarray, bool]:
    """The model's feature names, or ``x0, x1, ...`` if it has none.

    Also says whether the names are the model's own, so that DataFrame
    columns are matched by name (else by position, as scikit-learn does).
    """
    if names is None:
        return np.asarray([f"x{j}" for j in range(n_features)], dtype=object), False
    return np.asarray([str(name) for name in names], dtype=object), True


def _names_out(preprocess: Pipeline, default: np.ndarray) -> np.ndarray:
    """The names of the preprocessed features, as the final model reads them.

    ``default`` (the final model's own) where the preprocessing cannot name
    them, or names a different number of them.
    """
    try:
        names = preprocess.get_feature_names_out()
    except (AttributeError, TypeError, ValueError):
        return default
    if names is None or len(names) != len(default):
        return default
    return np.asarray(names, dtype=object)


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
