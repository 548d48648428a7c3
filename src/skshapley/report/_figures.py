"""The report's figures, drawn by :mod:`skshapley.plotting` and embedded as PNG.

Figures are made with ``matplotlib.figure.Figure``, never through pyplot:
nothing is registered in pyplot's global list of figures, so nothing is left
open, and no interactive backend is touched (reports can be written from
threads, servers and workers). Each is freed once its PNG is written.
"""

from contextlib import contextmanager

from ._html import Markup, png

# 150 dots per inch: figures are laid out at 96 CSS pixels per inch, so this
# is sharp on high-density screens while a report stays well under 1 MB.
DPI = 150

# A quiet house style, applied while drawing and saving.
_STYLE = {
    "font.size": 9.5,
    "axes.titlesize": 10.5,
    "axes.titlelocation": "left",
    "axes.titlepad": 10,
    "axes.labelsize": 9.5,
    "axes.labelcolor": "#1f2328",
    "axes.edgecolor": "#8c959f",
    "axes.linewidth": 0.8,
    "axes.spines.top": False,
    "axes.spines.right": False,
    "xtick.labelsize": 8.5,
    "ytick.labelsize": 8.5,
    "xtick.color": "#424a53",
    "ytick.color": "#424a53",
    "legend.fontsize": 8.5,
    "legend.frameon": False,
    "figure.facecolor": "white",
}


@contextmanager
def _canvas(width: float, height: float):
    """A figure and its axes in the house style; freed on exit."""
    import matplotlib as mpl
    from matplotlib.figure import Figure

    with mpl.rc_context(_STYLE):
        figure = Figure(figsize=(width, height), layout="constrained")
        try:
            yield figure, figure.add_subplot()
        finally:
            figure.clear()


# Names longer than this are broken into two lines in the rows' labels
# (which take at most plotting's LABEL_SHARE of a figure's width): their
# rows are made taller to hold them.
_ONE_LINE_NAME = 24


def _rows_height(n_rows: int, *, per_row: float = 0.3, extra: float = 1.3) -> float:
    return min(max(per_row * n_rows + extra, 3.0), 12.0)


def _per_row(ex, one_line: float = 0.3) -> float:
    """Inches per row: ``one_line``, or room for two lines with long names."""
    longest = max(len(str(name)) for name in ex.phi_out.columns)
    return one_line if longest <= _ONE_LINE_NAME else max(one_line, 0.42)


def _output_kwargs(ex) -> dict:
    """What the plots are told about the output: its kind, and which one.

    ``output=`` only for several outputs, where the plots' titles name it.
    """
    kwargs = {"raw_output": ex.raw_output}
    if len(ex.output_names) > 1:
        kwargs["output"] = ex.output
    return kwargs


def importance(ex, max_display: int) -> Markup:
    """Bars of mean |φ| with the signed mean."""
    from ..plotting import ImportanceDisplay

    # One more row: the legend's.
    n_rows = min(ex.phi_out.shape[1], max_display) + 1
    with _canvas(5.8, _rows_height(n_rows, per_row=_per_row(ex))) as (figure, ax):
        ImportanceDisplay.from_values(
            ex.phi, max_display=max_display, ax=ax, **_output_kwargs(ex)
        )
        return png(figure, "Mean absolute Shapley value per feature", dpi=DPI)


def output_importance(ex, max_display: int) -> Markup:
    """Mean |φ| per feature, stacked by output (several outputs only)."""
    from ..plotting import OutputImportanceDisplay

    n_rows = min(ex.phi_out.shape[1], max_display)
    # Wider than the one-output bars: its axis label runs under the legend.
    with _canvas(7.2, _rows_height(n_rows, per_row=_per_row(ex))) as (figure, ax):
        OutputImportanceDisplay.from_values(
            ex.phi, max_display=max_display, ax=ax, raw_output=ex.raw_output
        )
        return png(
            figure, "Mean absolute Shapley value per feature and output", dpi=DPI
        )


def interaction_heatmap(ex, interactions, features: list) -> Markup:
    """Mean |interaction value| of ``features`` off the diagonal.

    The main effects (the diagonal, in shap's convention) are drawn as bars
    beside the matrix, off its colour scale: on it they would wash out the
    interactions.
    """
    from ..plotting import InteractionDisplay
    from ..plotting._inputs import interaction_values

    values, players, _ = interaction_values(interactions)
    chosen = [players.index(name) for name in features]
    side = min(max(0.42 * len(features) + 2.2, 3.6), 9.0)
    with _canvas(side + 1.2, side) as (figure, ax):
        InteractionDisplay.from_values(
            values[:, chosen][:, :, chosen],
            feature_names=features,
            output=_output_kwargs(ex).get("output"),
            ax=ax,
            diagonal=False,
        )
        return png(figure, "Mean absolute Shapley interaction values", dpi=DPI)


def beeswarm(ex, max_display: int) -> Markup:
    """One dot per row and feature, coloured by the feature's value.

    The dots may be a sample of the rows; the features are in the order of
    every row's mean |φ|, as in the importance table and bars.
    """
    from .._contract.importance import importance
    from ..plotting import BeeswarmDisplay

    n_rows = min(ex.phi_out.shape[1], max_display)
    with _canvas(5.8, _rows_height(n_rows, per_row=_per_row(ex))) as (figure, ax):
        BeeswarmDisplay.from_values(
            ex.phi.iloc[ex.plotted],
            ex.features.iloc[ex.plotted],
            max_display=max_display,
            ax=ax,
            order=importance(ex.phi_out).index,
            **_output_kwargs(ex),
        )
        return png(figure, "Shapley values of every row, by feature", dpi=DPI)


