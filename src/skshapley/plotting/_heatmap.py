"""InteractionDisplay: a heatmap of pairwise Shapley interaction values."""

import numpy as np
import pandas as pd

from . import _style
from ._inputs import first_output, interaction_values

# Cells are annotated with their values up to this many features.
_ANNOTATE_UP_TO = 12


class InteractionDisplay:
    """Pairwise Shapley interaction values as a heatmap.

    Cell ``(i, j)`` is the interaction of features ``i`` and ``j``: red
    where it is positive, blue where negative, white at 0 (the colour scale
    is symmetric about 0). With shap's convention the diagonal holds the
    main effects. Use :meth:`from_explainer` or :meth:`from_values` to
    build one.

    Parameters
    ----------
    interactions : pandas.DataFrame of shape (n_features, n_features)
        The interaction values; index and columns are the feature names.
    colorbar_label : str, default="Shapley interaction value"
        The colour bar's label.
    output : object, default=None
        The output shown, named in the title; ``None`` when the model has one.

    Attributes
    ----------
    image_ : matplotlib.image.AxesImage
        The heatmap.
    colorbar_ : matplotlib.colorbar.Colorbar
        Its colour bar.
    texts_ : list of matplotlib.text.Text
        The values written in the cells, row by row (empty above
        12 features or with ``annotate=False``).
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
    ...     interactions, feature_names=["age", "bmi", "bp"]
    ... )
    >>> display.image_.get_array().shape
    (3, 3)
    >>> plt.close(display.figure_)
    """

    def __init__(
        self, interactions, *, colorbar_label="Shapley interaction value", output=None
    ):
        self.interactions = interactions
        self.colorbar_label = colorbar_label
        self.output = output

    def plot(
        self, ax=None, *, cmap="RdBu_r", annotate: bool = True, diagonal: bool = True
    ):
        """Draw the heatmap.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, default=None
            The axes to draw on; ``None`` creates a figure.
        cmap : str or matplotlib.colors.Colormap, default="RdBu_r"
            A diverging colour map, centred on 0.
        annotate : bool, default=True
            Write the values in the cells (up to 12 features).
        diagonal : bool, default=True
            Draw the diagonal. ``False`` leaves its cells blank (grey) and
            scales the colours to the other cells: main effects, often much
            larger than interactions, then do not wash them out.

        Returns
        -------
        display : InteractionDisplay
            This display, with ``ax_``, ``figure_`` and the artists set.
        """
        from matplotlib import colormaps

        frame = self.interactions
        values = frame.to_numpy(dtype=np.float64)
        n_features = len(values)
        side = min(3.0 + 0.45 * n_features, 14.0)
        ax, figure = _style.prepare_axes(
            ax, "InteractionDisplay.plot", (side + 1.6, side)
        )
        hidden = np.zeros_like(values, dtype=bool) if diagonal else np.eye(n_features)
        shown = np.ma.masked_array(values, hidden.astype(bool))
        limit = float(np.abs(shown).max(fill_value=0.0)) or 1.0
        cmap = colormaps.get_cmap(cmap).with_extremes(bad=_style.BLANK)
        self.image_ = ax.imshow(
            shown, cmap=cmap, vmin=-limit, vmax=limit, aspect="auto"
        )
        names = _style.literals(frame.columns)
        ax.set_xticks(
            np.arange(n_features),
            names,
            rotation=45,
            ha="right",
            rotation_mode="anchor",
        )
        ax.set_yticks(np.arange(n_features), _style.literals(frame.index))
        ax.tick_params(length=0, labelsize=10)
        ax.spines[:].set_visible(False)
        # White lines between the cells.
        ax.set_xticks(np.arange(n_features + 1) - 0.5, minor=True)
        ax.set_yticks(np.arange(n_features + 1) - 0.5, minor=True)
        ax.grid(which="minor", color="white", linewidth=1.5)
        ax.tick_params(which="minor", length=0)
        self.texts_ = []
        if annotate and n_features <= _ANNOTATE_UP_TO:
            for (i, j), value in np.ndenumerate(values):
                if hidden[i, j]:
                    continue
                dark = abs(value) > 0.6 * limit
                self.texts_.append(
                    ax.text(
                        j,
                        i,
                        _style.minus(f"{_style.snap(value, limit) + 0.0:.2g}"),
                        ha="center",
                        va="center",
                        fontsize=9,
                        color="white" if dark else "#222222",
                    )
                )
        self.colorbar_ = figure.colorbar(self.image_, ax=ax, aspect=30, pad=0.03)
        self.colorbar_.set_label(_style.literal(self.colorbar_label))
        self.colorbar_.outline.set_visible(False)
        self.colorbar_.ax.tick_params(labelsize=9)
        _style.set_output_title(ax, self.output)
        _style.fit_texts(ax, colorbar=self.colorbar_)
        _fit_cells(ax, self.texts_, n_features)
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
        diagonal: bool = True,
    ):
        """Draw a matrix of interaction values, or their mean magnitude over rows.

        Parameters
        ----------
        interactions : array-like or pandas.DataFrame
            Of shape (n_features, n_features) or (n_samples, n_features,
            n_features): interaction values (a DataFrame's index and columns
            name the features); or the DataFrame an explainer's
            ``explain_interactions`` returns (rows ``(row, feature)``). For
            one matrix per sample, the mean absolute value over the samples
            is drawn.
        feature_names : list of str, default=None
            The features' names; ``None`` means the DataFrame's columns, else
            ``x0, x1, ...``.
        output : object, default=None
            For an ``explain_interactions`` frame of several outputs: the
            output to show, by name (``None`` means the first). Otherwise
            the output the values are of, named in the title.
        ax : matplotlib.axes.Axes, default=None
            The axes to draw on; ``None`` creates a figure.
        diagonal : bool, default=True
            Draw the diagonal (the main effects); see :meth:`plot`.

        Returns
        -------
        display : InteractionDisplay
            The drawn display.
        """
        _style.require_matplotlib("InteractionDisplay.from_values")
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
        label = "Shapley interaction value"
        if values.ndim == 3:
            values = np.abs(values).mean(axis=0)
            label = "mean |Shapley interaction value|"
        n_features = values.shape[0]
        if feature_names is None:
            feature_names = [f"x{j}" for j in range(n_features)]
        names = [str(name) for name in feature_names]
        if len(names) != n_features:
            raise ValueError(
                f"feature_names has {len(names)} names for {n_features} features."
            )
        frame = pd.DataFrame(values, index=names, columns=names)
        display = cls(frame, colorbar_label=label, output=output)
        return display.plot(ax, diagonal=diagonal)

    @classmethod
    def from_explainer(
        cls, explainer, X, *, output=None, ax=None, diagonal: bool = True
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
        diagonal : bool, default=True
            Draw the diagonal (the main effects); see :meth:`plot`.

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
        return cls.from_values(frame, output=output, ax=ax, diagonal=diagonal)


def _fit_cells(ax, texts, n_features: int) -> None:
    """Smaller cell values if the widest would not fit in its cell."""
    if not texts:
        return
    cell = ax.get_window_extent().width / n_features
    widest = max(text.get_window_extent().width for text in texts)
    if widest > 0.9 * cell:
        size = texts[0].get_fontsize() * 0.9 * cell / widest
        for text in texts:
            text.set_fontsize(size)
