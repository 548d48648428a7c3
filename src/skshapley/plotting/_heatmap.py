"""InteractionDisplay: a heatmap of pairwise Shapley interaction values."""

import numpy as np
import pandas as pd

from . import _style
from ._inputs import first_output, interaction_values, split_top

# Cells are annotated with their values up to this many features.
_ANNOTATE_UP_TO = 12
# The most inches of a new figure's height (its width adds the colour bar
# and the main effects').
_MAX_SIDE = 10.0
_KINDS = ("magnitude", "signed")
# The main effects' column right of the matrix: its gap and width in cells,
# and the share of it the longest bar takes (the rest: its value).
_BARS_GAP = 0.4
_BARS_WIDTH = 2.6
_BAR_SHARE = 0.65
# The colour bar's label, by whether the values are signed.
_COLORBAR_LABELS = {
    False: "mean |Shapley interaction value|",
    True: "Shapley interaction value",
}


class InteractionDisplay:
    """Pairwise Shapley interaction values as a heatmap, main effects apart.

    Cell ``(i, j)`` is the interaction of features ``i`` and ``j`` (in
    shap's convention half the interaction index, so the matrix is
    symmetric). By default (``kind="magnitude"``) it is the mean
    ``|interaction value|`` over the explained rows, on a sequential colour
    scale from 0: a signed mean is often near 0 even for strong
    interactions, positive in some rows and negative in others (over the
    background data itself it is exactly 0). ``kind="signed"`` draws signed
    values on a diverging scale centred on 0 (red positive, blue negative).
    The main effects (shap's diagonal), usually much larger than the
    interactions, are drawn apart, as bars beside the matrix, and the
    diagonal is left blank. Features are ordered by importance, the most
    important first; past ``max_display`` the others are summed into one
    last row and column. Use :meth:`from_explainer` or :meth:`from_values`
    to build one.

    Parameters
    ----------
    interactions : pandas.DataFrame of shape (n_features, n_features)
        The values drawn; index and columns are the feature names, and the
        diagonal holds the main effects.
    kind : {"magnitude", "signed"}, default="magnitude"
        What ``interactions`` holds: magnitudes (non-negative, such as mean
        ``|interaction value|``), drawn on a sequential scale from 0, or
        signed values, drawn on a diverging scale centred on 0.
    colorbar_label : str, default=None
        The colour bar's label; ``None`` means
        ``"mean |Shapley interaction value|"`` for magnitudes and
        ``"Shapley interaction value"`` for signed values.
    output : object, default=None
        The output shown, named in the title; ``None`` when the model has one.
    importance : pandas.Series, default=None
        The features' importance, indexed by name, which orders them;
        ``None`` means the sum of each row of ``|interactions|``.

    Attributes
    ----------
    image_ : matplotlib.image.AxesImage
        The heatmap, features ordered by importance.
    colorbar_ : matplotlib.colorbar.Colorbar
        Its colour bar.
    texts_ : list of matplotlib.text.Text
        The values written in the cells, row by row (empty above
        12 features drawn or with ``annotate=False``).
    labels_ : list of str
        The rows' (and columns') labels, most important first; the last is
        ``"n other features"`` when features were summed.
    main_effect_bars_ : matplotlib.container.BarContainer or None
        The bars of the main effects, top row first (``None`` with
        ``main_effects=False``).
    ax_ : matplotlib.axes.Axes
        The axes drawn on.
    figure_ : matplotlib.figure.Figure
        The figure of ``ax_``.

    See Also
    --------
    skshapley.games.product_interactions : Interaction values of product games.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> import numpy as np
    >>> from skshapley.plotting import InteractionDisplay
    >>> interactions = np.array([[2.0, 0.5, 0.0], [0.5, -1.0, -0.3], [0.0, -0.3, 0.2]])
    >>> display = InteractionDisplay.from_values(
    ...     interactions, feature_names=["age", "bmi", "bp"], kind="signed"
    ... )
    >>> display.labels_
    ['age', 'bmi', 'bp']
    >>> display.image_.get_clim()
    (-0.5, 0.5)
    >>> plt.close(display.figure_)
    """

    def __init__(
        self,
        interactions,
        *,
        kind: str = "magnitude",
        colorbar_label: str | None = None,
        output=None,
        importance=None,
    ):
        self.interactions = interactions
        self.kind = kind
        self.colorbar_label = colorbar_label
        self.output = output
        self.importance = importance

    def plot(
        self,
        ax=None,
        *,
        max_display: int = 10,
        cmap=None,
        annotate: bool = True,
        diagonal: bool = False,
        main_effects: bool = True,
    ):
        """Draw the heatmap.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, default=None
            The axes to draw on; ``None`` creates a figure, whose size grows
            with the number of features drawn (up to 10 inches high).
        max_display : int, default=10
            The most rows (and columns) drawn. With more features, the least
            important are summed into one last row and column, ``"n other
            features"``, as the importance bars do.
        cmap : str or matplotlib.colors.Colormap, default=None
            The colour map; ``None`` means ``"Purples"`` for magnitudes and
            ``"RdBu_r"`` (diverging, centred on 0) for signed values.
        annotate : bool, default=True
            Write the values in the cells (up to 12 features drawn), all
            with the same number of decimals.
        diagonal : bool, default=False
            Draw the main effects on the diagonal too, on the matrix's
            colour scale (which they then usually set). ``False`` leaves the
            diagonal blank (grey) and scales the colours to the interactions.
        main_effects : bool, default=True
            Draw the main effects as bars beside the matrix, on their own
            axis.

        Returns
        -------
        display : InteractionDisplay
            This display, with ``ax_``, ``figure_`` and the artists set.
        """
        from matplotlib import colormaps
        from matplotlib.colors import Normalize

        signed = _check_kind(self.kind)
        frame = self.interactions
        values = frame.to_numpy(dtype=np.float64)
        if not signed and (values < 0).any():
            raise ValueError(
                "interactions has negative values, and kind='magnitude' draws "
                "magnitudes; use kind='signed'."
            )
        names = [str(name) for name in frame.columns]
        importance = (
            np.abs(values).sum(axis=1)
            if self.importance is None
            else pd.Series(self.importance).reindex(names).to_numpy(dtype=np.float64)
        )
        order = [names[j] for j in np.argsort(-importance, kind="stable")]
        shown, folded = split_top(order, max_display)
        values, labels = _folded(values, names, shown, folded)
        n_features = len(labels)
        side = min(3.0 + 0.5 * n_features, _MAX_SIDE)
        # Room for the colour bar, and for the main effects' column.
        width = side + 1.6
        if main_effects:
            width += min((_BARS_GAP + _BARS_WIDTH) * side / n_features, 3.0)
        ax, figure = _style.prepare_axes(ax, "InteractionDisplay.plot", (width, side))
        hidden = np.zeros_like(values, dtype=bool) if diagonal else np.eye(n_features)
        shown_values = np.ma.masked_array(values, hidden.astype(bool))
        limit = float(np.abs(shown_values).max(fill_value=0.0)) or 1.0
        if cmap is None:
            cmap = "RdBu_r" if signed else "Purples"
        cmap = colormaps.get_cmap(cmap).with_extremes(bad=_style.BLANK)
        norm = Normalize(-limit if signed else 0.0, limit)
        self.image_ = ax.imshow(shown_values, cmap=cmap, norm=norm, aspect="auto")
        ax.set_xticks(
            np.arange(n_features),
            _style.literals(labels),
            rotation=45,
            ha="right",
            rotation_mode="anchor",
        )
        ax.set_yticks(np.arange(n_features), _style.literals(labels))
        ax.tick_params(length=0, labelsize=10)
        ax.spines[:].set_visible(False)
        # White lines between the cells.
        ax.set_xticks(np.arange(n_features + 1) - 0.5, minor=True)
        ax.set_yticks(np.arange(n_features + 1) - 0.5, minor=True)
        ax.grid(which="minor", color="white", linewidth=1.5)
        ax.tick_params(which="minor", length=0)
        self.texts_ = []
        if annotate and n_features <= _ANNOTATE_UP_TO:
            self.texts_ = _annotate(ax, values, hidden, limit)
        self.main_effect_bars_ = None
        if main_effects:
            self.main_effect_bars_ = _main_effect_bars(ax, np.diag(values), signed)
        self.colorbar_ = figure.colorbar(self.image_, ax=ax, aspect=30, pad=0.03)
        label = self.colorbar_label or _COLORBAR_LABELS[signed]
        self.colorbar_.set_label(_style.literal(label))
        self.colorbar_.outline.set_visible(False)
        self.colorbar_.ax.tick_params(labelsize=9)
        _style.set_output_title(ax, self.output)
        _style.fit_texts(ax, colorbar=self.colorbar_)
        _fit_cells(ax, self.texts_)
        self.labels_ = labels
        self.ax_, self.figure_ = ax, figure
        return self

    @classmethod
    def from_values(
        cls,
        interactions,
        *,
        feature_names=None,
        output=None,
        ax=None,
        kind: str = "magnitude",
        max_display: int = 10,
        diagonal: bool = False,
        main_effects: bool = True,
    ):
        """Draw interaction values: their mean magnitude over rows, by default.

        Parameters
        ----------
        interactions : array-like or pandas.DataFrame
            Of shape (n_features, n_features) (one matrix) or (n_samples,
            n_features, n_features) (one per row): interaction values, the
            main effects on the diagonal (a DataFrame's index and columns
            name the features); or the DataFrame an explainer's
            ``explain_interactions`` returns (rows ``(row, feature)``).
        feature_names : list of str, default=None
            The features' names; ``None`` means the DataFrame's columns, else
            ``x0, x1, ...``.
        output : object, default=None
            For an ``explain_interactions`` frame of several outputs: the
            output to show, by name (``None`` means the first). Otherwise
            the output the values are of, named in the title.
        ax : matplotlib.axes.Axes, default=None
            The axes to draw on; ``None`` creates a figure.
        kind : {"magnitude", "signed"}, default="magnitude"
            ``"magnitude"`` draws the mean ``|value|`` over the rows (of one
            matrix, its ``|values|``) on a sequential scale from 0;
            ``"signed"`` the mean value on a diverging scale centred on 0.
            Either way the features are ordered by the mean over the rows of
            the sum of their row of ``|values|`` (main effect and
            interactions).
        max_display : int, default=10
            The most rows and columns drawn; see :meth:`plot`.
        diagonal : bool, default=False
            Draw the main effects on the diagonal too; see :meth:`plot`.
        main_effects : bool, default=True
            Draw the main effects as bars beside the matrix.

        Returns
        -------
        display : InteractionDisplay
            The drawn display.
        """
        _style.require_matplotlib("InteractionDisplay.from_values")
        signed = _check_kind(kind)
        if isinstance(interactions, pd.DataFrame) and interactions.index.nlevels == 2:
            interactions, names, name = interaction_values(interactions, output)
            output = output if name is None else name  # a one-output frame
            feature_names = names if feature_names is None else feature_names
        if isinstance(interactions, pd.DataFrame) and feature_names is None:
            feature_names = list(interactions.columns)
        try:
            values = np.asarray(interactions, dtype=np.float64)
        except (TypeError, ValueError) as exc:
            raise ValueError("interactions must be an array of numbers.") from exc
        if values.ndim not in (2, 3) or values.shape[-1] != values.shape[-2]:
            raise ValueError(
                "interactions must have shape (n_features, n_features) or "
                f"(n_samples, n_features, n_features); got {values.shape}."
            )
        if values.size == 0:
            raise ValueError(f"interactions is empty: shape {values.shape}.")
        if not np.isfinite(values).all():
            raise ValueError("interactions contains NaN or infinity.")
        label = "Shapley interaction value" if signed else "|Shapley interaction value|"
        if values.ndim == 3:
            label = f"mean {label}"
        values = values.reshape(-1, *values.shape[-2:])
        summary = values.mean(axis=0) if signed else np.abs(values).mean(axis=0)
        n_features = summary.shape[0]
        if feature_names is None:
            feature_names = [f"x{j}" for j in range(n_features)]
        names = [str(name) for name in feature_names]
        if len(names) != n_features:
            raise ValueError(
                f"feature_names has {len(names)} names for {n_features} features."
            )
        importance = pd.Series(np.abs(values).sum(axis=2).mean(axis=0), index=names)
        display = cls(
            pd.DataFrame(summary, index=names, columns=names),
            kind=kind,
            colorbar_label=label,
            output=output,
            importance=importance,
        )
        return display.plot(
            ax, max_display=max_display, diagonal=diagonal, main_effects=main_effects
        )

    @classmethod
    def from_explainer(
        cls,
        explainer,
        X,
        *,
        output=None,
        ax=None,
        kind: str = "magnitude",
        max_display: int = 10,
        diagonal: bool = False,
        main_effects: bool = True,
    ):
        """Explain the interactions in ``X`` and draw their mean magnitude.

        Parameters
        ----------
        explainer : fitted explainer
            A fitted explainer whose ``supports_interactions`` is true, such
            as :class:`~skshapley.TreeExplainer`; its
            ``explain_interactions(X)`` gives the values.
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
            The rows to explain.
        output : object, default=None
            For a model with several outputs: the output to show, by name;
            ``None`` means the first.
        ax : matplotlib.axes.Axes, default=None
            The axes to draw on; ``None`` creates a figure.
        kind : {"magnitude", "signed"}, default="magnitude"
            Mean ``|value|`` over the rows, or the signed mean; see
            :meth:`from_values`.
        max_display : int, default=10
            The most rows and columns drawn; see :meth:`plot`.
        diagonal : bool, default=False
            Draw the main effects on the diagonal too; see :meth:`plot`.
        main_effects : bool, default=True
            Draw the main effects as bars beside the matrix.

        Returns
        -------
        display : InteractionDisplay
            The drawn display: cell ``(i, j)`` is the mean over the rows of
            ``|interaction value|`` (shap's convention: the diagonal holds
            the main effects, the other cells half the interaction index).
        """
        _style.require_matplotlib("InteractionDisplay.from_explainer")
        output = first_output(explainer, output)
        frame = explainer.explain_interactions(X, output=output)
        return cls.from_values(
            frame,
            output=output,
            ax=ax,
            kind=kind,
            max_display=max_display,
            diagonal=diagonal,
            main_effects=main_effects,
        )


