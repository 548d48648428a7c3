"""BeeswarmDisplay: one point per row and feature, coloured by feature value."""

import numpy as np
import pandas as pd
import pytest

plt = pytest.importorskip("matplotlib.pyplot")

from matplotlib.colors import to_rgba  # noqa: E402

from skshapley.plotting import BeeswarmDisplay  # noqa: E402
from skshapley.plotting._style import MISSING, feature_cmap  # noqa: E402


def test_draws_on_the_given_axes(diabetes):
    explainer, X = diabetes
    figure, ax = plt.subplots()
    display = BeeswarmDisplay.from_explainer(explainer, X, ax=ax)
    assert display.ax_ is ax
    assert display.figure_ is figure


def test_draws_on_a_figure_of_its_own_with_a_labelled_colour_bar(diabetes):
    explainer, X = diabetes
    display = BeeswarmDisplay.from_explainer(explainer, X)
    assert display.figure_ is display.ax_.figure
    assert display.figure_.get_layout_engine() is not None
    colorbar = display.colorbar_
    assert colorbar.ax.get_ylabel() == "feature value"
    assert [t.get_text() for t in colorbar.ax.get_yticklabels()] == ["low", "high"]


def test_one_point_per_row_and_feature_at_its_shapley_value(diabetes):
    explainer, X = diabetes
    phi = explainer.explain(X)
    order = np.argsort(-np.abs(phi.to_numpy()).mean(axis=0))
    display = BeeswarmDisplay.from_values(phi, X)
    assert display.labels_ == list(phi.columns[order])
    assert len(display.collections_) == phi.shape[1]
    for position, (name, points) in enumerate(
        zip(display.labels_, display.collections_, strict=True)
    ):
        offsets = points.get_offsets()
        assert len(offsets) == len(X)
        np.testing.assert_array_equal(offsets[:, 0], phi[name].to_numpy())
        centre = len(display.labels_) - 1 - position  # top row first
        assert np.abs(offsets[:, 1] - centre).max() <= 0.4 + 1e-12


def test_max_display_folds_the_rest_into_summed_values(diabetes):
    explainer, X = diabetes
    phi = explainer.explain(X)
    order = phi.columns[np.argsort(-np.abs(phi.to_numpy()).mean(axis=0))]
    display = BeeswarmDisplay.from_values(phi, X, max_display=3)
    assert len(display.collections_) == 3
    assert display.labels_ == [*order[:2], "8 other features"]
    rest = display.collections_[2].get_offsets()[:, 0]
    np.testing.assert_allclose(rest, phi[order[2:]].sum(axis=1), rtol=1e-12)
    grey = np.tile(to_rgba(MISSING, alpha=0.85), (len(X), 1))
    np.testing.assert_allclose(display.collections_[2].get_facecolors(), grey)


def test_colours_rank_the_values_low_blue_to_high_red_missing_grey():
    """Numbers by rank; strings and bools by category, in the categories' order."""
    X = pd.DataFrame(
        {
            "dose": [1.0, 100.0, 2.0, np.nan],  # skewed: ranks, not values
            "colour": ["red", "blue", "red", "green"],  # by category
            "flag": [True, False, True, True],
        }
    )
    phi = pd.DataFrame({"dose": [3.0, 2.0, 1.0, 0.5], "colour": 1.0, "flag": 0.1})
    display = BeeswarmDisplay.from_values(phi, X)
    cmap = feature_cmap()
    colors = display.collections_[0].get_facecolors()  # dose
    expected = [cmap(0.0), cmap(1.0), cmap(0.5), to_rgba(MISSING)]
    np.testing.assert_allclose(colors[:, :3], np.array(expected)[:, :3])
    categories = display.collections_[1].get_facecolors()[:, :3]
    # blue, green, red (the categories in order) are low, middle and high.
    expected = [cmap(1.0), cmap(0.0), cmap(1.0), cmap(0.5)]
    np.testing.assert_allclose(categories, np.array(expected)[:, :3])
    flags = display.collections_[2].get_facecolors()[:, :3]
    np.testing.assert_allclose(flags[[0, 1]], np.array([cmap(1.0), cmap(0.0)])[:, :3])


def test_without_X_every_point_is_grey_and_there_is_no_colour_bar():
    phi = pd.DataFrame({"a": [1.0, -1.0], "b": [0.0, 2.0]})
    display = BeeswarmDisplay.from_values(phi)
    assert display.colorbar_ is None
    assert len(display.collections_) == 2


def test_array_phi_takes_the_names_and_index_of_X(diabetes):
    explainer, X = diabetes
    phi = explainer.explain(X)
    display = BeeswarmDisplay.from_values(phi.to_numpy(), X)
    assert set(display.labels_) == set(X.columns)


def test_multi_output(iris):
    explainer, X = iris
    default = BeeswarmDisplay.from_explainer(explainer, X)
    assert default.ax_.get_title(loc="left") == "output: 0"
    display = BeeswarmDisplay.from_explainer(explainer, X, output=1)
    assert display.ax_.get_title(loc="left") == "output: 1"
    phi = explainer.explain(X)[1]
    name = display.labels_[0]
    np.testing.assert_array_equal(
        display.collections_[0].get_offsets()[:, 0], phi[name].to_numpy()
    )


def test_X_must_hold_the_explained_rows(diabetes):
    explainer, X = diabetes
    phi = explainer.explain(X)
    with pytest.raises(ValueError, match="X has 119 rows and phi has 120"):
        BeeswarmDisplay.from_values(phi, X.iloc[1:])
    with pytest.raises(ValueError, match="X's index differs from phi's"):
        BeeswarmDisplay.from_values(phi, X.reset_index(drop=True))
    with pytest.raises(ValueError, match=r"X has shape \(120, 3\)"):
        BeeswarmDisplay.from_values(phi, X.to_numpy()[:, :3])


