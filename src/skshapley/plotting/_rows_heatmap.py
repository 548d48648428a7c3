"""HeatmapDisplay: rows × features of Shapley values, with f(x) above."""

from numbers import Integral

import numpy as np

from . import _style
from ._inputs import (
    about_output,
    base_value_of,
    outputs_of,
    select_output,
    shapley_frame,
    split_top,
)

_ROW_ORDERS = ("similarity", "prediction")
# Optimal leaf ordering costs O(n³): 0.04 s at 200 rows, 4 s at 1000.
_OPTIMAL_ORDERING_UP_TO = 300
# The colour scale ends at this quantile of the drawn |φ| (an actual cell's
# value, the largest below 100 cells), not at the largest: one extreme cell
# would otherwise wash every other one out to white. Cells beyond it take
# the end colours (the colour bar's arrows).
_COLOR_QUANTILE = 0.99
# Columns are labelled by the rows' index labels up to this many rows, if
# each column has this many points of width.
_LABEL_ROWS_UP_TO = 20
_COLUMN_ROOM = 9.0
# The f(x) axes take this share of the height they are drawn in, within
# these bounds in inches; a new figure has this much more than its rows.
_F_SHARE = 0.2
_F_HEIGHT = (0.45, 0.75)
_EXTRA_HEIGHT = 1.6


