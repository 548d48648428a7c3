"""HTML building blocks: escaping by default, numbers, tables, images.

Every function here returns :class:`Markup`, a ``str`` that is already
HTML. Anything else passed in as content or as an attribute value is
escaped, so a feature called ``"<b>&x"`` can never become markup.
"""

import base64
import html
import io
import math

import numpy as np


class Markup(str):
    """A string that is already HTML: inserted as is, never escaped again."""

    __slots__ = ()


def escape(value) -> Markup:
    """``value`` as HTML text: markup as is, anything else escaped."""
    if isinstance(value, Markup):
        return value
    return Markup(html.escape(str(value), quote=True))


def join(parts) -> Markup:
    """The concatenation of ``parts``, each escaped unless it is markup."""
    return Markup("".join(escape(part) for part in parts))


def element(name: str, /, *children, **attributes) -> Markup:
    """``<name attributes>children</name>``.

    Attribute names lose a trailing underscore (``class_`` → ``class``) and
    take hyphens for inner underscores (``data_value`` → ``data-value``);
    ``None`` and ``False`` attributes are left out, ``True`` ones are bare.
    """
    return Markup(f"<{name}{_attributes(attributes)}>{join(children)}</{name}>")


def void(name: str, /, **attributes) -> Markup:
    """An element without content or end tag, such as ``<img ...>``."""
    return Markup(f"<{name}{_attributes(attributes)}>")


def _attributes(attributes: dict) -> str:
    parts = []
    for key, value in attributes.items():
        if value is None or value is False:
            continue
        key = key.rstrip("_").replace("_", "-")
        parts.append(f" {key}" if value is True else f' {key}="{escape(value)}"')
    return "".join(parts)


# Numbers -------------------------------------------------------------------

# Relative size of rounding noise: a few float64 roundings of a sum.
_NOISE = 1e-12


def format_number(value: float, digits: int = 4, *, scale: float = 0.0) -> str:
    """A compact number: ``digits`` significant digits, exponent if extreme.

    A value within ``1e-12 * scale`` of 0 is rounding noise of numbers of
    size ``scale`` (a probability of 0 computed as 5.6e-17): it is "0".
    """
    value = float(value)
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    if abs(value) <= _NOISE * scale or value == 0:
        return "0"
    magnitude = abs(value)
    if magnitude >= 1e6 or magnitude < 1e-3:
        text = f"{value:.{max(digits - 2, 1)}e}"
    else:
        text = f"{value:,.0f}" if magnitude >= 1e4 else f"{value:.{digits}g}"
    return text.replace("-", "−")


def format_column(values, digits: int = 4) -> list[str]:
    """Numbers of one table column with a common number of decimals.

    The largest magnitude gets ``digits`` significant digits and the others
    the same decimals, so that decimal points line up; a column spanning
    very small or very large magnitudes is written with exponents.
    """
    values = np.asarray(values, dtype=np.float64)
    finite = np.abs(values[np.isfinite(values)])
    largest = finite.max() if finite.size else 0.0
    if largest == 0:
        return [format_number(v) for v in values]
    if largest >= 1e6 or largest < 1e-3:
        return [_exponent(v, digits) for v in values]
    decimals = min(max(digits - 1 - math.floor(math.log10(largest)), 0), 8)
    return [_fixed(v, decimals) for v in values]


def _fixed(value: float, decimals: int) -> str:
    if not math.isfinite(value):
        return format_number(value)
    text = f"{value:,.{decimals}f}"
    if float(text.replace(",", "")) == 0:
        text = text.lstrip("-")  # no "-0.00"
    return text.replace("-", "−")


def _exponent(value: float, digits: int) -> str:
    if not math.isfinite(value) or value == 0:
        return format_number(value)
    return f"{value:.{digits - 1}e}".replace("-", "−")


def format_duration(seconds: float) -> str:
    """``0.42 ms``, ``123 ms``, ``4.56 s`` or ``2 min 3 s``."""
    if seconds < 1e-3:
        return f"{seconds * 1e3:.2f} ms"
    if seconds < 1:
        return f"{seconds * 1e3:.3g} ms"
    if seconds < 60:
        return f"{seconds:.3g} s"
    minutes, rest = divmod(round(seconds), 60)
    return f"{minutes} min {rest} s"


def format_count(value: float) -> str:
    """An integer with thousands separators, or 3 significant digits."""
    if value >= 100:
        return f"{round(value):,}"
    return f"{value:.3g}"


# Blocks --------------------------------------------------------------------


def table(header, rows, *, columns=None, row_classes=None, class_=None) -> Markup:
    """A table with a header row.

    ``header`` is a list of column titles, ``rows`` a list of lists of cells
    (text, or markup such as a bar); ``columns`` maps column positions to a
    class for their cells (``"num"``: numbers, aligned right),
    ``row_classes`` gives an optional class per row.
    """
    columns = columns or {}
    row_classes = row_classes or [None] * len(rows)

    def cells(tag, values):
        return join(
            element(tag, value, class_=columns.get(j)) for j, value in enumerate(values)
        )

    head = element("thead", element("tr", cells("th", header)))
    body = element(
        "tbody",
        *(
            element("tr", cells("td", row), class_=row_class)
            for row, row_class in zip(rows, row_classes, strict=True)
        ),
    )
    return scroll(element("table", head, body, class_=class_))


def facts(items) -> Markup:
    """A two-column table of ``(name, value)`` facts."""
    rows = (
        element("tr", element("th", name), element("td", value))
        for name, value in items
    )
    return scroll(element("table", element("tbody", *rows), class_="facts"))


def scroll(content: Markup) -> Markup:
    """``content`` in a box as wide as its column, scrolled sideways if wider.

    A table wider than a phone's screen then scrolls inside the report
    instead of making the whole page wider than the screen.
    """
    return element("div", content, class_="scroll")


def bar(fraction: float) -> Markup:
    """A horizontal bar filling ``fraction`` (0 to 1) of its cell."""
    width = f"{100 * min(max(fraction, 0.0), 1.0):.1f}%"
    return element("span", element("span", style=f"width:{width}"), class_="bar")


def png(figure, alt: str, *, dpi: int) -> Markup:
    """A matplotlib figure as an ``<img>`` holding its PNG (base64).

    Its displayed size is the figure's size in CSS pixels (96 per inch);
    the ``dpi`` above 96 keeps it sharp on high-density screens.
    """
    buffer = io.BytesIO()
    figure.savefig(buffer, format="png", dpi=dpi, facecolor="white")
    data = base64.b64encode(buffer.getvalue()).decode("ascii")
    width, height = figure.get_size_inches() * 96
    return void(
        "img",
        src=f"data:image/png;base64,{data}",
        alt=alt,
        width=str(round(width)),
        height=str(round(height)),
    )
