"""DependenceDisplay: one feature's Shapley values against its values."""

import numpy as np
import pandas as pd

from . import _style
from ._inputs import (
    about_output,
    check_names,
    codes,
    feature_frame,
    first_output,
    interaction_values,
    numeric_values,
    select_output,
    shapley_frame,
)

# Rows per window of the interaction heuristic: a tenth of the rows, at least.
_MIN_WINDOW = 5
# Colour limits: these percentiles of the colouring feature, so that a few
# extreme values do not wash the others out.
_COLOR_PERCENTILES = (5.0, 95.0)
# Colour bars name the categories up to this many.
_LABELLED_CATEGORIES = 20


class DependenceDisplay:
    """One feature's Shapley values against its values, one point per sample.

    The shape of the cloud shows how the feature's value moves the output;
    its vertical spread at one value shows interactions, which colouring by
    another feature can explain. Use :meth:`from_explainer` or
    :meth:`from_values` to build one.

    Parameters
    ----------
    feature_values : pandas.Series of shape (n_samples,)
        The feature's values. Non-numeric values are drawn at their category
        codes, named on the axis.
    shapley_values : pandas.Series of shape (n_samples,)
        The feature's Shapley values, for the same rows.
    feature : str
        The feature's name.
    color_values : pandas.Series of shape (n_samples,), default=None
        The values colouring the points; ``None`` draws them in one colour.
    color_feature : str, default=None
        The name of the colouring feature, for the colour bar.
    output : object, default=None
        The output shown, named in the title; ``None`` when the model has one.
    raw_output : str, default=None
        What the explained output is (an explainer's ``raw_output_``).

    Attributes
    ----------
    scatter_ : matplotlib.collections.PathCollection
        The points.
    colorbar_ : matplotlib.colorbar.Colorbar or None
        The colour bar of ``color_feature``; ``None`` without colours.
    ax_ : matplotlib.axes.Axes
        The axes drawn on.
    figure_ : matplotlib.figure.Figure
        The figure of ``ax_``.

    See Also
    --------
    BeeswarmDisplay : Every feature's Shapley values at once.

    Notes
    -----
    ``color="auto"`` colours the points by the feature that interacts most
    with ``feature``. Given interaction values (``from_values``'
    ``interactions``; ``from_explainer`` computes them when the explainer's
    ``supports_interactions`` is true), that is the column of ``X`` with the
    largest mean absolute Shapley interaction value with ``feature`` over
    the drawn rows (none if every one is 0). Otherwise it is judged from
    the Shapley values and ``X`` alone: the rows are sorted by
    ``feature``'s value and cut into windows of about a tenth of them, in
    which ``feature``'s own value is nearly constant; what still varies in
    its Shapley value there is interaction. Each other column scores the
    mean, over the windows, of the absolute correlation between
    ``feature``'s Shapley values and that column's values (category codes
    for non-numeric columns), and the best score wins. It is a heuristic,
    not an interaction value (the same idea as shap's
    ``approximate_interactions``).

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import GradientBoostingRegressor
    >>> from skshapley import TreeExplainer
    >>> from skshapley.plotting import DependenceDisplay
    >>> X, y = load_diabetes(return_X_y=True, as_frame=True)
    >>> model = GradientBoostingRegressor(n_estimators=20, random_state=0)
    >>> explainer = TreeExplainer(model.fit(X, y)).fit()
    >>> display = DependenceDisplay.from_explainer(explainer, X, "bmi", color="s5")
    >>> display.ax_.get_xlabel()
    'bmi'
    >>> plt.close(display.figure_)
    """

    def __init__(
        self,
        feature_values,
        shapley_values,
        *,
        feature,
        color_values=None,
        color_feature=None,
        output=None,
        raw_output=None,
    ):
        self.feature_values = feature_values
        self.shapley_values = shapley_values
        self.feature = feature
        self.color_values = color_values
        self.color_feature = color_feature
        self.output = output
        self.raw_output = raw_output

    def plot(self, ax=None, *, cmap=None, size: float = 16.0, alpha: float = 0.8):
        """Draw the points.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, default=None
            The axes to draw on; ``None`` creates a figure.
        cmap : str or matplotlib.colors.Colormap, default=None
            The colours of ``color_values``, low to high; ``None`` means
            blue to red.
        size : float, default=16.0
            The points' area, in points squared.
        alpha : float, default=0.8
            The points' opacity.

        Returns
        -------
        display : DependenceDisplay
            This display, with ``ax_``, ``figure_`` and the artists set.
        """
        ax, figure = _style.prepare_axes(ax, "DependenceDisplay.plot", (6.4, 4.6))
        x, categories = _positions(pd.Series(self.feature_values))
        y = np.asarray(self.shapley_values, dtype=np.float64)
        self.colorbar_ = None
        ax.axhline(0, color=_style.GUIDE, linewidth=0.8, zorder=1)
        if self.color_values is None:
            self.scatter_ = ax.scatter(
                x, y, s=size, color=_style.NEGATIVE, alpha=alpha, linewidths=0, zorder=3
            )
        else:
            cmap = _style.colormap(cmap)
            self.scatter_, self.colorbar_ = self._colored_scatter(
                ax, figure, x, y, cmap, size=size, alpha=alpha
            )
        if categories is not None:
            ax.set_xticks(np.arange(len(categories)), _style.literals(categories))
        ax.set_xlabel(_style.literal(self.feature))
        ax.set_ylabel(_style.literal(f"Shapley value of {self.feature}"))
        _style.style_axes(ax, grid_axis="both")
        _style.set_output_title(ax, self.output)
        _style.fit_texts(ax, colorbar=self.colorbar_)
        self.ax_, self.figure_ = ax, figure
        return self

    def _colored_scatter(self, ax, figure, x, y, cmap, *, size, alpha):
        """Points coloured by ``color_values`` (grey where missing), colour bar."""
        from matplotlib.cm import ScalarMappable
        from matplotlib.colors import to_rgba

        levels, categories = _positions(pd.Series(self.color_values))
        known = ~np.isnan(levels)
        cmap, norm = _color_scale(levels[known], categories, cmap)
        colors = np.tile(to_rgba(_style.MISSING), (len(y), 1))
        colors[known] = cmap(norm(levels[known]))
        scatter = ax.scatter(
            x, y, s=size, c=colors, alpha=alpha, linewidths=0, zorder=3
        )
        colorbar = figure.colorbar(
            ScalarMappable(norm=norm, cmap=cmap), ax=ax, aspect=30, pad=0.02
        )
        if categories is not None and len(categories) <= _LABELLED_CATEGORIES:
            colorbar.set_ticks(
                np.arange(len(categories)), labels=_style.literals(categories)
            )
        colorbar.set_label(_style.literal(self.color_feature))
        colorbar.ax.tick_params(labelsize=9, length=0)
        colorbar.outline.set_visible(False)
        return scatter, colorbar

    @classmethod
    def from_values(
        cls,
        phi,
        X,
        feature,
        *,
        color="auto",
        feature_names=None,
        output=None,
        ax=None,
        raw_output: str | None = None,
        interactions=None,
    ):
        """Draw a feature's Shapley values against its values.

        Parameters
        ----------
        phi : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Shapley values as an explainer's ``explain`` returns them (columns
            ``(output, feature)`` for several outputs), or an array.
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            The explained rows: ``phi``'s rows (the same index, for
            DataFrames), columns matched by name.
        feature : str
            The feature to draw: one of ``phi``'s features, with a column in
            ``X``.
        color : "auto", str or None, default="auto"
            What colours the points: ``"auto"``, the column of ``X`` that
            interacts most with ``feature`` (see Notes); a column of ``X`` by
            name; or ``None``, one colour.
        feature_names : list of str, default=None
            The names of an array ``phi``'s columns; ``None`` means ``X``'s
            columns, else ``x0, x1, ...``.
        output : object, default=None
            The output to show, by name; ``None`` means the first.
        ax : matplotlib.axes.Axes, default=None
            The axes to draw on; ``None`` creates a figure.
        raw_output : str, default=None
            What the explained output is.
        interactions : pandas.DataFrame, default=None
            Interaction values of the same rows, as an explainer's
            ``explain_interactions`` returns them (for several outputs,
            ``output``'s are used); with ``color="auto"`` they choose the
            colouring feature (see Notes).

        Returns
        -------
        display : DependenceDisplay
            The drawn display.
        """
        _style.require_matplotlib("DependenceDisplay.from_values")
        phi, name = select_output(shapley_frame(phi, feature_names, X), output)
        data = feature_frame(X, phi)
        feature = str(feature)
        check_names([feature], phi.columns, "feature")
        if feature not in data.columns:
            raise ValueError(
                f"X has no column {feature!r}, the feature to draw; X's columns: "
                f"{list(data.columns)}."
            )
        if isinstance(color, str) and color == "auto" and interactions is not None:
            color = strongest_partner(interactions, feature, data, phi, name)
        elif isinstance(color, str) and color == "auto":
            color = strongest_interaction(data[feature], phi[feature], data)
        elif color is not None:
            color = str(color)
            check_names([color], data.columns, "color column")
        display = cls(
            data[feature],
            phi[feature],
            feature=feature,
            color_values=None if color is None else data[color],
            color_feature=color,
            output=name,
            raw_output=raw_output,
        )
        return display.plot(ax)

    @classmethod
    def from_explainer(
        cls, explainer, X, feature, *, color="auto", output=None, ax=None
    ):
        """Explain ``X`` and draw a feature's Shapley values against its values.

        Parameters
        ----------
        explainer : fitted explainer
            A fitted skshapley explainer, such as :class:`~skshapley.TreeExplainer`.
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
            The rows to explain.
        feature : str
            The feature to draw.
        color : "auto", str or None, default="auto"
            What colours the points; see :meth:`from_values`. With
            ``"auto"``, an explainer whose ``supports_interactions`` is true
            also explains the interactions in ``X`` to choose the colouring
            feature.
        output : object, default=None
            The output to show, by name; ``None`` means the first.
        ax : matplotlib.axes.Axes, default=None
            The axes to draw on; ``None`` creates a figure.

        Returns
        -------
        display : DependenceDisplay
            The drawn display.
        """
        _style.require_matplotlib("DependenceDisplay.from_explainer")
        interactions = None
        if (
            isinstance(color, str)
            and color == "auto"
            and getattr(explainer, "supports_interactions", False)
        ):
            interactions = explainer.explain_interactions(
                X, output=first_output(explainer, output)
            )
        return cls.from_values(
            explainer.explain(X),
            X,
            feature,
            color=color,
            ax=ax,
            interactions=interactions,
            **about_output(explainer, output),
        )