class HeatmapDisplay:
    """Every row's Shapley values as a heatmap: features × rows, f(x) above.

    Each column is one explained row, each line one feature (the largest
    mean ``|φ|`` on top); the colour is the Shapley value, red where the
    feature raises the output, blue where it lowers it, white at 0. Rows are
    ordered so that similar explanations sit together (hierarchical
    clustering of their Shapley values), or by prediction; the line above
    the heatmap is each row's output ``f(x)``. Use :meth:`from_explainer`
    or :meth:`from_values` to build one.

    Parameters
    ----------
    shapley_values : pandas.DataFrame of shape (n_samples, n_features)
        Shapley values of one output, one column per feature.
    base_value : float, default=None
        The output's base value (an explainer's ``expected_value_``): the
        line above shows ``f(x) = base value + Σφ``; ``None`` draws
        ``Σφ = f(x) - base value``.
    output : object, default=None
        The output shown, named in the title; ``None`` when the model has one.
    raw_output : str, default=None
        What the explained output is (an explainer's ``raw_output_``), for
        the colour bar's label.

    Attributes
    ----------
    image_ : matplotlib.image.AxesImage
        The heatmap: one line per entry of ``features_``, one column per
        entry of ``rows_``.
    colorbar_ : matplotlib.colorbar.Colorbar
        Its colour bar.
    features_ : list of str
        The heatmap's lines, top first; the last is ``"n other features"``
        (each row's sum of their Shapley values) when features were folded.
    rows_ : numpy.ndarray of int
        The positions of the drawn rows in ``shapley_values``, left to right.
    f_ax_ : matplotlib.axes.Axes
        The axes of f(x), above the heatmap, sharing its x axis.
    ax_ : matplotlib.axes.Axes
        The heatmap's axes.
    figure_ : matplotlib.figure.Figure
        The figure of ``ax_``.

    See Also
    --------
    BeeswarmDisplay : Every row's Shapley values, one swarm per feature.
    DecisionDisplay : Every row's path from the base value to f(x).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import GradientBoostingRegressor
    >>> from skshapley import TreeExplainer
    >>> from skshapley.plotting import HeatmapDisplay
    >>> X, y = load_diabetes(return_X_y=True, as_frame=True)
    >>> model = GradientBoostingRegressor(n_estimators=20, random_state=0)
    >>> explainer = TreeExplainer(model.fit(X, y)).fit()
    >>> display = HeatmapDisplay.from_explainer(explainer, X.iloc[:50], max_display=5)
    >>> display.features_
    ['s5', 'bmi', 'bp', 's3', '6 other features']
    >>> display.image_.get_array().shape
    (5, 50)
    >>> plt.close(display.figure_)
    """

    def __init__(
        self, shapley_values, base_value=None, *, output=None, raw_output=None
    ):
        self.shapley_values = shapley_values
        self.base_value = base_value
        self.output = output
        self.raw_output = raw_output

    def plot(
        self,
        ax=None,
        *,
        max_display: int = 10,
        row_order="similarity",
        max_rows: int = 1000,
        cmap=None,
    ):
        """Draw the heatmap and the line of f(x) above it.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, default=None
            The axes of the heatmap; ``None`` creates a figure. The f(x)
            axes take the top of its place in the figure's layout.
        max_display : int, default=10
            The most lines drawn. With more features, those of smallest
            mean ``|φ|`` (over all the rows) are folded into one last line,
            ``"n other features"``, of each row's sum of their values.
        row_order : {"similarity", "prediction"} or array-like of int, \
default="similarity"
            The order of the rows, left to right: ``"similarity"`` puts
            rows of similar Shapley values side by side (the leaves of a
            Ward clustering of the rows, optimally ordered up to 300 rows);
            ``"prediction"`` sorts them by f(x), lowest first. An array of
            positions in ``shapley_values`` draws those rows, in that order.
        max_rows : int, default=1000
            The most rows drawn by ``"similarity"`` or ``"prediction"``:
            with more, a random sample of ``max_rows`` (the same each time)
            is drawn, and the title says so.
        cmap : str or matplotlib.colors.Colormap, default=None
            A diverging colour map, centred on 0; ``None`` means blue
            (lowers the output) through white to red (raises it).

        Returns
        -------
        display : HeatmapDisplay
            This display, with ``ax_``, ``figure_`` and the artists set.
        """
        phi = self.shapley_values
        values = phi.to_numpy(dtype=np.float64)
        magnitude = np.abs(values).mean(axis=0)
        order = np.argsort(-magnitude, kind="stable")
        shown, folded = split_top(list(phi.columns[order]), max_display)
        rows, sampled = _rows(values, row_order, max_rows)
        drawn = phi[shown].to_numpy(dtype=np.float64)[rows].T
        labels = [str(name) for name in shown]
        if folded:
            rest = phi[folded].to_numpy(dtype=np.float64)[rows].sum(axis=1)
            drawn = np.vstack([drawn, rest])
            labels.append(_style.other_label(len(folded)))
        height = _style.rows_size(len(labels))[1] + _EXTRA_HEIGHT
        ax, figure = _style.prepare_axes(
            ax, "HeatmapDisplay.plot", (_style.WIDTH, height)
        )
        self.f_ax_ = _predictions_axes(ax)
        magnitudes = np.abs(drawn)
        limit = float(np.quantile(magnitudes, _COLOR_QUANTILE, method="higher"))
        limit = limit or 1.0  # every drawn value is 0
        self.image_ = ax.imshow(
            drawn,
            cmap=_diverging() if cmap is None else cmap,
            vmin=-limit,
            vmax=limit,
            aspect="auto",
            interpolation="nearest",
        )
        # Room under the lines: the rows' axis label and the colour bar.
        size = _style.row_label_size(ax, labels, reserved=0.5)
        ax.set_yticks(np.arange(len(labels)), _style.literals(labels), fontsize=size)
        names_width = size * _style.CHAR_WIDTH * max(len(label) for label in labels)
        _label_columns(ax, phi.index[rows], names_width=names_width)
        ax.set_xlabel(_rows_label(row_order), wrap=True)
        ax.tick_params(length=0)
        ax.spines[:].set_visible(False)
        self.colorbar_ = _colorbar(figure, ax, self.image_, drawn, limit)
        self.colorbar_.set_label(
            _style.shapley_label(self.raw_output), fontsize=9, wrap=True
        )
        self._draw_predictions(values[rows])
        note = f"{len(rows)} of {len(phi)} rows, sampled at random" if sampled else None
        _style.set_output_title(self.f_ax_, self.output, note)
        self.features_, self.rows_ = labels, rows
        self.ax_, self.figure_ = ax, figure
        return self

    def _draw_predictions(self, values: np.ndarray) -> None:
        """The line of each drawn row's f(x), in ``f_ax_``; dashed: the base."""
        f_ax = self.f_ax_
        known = self.base_value is not None
        base = self.base_value if known else 0.0
        f_ax.axhline(base, color=_style.GUIDE, linewidth=0.8, linestyle="--")
        few = len(values) <= _LABEL_ROWS_UP_TO  # dots, or one row is invisible
        f_ax.plot(
            np.arange(len(values)),
            base + values.sum(axis=1),
            color="#222222",
            linewidth=1.2,
            marker="o" if few else None,
            markersize=3,
        )
        f_ax.set_ylabel("f(x)" if known else "f(x) − base", fontsize=9)
        f_ax.tick_params(axis="x", labelbottom=False, length=0)
        f_ax.yaxis.set_major_locator(_few_ticks())
        _style.style_axes(f_ax, grid_axis="y")
        f_ax.tick_params(labelsize=8)

    @classmethod
    def from_values(
        cls,
        phi,
        *,
        base_value=None,
        feature_names=None,
        output=None,
        max_display: int = 10,
        row_order="similarity",
        max_rows: int = 1000,
        ax=None,
        raw_output: str | None = None,
    ):
        """Draw the heatmap of given Shapley values.

        Parameters
        ----------
        phi : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Shapley values as an explainer's ``explain`` returns them (columns
            ``(output, feature)`` for several outputs), or an array.
        base_value : float or pandas.Series, default=None
            The base value (an explainer's ``expected_value_``, a Series by
            output for several outputs), for the line of f(x); ``None``
            draws ``f(x) - base value`` instead.
        feature_names : list of str, default=None
            The names of an array ``phi``'s columns; ``None`` means
            ``x0, x1, ...``.
        output : object, default=None
            The output to show, by name; ``None`` means the first.
        max_display : int, default=10
            The most lines drawn; see :meth:`plot`.
        row_order : {"similarity", "prediction"} or array-like of int, \
default="similarity"
            The order of the rows, left to right; see :meth:`plot`.
        max_rows : int, default=1000
            The most rows drawn, sampled above it; see :meth:`plot`.
        ax : matplotlib.axes.Axes, default=None
            The axes to draw on; ``None`` creates a figure.
        raw_output : str, default=None
            What the explained output is, for the colour bar's label.

        Returns
        -------
        display : HeatmapDisplay
            The drawn display.
        """
        _style.require_matplotlib("HeatmapDisplay.from_values")
        phi = shapley_frame(phi, feature_names)
        outputs = outputs_of(phi.columns)
        phi, name = select_output(phi, output)
        if base_value is not None:
            base_value = base_value_of(base_value, name, outputs)
        display = cls(phi, base_value, output=name, raw_output=raw_output)
        return display.plot(
            ax, max_display=max_display, row_order=row_order, max_rows=max_rows
        )

    @classmethod
    def from_explainer(
        cls,
        explainer,
        X,
        *,
        output=None,
        max_display: int = 10,
        row_order="similarity",
        max_rows: int = 1000,
        ax=None,
    ):
        """Explain ``X`` and draw the heatmap of its rows.

        Parameters
        ----------
        explainer : fitted explainer
            A fitted skshapley explainer, such as :class:`~skshapley.TreeExplainer`.
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
            The rows to explain.
        output : object, default=None
            The output to show, by name; ``None`` means the first.
        max_display : int, default=10
            The most lines drawn; see :meth:`plot`.
        row_order : {"similarity", "prediction"} or array-like of int, \
default="similarity"
            The order of the rows, left to right; see :meth:`plot`.
        max_rows : int, default=1000
            The most rows drawn, sampled above it; see :meth:`plot`.
        ax : matplotlib.axes.Axes, default=None
            The axes to draw on; ``None`` creates a figure.

        Returns
        -------
        display : HeatmapDisplay
            The drawn display.
        """
        _style.require_matplotlib("HeatmapDisplay.from_explainer")
        return cls.from_values(
            explainer.explain(X),
            base_value=explainer.expected_value_,
            max_display=max_display,
            row_order=row_order,
            max_rows=max_rows,
            ax=ax,
            **about_output(explainer, output),
        )


