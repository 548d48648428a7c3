"""WaterfallDisplay: one prediction, from the base value to f(x)."""

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

# Bar height (rows are 1 apart) and arrow heads' length, as a fraction of
# the x range.
_BAR_HEIGHT = 0.62
_HEAD = 0.018
# The most of the figure's width the rows' labels may take.
_LABEL_SHARE = 0.5
# The most of the axes' width a value label may take (longer ones overflow).
_MAX_TEXT_SHARE = 0.75
# The most of it the widest texts on the left and on the right take together.
_MAX_TEXT_SHARES = 0.9


class WaterfallDisplay:
    """How one prediction is built: from the base value, feature by feature.

    The bottom bar starts at the base value ``v(∅)``, the output with no
    feature known (for trees the cover-weighted mean output, for kernel
    models the sum of the dual weights and the intercept); each bar adds one
    feature's Shapley value (red arrows
    raise the output, blue ones lower it), the largest ``|φ|`` on top, so that
    the top bar ends at the prediction ``f(x)`` (efficiency). Rows are
    labelled ``feature = value``. Use :meth:`from_explainer` or
    :meth:`from_values` to build one.

    Parameters
    ----------
    shapley_values : pandas.Series of shape (n_features,)
        One row's Shapley values of one output, indexed by feature.
    base_value : float
        The output's base value (an explainer's ``expected_value_``).
    feature_values : pandas.Series, default=None
        The row's feature values, indexed by feature, for the labels;
        features it does not list are labelled by name only.
    output : object, default=None
        The output shown, named in the title; ``None`` when the model has one.
    raw_output : str, default=None
        What the explained output is (an explainer's ``raw_output_``), for
        the axis label.

    Attributes
    ----------
    arrows_ : list of matplotlib.patches.Polygon
        One arrow per row, top row first; each spans from the running total
        before its feature to the total after it.
    labels_ : list of str
        The rows' labels, top row first; the last is ``"n other features"``
        when features were folded.
    prediction_ : float
        ``f(x)``: the base value plus the sum of the Shapley values.
    ax_ : matplotlib.axes.Axes
        The axes drawn on.
    figure_ : matplotlib.figure.Figure
        The figure of ``ax_``.

    See Also
    --------
    ImportanceDisplay : The features' importance over many rows.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.ensemble import GradientBoostingRegressor
    >>> from skshapley import TreeExplainer
    >>> from skshapley.plotting import WaterfallDisplay
    >>> X, y = load_diabetes(return_X_y=True, as_frame=True)
    >>> model = GradientBoostingRegressor(n_estimators=20, random_state=0)
    >>> explainer = TreeExplainer(model.fit(X, y)).fit()
    >>> display = WaterfallDisplay.from_explainer(explainer, X, 0, max_display=4)
    >>> display.labels_[-1]
    '7 other features'
    >>> bool(abs(display.prediction_ - model.predict(X.iloc[[0]])[0]) < 1e-8)
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

    def plot(self, ax=None, *, max_display: int = 10):
        """Draw the waterfall.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, default=None
            The axes to draw on; ``None`` creates a figure.
        max_display : int, default=10
            The most rows drawn. With more features, those of smallest ``|φ|``
            are folded into one bottom row, ``"n other features"``, of their
            summed Shapley values.

        Returns
        -------
        display : WaterfallDisplay
            This display, with ``ax_``, ``figure_`` and the artists set.
        """
        phi = pd.Series(self.shapley_values, dtype=np.float64)
        order = np.argsort(-np.abs(phi.to_numpy()), kind="stable")
        shown, folded = split_top(list(phi.index[order]), max_display)
        values = [float(phi[name]) for name in shown]
        labels = [self._label(name) for name in shown]
        if folded:
            values.append(float(phi[folded].sum()))
            labels.append(_style.other_label(len(folded)))
        base = float(self.base_value)
        n_rows = len(values)
        # Running totals from the bottom row (base value) to the top (f(x)).
        ends = base + np.cumsum(values[::-1])
        starts = np.r_[base, ends[:-1]]
        prediction = float(ends[-1])
        ax, figure = _style.prepare_axes(
            ax, "WaterfallDisplay.plot", _style.rows_size(n_rows + 1)
        )
        low = min(base, float(ends.min()), float(starts.min()))
        high = max(base, float(ends.max()), float(starts.max()))
        span = high - low or max(abs(base), 1.0)
        scale = max(abs(low), abs(high))
        arrows, texts = _cascade(ax, starts, ends, head=_HEAD * span, scale=scale)
        # The base value under the bottom bar, f(x) over the top one.
        bottom, top = -1.1, n_rows - 0.1
        middle = (low + high) / 2
        base_text = f"base value = {_style.format_value(base, 4, scale=scale)}"
        prediction_text = f"f(x) = {_style.format_value(prediction, 4, scale=scale)}"
        half = _BAR_HEIGHT / 2
        texts += [
            _mark(ax, base, (bottom, -half), -0.8, base_text, right=base <= middle),
            _mark(
                ax,
                prediction,
                (n_rows - 1 + half, top),
                n_rows - 0.4,
                prediction_text,
                right=prediction <= middle,
            ),
        ]
        ax.set_ylim(bottom, top)
        ax.set_yticks(np.arange(n_rows), _style.literals(labels[::-1]))
        ax.set_xlabel(_style.output_label(self.raw_output).capitalize())
        _style.style_axes(ax)
        _style.set_output_title(ax, self.output)
        # Laid out with the rows' labels first: the texts' room is measured
        # against the axes' final width. The labels may be wider than other
        # displays' (names and values), so that values survive two lines.
        _style.fit_texts(ax, label_share=_LABEL_SHARE)
        # Twice: the new limits' tick labels move the axes a little.
        for _ in range(2):
            _room_for_texts(ax, texts, low, low + span)
            figure.draw_without_rendering()
        _keep_inside(ax, texts)
        self.arrows_ = arrows[::-1]
        self.labels_ = labels
        self.prediction_ = prediction
        self.ax_, self.figure_ = ax, figure
        return self

    def _label(self, name) -> str:
        """``feature = value``, or the name alone without a value."""
        row = self.feature_values
        if row is None or name not in row.index:
            return str(name)
        return f"{name} = {_style.format_value(row[name])}"

    @classmethod
    def from_values(
        cls,
        phi_row,
        base_value,
        *,
        x_row=None,
        feature_names=None,
        output=None,
        max_display: int = 10,
        ax=None,
        raw_output: str | None = None,
    ):
        """Draw the waterfall of one row's Shapley values.

        Parameters
        ----------
        phi_row : pandas.Series, pandas.DataFrame or array-like of shape (n_features,)
            One row of Shapley values: a row of an explainer's ``explain``
            (``phi.loc[label]``, indexed ``(output, feature)`` for several
            outputs), or an array.
        base_value : float or pandas.Series
            The base value: an explainer's ``expected_value_`` (a Series by
            output for several outputs).
        x_row : pandas.Series, one-row pandas.DataFrame or array-like, default=None
            The row's feature values, for the labels ``feature = value``; an
            array is in ``phi_row``'s feature order.
        feature_names : list of str, default=None
            The names of an array ``phi_row``'s entries; ``None`` means
            ``x_row``'s index, else ``x0, x1, ...``.
        output : object, default=None
            The output to show, by name; ``None`` means the first.
        max_display : int, default=10
            The most rows drawn; see :meth:`plot`.
        ax : matplotlib.axes.Axes, default=None
            The axes to draw on; ``None`` creates a figure.
        raw_output : str, default=None
            What the explained output is, for the axis label.

        Returns
        -------
        display : WaterfallDisplay
            The drawn display.
        """
        _style.require_matplotlib("WaterfallDisplay.from_values")
        x_row = _one_row(x_row, "x_row")
        phi = _row_frame(_one_row(phi_row, "phi_row"), feature_names, x_row)
        outputs = outputs_of(phi.columns)
        phi, name = select_output(phi, output)
        values = phi.iloc[0]
        if x_row is not None:
            x_row = _row_values(x_row, phi)
        base = base_value_of(base_value, name, outputs)
        display = cls(
            values, base, feature_values=x_row, output=name, raw_output=raw_output
        )
        return display.plot(ax, max_display=max_display)

    @classmethod
    def from_explainer(
        cls, explainer, X, row, *, output=None, max_display: int = 10, ax=None
    ):
        """Explain one row of ``X`` and draw its waterfall.

        Parameters
        ----------
        explainer : fitted explainer
            A fitted skshapley explainer, such as :class:`~skshapley.TreeExplainer`.
        X : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Rows, one of which is explained.
        row : object
            The row to explain: an index label of a DataFrame ``X``, or a
            position in an array.
        output : object, default=None
            The output to show, by name; ``None`` means the first.
        max_display : int, default=10
            The most rows drawn; see :meth:`plot`.
        ax : matplotlib.axes.Axes, default=None
            The axes to draw on; ``None`` creates a figure.

        Returns
        -------
        display : WaterfallDisplay
            The drawn display.
        """
        _style.require_matplotlib("WaterfallDisplay.from_explainer")
        if isinstance(X, pd.DataFrame):
            if row not in X.index:
                raise ValueError(f"row {row!r} is not a label of X's index.")
            x = X.loc[[row]]
            if len(x) != 1:
                raise ValueError(f"X's index has the label {row!r} {len(x)} times.")
        else:
            array = np.asarray(X.toarray() if hasattr(X, "toarray") else X)
            if array.ndim != 2:
                raise ValueError(f"X must be 2-D; got shape {array.shape}.")
            if not isinstance(row, int | np.integer) or not -len(array) <= row < len(
                array
            ):
                raise ValueError(
                    f"row must be a position in X (0..{len(array) - 1}) when X is "
                    f"an array; got {row!r}."
                )
            x = array[[row]]
        phi = explainer.explain(x)
        if isinstance(x, pd.DataFrame):
            x_row = x.iloc[0]
        else:  # the model's own feature names, if the row has one value each
            names = list(getattr(explainer, "feature_names_in_", []))
            x_row = pd.Series(x[0], index=names) if len(names) == x.shape[1] else None
        return cls.from_values(
            phi.iloc[0],
            explainer.expected_value_,
            x_row=x_row,
            max_display=max_display,
            ax=ax,
            **about_output(explainer, output),
        )


def _one_row(row, name: str):
    """A one-row DataFrame as a Series; anything else as it is."""
    if isinstance(row, pd.DataFrame):
        if len(row) != 1:
            raise ValueError(
                f"{name} must be one row; got a DataFrame of {len(row)} rows "
                "(select one with .loc[label])."
            )
        return row.iloc[0]
    return row


def _row_frame(phi_row, feature_names, x_row) -> pd.DataFrame:
    """One row of Shapley values as a one-row DataFrame, checked."""
    if isinstance(phi_row, pd.Series):
        if feature_names is not None:
            raise ValueError(
                "feature_names is for an array phi_row; a Series' index already "
                "names its features."
            )
        return shapley_frame(phi_row.to_frame().T)
    phi_row = np.asarray(phi_row)
    if phi_row.ndim != 1:
        raise ValueError(
            f"phi_row must be one row of Shapley values; got shape {phi_row.shape}."
        )
    named_by_x = isinstance(x_row, pd.Series) and len(x_row) == len(phi_row)
    if feature_names is None and named_by_x:
        feature_names = list(x_row.index)
    return shapley_frame(phi_row[None, :], feature_names)


def _row_values(x_row, phi: pd.DataFrame) -> pd.Series:
    """The row's feature values indexed as ``phi``'s features where they match."""
    if isinstance(x_row, pd.Series):
        frame = x_row.to_frame().T.set_axis(phi.index, axis=0)
        return feature_frame(frame, phi).iloc[0]
    x_row = np.asarray(x_row, dtype=object)
    if x_row.shape != (phi.shape[1],):
        raise ValueError(
            f"x_row has shape {x_row.shape}; an array x_row must hold one value "
            f"per feature, {phi.shape[1]}."
        )
    return pd.Series(x_row, index=phi.columns)


def _arrow(ax, y: float, start: float, end: float, head: float):
    """A horizontal arrow from ``start`` to ``end`` at height ``y``."""
    from matplotlib.patches import Polygon

    direction = 1.0 if end >= start else -1.0
    neck = end - direction * min(head, abs(end - start))
    half = _BAR_HEIGHT / 2
    points = [
        (start, y - half),
        (neck, y - half),
        (end, y),
        (neck, y + half),
        (start, y + half),
    ]
    color = _style.POSITIVE if direction > 0 else _style.NEGATIVE
    patch = Polygon(points, closed=True, facecolor=color, edgecolor="none", zorder=3)
    ax.add_patch(patch)
    return patch


def _cascade(ax, starts, ends, *, head: float, scale: float) -> tuple[list, list]:
    """Arrows from each start to its end, bottom row first, with their values.

    Dashed connectors join each arrow's end to the next one's start; the
    values are written with one precision, those within
    :data:`_style.ZERO_SHARE` of ``scale`` as ``+0``.
    """
    arrows, texts = [], []
    # One precision for all the arrows (+0.10, −0.25; not +0.1, −0.25).
    labels = _style.format_shared(ends - starts, signed=True, scale=scale)
    for y, (start, end, text) in enumerate(zip(starts, ends, labels, strict=True)):
        up = end >= start
        arrows.append(_arrow(ax, y, start, end, head))
        color = _style.POSITIVE if up else _style.NEGATIVE
        texts.append(_beside(ax, end, y, text, right=up, fontsize=9, color=color))
        if y + 1 < len(starts):
            half = _BAR_HEIGHT / 2
            _dashed(ax, end, y + half, y + 1 - half, (2, 2))
    return arrows, texts


def _mark(ax, x: float, span: tuple, y_text: float, text: str, *, right: bool):
    """A dashed line at ``x`` over ``span`` of heights, labelled at ``y_text``."""
    _dashed(ax, x, *span, (4, 3))
    return _beside(ax, x, y_text, text, right=right, fontsize=9, color="#222222")


def _beside(ax, x: float, y: float, text: str, *, right: bool, **style):
    """``text`` just right (or left) of the point ``(x, y)``."""
    return ax.annotate(
        text,
        (x, y),
        xytext=(5 if right else -5, 0),
        textcoords="offset points",
        ha="left" if right else "right",
        va="center",
        **style,
    )


def _dashed(ax, x: float, y0: float, y1: float, dashes: tuple) -> None:
    """A thin grey dashed vertical line from ``y0`` to ``y1``."""
    ax.plot(
        [x, x],
        [y0, y1],
        color=_style.GUIDE,
        linewidth=0.8,
        linestyle=(0, dashes),
        zorder=1,
    )


def _room_for_texts(ax, texts, low: float, high: float) -> None:
    """The narrowest x limits around ``[low, high]`` that hold the texts.

    Each text sits beside its anchor and takes a fixed share of the axes'
    width (measured now, plus a margin for later layout changes); the range
    ``R`` of the limits is found by bisection, as the smallest for which
    every text fits.
    """
    width = max(ax.get_window_extent().width, 1.0)
    offset = 5 * ax.figure.dpi / 72  # the texts' offset from their anchors
    needs = []
    for text in texts:
        share = (text.get_window_extent().width + offset) / width
        leftward = text.get_horizontalalignment() == "right"
        needs.append((text.xy[0], min(1.2 * share + 0.02, _MAX_TEXT_SHARE), leftward))
    # The widest text on each side; together they leave the data at least
    # 1 - _MAX_TEXT_SHARES of the width (texts then cut short are moved in).
    sides = [max([0.0] + [sh for _, sh, lw in needs if lw == side]) for side in (1, 0)]
    scale = min(1.0, _MAX_TEXT_SHARES / max(sum(sides), 1e-12))
    needs = [(x, share * scale, leftward) for x, share, leftward in needs]

    def limits(span: float) -> tuple[float, float]:
        left = min([low] + [x - share * span for x, share, lw in needs if lw])
        right = max([high] + [x + share * span for x, share, lw in needs if not lw])
        return left, right

    fits, too_small = (high - low) / (1.0 - scale * sum(sides)), high - low
    for _ in range(40):
        middle = (fits + too_small) / 2
        left, right = limits(middle)
        if right - left <= middle:
            fits = middle
        else:
            too_small = middle
    left, right = limits(fits)
    spare = (fits - (right - left)) / 2
    ax.set_xlim(left - spare, right + spare)


def _keep_inside(ax, texts) -> None:
    """Move texts that still reach out of the axes back in, along their row.

    :func:`_room_for_texts` gives each text at most :data:`_MAX_TEXT_SHARE`
    of the width; a longer one (a narrow figure) would cross the frame into
    the rows' labels or out of the figure.
    """
    box = ax.get_window_extent()
    to_points = 72 / ax.figure.dpi
    for text in texts:
        extent = text.get_window_extent()
        shift = max(box.x0 - extent.x0, 0.0) - max(extent.x1 - box.x1, 0.0)
        if shift:
            x, y = text.xyann
            text.xyann = (x + shift * to_points, y)
