"""BeeswarmDisplay: every row's Shapley values, one swarm per feature."""

import numpy as np
import pandas as pd

from . import _style
from ._inputs import (
    about_output,
    check_names,
    codes,
    feature_frame,
    numeric_values,
    select_output,
    shapley_frame,
    split_top,
)

# Bins of the Shapley-value axis in which points are stacked, and the half
# height of a row of the swarm (rows are 1 apart).
_N_BINS = 100
_HALF_HEIGHT = 0.4
# Above this many points per row, they are rasterized in vector outputs.
_RASTERIZE_ABOVE = 500


class BeeswarmDisplay:
    """Shapley values of every row, one swarm per feature, coloured by value.

    Each feature is a row of points, the most important (largest mean ``|φ|``)
    on top; each point is one explained sample, at its Shapley value, and
    stacked vertically where many samples have similar values, so that the
    height of a swarm shows the density. The colour is the sample's value of
    the feature, from blue (low) to red (high), by its rank among the rows
    (so skewed features use the whole colour range); missing values are
    grey. A categorical feature (a pandas categorical, string, object or
    bool column) is coloured by category, its categories spread over the
    same colours in their order (``False`` blue, ``True`` red), and named
    in a legend. Use :meth:`from_explainer` or :meth:`from_values`.

    Parameters
    ----------
    shapley_values : pandas.DataFrame of shape (n_samples, n_features)
        Shapley values of one output, one column per feature.
    feature_values : pandas.DataFrame of shape (n_samples, n_features), default=None
        The explained rows, columns named as ``shapley_values``'; features
        without a column, and ``None``, are drawn grey.
    output : object, default=None
        The output shown, named in the title; ``None`` when the model has one.
    raw_output : str, default=None
        What the explained output is (an explainer's ``raw_output_``), for
        the axis label.

    Attributes
    ----------
    collections_ : list of matplotlib.collections.PathCollection
        One collection of points per row, top row first.
    colorbar_ : matplotlib.colorbar.Colorbar or None
        The colour bar of feature values; ``None`` if no value is known.
    categories_ : dict of str to list of str
        The categories of each categorical feature drawn, in the order of
        their colours (blue to red), as the legend names them.
    labels_ : list of str
        The rows' labels, top row first; the last is ``"n other features"``
        (their summed Shapley values, grey) when features were folded.
    ax_ : matplotlib.axes.Axes
        The axes drawn on.
    figure_ : matplotlib.figure.Figure
        The figure of ``ax_``.

    See Also
    --------
    ImportanceDisplay : The mean ``|φ|`` of each feature.
    DependenceDisplay : One feature's Shapley values against its values.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import GradientBoostingRegressor
    >>> from skshapley import TreeExplainer
    >>> from skshapley.plotting import BeeswarmDisplay
    >>> X, y = load_diabetes(return_X_y=True, as_frame=True)
    >>> model = GradientBoostingRegressor(n_estimators=20, random_state=0)
    >>> explainer = TreeExplainer(model.fit(X, y)).fit()
    >>> display = BeeswarmDisplay.from_explainer(explainer, X, max_display=5)
    >>> display.labels_
    ['s5', 'bmi', 'bp', 's3', '6 other features']
    >>> len(display.collections_[0].get_offsets()) == len(X)
    True
    >>> plt.close(display.figure_)
    """

    def __init__(
        self, shapley_values, feature_values=None, *, output=None, raw_output=None
    ):
        self.shapley_values = shapley_values
        self.feature_values = feature_values
        self.output = output
        self.raw_output = raw_output

    def plot(
        self,
        ax=None,
        *,
        max_display: int = 20,
        cmap=None,
        size: float = 12.0,
        alpha: float = 0.85,
        colorbar: bool = True,
        order=None,
    ):
        """Draw the swarms.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, default=None
            The axes to draw on; ``None`` creates a figure.
        max_display : int, default=20
            The most rows drawn. With more features, the least important are
            folded into one last row, ``"n other features"``, of each
            sample's sum of their Shapley values.
        cmap : str or matplotlib.colors.Colormap, default=None
            The colours of feature values, low to high; ``None`` means blue
            to red.
        size : float, default=12.0
            The points' area, in points squared.
        alpha : float, default=0.85
            The points' opacity.
        colorbar : bool, default=True
            Draw the colour bar of feature values.
        order : sequence of str, default=None
            Every feature once, in the order drawn (top first), for example
            an importance table's index, so that a swarm of sampled rows is
            ordered as the table of every row is; ``None`` orders by the
            mean ``|φ|`` of the rows given.

        Returns
        -------
        display : BeeswarmDisplay
            This display, with ``ax_``, ``figure_`` and the artists set.
        """
        phi = self.shapley_values
        shown, folded = split_top(_drawn_order(phi, order), max_display)
        rows = [(str(name), phi[name].to_numpy(dtype=np.float64)) for name in shown]
        if folded:
            rest = phi[folded].to_numpy(dtype=np.float64).sum(axis=1)
            rows.append((_style.other_label(len(folded)), rest))
        n_rows = len(rows)
        ax, figure = _style.prepare_axes(
            ax, "BeeswarmDisplay.plot", _style.rows_size(n_rows)
        )
        from matplotlib.colors import to_rgba

        cmap = _style.colormap(cmap)
        rng = np.random.default_rng(0)  # the order of points within a bin
        collections, colored = [], False
        self.categories_ = {}
        ax.axvline(0, color=_style.GUIDE, linewidth=0.8, zorder=1)
        for position, (name, values) in enumerate(rows):
            level = self._color_levels(name if position < len(shown) else None)
            colors = np.tile(to_rgba(_style.MISSING), (len(values), 1))
            known = ~np.isnan(level)
            colors[known] = cmap(level[known])
            colored |= bool(known.any())
            y = n_rows - 1 - position + _swarm_offsets(values, rng)
            collections.append(
                ax.scatter(
                    values,
                    y,
                    s=size,
                    c=colors,
                    alpha=alpha,
                    linewidths=0,
                    zorder=3,
                    rasterized=len(values) > _RASTERIZE_ABOVE,
                )
            )
        labels = [name for name, _ in rows]
        ax.set_yticks(np.arange(n_rows)[::-1], _style.literals(labels))
        ax.set_ylim(-0.6, n_rows - 0.4)
        ax.set_xlabel(_style.shapley_label(self.raw_output))
        _style.style_axes(ax)
        ax.grid(axis="y", color="#f0f0f0", linewidth=0.8)
        _style.set_output_title(ax, self.output)
        self.colorbar_ = None
        if colorbar and colored:
            self.colorbar_ = _feature_colorbar(figure, ax, cmap)
        if self.categories_:
            _category_legend(ax, self.categories_, cmap)
        _style.fit_texts(ax)
        self.collections_, self.labels_ = collections, labels
        self.ax_, self.figure_ = ax, figure
        return self

    def _color_levels(self, name) -> np.ndarray:
        """A feature's values as colour levels in [0, 1] by rank; NaN: grey.

        A categorical feature's categories are spread evenly over [0, 1],
        in their order, and recorded in ``categories_``.
        """
        n_samples = len(self.shapley_values)
        data = self.feature_values
        if name is None or data is None or name not in data.columns:
            return np.full(n_samples, np.nan)
        column = data[name]
        values = numeric_values(column)
        if values is None or pd.api.types.is_bool_dtype(column.dtype):
            levels, categories = codes(column)
            self.categories_[name] = categories
            return levels / max(len(categories) - 1, 1)
        ranks = pd.Series(values).rank(method="average").to_numpy()
        known = ranks[~np.isnan(ranks)]
        if len(known) == 0:
            return ranks  # every value missing
        low, high = known.min(), known.max()
        if high == low:
            return np.where(np.isnan(ranks), np.nan, 0.5)
        return (ranks - low) / (high - low)

    @classmethod
    def from_values(
        cls,
        phi,
        X=None,
        *,
        feature_names=None,
        output=None,
        max_display: int = 20,
        ax=None,
        raw_output: str | None = None,
        order=None,
    ):
        """Draw the swarms of given Shapley values.

        Parameters
        ----------
        phi : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Shapley values as an explainer's ``explain`` returns them (columns
            ``(output, feature)`` for several outputs), or an array.
        X : pandas.DataFrame or array-like, default=None
            The explained rows, of shape (n_samples, n_features), for the
            colours: ``phi``'s rows (the same index, for DataFrames), columns
            matched by name. ``None`` draws every point grey.
        feature_names : list of str, default=None
            The names of an array ``phi``'s columns; ``None`` means ``X``'s
            columns, else ``x0, x1, ...``.
        output : object, default=None
            The output to show, by name; ``None`` means the first.
        max_display : int, default=20
            The most rows drawn; see :meth:`plot`.
        ax : matplotlib.axes.Axes, default=None
            The axes to draw on; ``None`` creates a figure.
        raw_output : str, default=None
            What the explained output is, for the axis label.
        order : sequence of str, default=None
            Every feature once, in the order drawn; see :meth:`plot`.

        Returns
        -------
        display : BeeswarmDisplay
            The drawn display.
        """
        _style.require_matplotlib("BeeswarmDisplay.from_values")
        phi, name = select_output(shapley_frame(phi, feature_names, X), output)
        data = None if X is None else feature_frame(X, phi)
        display = cls(phi, data, output=name, raw_output=raw_output)
        return display.plot(ax, max_display=max_display, order=order)

    @classmethod
    def from_explainer(
        cls, explainer, X, *, output=None, max_display: int = 20, ax=None
    ):
        """Explain ``X`` and draw the swarms.

        Parameters
        ----------
        explainer : fitted explainer
            A fitted skshapley explainer, such as :class:`~skshapley.TreeExplainer`.
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
            The rows to explain; their values colour the points.
        output : object, default=None
            The output to show, by name; ``None`` means the first.
        max_display : int, default=20
            The most rows drawn; see :meth:`plot`.
        ax : matplotlib.axes.Axes, default=None
            The axes to draw on; ``None`` creates a figure.

        Returns
        -------
        display : BeeswarmDisplay
            The drawn display.
        """
        _style.require_matplotlib("BeeswarmDisplay.from_explainer")
        return cls.from_values(
            explainer.explain(X),
            X,
            max_display=max_display,
            ax=ax,
            **about_output(explainer, output),
        )