def _predictions_axes(ax):
    """Axes for f(x) above ``ax``, sharing its x axis.

    They take the top of ``ax``'s cell of the layout, so that constrained
    layout places both; axes placed by hand get them on top of their area.
    """
    height = ax.get_position().height * ax.figure.get_figheight()
    f_height = float(np.clip(_F_SHARE * height, *_F_HEIGHT))
    share = f_height / max(height - f_height, f_height)
    spec = ax.get_subplotspec()
    if spec is None:
        return ax.inset_axes([0.0, 1.0 + 0.15 * share, 1.0, share], sharex=ax)
    cells = spec.subgridspec(2, 1, height_ratios=[share, 1.0], hspace=0.02)
    ax.set_subplotspec(cells[1])
    return ax.figure.add_subplot(cells[0], sharex=ax)


def _rows(values: np.ndarray, row_order, max_rows) -> tuple[np.ndarray, bool]:
    """The positions of the rows drawn, left to right, and if they are a sample."""
    if not isinstance(max_rows, Integral) or isinstance(max_rows, bool) or max_rows < 1:
        raise ValueError(f"max_rows must be an int >= 1, got {max_rows!r}.")
    n_samples = len(values)
    if not isinstance(row_order, str):
        return _given_rows(row_order, n_samples), False
    if row_order not in _ROW_ORDERS:
        raise ValueError(
            f"row_order must be one of {list(_ROW_ORDERS)} or an array of row "
            f"positions; got {row_order!r}."
        )
    rows = np.arange(n_samples)
    sampled = n_samples > max_rows
    if sampled:
        rng = np.random.default_rng(0)
        rows = np.sort(rng.choice(n_samples, size=int(max_rows), replace=False))
    if row_order == "prediction":
        return rows[np.argsort(values[rows].sum(axis=1), kind="stable")], sampled
    return rows[_similarity_order(values[rows])], sampled


