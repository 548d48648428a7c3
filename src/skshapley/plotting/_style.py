"""How the displays look: matplotlib on demand, colours, sizes, number formats.

matplotlib is an optional dependency: it is imported here, inside
functions, when a display is built or drawn, never when skshapley is
imported.
"""

import math
from numbers import Integral, Real

import numpy as np

from .._optional import require_matplotlib

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


def set_output_title(ax, output) -> None:
    """Title ``output: <name>`` when one of several outputs is shown."""
    if output is not None:
        ax.set_title(literal(f"output: {output}"), fontsize=12, loc="left")


def shapley_label(raw_output: str | None) -> str:
    """The axis label of Shapley values, naming what they are attributed to."""
    return f"Shapley value (impact on {output_label(raw_output)})"


def output_label(raw_output: str | None) -> str:
    """What the model's explained output is called on an axis."""
    if raw_output in (None, "value"):
        return "model output"
    return literal(f"model output, {raw_output}")


def format_value(value, digits: int = 3) -> str:
    """A value, compactly: ``3``, ``0.0123``, ``1.5e+04``, ``red``."""
    if isinstance(value, bool | np.bool_):
        return str(bool(value))
    if isinstance(value, Integral):
        return minus(str(int(value)))
    if isinstance(value, Real):
        value = float(value)
        if math.isnan(value):
            return "NaN"
        if value.is_integer() and abs(value) < 1e6:
            return minus(str(int(value)))
        return minus(f"{value:.{digits}g}")
    return str(value)


def format_signed(value: float) -> str:
    """A Shapley value with its sign: ``+1.23``, ``−0.0456``."""
    return minus(f"{value:+.3g}")


def minus(text: str) -> str:
    """``text`` with the typographic minus sign, as matplotlib's ticks have."""
    return text.replace("-", "\u2212")


def other_label(n_other: int) -> str:
    """The row standing for the features not shown one by one."""
    return f"{n_other} other feature" + ("" if n_other == 1 else "s")
