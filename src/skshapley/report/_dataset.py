"""The report's ``data`` section: what was explained, column by column."""

import pandas as pd
from pandas.api import types

from ._html import Markup, element, format_column, format_number, scroll

# Text columns with at most this many distinct values read as categories.
_MAX_CATEGORIES = 20


def column_kind(column: pd.Series) -> str:
    """``numeric``, ``boolean``, ``categorical``, ``text`` or ``datetime``.

    From the dtype: a text column with at most 20 distinct values is
    categorical, as is a ``category`` column.
    """
    dtype = column.dtype
    if types.is_bool_dtype(dtype):
        return "boolean"
    if isinstance(dtype, pd.CategoricalDtype):
        return "categorical"
    if types.is_numeric_dtype(dtype):
        return "numeric"
    if types.is_datetime64_any_dtype(dtype):
        return "datetime"
    return "categorical" if column.nunique() <= _MAX_CATEGORIES else "text"


def ordered_columns(frame: pd.DataFrame, importance_order) -> list:
    """``frame``'s columns, those ranked by importance first, in that order."""
    ranked = [str(name) for name in importance_order]
    by_name = {str(column): column for column in frame.columns}
    first = [by_name[name] for name in ranked if name in by_name]
    return first + [column for column in frame.columns if column not in first]


def data_section(frame: pd.DataFrame, importance_order, max_display: int, section):
    """The ``data`` section; ``section`` wraps content in its heading.

    At most ``max_display`` columns are listed, in importance order; one
    line sums up the others.
    """
    n_rows, n_columns = frame.shape
    columns = ordered_columns(frame, importance_order)
    kinds = {column: column_kind(frame[column]) for column in columns}
    missing = frame.isna().sum()
    shown = columns[:max_display]
    # Numbers have a range, not a count of values: no column of blanks.
    counted = any(not _ranged(frame[column], kinds[column]) for column in shown)
    rows = [
        _row(frame[column], kinds[column], missing[column], counted) for column in shown
    ]
    titles = ["Column", "Type", "Missing", "Min", "Median", "Max"]
    header = element(
        "tr",
        *(
            element("th", name, class_=None if j < 2 else "num")
            for j, name in enumerate(titles + ["Distinct"] * counted)
        ),
    )
    body = element(
        "table",
        element("thead", header),
        element("tbody", *rows),
        class_="importance data",
    )
    counts = pd.Series(kinds).value_counts()
    lead = element(
        "p",
        f"{n_rows:,} rows and {n_columns:,} columns were explained ("
        + ", ".join(f"{count} {kind}" for kind, count in counts.items())
        + f"), {int(missing.sum()):,} values missing. Columns in order of "
        "importance, then as in X.",
        class_="lead",
    )
    parts = [lead, scroll(body)]
    rest = columns[max_display:]
    if rest:
        rest_kinds = pd.Series([kinds[c] for c in rest]).value_counts()
        parts.append(
            element(
                "p",
                f"{len(rest)} more column{'s' if len(rest) > 1 else ''} ("
                + ", ".join(f"{count} {kind}" for kind, count in rest_kinds.items())
                + f"), {int(missing[rest].sum()):,} values missing.",
                class_="note",
                id="data-rest",
            )
        )
    return section("data", *parts)


def _ranged(column: pd.Series, kind: str) -> bool:
    """Whether the column is summed up by min / median / max."""
    return kind == "numeric" and bool(column.notna().any())


def _row(column: pd.Series, kind: str, n_missing: int, counted: bool) -> Markup:
    """A table row; ``counted``: with the cell of distinct values."""
    share = n_missing / len(column) if len(column) else 0.0
    missing = f"{n_missing:,} ({format_number(100 * share, 3)}%)" if n_missing else "0"
    if _ranged(column, kind):
        low, middle, high = format_column([column.min(), column.median(), column.max()])
        distinct = ""
    else:
        low = middle = high = ""
        distinct = f"{column.nunique():,}"
    cells = [
        element("td", str(column.name), class_="feature"),
        element("td", kind),
        element("td", missing, class_="num", data_missing=str(int(n_missing))),
        element("td", low, class_="num"),
        element("td", middle, class_="num"),
        element("td", high, class_="num"),
    ]
    if counted:
        cells.append(
            element(
                "td",
                distinct,
                class_="num",
                data_distinct=str(column.nunique()) if distinct else None,
            )
        )
    return element("tr", *cells, data_column=str(column.name))
