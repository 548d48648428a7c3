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


def matrices(frame: pd.DataFrame, output=None) -> np.ndarray:
    """An explain_interactions frame as (n_samples, d, d), row by row with .loc."""
    block = frame if output is None else frame[output]
    rows = frame.index.get_level_values(0).unique()
    return np.stack([block.loc[row].to_numpy() for row in rows])


@pytest.mark.parametrize("fixture", ["diabetes", "kernel"])
def test_from_explainer_draws_the_mean_magnitude_of_explain_interactions(
    request, fixture
):
    explainer, X = request.getfixturevalue(fixture)
    X = X.iloc[:30]
    display = InteractionDisplay.from_explainer(explainer, X)
    frame = explainer.explain_interactions(X)
    expected = np.abs(matrices(frame)).mean(axis=0)
    np.testing.assert_allclose(display.image_.get_array(), expected, rtol=1e-12)
    names = [t.get_text() for t in display.ax_.get_xticklabels()]
    assert names == [str(name) for name in X.columns]
    assert display.ax_.get_title(loc="left") == ""
    # The same numbers through from_values give the same picture.
    again = InteractionDisplay.from_values(frame)
    np.testing.assert_array_equal(again.image_.get_array(), display.image_.get_array())


def test_several_outputs_show_the_chosen_one(iris):
    explainer, X = iris
    X = X.iloc[::5]
    frame = explainer.explain_interactions(X)
    first = InteractionDisplay.from_explainer(explainer, X)
    np.testing.assert_allclose(
        first.image_.get_array(), np.abs(matrices(frame, 0)).mean(axis=0), rtol=1e-12
    )
    assert first.ax_.get_title(loc="left") == "output: 0"
    chosen = InteractionDisplay.from_explainer(explainer, X, output=2)
    from_frame = InteractionDisplay.from_values(frame, output=2)
    expected = np.abs(matrices(frame, 2)).mean(axis=0)
    np.testing.assert_allclose(chosen.image_.get_array(), expected, rtol=1e-12)
    np.testing.assert_array_equal(
        from_frame.image_.get_array(), chosen.image_.get_array()
    )
    assert chosen.ax_.get_title(loc="left") == "output: 2"
    with pytest.raises(ValueError, match="7"):
        InteractionDisplay.from_explainer(explainer, X, output=7)


def test_without_the_diagonal_the_scale_is_the_interactions():
    display = InteractionDisplay.from_values(MATRIX, diagonal=False)
    image = display.image_.get_array()
    np.testing.assert_array_equal(np.ma.getmaskarray(image), np.eye(3, dtype=bool))
    assert display.image_.get_clim() == (-0.5, 0.5)
    assert len(display.texts_) == 6  # the blank cells are not written in


def test_a_frame_that_is_not_explain_interactions_is_refused():
    frame = pd.DataFrame(
        np.ones((3, 2)),
        index=pd.MultiIndex.from_tuples([(0, "a"), (0, "b"), (1, "a")]),
        columns=["a", "b"],
    )
    with pytest.raises(ValueError, match="one row per \\(row, feature\\) pair"):
        InteractionDisplay.from_values(frame)
