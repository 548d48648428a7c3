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

from ._contract.interactions import InteractionsMixin
from ._contract.mixins import FramesMixin, InputMixin
from ._contract.naming import model_name
from ._contract.outputs import output_position
from ._contract.results import (
    QuadratureUse,
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


class BaseExplainer(InteractionsMixin, InputMixin, FramesMixin, BaseEstimator):
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
        raw : ndarray of float64, of shape (n_samples,) or (n_samples, n_outputs)
            The output named by ``raw_output_``: regression values, class
            probabilities (forests), log-odds or class scores (boosting),
            decision functions (SVC), latent means (Gaussian process
            classifiers) or the response of a model-agnostic explainer's
            ``response_method``. Every explainer returns a NumPy array,
            rows in ``X``'s order: of shape (n_samples,) for one output (a
            regressor, a binary classifier's positive class), like
            ``phi.sum(axis=1)``, else one column per output of
            ``output_names_``, in that order.
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
