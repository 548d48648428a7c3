"""InteractionDisplay: a heatmap of interaction values, centred on 0."""

import numpy as np
import pandas as pd
import pytest

plt = pytest.importorskip("matplotlib.pyplot")

from plotting.text_bounds import outside_texts  # noqa: E402

from skshapley.games import product_interactions  # noqa: E402
from skshapley.plotting import InteractionDisplay  # noqa: E402

MATRIX = np.array([[2.0, 0.5, 0.0], [0.5, -1.0, -0.3], [0.0, -0.3, 0.2]])


def test_draws_on_the_given_axes():
    figure, ax = plt.subplots()
    display = InteractionDisplay.from_values(MATRIX, ax=ax)
    assert display.ax_ is ax
    assert display.figure_ is figure


def test_signed_values_are_on_a_scale_centred_on_zero():
    display = InteractionDisplay.from_values(
        MATRIX, feature_names=["a", "b", "c"], kind="signed"
    )
    assert display.figure_ is display.ax_.figure
    image = display.image_.get_array()
    # The main effects (diagonal) are blank, not on the colour scale.
    np.testing.assert_array_equal(np.ma.getmaskarray(image), np.eye(3, dtype=bool))
    np.testing.assert_array_equal(image.filled(0.0), MATRIX - np.diag(np.diag(MATRIX)))
    assert display.image_.get_clim() == (-0.5, 0.5)  # the largest |interaction|
    assert display.image_.norm(0.0) == 0.5  # white, the middle of RdBu_r
    assert display.image_.get_cmap().name.startswith("RdBu_r")
    assert [t.get_text() for t in display.ax_.get_yticklabels()] == ["a", "b", "c"]
    ticks = [t.get_text() for t in display.ax_.get_xticklabels()]
    assert ticks == ["a", "b", "c", "main effect"]
    assert display.colorbar_.ax.get_ylabel() == "Shapley interaction value"
    # The off-diagonal cells, with one precision: 0.0 beside 0.5.
    assert [t.get_text() for t in display.texts_] == [
        "0.5",
        "0.0",
        "0.5",
        "\u22120.3",
        "0.0",
        "\u22120.3",
    ]
    widths = [bar.get_width() for bar in display.main_effect_bars_]
    np.testing.assert_allclose(np.array(widths) / widths[0], [1.0, -0.5, 0.1])


def test_magnitudes_are_on_a_sequential_scale_from_zero():
    rng = np.random.default_rng(0)
    per_sample = rng.normal(size=(5, 4, 4))
    display = InteractionDisplay.from_values(per_sample)
    magnitude = np.abs(per_sample).mean(axis=0)
    order = np.argsort(-np.abs(per_sample).sum(axis=2).mean(axis=0), kind="stable")
    image = display.image_.get_array()
    expected = magnitude[np.ix_(order, order)]
    np.testing.assert_allclose(image.filled(0.0), expected - np.diag(np.diag(expected)))
    off_diagonal = expected[~np.eye(4, dtype=bool)]
    assert display.image_.get_clim() == (0.0, off_diagonal.max())
    assert display.image_.get_cmap().name.startswith("Purples")
    assert display.colorbar_.ax.get_ylabel() == "mean |Shapley interaction value|"
    assert display.labels_ == [f"x{j}" for j in order]
    assert [t.get_text() for t in display.ax_.get_yticklabels()] == display.labels_


def test_kind_is_checked_and_magnitudes_cannot_be_negative():
    with pytest.raises(ValueError, match=r"kind must be one of .*got 'abs'"):
        InteractionDisplay.from_values(MATRIX, kind="abs")
    frame = pd.DataFrame(MATRIX, index=list("abc"), columns=list("abc"))
    with pytest.raises(ValueError, match="negative values"):
        InteractionDisplay(frame).plot()


def test_features_are_ordered_by_importance_and_the_others_summed():
    """12 features, 4 drawn: the three most important, then the 9 others."""
    rng = np.random.default_rng(1)
    weights = rng.permutation(12) + 1.0
    per_sample = rng.normal(size=(6, 12, 12)) * np.sqrt(np.outer(weights, weights))
    per_sample = (per_sample + per_sample.transpose(0, 2, 1)) / 2
    names = [f"f{j}" for j in range(12)]
    display = InteractionDisplay.from_values(
        per_sample, feature_names=names, kind="signed", max_display=4
    )
    importance = np.abs(per_sample).sum(axis=2).mean(axis=0)
    top = np.argsort(-importance)[:3]
    assert display.labels_ == [names[j] for j in top] + ["9 other features"]
    others = np.setdiff1d(np.arange(12), top)
    mean = per_sample.mean(axis=0)
    image = display.image_.get_array()
    assert image.shape == (4, 4)
    np.testing.assert_allclose(image[0, 3], mean[top[0], others].sum())
    np.testing.assert_allclose(image[3, 1], mean[others, top[1]].sum())


