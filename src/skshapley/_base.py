"""The explainer protocol: what an explainer implements, what it inherits.

An explainer is a scikit-learn estimator wrapping a fitted ``model``: the
constructor stores parameters, ``fit`` parses the model, ``explain`` returns
a pandas DataFrame with one row per sample and one column per feature (or a
``(output, feature)`` MultiIndex for several outputs). What reports and the
command line read of an explainer is public and documented here:
``supports(model)``, ``describe()``, ``base_value_meaning``,
``columns_by_name_``, ``supports_interactions``, the ``progress`` and
``output`` arguments of ``explain`` and ``explain_interactions``,
``for_partition`` and the fitted attributes.
"""

from collections.abc import Callable
from typing import ClassVar

import numpy as np
import pandas as pd
from sklearn.base import BaseEstimator

from ._coalitions import explained_indices
from ._contract.mixins import FramesMixin, InputMixin
from ._contract.naming import model_name
from ._contract.outputs import output_position
from ._contract.results import (
    QuadratureUse,
    allocated_interactions,
    with_quadrature,
)
from ._runtime.chunks import in_chunks
from ._runtime.dask import is_dask_collection, lazy_explanation
from ._runtime.memory import parse_memory
from ._runtime.progress import progress_callback
from ._runtime.threads import effective_n_threads, threads_for


class BaseValueMeaning:
    """``base_value_meaning``: the explainer's own value function's on an
    instance (what reports read), the default one's on the class.

    Parameters
    ----------
    default : str
        The meaning of the explainer's default value function.
    """

    interventional = (
        "what the model predicts on average over the background data: with no "
        "feature known, every feature takes each background row's value in "
        "turn. It is the mean of the model's raw output over the background "
        "rows."
    )

    def __init__(self, default: str):
        self.default = default

    def __get__(self, explainer, owner=None) -> str:
        if getattr(explainer, "feature_perturbation", None) == "interventional":
            return self.interventional
        return self.default


