"""How the displays look: matplotlib on demand, colours, sizes, number formats.

matplotlib is an optional dependency: it is imported here, inside
functions, when a display is built or drawn, never when skshapley is
imported.
"""

import math
import re
from itertools import pairwise
from numbers import Integral, Real

import numpy as np

from .._runtime.optional import require_matplotlib

# Signed values: red pushes the output up, blue pushes it down (shap's habit).
POSITIVE = "#e4324e"
NEGATIVE = "#1f88e5"
# Magnitudes (mean |φ|) and points without a feature value.
NEUTRAL = "#c3ccd6"
MISSING = "#a9a9a9"
# Cells left blank on purpose (a heatmap's diagonal).
BLANK = "#eeeeee"
# Reference lines (zero, base value, connectors) and secondary text.
GUIDE = "#7a7a7a"
MUTED = "#555555"
# Feature values, low to high: from NEGATIVE's blue through purple to POSITIVE.
FEATURE_COLORS = (NEGATIVE, "#8b4fc4", POSITIVE)

# Values within this fraction of a figure's scale are printed as 0: sums
# of floats leave residues such as 5.551e-17 where the exact value is 0
# (a probability's f(x), a folded row's sum), far below any shown digit.
ZERO_SHARE = 1e-12

# The most of a figure's width that row labels (y tick labels) may take,
# and the most lines a label is broken into (rows are one line high, and
# two lines of tick labels still fit in one).
LABEL_SHARE = 0.42
# The most of a figure's width that row labels sized by row_label_size take
# (above it their font shrinks), and a character's mean width in ems.
HEATMAP_LABEL_SHARE = 0.45
CHAR_WIDTH = 0.6
MAX_LINES = 2

# Inches: figure width, height per row of features and the fixed part.
WIDTH = 7.0
ROW_HEIGHT = 0.36
HEIGHT_MARGIN = 1.5


def prepare_axes(ax, caller: str, size: tuple[float, float]):
    """``ax`` and its figure, or a new figure of ``size`` inches if ``ax`` is None.

    A new figure uses constrained layout, so that no label is clipped.
    """
    require_matplotlib(caller)
    import matplotlib.pyplot as plt

    if ax is None:
        figure, ax = plt.subplots(figsize=size, layout="constrained")
    else:
        figure = ax.figure
    return ax, figure


def rows_size(n_rows: int) -> tuple[float, float]:
    """The size of a new figure of ``n_rows`` horizontal rows."""
    return WIDTH, HEIGHT_MARGIN + ROW_HEIGHT * max(n_rows, 3)


def feature_cmap():
    """The colour map of feature values (blue for low, red for high)."""
    from matplotlib.colors import LinearSegmentedColormap

    return LinearSegmentedColormap.from_list("skshapley_feature", FEATURE_COLORS)


def colormap(cmap):
    """A colour map given by name or object; ``None``: :func:`feature_cmap`."""
    from matplotlib import colormaps

    return feature_cmap() if cmap is None else colormaps.get_cmap(cmap)


def style_axes(ax, *, grid_axis: str = "x") -> None:
    """Light grid behind the data, no top and right frame lines."""
    ax.spines[["top", "right"]].set_visible(False)
    ax.set_axisbelow(True)
    ax.grid(axis=grid_axis, color="#e6e6e6", linewidth=0.8)
    ax.tick_params(labelsize=10)


def literal(text) -> str:
    """``text`` as matplotlib must draw it: as written, never as math.

    matplotlib reads text between two ``$`` as TeX math, and fails on names
    such as ``a$b$\\frac`` taken from data; an escaped ``\\$`` is drawn as
    a plain ``$`` (and then no other character is special).
    """
    return str(text).replace("$", r"\$")


def literals(texts) -> list[str]:
    """:func:`literal` of each of ``texts``."""
    return [literal(text) for text in texts]


def set_output_title(ax, output, note: str | None = None) -> None:
    """The title: the output shown, when one of several, and ``note``.

    Wrapped at the figure's edge: a long output name or a narrow figure
    never pushes it out.
    """
    lines = [] if output is None else [literal(f"output: {output}")]
    if note:
        lines.append(note)
    if lines:
        ax.set_title("\n".join(lines), fontsize=12, loc="left", wrap=True)


def shapley_label(raw_output: str | None) -> str:
    """The axis label of Shapley values, naming what they are attributed to."""
    return f"Shapley value (impact on {output_label(raw_output)})"


def output_label(raw_output: str | None) -> str:
    """What the model's explained output is called on an axis."""
    if raw_output in (None, "value"):
        return "model output"
    return literal(f"model output, {raw_output}")


def snap(value: float, scale: float) -> float:
    """``value``, or 0.0 if it is within :data:`ZERO_SHARE` of ``scale``."""
    return 0.0 if abs(value) <= ZERO_SHARE * abs(scale) else value