def test_thirty_features_give_ten_rows_in_a_bounded_figure():
    values = np.random.default_rng(2).random((30, 30))
    display = InteractionDisplay.from_values(values + values.T)
    assert len(display.labels_) == 10
    assert display.labels_[-1] == "21 other features"
    width, height = display.figure_.get_size_inches()
    assert height <= 10.0
    assert width <= 16.0
    small = InteractionDisplay.from_values(np.ones((3, 3)))
    assert small.figure_.get_size_inches()[1] < height  # grows with the rows
    big = InteractionDisplay.from_values(values + values.T, max_display=30)
    assert big.figure_.get_size_inches()[1] == 10.0  # but no further
    assert outside_texts(display.figure_) == []


def test_the_diagonal_can_be_drawn_on_the_matrix_and_the_bars_left_out():
    display = InteractionDisplay.from_values(
        MATRIX, kind="signed", diagonal=True, main_effects=False
    )
    assert display.image_.get_clim() == (-2.0, 2.0)
    assert not np.ma.getmaskarray(display.image_.get_array()).any()
    assert display.main_effect_bars_ is None
    assert len(display.texts_) == 9
    assert display.ax_.get_xlim() == (-0.5, 2.5)


def test_a_data_frame_names_the_features_and_a_game_can_be_drawn():
    values = product_interactions([1.0, 1.0, 0.5], [0.0, 0.0, 1.0], [10.0])
    frame = pd.DataFrame(
        values, index=["card", "verified", "age"], columns=["card", "verified", "age"]
    )
    display = InteractionDisplay.from_values(frame, kind="signed", diagonal=True)
    assert sorted(display.labels_) == sorted(frame)
    labels = display.labels_
    np.testing.assert_array_equal(
        display.image_.get_array(), frame.loc[labels, labels].to_numpy()
    )


def test_many_features_are_not_annotated():
    display = InteractionDisplay.from_values(np.eye(13), max_display=13)
    assert display.texts_ == []
    assert InteractionDisplay.from_values(np.eye(12), max_display=12).texts_


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


def assert_draws(display, expected: np.ndarray, names: list) -> None:
    """``expected`` (features in ``names``' order) drawn in importance order.

    The interactions in the matrix, the main effects as bars.
    """
    order = [names.index(label) for label in display.labels_]
    drawn = expected[np.ix_(order, order)]
    off_diagonal = drawn - np.diag(np.diag(drawn))
    np.testing.assert_allclose(
        display.image_.get_array().filled(0.0), off_diagonal, rtol=1e-12, atol=1e-12
    )
    widths = np.array([bar.get_width() for bar in display.main_effect_bars_])
    effects = np.diag(drawn)
    np.testing.assert_allclose(
        widths / widths.max(), effects / effects.max(), atol=1e-12
    )


@pytest.mark.parametrize("fixture", ["diabetes", "kernel"])
def test_from_explainer_draws_the_mean_magnitude_of_explain_interactions(
    request, fixture
):
    explainer, X = request.getfixturevalue(fixture)
    X = X.iloc[:30]
    display = InteractionDisplay.from_explainer(explainer, X)
    frame = explainer.explain_interactions(X)
    names = [str(name) for name in X.columns]
    assert_draws(display, np.abs(matrices(frame)).mean(axis=0), names)
    ticks = [t.get_text() for t in display.ax_.get_xticklabels()]
    assert ticks == [*display.labels_, "main effect"]
    assert display.ax_.get_title(loc="left") == ""
    # The same numbers through from_values give the same picture.
    again = InteractionDisplay.from_values(frame)
    np.testing.assert_array_equal(again.image_.get_array(), display.image_.get_array())


def test_several_outputs_show_the_chosen_one(iris):
    explainer, X = iris
    X = X.iloc[::5]
    frame = explainer.explain_interactions(X)
    names = list(X.columns)
    first = InteractionDisplay.from_explainer(explainer, X)
    assert_draws(first, np.abs(matrices(frame, 0)).mean(axis=0), names)
    assert first.ax_.get_title(loc="left") == "output: 0"
    chosen = InteractionDisplay.from_explainer(explainer, X, output=2)
    from_frame = InteractionDisplay.from_values(frame, output=2)
    assert_draws(chosen, np.abs(matrices(frame, 2)).mean(axis=0), names)
    np.testing.assert_array_equal(
        from_frame.image_.get_array(), chosen.image_.get_array()
    )
    assert chosen.ax_.get_title(loc="left") == "output: 2"
    with pytest.raises(ValueError, match="7"):
        InteractionDisplay.from_explainer(explainer, X, output=7)


def test_a_frame_that_is_not_explain_interactions_is_refused():
    frame = pd.DataFrame(
        np.ones((3, 2)),
        index=pd.MultiIndex.from_tuples([(0, "a"), (0, "b"), (1, "a")]),
        columns=["a", "b"],
    )
    with pytest.raises(ValueError, match="one row per \\(row, feature\\) pair"):
        InteractionDisplay.from_values(frame)
