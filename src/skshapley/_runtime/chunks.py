"""Chunks of rows: how many fit ``max_memory``, and running over them.

Half of ``max_memory`` goes to the rows of a chunk (their input copies and
what each explainer keeps per row); the other half to the explainer's own
bounded buffers. With a progress callback, chunks are sized to take about
half a second each, so that Python handles Ctrl-C (SIGINT, seen only
between calls into compiled code) within about that time, and progress
moves steadily.
"""

import time
from collections.abc import Callable
from typing import TypeVar

import numpy as np

from .memory import parse_memory

# Rows in the first chunk observed by a progress callback; later chunks are
# sized to take about _CHUNK_SECONDS each.
_FIRST_CHUNK_ROWS = 64
_CHUNK_SECONDS = 0.5

Used = TypeVar("Used")


def rows_per_chunk(max_memory, row_bytes: int) -> int:
    """Rows explained at a time, so that they take half of ``max_memory``.

    ``row_bytes`` are kept per row. Raises a ValueError if one row needs
    more.
    """
    budget = parse_memory(max_memory)
    if 2 * row_bytes > budget:
        raise ValueError(
            f"max_memory={max_memory!r} ({budget:,} bytes) is too small: "
            f"explaining one row needs {2 * row_bytes:,} bytes (half of "
            "max_memory goes to the rows of a chunk)."
        )
    return budget // (2 * row_bytes)


def check_background_bytes(
    max_memory, n_rows: int, n_features: int, copies: int, name: str
) -> None:
    """Refuse a background whose float64 copies exceed half of ``max_memory``.

    ``copies`` is how many the explainer works with at once (kept from
    ``fit``, and those its explanations gather from); ``name`` names the
    data in the message ("X_background").
    """
    row_bytes = 8 * copies * n_features
    needed = n_rows * row_bytes
    budget = parse_memory(max_memory) // 2
    if needed > budget:
        raise ValueError(
            f"The background data {name} of {n_rows:,} rows and "
            f"{n_features:,} features needs {needed:,} bytes as "
            f"{copies} float64 copies, and max_memory allows {budget:,} (half "
            f"of it). Pass a sample of the background (about "
            f"{max(1, budget // row_bytes):,} rows fit; hundreds of rows "
            "usually estimate the values well), or raise max_memory to at "
            f"least {2 * needed:,} bytes."
        )


def in_chunks(
    n_samples: int,
    compute: Callable[[slice], Used],
    progress: Callable[[int, int], None] | None,
    max_rows: int,
) -> Used:
    """``compute(rows)`` over chunks of rows that cover ``range(n_samples)``.

    Chunks have at most ``max_rows`` rows. With a ``progress`` callback,
    called after each chunk, they are sized to take about
    ``_CHUNK_SECONDS`` each; without, they have ``max_rows`` rows.
    No rows are one empty chunk, without progress: ``X``'s columns are
    still checked and the quadrature (of no games) still recorded.
    Returns what the chunks' ``compute`` returned, merged (``None`` or
    objects with a ``merged`` method, such as a ``QuadratureUse``).
    """
    if n_samples == 0:
        return compute(slice(0, 0))
    used = None
    done = 0
    size = max_rows if progress is None else min(_FIRST_CHUNK_ROWS, max_rows)
    while done < n_samples:
        rows = slice(done, min(done + size, n_samples))
        began = time.perf_counter()
        chunk_used = compute(rows)
        seconds = time.perf_counter() - began
        used = chunk_used if used is None else used.merged(chunk_used)
        done = rows.stop
        if progress is not None:
            progress(done, n_samples)
            rate = size / max(seconds, 1e-3)
            size = max(1, int(np.clip(rate * _CHUNK_SECONDS, size // 4, size * 4)))
            size = min(size, max_rows)
    return used