def format_value(value, digits: int = 3, *, scale: float = 0.0) -> str:
    """A value, compactly: ``3``, ``0.0123``, ``1.5e+04``, ``red``.

    A number within :data:`ZERO_SHARE` of ``scale`` (the size of the
    figure's numbers) is written ``0``.
    """
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, Integral):
        return minus(str(int(value)))
    if isinstance(value, Real):
        value = snap(float(value), scale)
        if math.isnan(value):
            return "NaN"
        if value.is_integer() and abs(value) < 1e6:
            return minus(str(int(value)))
        return minus(f"{value:.{digits}g}")
    return str(value)


def format_shared(
    values, *, significant: int = 3, signed: bool = False, scale: float | None = None
) -> list[str]:
    """Numbers written with one precision, for the labels of one figure.

    Every value gets the same number of decimals: enough for the largest
    ``|value|`` to show ``significant`` significant digits, fewer if no
    value needs them (``0.1, 0.25, 0.3`` are written ``0.10, 0.25, 0.30``;
    ``1, 0`` stay ``1, 0``). Magnitudes from 10**6 up, or below 10**-4, are
    all written in scientific notation with ``significant`` digits. Values
    within :data:`ZERO_SHARE` of ``scale`` (by default the largest
    ``|value|``) are written 0; ``signed`` writes ``+`` before the others.
    """
    numbers = np.asarray(values, dtype=np.float64).ravel()
    largest = float(np.abs(numbers).max(initial=0.0))
    scale = largest if scale is None else scale
    numbers = np.array([snap(value, scale) for value in numbers])
    if largest and not 1e-4 <= largest < 1e6:
        sign = "+" if signed else ""
        return [minus(f"{value + 0.0:{sign}.{significant - 1}e}") for value in numbers]
    most = max(significant - 1 - math.floor(math.log10(largest)), 0) if largest else 0
    # The decimals the values need at that precision, trailing zeros dropped.
    decimals = max(
        len(f"{value:.{most}f}".rstrip("0").partition(".")[2]) for value in numbers
    )
    texts = []
    for value in numbers:
        text = f"{abs(value):.{decimals}f}"
        # Signed, a small value keeps its sign when written 0.
        negative = value < 0 and (signed or float(text))
        texts.append(("-" if negative else "+" if signed else "") + text)
    return [minus(text) for text in texts]


def minus(text: str) -> str:
    """``text`` with the typographic minus sign, as matplotlib's ticks have."""
    return text.replace("-", "\u2212")


def other_label(n_other: int) -> str:
    """The row standing for the features not shown one by one."""
    return f"{n_other} other feature" + ("" if n_other == 1 else "s")


def fit_texts(ax, *, label_share: float = LABEL_SHARE, colorbar=None) -> None:
    """Break ``ax``'s long texts into lines so that they fit in the figure.

    The y tick labels (the rows' names) take at most ``label_share`` of the
    figure's width. Then the figure is laid out (constrained layout, if it
    has one) so that the axes' place is known: the axis labels, and those
    of ``colorbar``, take at most the room either side of their centre.
    A label that still does not fit in :data:`MAX_LINES` lines ends in "…".
    """
    figure = ax.figure
    bounds = figure.bbox
    # Tick labels first: their size does not depend on the layout, which
    # they would squeeze to nothing if they were too long.
    _wrap_ticks(ax.yaxis, label_share * bounds.width)
    # Slanted column labels (a heatmap's) reach down as far as rows reach
    # in; on one line, as two would run into their neighbours (the full
    # names are the rows').
    if any(text.get_rotation() for text in ax.get_xticklabels()):
        _wrap_ticks(ax.xaxis, label_share * bounds.height, max_lines=1)
    figure.draw_without_rendering()
    _thin_ticks(ax.xaxis)
    axes = [ax] if colorbar is None else [ax, colorbar.ax]
    for owner in axes:
        for text, vertical in ((owner.xaxis.label, False), (owner.yaxis.label, True)):
            if text.get_text():
                _wrapped(text, _room(figure.bbox, owner.bbox, vertical=vertical))
    keep_in_figure(ax)


def keep_in_figure(ax) -> None:
    """Shrink ``ax`` until its labels, ticks and inset axes lie inside the figure.

    Only for a figure without a layout engine, such as one of
    ``plt.subplots(1, 3)``'s grid, whose fixed margins may be too narrow
    for the labels drawn (a label broken into two lines); constrained and
    tight layouts make room themselves. The legend is left out: it is
    placed inside the axes.
    """
    from matplotlib.transforms import Bbox

    figure = ax.figure
    if figure.get_layout_engine() is not None:
        return
    figure.draw_without_rendering()
    drawn = ax.get_tightbbox(bbox_extra_artists=list(ax.child_axes))
    bounds = figure.bbox
    # Pixels over each edge, plus 2 px: extents are rounded to whole pixels.
    left, bottom = np.maximum(bounds.p0 - drawn.p0, 0.0)
    right, top = np.maximum(drawn.p1 - bounds.p1, 0.0)
    if not any((left, bottom, right, top)):
        return
    pad = 2.0
    x0, y0, x1, y1 = ax.get_position().extents
    shrunk = Bbox.from_extents(
        x0 + (left + pad * bool(left)) / bounds.width,
        y0 + (bottom + pad * bool(bottom)) / bounds.height,
        x1 - (right + pad * bool(right)) / bounds.width,
        y1 - (top + pad * bool(top)) / bounds.height,
    )
    if shrunk.width > 0 and shrunk.height > 0:
        ax.set_position(shrunk)


