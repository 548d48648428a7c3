"""Interaction values and indices: ``explain_interactions``, inherited by
every explainer (``BaseExplainer``).

Pairwise interaction values (shap's convention) come from the explainer's
``_interaction_rows``; interaction indices of any order
(``index=...``) from its ``_index_rows``, which gives each row's values in
the order of a ``games._index_plan.IndexPlan``. Both run in chunks of rows
that fit ``max_memory``; indices are returned one column per coalition, or
with ``top_k`` as a long table of each row's largest values.
"""

from collections.abc import Callable
from typing import ClassVar

import numpy as np
import pandas as pd

from .._runtime.chunks import in_chunks, rows_per_chunk
from .._runtime.dask import is_dask_collection
from .._runtime.memory import parse_memory
from .._runtime.progress import progress_callback
from ..games._index_plan import index_plan
from ..games._indices import check_index
from .frames import coalition_frame, coalition_labels
from .outputs import output_position
from .results import QuadratureUse, allocated_interactions, with_quadrature
from .validation import check_count

# Bytes a row's column takes per output while it is computed, kept and
# ordered: the kernel's value, its ordered copy and, with top_k, the
# windows' values, positions and sort order.
_COLUMN_BYTES = 40


class InteractionsMixin:
    """``explain_interactions``, and the hooks an explainer implements for it."""

    #: Whether :meth:`explain_interactions` is implemented (``_interaction_rows``).
    supports_interactions: ClassVar[bool] = False

    #: Whether :meth:`explain_interactions` takes an ``index`` (``_index_rows``).
    supports_indices: ClassVar[bool] = False

    def explain_interactions(
        self,
        X,
        *,
        index: str | None = None,
        order: int = 2,
        top_k: int | None = None,
        threshold: float | None = None,
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
        threshold : float, default=None
            With ``index``: keep only the values of at least ``threshold``
            in absolute value, in the same long table (with ``top_k``: the
            ``top_k`` largest of those).
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
            STII and FSII values sum to the raw output. With ``top_k`` or
            ``threshold``, largest first: rows
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
        pairwise = (index, order, top_k, threshold) == (None, 2, None, None)
        if pairwise and not self.supports_interactions:
            raise NotImplementedError(
                f"{type(self).__name__} has no interaction values "
                "(supports_interactions is False)."
            )
        self._check_fitted()
        progress = progress_callback(progress)
        if not pairwise:
            return _explained_indices(
                self, X, index, order, (top_k, threshold), output, progress
            )
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

    def _interaction_row_bytes(self) -> int:
        """Working bytes per row of interaction values, beyond ``_row_bytes``.

        Its matrices, kept until the chunk's rows are laid out.
        """
        return 8 * len(self.output_names_) * len(self.player_names_) ** 2

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


def _explained_indices(
    explainer,
    X,
    index: str | None,
    order: int,
    keep: tuple,
    output,
    progress: Callable[[int, int], None] | None,
) -> pd.DataFrame:
    """``explainer.explain_interactions(X, index=index, order=order, ...)``,
    ``keep`` its ``(top_k, threshold)``."""
    if index is None:
        raise ValueError(
            "order, top_k and threshold apply to an interaction index: pass "
            "index= one of 'SII', 'k-SII', 'STII', 'FSII', 'FBII', 'BII', "
            "'Moebius' (without it, interaction values are shap's pairwise "
            "matrices, of order 2)."
        )
    if not explainer.supports_indices:
        raise NotImplementedError(
            f"{type(explainer).__name__} has no interaction indices of any "
            "order (supports_indices is False)."
        )
    n_players, n_outputs = len(explainer.player_names_), len(explainer.output_names_)
    index, order = check_index(index, order, n_players)
    top_k, threshold = _checked_keep(*keep)
    long = (top_k, threshold) != (None, None)
    plan = index_plan(index, order, n_players, explainer._index_game_players())
    kept = (
        [output_position(explainer.output_names_, output)]
        if output is not None
        else None
    )
    n_kept = 1 if kept else n_outputs
    n_samples, rows_index, rows_of = explainer._row_source(X)
    windows = _column_windows(explainer, plan, n_samples, n_outputs, n_kept, long)
    width = max(window.n_columns for window in windows)
    row_bytes = explainer._row_bytes() + _COLUMN_BYTES * n_outputs * width
    max_rows = rows_per_chunk(explainer.max_memory, row_bytes)
    values = np.zeros((0 if long else n_samples, n_kept, plan.n_columns))
    parts = []  # long: (row, output, rank, column, value) of each chunk

    def compute(rows: slice) -> None:
        n_rows = rows.stop - rows.start
        n_threads = explainer._n_threads(n_rows)
        chunk_rows = rows_of(rows)
        largest = np.empty((n_rows, n_kept, 0), dtype=np.int64)
        picked = np.empty((n_rows, n_kept, 0))
        for window in windows:
            chunk = np.zeros((n_rows, n_outputs, window.n_columns))
            explainer._index_rows(chunk_rows, window, chunk, n_threads)
            ordered = chunk[:, kept] if kept else chunk
            positions = window.positions
            if not long and window.is_window:
                values[rows, :, positions] = ordered
            elif not long:
                values[rows] = ordered
            else:  # the window's largest, with those of the windows before
                positions = np.broadcast_to(positions, ordered.shape)
                largest, picked = _largest(
                    np.concatenate([picked, ordered], axis=2),
                    np.concatenate([largest, positions], axis=2),
                    top_k,
                )
        if not long:
            return
        row, out, rank = np.nonzero(
            np.abs(picked) >= (threshold if threshold is not None else 0.0)
        )
        parts.append(
            (
                row + rows.start,
                out,
                rank,
                largest[row, out, rank],
                picked[row, out, rank],
            )
        )

    in_chunks(n_samples, compute, progress, max_rows)
    outputs = (
        [explainer.output_names_[kept[0]]] if kept else list(explainer.output_names_)
    )
    if long:
        return _largest_frame(parts, rows_index, plan, explainer, outputs)
    frame = coalition_frame(
        values, rows_index.view(), plan.coalitions, explainer.player_names_, outputs
    )
    base = np.atleast_1d(np.asarray(explainer.expected_value_, dtype=float))
    # What to_shapiq reads: the index, the players, and v(∅) per output.
    frame.attrs["interaction_index"] = {
        "index": plan.index,
        "order": plan.order,
        "players": list(explainer.player_names_),
        "baseline": (
            float(base[kept[0] if kept else 0])
            if n_kept == 1
            else dict(zip(outputs, base.tolist(), strict=True))
        ),
    }
    return frame


def _checked_keep(top_k, threshold) -> tuple:
    """``top_k`` as an int >= 1 and ``threshold`` as a float >= 0 (or None)."""
    if top_k is not None:
        top_k = check_count(top_k, "top_k")
    if threshold is not None:
        if (
            isinstance(threshold, bool)
            or not isinstance(threshold, int | float | np.floating | np.integer)
            or not 0 <= threshold < np.inf
        ):
            raise ValueError(
                f"threshold must be a finite number >= 0, got {threshold!r}."
            )
        threshold = float(threshold)
    return top_k, threshold


def _largest(values: np.ndarray, positions: np.ndarray, top_k: int | None):
    """The ``top_k`` largest ``|values|`` of each row and output (all for
    None), largest first, and their positions: a stable sort, so that ties
    keep the listed order."""
    order = np.lexsort((positions, -np.abs(values)), axis=2)[:, :, :top_k]
    return (
        np.take_along_axis(positions, order, axis=2),
        np.take_along_axis(values, order, axis=2),
    )


def _column_windows(
    explainer, plan, n_samples: int, n_outputs: int, n_kept: int, long: bool
) -> list:
    """The plan, or windows of its columns when one row's do not fit in
    ``max_memory``; refuse a result that cannot fit (a ``long`` table's
    size is not known before), and k-SII beyond one row's memory."""
    budget = parse_memory(explainer.max_memory)
    # As rows_per_chunk counts: twice a row's bytes, here a window's columns
    # besides the explainer's own.
    width = (budget // 2 - explainer._row_bytes()) // (_COLUMN_BYTES * n_outputs)
    row_work = 2 * (explainer._row_bytes() + _COLUMN_BYTES * n_outputs * plan.n_columns)
    result = 0 if long else 2 * 8 * n_samples * n_kept * plan.n_columns
    what = (
        f"{plan.index} of order {plan.order} on {len(explainer.player_names_)} "
        f"players has {plan.n_columns:,} coalitions per row and output"
    )
    allowed = f"max_memory={explainer.max_memory!r} ({budget:,} bytes)"
    if row_work > budget and plan.index == "k-SII":
        raise ValueError(
            f"{what}: one row needs {row_work:,} bytes, more than {allowed} "
            "allows, and k-SII combines each coalition's SII with its "
            "supersets', so a row's coalitions are computed at once. Ask for "
            "a smaller order, raise max_memory, or use index='SII' (computed "
            "in windows of coalitions)."
        )
    if result > budget:
        raise ValueError(
            f"{what}: the result needs {result:,} bytes, more than {allowed} "
            "allows. Pass top_k or threshold to keep each row's largest "
            "values, explain fewer rows at a time, or ask for a smaller order."
        )
    if row_work <= budget:
        return [plan]
    width = max(1, width)  # (else rows_per_chunk says how much a row needs)
    return [
        plan.window(first, min(first + width, plan.n_columns))
        for first in range(0, plan.n_columns, width)
    ]


def _largest_frame(parts, rows_index, plan, explainer, outputs) -> pd.DataFrame:
    """The long table of each row's (and output's) values kept, largest
    first: rows ``(row, rank)``, or ``(row, output, rank)`` for several
    outputs."""
    row, out, rank, column, value = (
        (np.concatenate(arrays) for arrays in zip(*parts, strict=True))
        if parts
        else (np.empty(0, np.intp),) * 5
    )
    labels = coalition_labels(
        tuple(plan.coalitions_at(column)), tuple(explainer.player_names_)
    )
    arrays = [rows_index.take(row), pd.Index(outputs).take(out), rank]
    names = [rows_index.name or "row", "output", "rank"]
    if len(outputs) == 1:
        del arrays[1], names[1]
    return pd.DataFrame(
        {"coalition": labels.to_numpy(), "value": value.astype(float)},
        index=pd.MultiIndex.from_arrays(arrays, names=names),
    )