def strongest_partner(interactions, feature: str, data, phi, output):
    """The column of ``data`` with the largest mean |interaction| with ``feature``.

    ``interactions`` is an ``explain_interactions`` frame of ``phi``'s rows;
    ``None`` if every candidate's interaction with ``feature`` is 0.
    """
    values, players, _ = interaction_values(interactions, output)
    if values.shape[0] != len(phi) or players != list(phi.columns):
        raise ValueError(
            f"interactions hold {values.shape[0]} rows of features {players}; "
            f"they must be phi's {len(phi)} rows of {list(phi.columns)}."
        )
    strength = np.abs(values[:, players.index(feature), :]).mean(axis=0)
    candidates = [
        j for j, name in enumerate(players) if name != feature and name in data
    ]
    if not candidates or strength[candidates].max() == 0:
        return None
    return players[max(candidates, key=lambda j: strength[j])]


def strongest_interaction(values: pd.Series, shapley: pd.Series, data: pd.DataFrame):
    """The column of ``data`` that seems to interact most with a feature.

    See the Notes of :class:`DependenceDisplay`; ``None`` if no column
    correlates with the feature's Shapley values in any window.
    """
    candidates = [name for name in data.columns if name != values.name]
    if not candidates:
        return None
    order = np.argsort(_positions(values)[0], kind="stable")  # NaN last
    phi = shapley.to_numpy(dtype=np.float64)[order]
    other = np.column_stack([_positions(data[name])[0] for name in candidates])[order]
    n = len(phi)
    window = max(n // 10, _MIN_WINDOW)
    score = np.zeros(len(candidates))
    for begin in range(0, n, window):
        score += _window_correlations(
            phi[begin : begin + window], other[begin : begin + window]
        )
    if not (score > 0).any():
        return None
    return candidates[int(np.argmax(score))]


def _window_correlations(phi: np.ndarray, other: np.ndarray) -> np.ndarray:
    """|correlation| of ``phi`` with each column of ``other``, NaN rows left out.

    0 where a column has fewer than 3 values or either side is constant.
    """
    known = ~np.isnan(other)
    count = known.sum(axis=0)
    phi_columns = np.where(known, phi[:, None], 0.0)
    values = np.where(known, other, 0.0)
    with np.errstate(invalid="ignore", divide="ignore"):
        phi_centred = np.where(known, phi_columns - phi_columns.sum(0) / count, 0.0)
        centred = np.where(known, values - values.sum(0) / count, 0.0)
        spread = np.sqrt((phi_centred**2).sum(0) * (centred**2).sum(0))
        correlation = np.abs((phi_centred * centred).sum(0)) / spread
    usable = (count >= 3) & (spread > 0)
    return np.where(usable, correlation, 0.0)


def _color_scale(levels: np.ndarray, categories, cmap):
    """The colour map and norm of colour levels: one colour per category, or a
    gradient between the levels' 5th and 95th percentiles."""
    from matplotlib.colors import BoundaryNorm, ListedColormap, Normalize

    if categories is not None:
        n = max(len(categories), 1)
        colors = cmap(np.linspace(0.0, 1.0, n) if n > 1 else [0.5])
        return ListedColormap(colors), BoundaryNorm(np.arange(n + 1) - 0.5, n)
    low, high = np.percentile(levels, _COLOR_PERCENTILES) if len(levels) else (0, 1)
    if low == high and len(levels):
        low, high = levels.min(), levels.max()
    if low == high:
        low, high = low - 0.5, high + 0.5
    return cmap, Normalize(low, high, clip=True)


def _positions(column: pd.Series) -> tuple[np.ndarray, list | None]:
    """Numbers for a column: its values, or its category codes and categories."""
    values = numeric_values(column)
    if values is not None:
        return values, None
    return codes(column)