def _thin_ticks(axis) -> None:
    """Fewer numeric ticks on ``axis`` while their labels touch each other.

    matplotlib's default locator counts on short labels; numbers such as
    ``−0.100`` on a narrow axes can run into each other.
    """
    from matplotlib.ticker import AutoLocator, MaxNLocator

    if not isinstance(axis.get_major_locator(), AutoLocator | MaxNLocator):
        return  # ticks placed by hand (names, categories): kept
    for _ in range(3):
        boxes = sorted(
            (
                text.get_window_extent()
                for text in axis.get_ticklabels()
                if text.get_text()
            ),
            key=lambda box: box.x0,
        )
        gaps = [b.x0 - a.x1 for a, b in pairwise(boxes)]
        # At least about a character's width (half an em) between labels.
        space = 0.5 * axis.get_ticklabels()[0].get_fontsize() * axis.figure.dpi / 72
        if not gaps or min(gaps) > space:
            return
        axis.set_major_locator(MaxNLocator(nbins=max(len(boxes) // 2, 2)))
        axis.figure.draw_without_rendering()


def _wrap_ticks(axis, limit: float, *, max_lines: int = MAX_LINES) -> None:
    """Break ``axis``' tick labels into lines of at most ``limit`` px.

    Numeric ticks are never long, and are left with their locator.
    """
    texts = axis.get_ticklabels()
    before = [text.get_text() for text in texts]
    labels = [_wrapped(text, limit, max_lines) for text in texts]
    if labels != before:
        axis.set_ticks(axis.get_ticklocs(), labels)


def _room(bounds, box, *, vertical: bool) -> float:
    """Twice the distance from ``box``'s centre to ``bounds``' nearer edge."""
    if vertical:
        low, high, centre = bounds.y0, bounds.y1, (box.y0 + box.y1) / 2
    else:
        low, high, centre = bounds.x0, bounds.x1, (box.x0 + box.x1) / 2
    # 4 % spare: the layout moves the axes a little once the text is broken.
    return 0.96 * 2 * max(min(centre - low, high - centre), 0.0)


def _wrapped(text, limit: float, max_lines: int = MAX_LINES) -> str:
    """``text`` (a matplotlib Text) broken into lines of at most ``limit`` px.

    Lines break after spaces, ``_``, ``-`` and ``/``; a longer word is cut;
    past ``max_lines`` lines the text is cut and ends in "…". The text is
    set to the result, which is returned.
    """
    original = text.get_text()
    length = _length(text)
    if length <= limit or len(original) < 2:
        return original
    width = max(int(len(original) * limit / length), 1)
    while True:
        lines = _lines(original, width)
        if len(lines) > max_lines:
            lines = lines[:max_lines]
            lines[-1] = lines[-1][: max(width - 1, 1)].rstrip() + "\u2026"
        text.set_text("\n".join(lines))
        if _length(text) <= limit or width == 1:
            return text.get_text()
        width -= max(width // 8, 1)


def _length(text) -> float:
    """A text's extent along its direction (its height if it is vertical)."""
    box = text.get_window_extent()
    return box.height if 45 < text.get_rotation() % 180 < 135 else box.width


def _lines(original: str, width: int) -> list[str]:
    """``original`` greedily in lines of at most ``width`` characters."""
    lines, line = [], ""
    for word in re.findall(r"[^ _/-]*[ _/-]*", original):
        while len(word) > width:
            if line:
                lines.append(line)
                line = ""
            lines.append(word[:width])
            word = word[width:]
        if line and len((line + word).rstrip()) > width:
            lines.append(line)
            line = word
        else:
            line += word
    lines.append(line)
    return [line.rstrip() for line in lines if line.strip()]


def row_label_size(ax, labels: list[str], *, reserved: float = 0.0) -> float:
    """The font size of ``labels`` along ``ax``'s height, in points.

    10 when there is room (a figure of its own has 0.36 in a row), smaller
    where rows are packed (a small figure, many features), so that
    neighbouring labels never overlap, or where the longest label would take
    more than HEATMAP_LABEL_SHARE of the figure's width; never below 6.
    ``reserved`` inches of the axes' height will go to other things (a
    colour bar) once laid out.
    """
    figure = ax.figure
    inches = ax.get_position().height * figure.get_figheight() - reserved
    by_height = 0.7 * 72 * inches / max(len(labels), 1)
    longest = max(len(label) for label in labels)
    by_width = HEATMAP_LABEL_SHARE * 72 * figure.get_figwidth() / (CHAR_WIDTH * longest)
    return float(np.clip(min(by_height, by_width), 6.0, 10.0))