def _drawn_order(phi: pd.DataFrame, order) -> list:
    """The features top first: ``order``, checked, or by mean ``|φ|``."""
    features = list(phi.columns)
    if order is None:
        magnitude = phi.abs().mean(axis=0).to_numpy()
        return [features[j] for j in np.argsort(-magnitude, kind="stable")]
    order = list(order)
    check_names(order, features, "features in order")
    missing = [name for name in features if name not in set(order)]
    if missing or len(set(order)) != len(order):
        raise ValueError(
            "order must name every feature exactly once; "
            + (f"missing: {missing}." if missing else "it repeats some.")
        )
    return order


def _swarm_offsets(values: np.ndarray, rng) -> np.ndarray:
    """Vertical offsets that stack points of similar values, by density.

    The values are binned; within a bin, points take alternate sides of the
    row's centre line, one layer further out each time. Offsets are scaled so
    that the fullest bin fills the row's height.
    """
    n = len(values)
    span = float(np.ptp(values)) if n else 0.0
    if span == 0.0:
        bins = np.zeros(n, dtype=np.intp)
    else:
        bins = np.rint((values - values.min()) / span * (_N_BINS - 1)).astype(np.intp)
    order = rng.permutation(n)
    order = order[np.argsort(bins[order], kind="stable")]
    sorted_bins = bins[order]
    starts = np.flatnonzero(np.r_[True, sorted_bins[1:] != sorted_bins[:-1]])
    rank = np.arange(n) - np.repeat(starts, np.diff(np.r_[starts, n]))
    layer = (rank + 1) // 2
    offsets = np.empty(n)
    offsets[order] = np.where(rank % 2 == 1, layer, -layer)
    return offsets * (_HALF_HEIGHT / max(int(layer.max(initial=0)), 1))