def dependence(ex, feature, interactions=None) -> Markup:
    """A feature's Shapley value against its value.

    ``interactions`` (of the plotted rows) choose the colouring feature.
    """
    from ..plotting import DependenceDisplay

    with _canvas(5.6, 3.9) as (figure, ax):
        DependenceDisplay.from_values(
            ex.phi.iloc[ex.plotted],
            ex.features.iloc[ex.plotted],
            feature,
            ax=ax,
            interactions=interactions,
            **_output_kwargs(ex),
        )
        return png(figure, f"Dependence plot of {feature}", dpi=DPI)


def waterfall_layout(ex) -> tuple[str, float]:
    """Three waterfalls in a row for short feature names, else two.

    Returns the grid's class and the figures' width in inches. The labels
    are ``feature = value``: long names need the wider figures.
    """
    longest = max(len(str(name)) for name in ex.phi_out.columns)
    return ("three", 3.8) if longest <= 10 else ("two", 5.6)


def waterfall(ex, position: int, width: float, max_display: int = 10) -> Markup:
    """Base value → prediction for one row."""
    from ..plotting import WaterfallDisplay

    n_rows = min(ex.phi_out.shape[1], max_display) + 1
    height = _rows_height(n_rows, per_row=_per_row(ex), extra=1.2)
    with _canvas(width, height) as (figure, ax):
        WaterfallDisplay.from_values(
            ex.phi.iloc[position],
            ex.expected_value,
            x_row=ex.features.iloc[position][list(ex.known)],
            max_display=max_display,
            ax=ax,
            **_output_kwargs(ex),
        )
        label = ex.phi.index[position]
        return png(figure, f"Waterfall of row {label}", dpi=DPI)


# Features drawn in the heatmap and the decision plot (the others are
# folded into one line), and the rows of the decision plot besides the
# waterfalls' rows: enough to show the spread of paths, few enough that
# each stays visible.
_ROWS_FIGURE_FEATURES = 12
_DECISION_ROWS = 100


def rows_heatmap(ex, max_display: int) -> Markup:
    """Every row's Shapley values, rows ordered by similarity; f(x) above.

    Features are ordered by every row's mean |φ| (as in the table); the
    columns are at most 1,000 rows, a seeded sample beyond.
    """
    from ..plotting import HeatmapDisplay

    n_lines = min(ex.phi_out.shape[1], max_display, _ROWS_FIGURE_FEATURES)
    height = _rows_height(n_lines, per_row=_per_row(ex, 0.32), extra=2.4)
    with _canvas(7.4, height) as (figure, ax):
        HeatmapDisplay.from_values(
            ex.phi,
            base_value=ex.expected_value,
            max_display=n_lines,
            ax=ax,
            **_output_kwargs(ex),
        )
        return png(figure, "Shapley values of every row and feature", dpi=DPI)


def decision(ex, positions: list) -> Markup:
    """Paths from the base value to f(x): the rows at ``positions`` in bold.

    Behind them, up to 100 of the plotted rows; log-odds are shown on the
    probability scale.
    """
    import numpy as np

    from ..plotting import DecisionDisplay

    step = max(len(ex.plotted) // _DECISION_ROWS, 1)
    others = [p for p in ex.plotted[::step][:_DECISION_ROWS] if p not in positions]
    rows = [*others, *positions]
    n_lines = min(ex.phi_out.shape[1], _ROWS_FIGURE_FEATURES)
    height = _rows_height(n_lines, per_row=_per_row(ex, 0.32), extra=1.8)
    link = "logit" if ex.raw_output == "log-odds" else "identity"
    with _canvas(7.4, height) as (figure, ax):
        DecisionDisplay.from_values(
            ex.phi.iloc[rows],
            ex.expected_value,
            max_display=n_lines,
            link=link,
            highlight=np.arange(len(others), len(rows)),
            ax=ax,
            **_output_kwargs(ex),
        )
        return png(figure, "Decision plot of the rows shown", dpi=DPI)


def leave_one_out(shown, *, raw_output) -> Markup:
    """Mean |φ| and mean |LOO| per feature, as pairs of horizontal bars.

    ``shown`` is the comparison table's rows to draw, largest mean |φ|
    first (drawn on top).
    """
    import numpy as np

    from ..plotting import _style

    n_rows = len(shown)
    y = np.arange(n_rows)[::-1]
    height = _rows_height(n_rows, per_row=0.42, extra=1.6)
    with _canvas(6.4, height) as (figure, ax):
        pairs = (
            ("mean_abs_shapley", _style.NEUTRAL, "mean |Shapley value|", 0.19),
            ("mean_abs_loo", "#8b4fc4", "mean |leave-one-out value|", -0.19),
        )
        for column, color, label, offset in pairs:
            ax.barh(y + offset, shown[column], height=0.36, color=color, label=label)
        ax.set_yticks(y, _style.literals(shown.index))
        ax.set_ylim(-0.6, n_rows - 0.4)
        ax.set_xlabel(f"mean |value| (impact on {_style.output_label(raw_output)})")
        ax.grid(axis="x", color="#e6e6e6", linewidth=0.8)
        ax.set_axisbelow(True)
        # Above the bars, whose lengths leave no corner free for sure; in one
        # column, as two can be wider than the axes beside long names.
        ax.legend(loc="lower left", bbox_to_anchor=(0.0, 1.0))
        _style.fit_texts(ax)
        return png(
            figure,
            "Mean absolute leave-one-out and Shapley values per feature",
            dpi=DPI,
        )
