"""ImportanceDisplay: global importance as horizontal bars of mean |φ|."""

import numpy as np
import pandas as pd

from .._contract.importance import importance
from . import _style
from ._inputs import (
    about_output,
    select_output,
    shapley_frame,
    split_top,
)

# The bars' height (rows are 1 apart), and the most rows of 0.5 added on
# top for a legend in one column.
_BAR_HEIGHT = 0.7
_MAX_LEGEND_STEPS = 8


class ImportanceDisplay:
    """Global feature importance: mean ``|φ|`` per feature, with the signed mean φ.

    One horizontal bar per feature, the most important on top: its length is
    the mean absolute Shapley value (how much the feature moves the output,
    in either direction); a thin bar inside it is the mean Shapley value,
    red if the feature raises the output on average, blue if it lowers it.
    Use :meth:`from_explainer` or :meth:`from_values` to build one.

    Parameters
    ----------
    importance : pandas.DataFrame
        One row per feature (index: feature names) with columns ``mean_abs``
        and ``mean``, as :func:`skshapley.importance` returns for one output.
    output : object, default=None
        The output shown, named in the title; ``None`` when the model has one.
    raw_output : str, default=None
        What the explained output is (an explainer's ``raw_output_``, such as
        ``"log-odds"``), for the axis label.

    Attributes
    ----------
    bars_ : matplotlib.container.BarContainer
        The bars of mean ``|φ|``, top row first.
    mean_bars_ : matplotlib.container.BarContainer
        The bars of mean φ, top row first.
    labels_ : list of str
        The rows' labels, top row first; the last is ``"n other features"``
        when features were folded.
    ax_ : matplotlib.axes.Axes
        The axes drawn on.
    figure_ : matplotlib.figure.Figure
        The figure of ``ax_``.

    See Also
    --------
    skshapley.importance : The numbers drawn, as a table.
    BeeswarmDisplay : Every row's Shapley values, coloured by feature value.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import GradientBoostingRegressor
    >>> from skshapley import TreeExplainer
    >>> from skshapley.plotting import ImportanceDisplay
    >>> X, y = load_diabetes(return_X_y=True, as_frame=True)
    >>> model = GradientBoostingRegressor(n_estimators=20, random_state=0)
    >>> explainer = TreeExplainer(model.fit(X, y)).fit()
    >>> display = ImportanceDisplay.from_explainer(explainer, X, max_display=5)
    >>> display.labels_
    ['s5', 'bmi', 'bp', 's3', '6 other features']
    >>> plt.close(display.figure_)
    """

    def __init__(self, importance, *, output=None, raw_output=None):
        self.importance = importance
        self.output = output
        self.raw_output = raw_output

    def plot(self, ax=None, *, max_display: int = 20, show_values: bool = True):
        """Draw the bars.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, default=None
            The axes to draw on; ``None`` creates a figure.
        max_display : int, default=20
            The most rows drawn. With more features, the least important are
            folded into one last row, ``"n other features"``, whose bars are
            the sums of their mean ``|φ|`` and of their mean φ.
        show_values : bool, default=True
            Write each row's mean ``|φ|`` at the end of its bar.

        Returns
        -------
        display : ImportanceDisplay
            This display, with ``ax_``, ``figure_`` and the artists set.
        """
        table = self.importance
        if not isinstance(table, pd.DataFrame) or not {"mean_abs", "mean"} <= set(
            table.columns
        ):
            raise ValueError(
                "importance must be a DataFrame with columns 'mean_abs' and "
                "'mean', as skshapley.importance returns."
            )
        table = table.sort_values("mean_abs", ascending=False, kind="stable")
        shown, folded = split_top(list(table.index), max_display)
        magnitude = table["mean_abs"].to_numpy(dtype=np.float64)
        mean = table["mean"].to_numpy(dtype=np.float64)
        n_shown = len(shown)
        labels = [str(name) for name in shown]
        if folded:
            magnitude = np.append(magnitude[:n_shown], magnitude[n_shown:].sum())
            mean = np.append(mean[:n_shown], mean[n_shown:].sum())
            labels.append(_style.other_label(len(folded)))
        n_rows = len(labels)
        ax, figure = _style.prepare_axes(
            ax, "ImportanceDisplay.plot", _style.rows_size(n_rows)
        )
        y = np.arange(n_rows)[::-1]
        self.bars_ = ax.barh(
            y, magnitude, height=_BAR_HEIGHT, color=_style.NEUTRAL, label="mean |φ|"
        )
        signs = np.where(mean >= 0, _style.POSITIVE, _style.NEGATIVE)
        self.mean_bars_ = ax.barh(y, mean, height=0.22, color=signs, zorder=3)
        ax.axvline(0, color=_style.GUIDE, linewidth=0.8, zorder=2)
        low, high = min(0.0, float(mean.min())), float(magnitude.max())
        if show_values:
            # One precision for all the bars (0.10, 0.25, 0.30; not 0.1, 0.25).
            texts = _style.format_shared(magnitude, scale=high)
            for y_row, value, text in zip(y, magnitude, texts, strict=True):
                ax.annotate(
                    text,
                    (value, y_row),
                    xytext=(4, 0),
                    textcoords="offset points",
                    va="center",
                    ha="left",
                    fontsize=9,
                    color=_style.MUTED,
                )
        ax.set_yticks(y, _style.literals(labels))
        # One empty row on top holds the legend, clear of bars and numbers.
        ax.set_ylim(-0.6, n_rows + 0.6)
        span = (high - low) or 1.0
        # Room on the right for the values written after the bars.
        ax.set_xlim(low - 0.02 * span if low < 0 else 0.0, high + 0.14 * span)
        ax.set_xlabel(
            "mean |Shapley value| (average impact on "
            f"{_style.output_label(self.raw_output)})"
        )
        _style.style_axes(ax)
        _style.set_output_title(ax, self.output)
        _style.fit_texts(ax)
        _legend(ax, top=n_rows - 1 + _BAR_HEIGHT / 2)
        self.labels_ = labels
        self.ax_, self.figure_ = ax, figure
        return self

    @classmethod
    def from_values(
        cls,
        phi,
        *,
        feature_names=None,
        output=None,
        max_display: int = 20,
        ax=None,
        raw_output: str | None = None,
    ):
        """Draw the importance of features from their Shapley values.

        Parameters
        ----------
        phi : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Shapley values as an explainer's ``explain`` returns them (columns
            ``(output, feature)`` for several outputs), or an array.
        feature_names : list of str, default=None
            The names of an array's columns; ``None`` means ``x0, x1, ...``.
        output : object, default=None
            The output to show, by name; ``None`` means the first.
        max_display : int, default=20
            The most rows drawn; see :meth:`plot`.
        ax : matplotlib.axes.Axes, default=None
            The axes to draw on; ``None`` creates a figure.
        raw_output : str, default=None
            What the explained output is, for the axis label.

        Returns
        -------
        display : ImportanceDisplay
            The drawn display.
        """
        _style.require_matplotlib("ImportanceDisplay.from_values")
        phi, name = select_output(shapley_frame(phi, feature_names), output)
        display = cls(importance(phi), output=name, raw_output=raw_output)
        return display.plot(ax, max_display=max_display)

    @classmethod
    def from_explainer(
        cls, explainer, X, *, output=None, max_display: int = 20, ax=None
    ):
        """Explain ``X`` and draw the importance of the features.

        Parameters
        ----------
        explainer : fitted explainer
            A fitted skshapley explainer, such as :class:`~skshapley.TreeExplainer`.
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
            The rows to explain.
        output : object, default=None
            The output to show, by name; ``None`` means the first.
        max_display : int, default=20
            The most rows drawn; see :meth:`plot`.
        ax : matplotlib.axes.Axes, default=None
            The axes to draw on; ``None`` creates a figure.

        Returns
        -------
        display : ImportanceDisplay
            The drawn display.
        """
        _style.require_matplotlib("ImportanceDisplay.from_explainer")
        return cls.from_values(
            explainer.explain(X),
            max_display=max_display,
            ax=ax,
            **about_output(explainer, output),
        )