def _check_kind(kind) -> bool:
    """Whether ``kind`` is ``"signed"``, once checked."""
    if kind not in _KINDS:
        raise ValueError(f"kind must be one of {list(_KINDS)}; got {kind!r}.")
    return kind == "signed"


def _folded(values: np.ndarray, names: list, shown: list, folded: list):
    """The matrix of the ``shown`` features, the ``folded`` summed into one.

    Returns the matrix, in the order of ``shown`` (then the folded
    features' row and column, whose cells are the sums of theirs), and the
    rows' labels.
    """
    groups = [[names.index(name)] for name in shown]
    labels = list(shown)
    if folded:
        groups.append([names.index(name) for name in folded])
        labels.append(_style.other_label(len(folded)))
    # Each row of ``summing`` adds the features of one group.
    summing = np.zeros((len(groups), len(names)))
    for row, members in enumerate(groups):
        summing[row, members] = 1.0
    return summing @ values @ summing.T, labels


def _annotate(ax, values: np.ndarray, hidden: np.ndarray, limit: float) -> list:
    """Each drawn cell's value, all with the same decimals."""
    cells = [(i, j) for (i, j), blank in np.ndenumerate(hidden) if not blank]
    texts = _style.format_shared(
        [values[cell] for cell in cells], significant=2, scale=limit
    )
    return [
        ax.text(
            j,
            i,
            text,
            ha="center",
            va="center",
            fontsize=9,
            color="white" if abs(values[i, j]) > 0.6 * limit else "#222222",
        )
        for (i, j), text in zip(cells, texts, strict=True)
    ]