def _feature_colorbar(figure, ax, cmap):
    """A colour bar from low to high feature values, without numbers."""
    from matplotlib.cm import ScalarMappable
    from matplotlib.colors import Normalize

    mappable = ScalarMappable(norm=Normalize(0.0, 1.0), cmap=cmap)
    colorbar = figure.colorbar(mappable, ax=ax, aspect=40, pad=0.02, fraction=0.05)
    colorbar.set_ticks([0.0, 1.0], labels=["low", "high"])
    colorbar.set_label("feature value", labelpad=-12)
    colorbar.ax.tick_params(labelsize=9, length=0)
    colorbar.outline.set_visible(False)
    return colorbar


# A feature's categories named in the legend, at most: beyond, its first
# and last (the two ends of the colour scale) and how many are left out.
_LEGEND_CATEGORIES = 6


def _legend_entries(names: list) -> list[tuple[int | None, str]]:
    """``(position, category)`` of the categories the legend names, with
    ``(None, "... N more")`` in place of those left out."""
    entries = list(enumerate(names))
    if len(entries) <= _LEGEND_CATEGORIES:
        return entries
    head, tail = _LEGEND_CATEGORIES // 2, _LEGEND_CATEGORIES // 2 - 1
    left_out = len(entries) - head - tail
    return [*entries[:head], (None, f"... {left_out} more"), *entries[-tail:]]


def _category_legend(ax, categories: dict, cmap) -> None:
    """A legend of the categories' colours: ``feature: category``."""
    from matplotlib.lines import Line2D

    handles = [
        Line2D(
            [],
            [],
            linestyle="none",
            marker="o" if position is not None else "",
            markersize=5,
            markeredgewidth=0,
            color=cmap(position / max(len(names) - 1, 1))
            if position is not None
            else "none",
            label=_style.literal(f"{feature}: {category}"),
        )
        for feature, names in categories.items()
        for position, category in _legend_entries(names)
    ]
    ax.legend(
        handles=handles,
        loc="best",
        fontsize=8,
        framealpha=0.85,
        handletextpad=0.3,
        borderaxespad=0.3,
    )