def _legend(ax, top: float) -> None:
    """Legend: the neutral bar is mean |φ|, the thin ones mean φ by sign.

    In one line in the empty row on top; in one column, over more empty
    rows, if the axes are too narrow for one line. ``top`` is the top of
    the highest bar, in data coordinates.
    """
    from matplotlib.patches import Patch

    handles = [
        Patch(color=_style.NEUTRAL, label="mean |φ|"),
        Patch(color=_style.POSITIVE, label="mean φ > 0"),
        Patch(color=_style.NEGATIVE, label="mean φ < 0"),
    ]
    style = {
        "handles": handles,
        "frameon": False,
        "fontsize": 8.5,
        "handlelength": 1.2,
        "columnspacing": 1.0,
        "borderaxespad": 0.2,
    }
    legend = ax.legend(loc="upper right", ncols=3, **style)
    ax.figure.draw_without_rendering()
    if legend.get_window_extent().width <= ax.get_window_extent().width:
        return
    legend = ax.legend(loc="upper right", ncols=1, **style)
    for _ in range(_MAX_LEGEND_STEPS):  # more empty rows on top until it fits
        ax.figure.draw_without_rendering()
        bars_top = ax.transData.transform((0.0, top))[1]
        if legend.get_window_extent().y0 >= bars_top:
            return
        low, high = ax.get_ylim()
        ax.set_ylim(low, high + 0.5)
