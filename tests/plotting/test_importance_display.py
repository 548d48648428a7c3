"""ImportanceDisplay: bars of mean |φ| and mean φ, largest on top."""

import numpy as np
import pandas as pd
import pytest

plt = pytest.importorskip("matplotlib.pyplot")

from plotting.text_bounds import outside_texts  # noqa: E402

from skshapley.plotting import ImportanceDisplay  # noqa: E402


def widths(container):
    return np.array([bar.get_width() for bar in container])


def test_draws_on_the_given_axes(diabetes):
    explainer, X = diabetes
    figure, ax = plt.subplots()
    display = ImportanceDisplay.from_explainer(explainer, X, ax=ax)
    assert display.ax_ is ax
    assert display.figure_ is figure


def test_draws_on_a_figure_of_its_own(diabetes):
    explainer, X = diabetes
    display = ImportanceDisplay.from_explainer(explainer, X)
    assert display.figure_ is display.ax_.figure
    assert display.figure_.get_layout_engine() is not None  # no clipped labels
    assert display.ax_.get_title() == ""  # one output: no title


def test_bars_are_mean_abs_and_mean_phi_largest_first(diabetes):
    explainer, X = diabetes
    phi = explainer.explain(X)
    mean_abs = np.abs(phi.to_numpy()).mean(axis=0)
    order = np.argsort(-mean_abs)
    display = ImportanceDisplay.from_values(phi)
    assert display.labels_ == list(phi.columns[order])
    np.testing.assert_allclose(widths(display.bars_), mean_abs[order], rtol=1e-12)
    mean = phi.to_numpy().mean(axis=0)
    np.testing.assert_allclose(widths(display.mean_bars_), mean[order], rtol=1e-12)
    # largest on top: the first bar is the highest
    heights = [bar.get_y() for bar in display.bars_]
    assert heights == sorted(heights, reverse=True)
    ticks = display.ax_.get_yticks()
    tick_labels = [label.get_text() for label in display.ax_.get_yticklabels()]
    pairs = sorted(zip(ticks, tick_labels, strict=True), reverse=True)
    by_height = [label for _, label in pairs]
    assert by_height == display.labels_
    colors = [bar.get_facecolor() for bar in display.mean_bars_]
    red = plt.matplotlib.colors.to_rgba("#e4324e")
    assert [c == red for c in colors] == list(mean[order] >= 0)


def test_max_display_folds_the_rest_into_one_row(diabetes):
    explainer, X = diabetes
    phi = explainer.explain(X)
    mean_abs = np.sort(np.abs(phi.to_numpy()).mean(axis=0))[::-1]
    display = ImportanceDisplay.from_values(phi, max_display=4)
    assert len(display.bars_) == 4
    assert display.labels_[-1] == "7 other features"
    np.testing.assert_allclose(widths(display.bars_)[:3], mean_abs[:3], rtol=1e-12)
    np.testing.assert_allclose(widths(display.bars_)[3], mean_abs[3:].sum(), rtol=1e-12)


def test_max_display_at_least_the_features_shows_them_all(diabetes):
    explainer, X = diabetes
    display = ImportanceDisplay.from_explainer(explainer, X, max_display=10)
    assert len(display.labels_) == 10
    assert "other" not in display.labels_[-1]


def test_multi_output_shows_the_first_output_by_default(iris):
    explainer, X = iris
    phi = explainer.explain(X)
    display = ImportanceDisplay.from_values(phi)
    assert display.ax_.get_title(loc="left") == "output: 0"
    expected = np.sort(np.abs(phi[0].to_numpy()).mean(axis=0))[::-1]
    np.testing.assert_allclose(widths(display.bars_), expected, rtol=1e-12)


@pytest.mark.parametrize("output", [2, "2"])
def test_output_by_name(iris, output):
    explainer, X = iris
    display = ImportanceDisplay.from_explainer(explainer, X, output=output)
    assert display.ax_.get_title(loc="left") == "output: 2"
    expected = np.sort(np.abs(explainer.explain(X)[2].to_numpy()).mean(axis=0))[::-1]
    np.testing.assert_allclose(widths(display.bars_), expected, rtol=1e-12)


