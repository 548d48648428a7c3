"""OutputImportanceDisplay: every output's mean |φ| per feature, stacked."""

import numpy as np
import pandas as pd
import pytest

plt = pytest.importorskip("matplotlib.pyplot")

from skshapley.plotting import OutputImportanceDisplay  # noqa: E402


def segments(display):
    """Each output's bar widths and left ends, top row first."""
    return [
        (
            np.array([bar.get_width() for bar in bars]),
            np.array([bar.get_x() for bar in bars]),
        )
        for bars in display.bars_
    ]


def test_segments_are_each_outputs_mean_abs_stacked(iris):
    explainer, X = iris
    phi = explainer.explain(X)
    display = OutputImportanceDisplay.from_explainer(explainer, X)
    names = [str(name) for name in X.columns]
    # Independently: mean |φ| of each (output, feature) column, by position.
    values = np.abs(phi.to_numpy()).mean(axis=0).reshape(3, len(names))
    order = np.argsort(-values.sum(axis=0), kind="stable")
    assert display.labels_ == [names[j] for j in order]
    left = np.zeros(len(names))
    for k, (widths, starts) in enumerate(segments(display)):
        np.testing.assert_allclose(widths, values[k, order], rtol=1e-12)
        np.testing.assert_allclose(starts, left, rtol=1e-12, atol=0)
        left = left + widths
    legend = [text.get_text() for text in display.ax_.get_legend().get_texts()]
    assert legend == ["0", "1", "2"]
    assert "margin" in display.ax_.get_xlabel()


def test_folded_features_sum_their_segments(iris):
    explainer, X = iris
    phi = explainer.explain(X)
    display = OutputImportanceDisplay.from_values(phi, max_display=2)
    assert display.labels_[-1] == "3 other features"
    values = np.abs(phi.to_numpy()).mean(axis=0).reshape(3, -1)
    order = np.argsort(-values.sum(axis=0), kind="stable")
    for k, (widths, _) in enumerate(segments(display)):
        assert widths[0] == pytest.approx(values[k, order[0]], rel=1e-12)
        assert widths[1] == pytest.approx(values[k, order[1:]].sum(), rel=1e-12)


def test_one_output_is_one_segment_per_feature(diabetes):
    explainer, X = diabetes
    phi = explainer.explain(X)
    display = OutputImportanceDisplay.from_explainer(explainer, X, max_display=30)
    ((widths, _),) = segments(display)
    expected = phi.abs().mean().sort_values(ascending=False, kind="stable")
    assert display.labels_ == list(expected.index)
    np.testing.assert_allclose(widths, expected.to_numpy(), rtol=1e-12)


def test_draws_on_the_given_axes_and_many_outputs_get_a_colour_map():
    figure, ax = plt.subplots()
    columns = pd.MultiIndex.from_product([[f"c{k}" for k in range(12)], ["a", "b"]])
    phi = pd.DataFrame(np.arange(48.0).reshape(2, 24), columns=columns)
    display = OutputImportanceDisplay.from_values(phi, ax=ax)
    assert display.ax_ is ax
    assert display.figure_ is figure
    colors = {tuple(bars.patches[0].get_facecolor()) for bars in display.bars_}
    assert len(colors) == 12


def test_bad_importance_is_named():
    with pytest.raises(ValueError, match="one column per output"):
        OutputImportanceDisplay(pd.DataFrame(index=["a"])).plot()