def test_kernel_explainer(kernel):
    explainer, X = kernel
    display = BeeswarmDisplay.from_explainer(explainer, X, max_display=4)
    assert [len(c.get_offsets()) for c in display.collections_] == [len(X)] * 4


def test_renamed_features_are_not_matched_by_position():
    # A pipeline's features (prefixed, maybe reordered) against its raw input:
    # no guessing, the points stay grey.
    phi = pd.DataFrame({"num__a": [1.0, -1.0], "num__b": [0.5, 0.2]})
    X = pd.DataFrame({"b": [1.0, 2.0], "a": [3.0, 4.0]})
    display = BeeswarmDisplay.from_values(phi, X)
    assert display.colorbar_ is None


def test_plot_takes_a_colour_map_by_name():
    from matplotlib import colormaps

    phi = pd.DataFrame({"a": [1.0, -1.0, 0.0]})
    X = pd.DataFrame({"a": [0.0, 2.0, 1.0]})
    display = BeeswarmDisplay(phi, X).plot(cmap="viridis", colorbar=False)
    colors = display.collections_[0].get_facecolors()[:, :3]
    viridis = colormaps["viridis"]([0.0, 1.0, 0.5])[:, :3]
    np.testing.assert_allclose(colors, viridis)
    assert display.colorbar_ is None


def test_order_draws_the_features_in_that_order_with_their_own_values(diabetes):
    """``order`` (say, every row's importance) wins over the rows' mean |φ|."""
    explainer, X = diabetes
    phi = explainer.explain(X)
    by_magnitude = list(phi.abs().mean().sort_values(ascending=False).index)
    order = by_magnitude[::-1]  # least important on top
    display = BeeswarmDisplay.from_values(phi, X, order=order, max_display=4)
    assert display.labels_ == [*order[:3], f"{len(order) - 3} other features"]
    assert [t.get_text() for t in display.ax_.get_yticklabels()] == display.labels_
    for collection, name in zip(display.collections_, order[:3], strict=False):
        np.testing.assert_array_equal(collection.get_offsets()[:, 0], phi[name])
    folded = phi[order[3:]].sum(axis=1)
    np.testing.assert_allclose(display.collections_[3].get_offsets()[:, 0], folded)


def test_order_must_name_every_feature_once(diabetes):
    explainer, X = diabetes
    phi = explainer.explain(X)
    names = list(phi.columns)
    with pytest.raises(ValueError, match=r"missing: \['s6'\]"):
        BeeswarmDisplay.from_values(phi, order=names[:-1])
    with pytest.raises(ValueError, match="repeats"):
        BeeswarmDisplay.from_values(phi, order=[*names, names[0]])
    with pytest.raises(ValueError, match="Unknown features in order"):
        BeeswarmDisplay.from_values(phi, order=[*names[:-1], "nope"])


def test_categorical_features_are_coloured_by_category(diabetes):
    """String, pandas categorical and bool columns: by category, with a legend."""
    explainer, X = diabetes
    phi = explainer.explain(X)
    data = X.copy()
    data["sex"] = np.where(X["sex"] > 0, "male", "female")
    data["bp"] = X["bp"] > 0
    data["s5"] = pd.Categorical(
        np.where(X["s5"] > 0, "high", "low"), categories=["low", "high"]
    )
    display = BeeswarmDisplay.from_values(phi, data, max_display=20)
    assert display.categories_ == {
        "s5": ["low", "high"],
        "bp": ["False", "True"],
        "sex": ["female", "male"],
    }
    cmap = feature_cmap()
    for name, first, last in (
        ("sex", data["sex"] == "female", data["sex"] == "male"),
        ("bp", ~data["bp"], data["bp"]),
        ("s5", data["s5"] == "low", data["s5"] == "high"),
    ):
        colors = display.collections_[display.labels_.index(name)].get_facecolors()
        for rows, level in ((first, 0.0), (last, 1.0)):
            drawn = colors[rows.to_numpy()][:, :3]
            np.testing.assert_allclose(
                drawn, np.broadcast_to(cmap(level)[:3], drawn.shape)
            )
    legend = [text.get_text() for text in display.ax_.get_legend().get_texts()]
    assert {"sex: female", "bp: True", "s5: high"} <= set(legend)


def test_a_legend_names_at_most_six_categories_of_a_feature(diabetes):
    """Beyond six, a feature's first three and last two, and how many more."""
    explainer, X = diabetes
    phi = explainer.explain(X)
    data = X.copy()
    data["s5"] = pd.Categorical(
        [f"level {k:02d}" for k in np.argsort(np.argsort(X["s5"])) * 30 // len(X)]
    )
    display = BeeswarmDisplay.from_values(phi, data, max_display=20)
    legend = display.ax_.get_legend()
    texts = [text.get_text() for text in legend.get_texts()]
    assert texts == [
        "s5: level 00", "s5: level 01", "s5: level 02", "s5: ... 25 more",
        "s5: level 28", "s5: level 29",
    ]  # fmt: skip
    cmap = feature_cmap()
    handles = legend.legend_handles
    np.testing.assert_allclose(handles[-1].get_color(), cmap(1.0))
    np.testing.assert_allclose(handles[0].get_color(), cmap(0.0))
    assert handles[3].get_marker() == ""