def test_unknown_output_lists_the_outputs(iris):
    explainer, X = iris
    with pytest.raises(ValueError, match=r"output 'setosa' .* outputs: \[0, 1, 2\]"):
        ImportanceDisplay.from_explainer(explainer, X, output="setosa")


def test_single_output_accepts_its_own_name_only(diabetes):
    explainer, X = diabetes
    display = ImportanceDisplay.from_explainer(explainer, X, output="target")
    assert display.ax_.get_title() == ""
    with pytest.raises(ValueError, match="not one of the explainer's outputs"):
        ImportanceDisplay.from_explainer(explainer, X, output="other")
    with pytest.raises(ValueError, match="single output"):
        ImportanceDisplay.from_values(explainer.explain(X), output="target")


def test_kernel_explainer(kernel):
    explainer, X = kernel
    display = ImportanceDisplay.from_explainer(explainer, X, max_display=5)
    expected = np.sort(np.abs(explainer.explain(X).to_numpy()).mean(axis=0))[::-1]
    np.testing.assert_allclose(widths(display.bars_)[:4], expected[:4], rtol=1e-12)


def test_array_with_feature_names():
    phi = np.array([[1.0, -3.0, 0.5], [-1.0, 1.0, 0.5]])
    display = ImportanceDisplay.from_values(phi, feature_names=["a", "b", "c"])
    assert display.labels_ == ["b", "a", "c"]
    np.testing.assert_allclose(widths(display.bars_), [2.0, 1.0, 0.5])
    np.testing.assert_allclose(widths(display.mean_bars_), [-1.0, 0.0, 0.5])
    default = ImportanceDisplay.from_values(phi)
    assert default.labels_ == ["x1", "x0", "x2"]


def test_raw_output_names_the_axis(iris):
    explainer, X = iris
    display = ImportanceDisplay.from_explainer(explainer, X)
    assert "margin" in display.ax_.get_xlabel()


def test_the_display_can_be_built_and_plotted_in_two_steps():
    table = pd.DataFrame(
        {"mean_abs": [1.0, 3.0], "mean": [0.5, -2.0]}, index=["a", "b"]
    )
    display = ImportanceDisplay(table, output="yes").plot(max_display=5)
    assert display.labels_ == ["b", "a"]
    assert display.ax_.get_title(loc="left") == "output: yes"
    with pytest.raises(ValueError, match="'mean_abs' and 'mean'"):
        ImportanceDisplay(table.rename(columns={"mean": "avg"})).plot()


def test_bar_values_are_written_with_one_precision():
    """Mean |φ| of 0.3, 0.25 and 0.1: two decimals each, not 0.3, 0.25, 0.1."""
    phi = pd.DataFrame({"a": [0.3, -0.3], "b": [0.25, 0.25], "c": [-0.1, 0.1]})
    display = ImportanceDisplay.from_values(phi)
    assert [text.get_text() for text in display.ax_.texts] == ["0.30", "0.25", "0.10"]


@pytest.mark.parametrize("position", [0, 1, 2])
def test_in_a_grid_of_subplots_the_labels_stay_in_the_figure(diabetes, position):
    """plt.subplots(1, 3) has fixed margins, too narrow for a wrapped x label."""
    explainer, X = diabetes
    figure, axes = plt.subplots(1, 3)
    display = ImportanceDisplay.from_explainer(explainer, X, ax=axes[position])
    figure.canvas.draw()
    bounds = figure.bbox
    for text in (display.ax_.xaxis.label, display.ax_.get_legend()):
        box = text.get_window_extent()
        assert bounds.x0 <= box.x0
        assert box.x1 <= bounds.x1
        assert bounds.y0 <= box.y0
        assert box.y1 <= bounds.y1
    assert outside_texts(figure) == []
