"""Interaction indices of any order for the explainers: the orchestration
of ``explain_interactions(X, index=..., order=...)``.

The explainer's ``_index_rows`` gives each row's values in the plan's
order (``games._index_plan``); here the rows go in chunks that fit
``max_memory``, and the result is a DataFrame: one column per coalition, or
with ``top_k`` a long table of each row's largest values.
"""

from collections.abc import Callable

import numpy as np
import pandas as pd

from ._contract.frames import coalition_frame, coalition_labels
from ._contract.outputs import output_position
from ._contract.validation import check_count
from ._runtime.chunks import in_chunks, rows_per_chunk
from ._runtime.memory import parse_memory
from .games._index_plan import index_plan
from .games._indices import check_index


def explained_indices(
    explainer,
    X,
    index: str | None,
    order: int,
    top_k: int | None,
    output,
    progress: Callable[[int, int], None] | None,
) -> pd.DataFrame:
    """``explainer.explain_interactions(X, index=index, order=order, ...)``."""
    if index is None:
        raise ValueError(
            "order and top_k apply to an interaction index: pass index= one of "
            "'SII', 'k-SII', 'STII', 'FSII', 'FBII', 'BII', 'Moebius' (without "
            "it, interaction values are shap's pairwise matrices, of order 2)."
        )
    if not explainer.supports_indices:
        raise NotImplementedError(
            f"{type(explainer).__name__} has no interaction indices of any "
            "order (supports_indices is False)."
        )
    n_players, n_outputs = len(explainer.player_names_), len(explainer.output_names_)
    index, order = check_index(index, order, n_players)
    if top_k is not None:
        top_k = check_count(top_k, "top_k")
    plan = index_plan(index, order, n_players, explainer._index_game_players())
    kept = (
        [output_position(explainer.output_names_, output)]
        if output is not None
        else None
    )
    n_kept = 1 if kept else n_outputs
    n_samples, rows_index, rows_of = explainer._row_source(X)
    _check_fits(explainer, plan, n_samples, n_outputs, n_kept, top_k)
    # A chunk's rows keep the kernel's columns and their ordered copy.
    row_bytes = explainer._row_bytes() + 16 * n_outputs * plan.n_columns
    max_rows = rows_per_chunk(explainer.max_memory, row_bytes)
    width = plan.n_columns if top_k is None else min(top_k, plan.n_columns)
    values = np.zeros((n_samples, n_kept, width))
    columns = np.zeros((n_samples, n_kept, width), dtype=np.intp)

    def compute(rows: slice) -> None:
        chunk = np.zeros((rows.stop - rows.start, n_outputs, plan.n_columns))
        n_threads = explainer._n_threads(rows.stop - rows.start)
        explainer._index_rows(rows_of(rows), plan, chunk, n_threads)
        ordered = chunk[:, kept] if kept else chunk
        if top_k is None:
            values[rows] = ordered
            return
        largest = np.argsort(-np.abs(ordered), axis=2, kind="stable")[:, :, :width]
        columns[rows] = largest
        values[rows] = np.take_along_axis(ordered, largest, axis=2)

    in_chunks(n_samples, compute, progress, max_rows)
    outputs = (
        [explainer.output_names_[kept[0]]] if kept else list(explainer.output_names_)
    )
    if top_k is not None:
        return _largest_frame(values, columns, rows_index, plan, explainer, outputs)
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


def _check_fits(explainer, plan, n_samples, n_outputs, n_kept, top_k) -> None:
    """Refuse a result, or one row's work, that cannot fit in ``max_memory``."""
    budget = parse_memory(explainer.max_memory)
    row_work = 2 * 16 * n_outputs * plan.n_columns
    result = 8 * n_samples * n_kept * plan.n_columns if top_k is None else 0
    if row_work > budget or 2 * result > budget:
        raise ValueError(
            f"{plan.index} of order {plan.order} on {len(explainer.player_names_)} "
            f"players has {plan.n_columns:,} coalitions per row and output: "
            f"{max(row_work, 2 * result):,} bytes, more than max_memory="
            f"{explainer.max_memory!r} ({budget:,} bytes) allows. Pass top_k to "
            "keep each row's largest values, explain fewer rows at a time, or "
            "ask for a smaller order."
        )


def _largest_frame(values, columns, rows_index, plan, explainer, outputs):
    """The long table of each row's (and output's) largest values."""
    _n_samples, n_kept, width = values.shape
    labels = coalition_labels(plan.coalitions, tuple(explainer.player_names_))
    labels = labels.to_numpy()
    levels = [
        rows_index,
        pd.Index(outputs, name="output"),
        pd.RangeIndex(width, name="rank"),
    ]
    if n_kept == 1:
        levels.pop(1)
    index = pd.MultiIndex.from_product(levels)
    index = index.set_names(rows_index.name or "row", level=0)
    return pd.DataFrame(
        {"coalition": labels[columns.ravel()], "value": values.ravel()}, index=index
    )
