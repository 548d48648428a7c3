"""OutputImportanceDisplay: mean |φ| per feature, stacked by output."""

import numpy as np
import pandas as pd

from . import _style
from ._inputs import outputs_of, shapley_frame, split_top

# Outputs get tab10's colours up to this many, then a sampled colour map.
_QUALITATIVE_COLORS = 10


class OutputImportanceDisplay:
    """Mean ``|φ|`` of every feature for every output, in one chart.

    One horizontal bar per feature, the most important on top (by the sum
    over the outputs): its segments, one per output (a class, a target),
    are that output's mean absolute Shapley value of the feature, as shap's
    summary bar shows a multiclass model. Use :meth:`from_explainer` or
    :meth:`from_values` to build one.

    Parameters
    ----------
    importance : pandas.DataFrame of shape (n_features, n_outputs)
        Mean ``|φ|``: one row per feature (index: feature names), one column
        per output (columns: output names).
    raw_output : str, default=None
        What the explained outputs are (an explainer's ``raw_output_``, such
        as ``"log-odds"``), for the axis label.

    Attributes
    ----------
    bars_ : list of matplotlib.container.BarContainer
        The segments of each output, in the order of ``importance``'s
        columns; within each, top row first.
    labels_ : list of str
        The rows' labels, top row first; the last is ``"n other features"``
        when features were folded.
    ax_ : matplotlib.axes.Axes
        The axes drawn on.
    figure_ : matplotlib.figure.Figure
        The figure of ``ax_``.

    See Also
    --------
    ImportanceDisplay : One output's mean ``|φ|`` with its signed mean.
    skshapley.importance : The numbers drawn, as a table.

    Examples
    --------
    >>> import matplotlib.pyplot as plt
    >>> from sklearn.datasets import load_iris
    >>> from sklearn.ensemble import GradientBoostingClassifier
    >>> from skshapley import TreeExplainer
    >>> from skshapley.plotting import OutputImportanceDisplay
    >>> X, y = load_iris(return_X_y=True, as_frame=True)
    >>> model = GradientBoostingClassifier(n_estimators=10, random_state=0)
    >>> explainer = TreeExplainer(model.fit(X, y)).fit()
    >>> display = OutputImportanceDisplay.from_explainer(explainer, X)
    >>> len(display.bars_), display.labels_[0]
    (3, 'petal width (cm)')
    >>> plt.close(display.figure_)
    """

    def __init__(self, importance, *, raw_output=None):
        self.importance = importance
        self.raw_output = raw_output

    def plot(self, ax=None, *, max_display: int = 20, cmap=None):
        """Draw the stacked bars.

        Parameters
        ----------
        ax : matplotlib.axes.Axes, default=None
            The axes to draw on; ``None`` creates a figure.
        max_display : int, default=20
            The most rows drawn. With more features, the least important are
            folded into one last row, ``"n other features"``, whose segments
            are the sums of theirs.
        cmap : str or matplotlib.colors.Colormap, default=None
            The outputs' colours; ``None`` means matplotlib's ``tab10`` (a
            sample of ``viridis`` above ten outputs).

        Returns
        -------
        display : OutputImportanceDisplay
            This display, with ``ax_``, ``figure_`` and the artists set.
        """
        table = self.importance
        if not isinstance(table, pd.DataFrame) or table.shape[1] == 0:
            raise ValueError(
                "importance must be a DataFrame of mean |φ|, one row per feature "
                "and one column per output."
            )
        total = table.sum(axis=1)
        table = table.loc[total.sort_values(ascending=False, kind="stable").index]
        shown, folded = split_top(list(table.index), max_display)
        values = table.to_numpy(dtype=np.float64)
        labels = [str(name) for name in shown]
        if folded:
            values = np.vstack([values[: len(shown)], values[len(shown) :].sum(0)])
            labels.append(_style.other_label(len(folded)))
        n_rows = len(labels)
        ax, figure = _style.prepare_axes(
            ax, "OutputImportanceDisplay.plot", _style.rows_size(n_rows)
        )
        colors = _output_colors(table.shape[1], cmap)
        y = np.arange(n_rows)[::-1]
        left = np.zeros(n_rows)
        self.bars_ = []
        for k, output in enumerate(table.columns):
            self.bars_.append(
                ax.barh(
                    y,
                    values[:, k],
                    left=left,
                    height=0.7,
                    color=colors[k],
                    label=_style.literal(output),
                )
            )
            left = left + values[:, k]
        ax.set_yticks(y, _style.literals(labels))
        ax.set_ylim(-0.6, n_rows - 0.4)
        ax.set_xlim(0.0, (float(left.max()) or 1.0) * 1.04)
        ax.set_xlabel(
            "mean |Shapley value| (average impact on "
            f"{_style.output_label(self.raw_output)})"
        )
        _style.style_axes(ax)
        ax.legend(title="output", loc="lower right", frameon=False, fontsize=9)
        _style.fit_texts(ax)
        self.labels_ = labels
        self.ax_, self.figure_ = ax, figure
        return self

    @classmethod
    def from_values(
        cls,
        phi,
        *,
        feature_names=None,
        max_display: int = 20,
        ax=None,
        raw_output: str | None = None,
    ):
        """Draw every output's importance of the features from Shapley values.

        Parameters
        ----------
        phi : pandas.DataFrame or array-like of shape (n_samples, n_features)
            Shapley values as an explainer's ``explain`` returns them:
            columns ``(output, feature)`` for several outputs; plain feature
            columns (or an array) are one output.
        feature_names : list of str, default=None
            The names of an array's columns; ``None`` means ``x0, x1, ...``.
        max_display : int, default=20
            The most rows drawn; see :meth:`plot`.
        ax : matplotlib.axes.Axes, default=None
            The axes to draw on; ``None`` creates a figure.
        raw_output : str, default=None
            What the explained outputs are, for the axis label.

        Returns
        -------
        display : OutputImportanceDisplay
            The drawn display.
        """
        _style.require_matplotlib("OutputImportanceDisplay.from_values")
        display = cls(
            output_importance(shapley_frame(phi, feature_names)),
            raw_output=raw_output,
        )
        return display.plot(ax, max_display=max_display)

    @classmethod
    def from_explainer(cls, explainer, X, *, max_display: int = 20, ax=None):
        """Explain ``X`` and draw every output's importance of the features.

        Parameters
        ----------
        explainer : fitted explainer
            A fitted skshapley explainer, such as :class:`~skshapley.TreeExplainer`.
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
            The rows to explain.
        max_display : int, default=20
            The most rows drawn; see :meth:`plot`.
        ax : matplotlib.axes.Axes, default=None
            The axes to draw on; ``None`` creates a figure.

        Returns
        -------
        display : OutputImportanceDisplay
            The drawn display.
        """
        _style.require_matplotlib("OutputImportanceDisplay.from_explainer")
        return cls.from_values(
            explainer.explain(X),
            max_display=max_display,
            ax=ax,
            raw_output=getattr(explainer, "raw_output_", None),
        )


def output_importance(phi: pd.DataFrame) -> pd.DataFrame:
    """Mean ``|φ|`` of checked Shapley values: features × outputs.

    Plain feature columns are one output, named ``"output"``.
    """
    mean_abs = phi.abs().mean(axis=0)
    if outputs_of(phi.columns) is None:
        return mean_abs.to_frame("output").set_axis(
            [str(name) for name in phi.columns], axis=0
        )
    outputs = list(phi.columns.get_level_values(0).unique())
    features = list(phi.columns.get_level_values(1).unique())
    table = mean_abs.unstack(level=0).reindex(index=features, columns=outputs)
    return table.set_axis([str(name) for name in features], axis=0)


def _output_colors(n_outputs: int, cmap) -> list:
    """One colour per output: tab10's, or a colour map sampled evenly."""
    from matplotlib import colormaps

    if cmap is None and n_outputs <= _QUALITATIVE_COLORS:
        return list(colormaps["tab10"].colors[:n_outputs])
    colormap = colormaps.get_cmap(cmap or "viridis")
    return [colormap(t) for t in np.linspace(0.0, 1.0, n_outputs)]
