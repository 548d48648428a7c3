"""Which rows: ``--rows`` (a random sample or a range) and ``--show-rows``.

``--rows N`` draws N rows at random; ``--rows START:STOP`` takes the rows at
those positions of the file (0-based, Python's slice rules). ``--show-rows``
names the rows whose waterfalls the report shows, by the ``--index``
column's labels, or by file position without ``--index``.
"""

import argparse
import re

import numpy as np
import pandas as pd

from ._inputs import CommandError

_RANGE = re.compile(r"\s*(-?\d+)?\s*:\s*(-?\d+)?\s*")

# How many valid labels an error about an unknown one lists.
_SHOWN_LABELS = 5


def row_selection(text: str) -> int | slice:
    """``--rows``' argument: a positive count, or a ``START:STOP`` slice."""
    match = _RANGE.fullmatch(text)
    if match is not None:
        start, stop = (None if end is None else int(end) for end in match.groups())
        return slice(start, stop)
    try:
        count = int(text)
    except ValueError:
        count = 0
    if count < 1:
        raise argparse.ArgumentTypeError(
            "expected a positive number N (rows drawn at random) or START:STOP "
            f"(file positions, from 0, either end optional), got {text!r}"
        )
    return count


def select_rows(X: pd.DataFrame, y: pd.Series | None, rows: int | slice | None):
    """The rows of ``X`` and ``y`` (None or aligned with X) that ``--rows`` selects.

    ``N`` rows are drawn at random (seed 0, without replacement) and kept in
    the file's order; all rows when there are at most N. A ``START:STOP``
    range selecting no row is an error.
    """
    n_rows = len(X)
    if rows is None or (isinstance(rows, int) and rows >= n_rows):
        return X, y
    if isinstance(rows, int):
        chosen = np.sort(np.random.default_rng(0).choice(n_rows, rows, replace=False))
    else:
        chosen = np.arange(n_rows)[rows]
    if len(chosen) == 0:
        raise CommandError(
            f"--rows {_range_text(rows)} selects no rows: the data has {n_rows:,} "
            f"rows, at positions 0 to {n_rows - 1:,}"
        )
    return X.iloc[chosen], None if y is None else y.iloc[chosen]


def row_labels(texts: list[str], index: pd.Index, *, rows=None) -> list:
    """``--show-rows``' labels, read as ``index``'s type, each one in ``index``.

    ``index`` holds the explained rows' labels (after ``rows``, the
    ``--rows`` selection, which an error about a missing label mentions).
    (The report keeps a label given twice once.)
    """
    labels = [_parse_label(text, index) for text in texts]
    missing = [label for label in labels if label not in index]
    if not missing:
        return labels
    some = ", ".join(map(str, index[:_SHOWN_LABELS]))
    unknown = ", ".join(map(str, missing))
    what = "--index labels" if index.name is not None else "file positions (from 0)"
    message = (
        f"--show-rows: no explained row is labelled {unknown}; the rows are "
        f"named by their {what}, such as {some}"
    )
    if isinstance(rows, int):
        message += (
            f"; --rows {rows} explains a random sample of the rows, and the rows "
            "shown must be among them"
        )
    elif isinstance(rows, slice):
        message += f"; --rows {_range_text(rows)} explains only those rows"
    raise CommandError(message)


def _parse_label(text: str, index: pd.Index):
    """``text`` as a label of ``index``: a number for a numeric index.

    The data file's index column is read by pandas as numbers or as text
    (dates stay text), so these are the types a label can have.
    """
    text = text.strip()
    try:
        if pd.api.types.is_integer_dtype(index):
            return int(text)
        if pd.api.types.is_float_dtype(index):
            return float(text)
    except ValueError as exc:
        raise CommandError(
            f"--show-rows: {text!r} is not a label of the explained rows, whose "
            f"labels are of type {index.dtype}"
        ) from exc
    return text


def _range_text(rows: slice) -> str:
    """``START:STOP`` as the user wrote it (either end may be empty)."""
    return ":".join("" if end is None else str(end) for end in (rows.start, rows.stop))
