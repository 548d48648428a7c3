"""InteractionDisplay: a heatmap of interaction values, centred on 0."""

import numpy as np
import pandas as pd
import pytest

plt = pytest.importorskip("matplotlib.pyplot")

from skshapley.games import product_interactions  # noqa: E402
from skshapley.plotting import InteractionDisplay  # noqa: E402

MATRIX = np.array([[2.0, 0.5, 0.0], [0.5, -1.0, -0.3], [0.0, -0.3, 0.2]])


def test_draws_on_the_given_axes():
    figure, ax = plt.subplots()
    display = InteractionDisplay.from_values(MATRIX, ax=ax)
    assert display.ax_ is ax
    assert display.figure_ is figure


def test_the_heatmap_is_the_matrix_on_a_symmetric_scale():
    display = InteractionDisplay.from_values(MATRIX, feature_names=["a", "b", "c"])
    assert display.figure_ is display.ax_.figure
    np.testing.assert_array_equal(display.image_.get_array(), MATRIX)
    assert display.image_.get_clim() == (-2.0, 2.0)
    assert [t.get_text() for t in display.ax_.get_xticklabels()] == ["a", "b", "c"]
    assert [t.get_text() for t in display.ax_.get_yticklabels()] == ["a", "b", "c"]
    assert display.colorbar_.ax.get_ylabel() == "Shapley interaction value"
    assert len(display.texts_) == 9
    assert display.texts_[4].get_text() == "\u22121"


def test_per_sample_matrices_are_averaged_in_magnitude():
    rng = np.random.default_rng(0)
    per_sample = rng.normal(size=(5, 4, 4))
    display = InteractionDisplay.from_values(per_sample)
    np.testing.assert_allclose(
        display.image_.get_array(), np.abs(per_sample).mean(axis=0)
    )
    assert display.colorbar_.ax.get_ylabel() == "mean |Shapley interaction value|"
    assert [t.get_text() for t in display.ax_.get_yticklabels()] == [
        "x0",
        "x1",
        "x2",
        "x3",
    ]


def test_a_data_frame_names_the_features_and_a_game_can_be_drawn():
    values = product_interactions([1.0, 1.0, 0.5], [0.0, 0.0, 1.0], [10.0])
    frame = pd.DataFrame(
        values, index=["card", "verified", "age"], columns=["card", "verified", "age"]
    )
    display = InteractionDisplay.from_values(frame)
    assert [t.get_text() for t in display.ax_.get_xticklabels()] == list(frame)
    np.testing.assert_array_equal(display.image_.get_array(), values)


def test_many_features_are_not_annotated():
    display = InteractionDisplay.from_values(np.eye(13))
    assert display.texts_ == []


def test_bad_input_is_named():
    with pytest.raises(ValueError, match=r"got \(2, 3\)"):
        InteractionDisplay.from_values(np.zeros((2, 3)))
    with pytest.raises(ValueError, match="NaN or infinity"):
        InteractionDisplay.from_values(np.full((2, 2), np.nan))
    with pytest.raises(ValueError, match="feature_names has 2 names for 3"):
        InteractionDisplay.from_values(MATRIX, feature_names=["a", "b"])
    with pytest.raises(ValueError, match="array of numbers"):
        InteractionDisplay.from_values([["a", "b"], ["c", "d"]])
