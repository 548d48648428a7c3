"""DecisionDisplay: each row's path from the base value to its f(x)."""

import numpy as np
import pandas as pd

from . import _style
from ._inputs import (
    about_output,
    base_value_of,
    feature_frame,
    outputs_of,
    select_output,
    shapley_frame,
    split_top,
)

_LINKS = ("identity", "logit")
# Lines: width and opacity for few rows, and from how many rows they thin
# out and are rasterized in vector outputs.
_WIDTH = 1.4
_MANY_ROWS = 50
_HIGHLIGHT_WIDTH = 2.6
_HIGHLIGHT = "#111111"
_ONE_ROW = "#3b4a5c"
# Rows of room above the top row, where the lines end: a thick line ending
# on the axes' edge would be cut in half.
_TOP_ROOM = 0.25


class DecisionDisplay:
    """How each row's prediction is reached: one line per row, feature by feature.

    Every line starts at the bottom at the base value (the output with no
    feature known) and moves, row by row of the plot, by the Shapley value
    of each feature, the most important (largest mean ``|φ|`` over the
    drawn rows) last, on top, to end at the row's prediction ``f(x)``.
    Lines are coloured by f(x). For log-odds, ``link="logit"`` shows the
    path on the probability scale. Use :meth:`from_explainer` or
    :meth:`from_values` to build one.

    Parameters
    ----------
    shapley_values : pandas.DataFrame of shape (n_samples, n_features)
        Shapley values of one output, one column per feature.
    base_value : float
        The output's base value (an explainer's ``expected_value_``).
    feature_values : pandas.DataFrame of shape (n_samples, n_features), default=None
        The explained rows, columns named as ``shapley_values``'; with one
        row, the features are labelled ``feature = value``.
    output : object, default=None
        The output shown, named in the title; ``None`` when the model has one.
    raw_output : str, default=None
        What the explained output is (an explainer's ``raw_output_``), for
        the axis label; ``link="logit"`` needs ``"log-odds"``.

    Attributes
    ----------
    lines_ : list of matplotlib.lines.Line2D
        One line per row, in the rows' order; its x data are the running
        totals, bottom to top: the base value, then after each of
        ``features_`` from the last to the first, ending at f(x) (through
        the sigmoid with ``link="logit"``).
    features_ : list of str
        The features, top first; the last is ``"n other features"`` (their
        summed Shapley values, the first step) when features were folded.
    labels_ : list of str
        The y axis' labels, top first: ``features_``, as ``feature = value``
        for one row with its feature values.
    colorbar_ : matplotlib.colorbar.Colorbar or None
        The colour bar of f(x); ``None`` for one row or ``colorbar=False``.
    ax_ : matplotlib.axes.Axes
        The axes drawn on.
    figure_ : matplotlib.figure.Figure
        The figure of ``ax_``.

    See Also
    --------
    WaterfallDisplay : One row's Shapley values as arrows.
    HeatmapDisplay : Every row's Shapley values as a heatmap.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import GradientBoostingRegressor
    >>> from skshapley import TreeExplainer
    >>> from skshapley.plotting import DecisionDisplay
    >>> X, y = load_diabetes(return_X_y=True, as_frame=True)
    >>> model = GradientBoostingRegressor(n_estimators=20, random_state=0)
    >>> explainer = TreeExplainer(model.fit(X, y)).fit()
    >>> display = DecisionDisplay.from_explainer(explainer, X.iloc[:20], max_display=5)
    >>> display.features_
    ['s5', 'bmi', 'bp', 's3', '6 other features']
    >>> ends = [line.get_xdata()[-1] for line in display.lines_]
    >>> bool(abs(ends - model.predict(X.iloc[:20])).max() < 1e-8)
    True
    >>> plt.close(display.figure_)
    """

    def __init__(
        self,
        shapley_values,
        base_value,
        *,
        feature_values=None,
        output=None,
        raw_output=None,
    ):
        self.shapley_values = shapley_values
        self.base_value = base_value
        self.feature_values = feature_values
        self.output = output
        self.raw_output = raw_output

    def plot(
        self,
        ax=None,
        *,
        max_display: int = 20,
        link: str = "identity",
        highlight=None,
        cmap=None,
        colorbar: bool = True,
    ):
        """Draw the lines.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, default=None
            The axes to draw on; ``None`` creates a figure.
        max_display : int, default=20
            The most features drawn. With more, those of smallest mean
            ``|φ|`` are folded into one bottom row, ``"n other features"``:
            the first step of each line is the sum of their values.
        link : {"identity", "logit"}, default="identity"
            ``"identity"`` draws the explained output; ``"logit"`` (for
            log-odds) draws probabilities, the running totals passed through
            the sigmoid ``1 / (1 + exp(-t))``.
        highlight : int or array-like of int, default=None
            Positions of rows (in ``shapley_values``) drawn thicker and dark.
        cmap : str or matplotlib.colors.Colormap, default=None
            The colours of f(x), low to high; ``None`` means blue to red.
        colorbar : bool, default=True
            Draw the colour bar of f(x) (with more than one row).

        Returns
        -------
        display : DecisionDisplay
            This display, with ``ax_``, ``figure_`` and the artists set.
        """
        squash = _link(link, self.raw_output)
        phi = self.shapley_values
        highlighted = _highlighted(highlight, len(phi))
        magnitude = phi.abs().mean(axis=0).to_numpy()
        order = np.argsort(-magnitude, kind="stable")
        shown, folded = split_top(list(phi.columns[order]), max_display)
        steps = [phi[name].to_numpy(dtype=np.float64) for name in shown[::-1]]
        features = [str(name) for name in shown]
        if folded:
            steps.insert(0, phi[folded].to_numpy(dtype=np.float64).sum(axis=1))
            features.append(_style.other_label(len(folded)))
        base = float(self.base_value)
        # Running totals, one column per row of the plot, bottom to top.
        totals = base + np.cumsum(np.column_stack([np.zeros(len(phi)), *steps]), 1)
        x = squash(totals)
        n_lines = len(features)
        ax, figure = _style.prepare_axes(
            ax, "DecisionDisplay.plot", _style.rows_size(n_lines)
        )
        y = np.arange(n_lines + 1)
        self.lines_ = ax.plot(x.T, np.broadcast_to(y, x.shape).T)
        self.colorbar_ = self._color(ax, figure, x[:, -1], highlighted, cmap, colorbar)
        ax.axvline(squash(base), color=_style.GUIDE, linewidth=0.9, linestyle="--")
        labels = self._labels(shown, features)
        ax.set_yticks(y[:-1] + 0.5, _style.literals(labels[::-1]))
        # Room above the top row: the (thick, highlighted) lines end inside.
        ax.set_ylim(0, n_lines + _TOP_ROOM)
        ax.set_xlabel(
            "probability" if link == "logit" else _style.output_label(self.raw_output),
            wrap=True,
        )
        _style.style_axes(ax, grid_axis="both")
        # f(x) is read at the top, where the lines end: ticks there too.
        ax.tick_params(axis="x", top=True, labeltop=True, labelsize=8)
        ax.tick_params(
            axis="y",
            length=0,
            labelsize=_style.row_label_size(ax, labels, reserved=0.3),
        )
        _style.set_output_title(ax, self.output)
        self.features_, self.labels_ = features, labels
        self.ax_, self.figure_ = ax, figure
        return self

    def _color(self, ax, figure, ends, highlighted, cmap, colorbar: bool):
        """Colour the lines by f(x), the highlighted ones dark; the colour bar."""
        from matplotlib.cm import ScalarMappable
        from matplotlib.colors import Normalize

        many = len(self.lines_) > _MANY_ROWS
        if len(self.lines_) == 1:
            colors = [_ONE_ROW]
        else:
            low, high = float(ends.min()), float(ends.max())
            mappable = ScalarMappable(Normalize(low, high), _style.colormap(cmap))
            colors = mappable.to_rgba(ends)
        for position, (line, color) in enumerate(zip(self.lines_, colors, strict=True)):
            line.set(color=color, linewidth=_WIDTH, alpha=0.6 if many else 0.9)
            line.set_rasterized(many)
            if position in highlighted:
                line.set(color=_HIGHLIGHT, linewidth=_HIGHLIGHT_WIDTH, alpha=1.0)
                line.set_zorder(4)
        if len(self.lines_) == 1 or not colorbar:
            return None
        bar = figure.colorbar(mappable, ax=ax, aspect=40, pad=0.02, fraction=0.05)
        bar.set_label("f(x)", fontsize=9, wrap=True)
        bar.ax.tick_params(labelsize=8)
        bar.outline.set_visible(False)
        return bar

    def _labels(self, shown, features) -> list[str]:
        """``feature = value`` for one row with feature values, else the names."""
        data = self.feature_values
        if data is None or len(self.shapley_values) != 1:
            return list(features)
        row = data.iloc[0]
        named = [
            f"{name} = {_style.format_value(row[name])}"
            if name in row.index
            else str(name)
            for name in shown
        ]
        return named + features[len(shown) :]

    @classmethod
    def from_values(
        cls,
        phi,
        base_value,
        *,
        feature_values=None,
        feature_names=None,
        output=None,
        max_display: int = 20,
        link: str = "identity",
        highlight=None,
        ax=None,
        raw_output: str | None = None,
    ):
        """Draw the decision lines of given Shapley values.

        Parameters
        ----------
        phi : pandas.DataFrame, pandas.Series or array-like
            Shapley values as an explainer's ``explain`` returns them (columns
            ``(output, feature)`` for several outputs), one of its rows
            (``phi.loc[label]``), or an array of shape (n_samples,
            n_features).
        base_value : float or pandas.Series
            The base value: an explainer's ``expected_value_`` (a Series by
            output for several outputs).
        feature_values : pandas.DataFrame, pandas.Series or array-like, \
default=None
            The explained rows (``phi``'s rows, the same index for
            DataFrames; a Series for one row), columns matched by name; with
            one row, the features are labelled ``feature = value``.
        feature_names : list of str, default=None
            The names of an array ``phi``'s columns; ``None`` means
            ``feature_values``' columns, else ``x0, x1, ...``.
        output : object, default=None
            The output to show, by name; ``None`` means the first.
        max_display : int, default=20
            The most features drawn; see :meth:`plot`.
        link : {"identity", "logit"}, default="identity"
            The scale of the x axis; see :meth:`plot`.
        highlight : int or array-like of int, default=None
            Positions of rows drawn thicker and dark.
        ax : matplotlib.axes.Axes, default=None
            The axes to draw on; ``None`` creates a figure.
        raw_output : str, default=None
            What the explained output is, for the axis label; ``"log-odds"``
            for ``link="logit"``.

        Returns
        -------
        display : DecisionDisplay
            The drawn display.
        """
        _style.require_matplotlib("DecisionDisplay.from_values")
        if isinstance(phi, pd.Series):
            phi = phi.to_frame().T
            if isinstance(feature_values, pd.Series):
                feature_values = feature_values.to_frame().T.set_axis(phi.index)
        phi = shapley_frame(phi, feature_names, feature_values)
        outputs = outputs_of(phi.columns)
        phi, name = select_output(phi, output)
        data = None if feature_values is None else feature_frame(feature_values, phi)
        display = cls(
            phi,
            base_value_of(base_value, name, outputs),
            feature_values=data,
            output=name,
            raw_output=raw_output,
        )
        return display.plot(ax, max_display=max_display, link=link, highlight=highlight)

    @classmethod
    def from_explainer(
        cls,
        explainer,
        X,
        *,
        output=None,
        max_display: int = 20,
        link: str = "identity",
        highlight=None,
        ax=None,
    ):
        """Explain ``X`` and draw one decision line per row.

        Parameters
        ----------
        explainer : fitted explainer
            A fitted skshapley explainer, such as :class:`~skshapley.TreeExplainer`.
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
            The rows to explain; one row's values label its features.
        output : object, default=None
            The output to show, by name; ``None`` means the first.
        max_display : int, default=20
            The most features drawn; see :meth:`plot`.
        link : {"identity", "logit"}, default="identity"
            The scale of the x axis; see :meth:`plot`.
        highlight : int or array-like of int, default=None
            Positions of rows drawn thicker and dark.
        ax : matplotlib.axes.Axes, default=None
            The axes to draw on; ``None`` creates a figure.

        Returns
        -------
        display : DecisionDisplay
            The drawn display.
        """
        _style.require_matplotlib("DecisionDisplay.from_explainer")
        return cls.from_values(
            explainer.explain(X),
            explainer.expected_value_,
            feature_values=X,
            max_display=max_display,
            link=link,
            highlight=highlight,
            ax=ax,
            **about_output(explainer, output),
        )


def _link(link, raw_output):
    """The function from running totals to the x axis' values."""
    if link not in _LINKS:
        raise ValueError(f"link must be one of {list(_LINKS)}; got {link!r}.")
    if link == "identity":
        return lambda totals: totals
    if raw_output != "log-odds":
        raise ValueError(
            "link='logit' draws probabilities, which only log-odds give (through "
            f"the sigmoid); the output explained is {raw_output!r}. Use "
            "link='identity', or raw_output='log-odds' if the values are log-odds."
        )
    from scipy.special import expit

    return expit


def _highlighted(highlight, n_samples: int) -> set[int]:
    """The positions of the highlighted rows, checked."""
    if highlight is None:
        return set()
    positions = np.atleast_1d(np.asarray(highlight))
    if positions.ndim != 1 or (positions.size and positions.dtype.kind not in "iu"):
        raise ValueError(
            "highlight must be a row position or a 1-D array of row positions "
            f"(ints); got {highlight!r}."
        )
    outside = positions[(positions < 0) | (positions >= n_samples)]
    if len(outside):
        raise ValueError(
            f"highlight has positions outside 0..{n_samples - 1}: "
            f"{outside[:5].tolist()}."
        )
    return {int(position) for position in positions}