class BaseExplainer(InputMixin, FramesMixin, BaseEstimator):
    """The explainer protocol, and the orchestration of every explanation.

    A subclass implements ``fit``: it calls ``_parsed_model`` (the model,
    split from a pipeline or search, parsed by the class's ``_parse``, which
    raises :class:`~skshapley.UnsupportedModelError` for other models) and
    ``_fit_players`` (features and players), and sets ``output_names_``,
    ``raw_output_`` and ``expected_value_``; it names its fitted attribute
    in ``_fitted_attribute``, and implements ``_prepared`` (the final
    model's validated rows, by ``_validate_X``), ``_explain_rows`` and
    ``_raw_rows`` (values and raw outputs of validated rows), and may
    implement the hooks below. The input and output halves are inherited
    (:mod:`~skshapley._contract.mixins`); this class runs ``explain``,
    ``explain_interactions`` and ``raw_predict`` in chunks of rows.
    """

    #: What the base value ``expected_value_`` is, in words, for reports.
    base_value_meaning: ClassVar[str] = ""

    #: Whether :meth:`explain_interactions` is implemented (``_interaction_rows``).
    supports_interactions: ClassVar[bool] = False

    #: Whether :meth:`explain_interactions` takes an ``index`` (``_index_rows``).
    supports_indices: ClassVar[bool] = False

    # The fitted attribute that check_is_fitted looks for.
    _fitted_attribute: ClassVar[str] = ""

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
        if output is None:
            results = np.zeros((n_results, n_samples, n_outputs, n_players))

            def compute(rows):
                n_threads = self._n_threads(rows.stop - rows.start)
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
                n_threads = self._n_threads(rows.stop - rows.start)
                used = explain_rows(rows_of(rows), chunk, n_threads)
                results[:, rows] = chunk[:, :, [position]]
                return used

            max_rows = self._rows_per_chunk(8 * n_results * n_outputs * n_players)
        quadrature = in_chunks(n_samples, compute, progress, max_rows)
        self._record(quadrature)
        # Each frame gets its own view of X's index: renaming one renames
        # neither X's nor another frame's.
        return [
            with_quadrature(
                self._frame(values, index.view(), self.player_names_), quadrature
            )
            for values in results
        ]

    def explain_interactions(
        self,
        X,
        *,
        index: str | None = None,
        order: int = 2,
        top_k: int | None = None,
        output=None,
        progress: bool | Callable[[int, int], None] | None = None,
    ) -> pd.DataFrame:
        """Shapley interaction values of the model's output for each row of ``X``.

        By default in shap's convention: for players ``i != j``, the entry is
        half the Shapley interaction index of ``i`` and ``j`` (so the matrix
        is symmetric), and the diagonal holds the main effects, so that each
        row of a sample's matrix sums to that player's Shapley value. With
        ``index``, an interaction index of any order instead: one column per
        coalition of at most ``order`` players (see the user guide,
        "Interactions of any order").

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
            The rows to explain. DataFrame columns are matched by name.
        index : {"SII", "k-SII", "STII", "FSII", "FBII", "BII", "Moebius"}, \
default=None
            The interaction index; None for the pairwise matrices in shap's
            convention. Explainers with ``supports_indices`` offer them.
        order : int, default=2
            The largest coalition, from 1 to the number of players (with
            ``index`` only: shap's convention is of order 2).
        top_k : int, default=None
            With ``index``: keep only the ``top_k`` largest values (in
            absolute value) of each row and output, in a long table, for
            results that would not fit in ``max_memory``.
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
            row ``(r, i)`` sum to ``explain(X).loc[r, i]``. With ``index``:
            the rows of :meth:`explain` and one column per coalition, the
            tuple of its players' names (``()`` for the empty coalition,
            where the index gives it a value), by size then in the players'
            order, or ``(output, coalition)`` for several outputs; k-SII,
            STII and FSII values sum to the raw output. With ``top_k``: rows
            ``(row, rank)`` (``(row, output, rank)`` for several outputs)
            and the columns ``coalition`` and ``value``.

        Raises
        ------
        NotImplementedError
            If the explainer has no interaction values
            (``supports_interactions`` is False), or no interaction indices
            (``supports_indices`` is False) and ``index`` is given.
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
        if is_dask_collection(X):
            raise TypeError(
                "explain_interactions returns its values in memory; for a Dask "
                "collection, explain its partitions (X.map_partitions) instead."
            )
        if index is not None or top_k is not None or order != 2:
            self._check_fitted()
            progress = progress_callback(progress)
            return explained_indices(self, X, index, order, top_k, output, progress)
        if not self.supports_interactions:
            raise NotImplementedError(
                f"{type(self).__name__} has no interaction values "
                "(supports_interactions is False)."
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
        result = allocated_interactions(
            n_samples, n_players, 1 if output is not None else n_outputs
        )

        def compute(rows: slice) -> QuadratureUse | None:
            chunk = np.zeros((rows.stop - rows.start, n_outputs, n_players, n_players))
            n_threads = self._n_threads(rows.stop - rows.start)
            used = self._interaction_rows(rows_of(rows), chunk, n_threads)
            # (row, output, i, j) -> (row, i, output, j): the frame's layout.
            result[rows] = chunk[:, picked].transpose(0, 2, 1, 3)
            return used

        quadrature = in_chunks(n_samples, compute, progress, max_rows)
        self._record(quadrature)
        rows = self._layout(self.player_names_).interaction_rows(index)
        values = result.reshape(n_samples * n_players, result.shape[2], n_players)
        return with_quadrature(
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
        in_chunks(n_samples, compute, None, max_rows)
        return out[:, 0] if out.shape[1] == 1 else out

    def for_partition(self, number: int) -> "BaseExplainer":
        """The explainer of partition ``number`` of a partitioned collection.

        Dask collections are explained partition by partition with it (and
        a Spark recipe can do the same): the explainer itself, whose values
        do not depend on how rows are partitioned; an explainer that draws
        at random (:class:`~skshapley.PermutationExplainer`) returns a copy
        whose draws are the partition's own.

        Parameters
        ----------
        number : int
            The partition's position in its collection (from 0).

        Returns
        -------
        explainer : BaseExplainer
            The explainer to explain that partition's rows with.
        """
        return self

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

    def _n_threads(self, n_rows: int) -> int:
        """Threads for ``n_rows`` rows: ``n_jobs``'s, fewer for little work."""
        n_threads = effective_n_threads(self.n_jobs)
        return threads_for(n_threads, n_rows, self._row_cost_ns())

    def _row_cost_ns(self) -> float | None:
        """A row's estimated time at one thread, in nanoseconds (None: unknown)."""
        return None

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

    def _index_rows(self, X: np.ndarray, plan, out: np.ndarray, n_threads: int):
        """Add the interaction indices of the validated rows ``X`` to ``out``.

        ``out`` has shape (n_samples, n_outputs, plan.n_columns) and starts
        at zero; it receives each row's values in the plan's order (see
        ``games._index_plan``), the model's constant included in the empty
        coalition's. Explainers that implement it, with
        ``_index_game_players`` (the most players of one game), set
        ``supports_indices``.
        """
        raise NotImplementedError

    def _index_game_players(self) -> int:
        """The most players of one of the value function's product games."""
        raise NotImplementedError