def _given_rows(row_order, n_samples: int) -> np.ndarray:
    """An explicit ``row_order``, checked: distinct positions of rows."""
    rows = np.asarray(row_order)
    if rows.ndim != 1 or len(rows) == 0 or rows.dtype.kind not in "iu":
        raise ValueError(
            f"row_order must be one of {list(_ROW_ORDERS)} or a 1-D array of "
            f"row positions (ints); got {row_order!r}."
        )
    outside = rows[(rows < 0) | (rows >= n_samples)]
    if len(outside):
        raise ValueError(
            f"row_order has positions outside 0..{n_samples - 1}: "
            f"{outside[:5].tolist()}."
        )
    if len(np.unique(rows)) != len(rows):
        raise ValueError("row_order names a row twice.")
    return rows.astype(np.intp)


def _similarity_order(values: np.ndarray) -> np.ndarray:
    """The leaves of a Ward clustering of the rows: similar rows side by side."""
    from scipy.cluster.hierarchy import leaves_list, linkage

    if len(values) < 3:  # one order is as good as another
        return np.arange(len(values))
    optimal = len(values) <= _OPTIMAL_ORDERING_UP_TO
    return leaves_list(linkage(values, "ward", optimal_ordering=optimal))


def _rows_label(row_order) -> str:
    """The x axis' label: the rows and how they are ordered."""
    if isinstance(row_order, str):
        return f"rows (ordered by {row_order})"
    return "rows (in the order given)"


def _label_columns(ax, labels, *, names_width: float) -> None:
    """Columns labelled by their rows' index labels, when there is room.

    ``names_width`` (points) of the axes' width will go to the features'
    names; the labels, upright, need about a line's height each.
    """
    width = ax.get_position().width * ax.figure.get_figwidth() * 72 - names_width
    room = width / len(labels)
    if len(labels) > _LABEL_ROWS_UP_TO or room < _COLUMN_ROOM:
        ax.set_xticks([])
        return
    texts = [_style.literal(_style.format_value(label)) for label in labels]
    size = min(8.0, 0.7 * room)
    ax.set_xticks(np.arange(len(labels)), texts, rotation=90, fontsize=size)


def _diverging():
    """Blue (lowers the output) through white to red (raises it)."""
    from matplotlib.colors import LinearSegmentedColormap

    colors = (_style.NEGATIVE, "#ffffff", _style.POSITIVE)
    return LinearSegmentedColormap.from_list("skshapley_signed", colors)


def _colorbar(figure, ax, image, drawn: np.ndarray, limit: float):
    """A horizontal colour bar under the heatmap; arrows if cells go beyond it."""
    beyond = float(np.abs(drawn).max()) > limit
    colorbar = figure.colorbar(
        image,
        ax=ax,
        location="bottom",
        aspect=40,
        fraction=0.05,
        pad=0.02,
        extend="both" if beyond else "neither",
    )
    colorbar.outline.set_visible(False)
    colorbar.ax.tick_params(labelsize=8)
    return colorbar


def _few_ticks():
    """At most three ticks: the f(x) axes are short."""
    from matplotlib.ticker import MaxNLocator

    return MaxNLocator(nbins=3)