def _main_effect_bars(ax, effects: np.ndarray, signed: bool):
    """The main effects as bars right of the matrix, on its rows, with values.

    In the matrix's axes (so that any layout keeps them together), in a
    column of :data:`_BARS_WIDTH` cells after a gap; their lengths are on a
    scale of their own, the largest ``|effect|`` taking :data:`_BAR_SHARE`
    of the column (of each half, for signed effects) and the rest left to
    the values written beside them. The column's x tick names it.
    """
    n_features = len(effects)
    start = n_features - 0.5 + _BARS_GAP
    largest = float(np.abs(effects).max()) or 1.0
    if signed:
        zero, reach = start + _BARS_WIDTH / 2, _BAR_SHARE * _BARS_WIDTH / 2
        colors = np.where(effects >= 0, _style.POSITIVE, _style.NEGATIVE)
    else:
        zero, reach = start, _BAR_SHARE * _BARS_WIDTH
        colors = _style.NEUTRAL
    lengths = effects / largest * reach
    y = np.arange(n_features)
    bars = ax.barh(y, lengths, left=zero, height=0.7, color=colors)
    ax.plot([zero, zero], [-0.5, n_features - 0.5], color=_style.GUIDE, lw=0.8)
    texts = _style.format_shared(effects, signed=signed)
    for row, (length, text) in enumerate(zip(lengths, texts, strict=True)):
        ax.annotate(
            text,
            (zero + length, row),
            xytext=(3 if length >= 0 else -3, 0),
            textcoords="offset points",
            ha="left" if length >= 0 else "right",
            va="center",
            fontsize=8,
            color=_style.MUTED,
        )
    ax.set_xlim(-0.5, start + _BARS_WIDTH)
    ticks = [*ax.get_xticks(), zero + reach / 2]
    labels = [*(text.get_text() for text in ax.get_xticklabels()), "main effect"]
    ax.set_xticks(ticks, labels, rotation=45, ha="right", rotation_mode="anchor")
    return bars


def _fit_cells(ax, texts) -> None:
    """Smaller cell values if the widest would not fit in its cell."""
    if not texts:
        return
    low, high = ax.get_xlim()  # the matrix and the main effects' column
    cell = ax.get_window_extent().width / abs(high - low)
    widest = max(text.get_window_extent().width for text in texts)
    if widest > 0.9 * cell:
        size = texts[0].get_fontsize() * 0.9 * cell / widest
        for text in texts:
            text.set_fontsize(size)
