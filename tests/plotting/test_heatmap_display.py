"""HeatmapDisplay: rows × features of Shapley values, f(x) above."""

import numpy as np
import pandas as pd
import pytest

plt = pytest.importorskip("matplotlib.pyplot")

from plotting.text_bounds import outside_texts  # noqa: E402
from scipy.cluster.hierarchy import leaves_list, linkage  # noqa: E402
from sklearn.datasets import load_wine  # noqa: E402
from sklearn.ensemble import (  # noqa: E402
    GradientBoostingClassifier,
    RandomForestRegressor,
)

from skshapley import TreeExplainer  # noqa: E402
from skshapley.plotting import HeatmapDisplay  # noqa: E402


@pytest.fixture(scope="module")
def wine():
    """A boosted classifier of three wines named by strings, and its rows."""
    X, y = load_wine(return_X_y=True, as_frame=True)
    names = np.array(["barolo", "grignolino", "barbera"])[y]
    model = GradientBoostingClassifier(n_estimators=10, max_depth=2, random_state=0)
    return TreeExplainer(model.fit(X, names)).fit(), X.iloc[::3]


def expected_image(phi: pd.DataFrame, rows, n_shown: int) -> np.ndarray:
    """φ's columns by mean |φ| (top first), the rest summed, columns = rows."""
    order = phi.abs().mean().sort_values(ascending=False, kind="stable").index
    lines = phi[order[:n_shown]].to_numpy().T
    if len(order) > n_shown:
        lines = np.vstack([lines, phi[order[n_shown:]].sum(axis=1).to_numpy()])
    return lines[:, rows]


def f_line(display):
    """The y data of the f(x) line (the one with a point per row)."""
    (line,) = [
        line
        for line in display.f_ax_.get_lines()
        if len(line.get_xdata()) == len(display.rows_) and line.get_linestyle() != "--"
    ]
    return np.asarray(line.get_ydata())


def test_the_image_is_phi_by_importance_and_the_line_is_the_prediction(diabetes):
    explainer, X = diabetes
    display = HeatmapDisplay.from_explainer(explainer, X, max_display=4)
    phi = explainer.explain(X)
    assert sorted(display.rows_) == list(range(len(X)))
    order = phi.abs().mean().sort_values(ascending=False, kind="stable").index
    assert display.features_ == [*order[:3], "7 other features"]
    image = display.image_.get_array()
    np.testing.assert_array_equal(image, expected_image(phi, display.rows_, 3))
    # Efficiency end to end: base value + Σφ = the model's output, up to
    # the rounding of 10 summed float64 values.
    np.testing.assert_allclose(
        f_line(display), explainer.raw_predict(X)[display.rows_], rtol=1e-9
    )
    assert display.f_ax_.get_ylabel() == "f(x)"
    assert display.ax_.get_xlabel() == "rows (ordered by similarity)"
    assert display.figure_ is display.ax_.figure is display.f_ax_.figure


def test_rows_by_similarity_are_the_leaves_of_a_ward_clustering(diabetes):
    explainer, X = diabetes
    phi = explainer.explain(X).to_numpy()
    display = HeatmapDisplay.from_values(phi)
    expected = leaves_list(linkage(phi, "ward", optimal_ordering=True))
    np.testing.assert_array_equal(display.rows_, expected)


def test_similar_rows_sit_side_by_side():
    rng = np.random.default_rng(1)
    centres = np.repeat([[5.0, -5.0, 0.0], [-5.0, 5.0, 1.0]], 15, axis=0)
    rows = rng.permutation(30)
    phi = (centres + rng.normal(scale=0.1, size=centres.shape))[rows]
    display = HeatmapDisplay.from_values(phi)
    groups = (rows[display.rows_] >= 15).astype(int)
    assert np.count_nonzero(np.diff(groups)) == 1  # two blocks, one change


def test_rows_by_prediction_rise_left_to_right(diabetes):
    explainer, X = diabetes
    display = HeatmapDisplay.from_explainer(explainer, X, row_order="prediction")
    prediction = explainer.raw_predict(X)[display.rows_]
    assert sorted(display.rows_) == list(range(len(X)))
    # Non-decreasing, up to the rounding that separates base + Σφ from f(x).
    assert np.all(np.diff(prediction) >= -1e-9 * np.abs(prediction).max())
    assert display.ax_.get_xlabel() == "rows (ordered by prediction)"


def test_rows_in_a_given_order_with_their_labels(diabetes):
    explainer, X = diabetes
    order = [5, 0, 17, 3]
    display = HeatmapDisplay.from_explainer(explainer, X, row_order=order)
    np.testing.assert_array_equal(display.rows_, order)
    phi = explainer.explain(X)
    np.testing.assert_array_equal(
        display.image_.get_array(), expected_image(phi, order, 9)
    )
    ticks = [tick.get_text() for tick in display.ax_.get_xticklabels()]
    assert ticks == [str(X.index[k]) for k in order]
    assert display.ax_.get_xlabel() == "rows (in the order given)"


def test_more_rows_than_max_rows_are_a_seeded_sample(diabetes):
    explainer, X = diabetes
    phi = explainer.explain(X)
    display = HeatmapDisplay.from_values(phi, max_rows=30, row_order="prediction")
    expected = np.random.default_rng(0).choice(len(X), size=30, replace=False)
    assert sorted(display.rows_) == sorted(expected)
    assert "30 of 120 rows, sampled at random" in display.f_ax_.get_title(loc="left")
    again = HeatmapDisplay.from_values(phi, max_rows=30, row_order="prediction")
    np.testing.assert_array_equal(again.rows_, display.rows_)
    whole = HeatmapDisplay.from_values(phi, max_rows=120)
    assert whole.f_ax_.get_title(loc="left") == ""


def test_a_forest_and_many_features_folded():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(200, 40)), columns=[f"f{j}" for j in range(40)])
    y = X["f0"] * 3 + X["f1"] * X["f2"] + rng.normal(size=200)
    model = RandomForestRegressor(n_estimators=10, max_depth=4, random_state=0)
    explainer = TreeExplainer(model.fit(X, y)).fit()
    display = HeatmapDisplay.from_explainer(explainer, X, max_display=6)
    assert display.features_[-1] == "35 other features"
    phi = explainer.explain(X)
    np.testing.assert_allclose(
        display.image_.get_array(), expected_image(phi, display.rows_, 5), rtol=1e-12
    )
    np.testing.assert_allclose(
        f_line(display), model.predict(X)[display.rows_], rtol=1e-9
    )
    assert outside_texts(display.figure_) == []


def test_colours_are_symmetric_about_zero(diabetes):
    explainer, X = diabetes
    display = HeatmapDisplay.from_explainer(explainer, X, max_display=3)
    phi = explainer.explain(X)
    drawn = np.abs(expected_image(phi, display.rows_, 2))
    low, high = display.image_.get_clim()
    assert low == -high
    assert high == np.quantile(drawn, 0.99, method="higher")
    # Above 100 cells, the largest lie beyond the scale: arrows say so.
    assert high < drawn.max()
    assert display.colorbar_.extend == "both"
    small = HeatmapDisplay.from_values(np.array([[1.0, -3.0], [0.5, 2.0]]))
    assert small.image_.get_clim() == (-3.0, 3.0)
    assert small.colorbar_.extend == "neither"
    zeros = HeatmapDisplay.from_values(np.zeros((3, 2)))
    assert zeros.image_.get_clim() == (-1.0, 1.0)  # a scale, though all is white


def test_one_output_of_several_by_its_name(wine):
    explainer, X = wine
    display = HeatmapDisplay.from_explainer(explainer, X, output="barbera")
    position = list(explainer.output_names_).index("barbera")
    phi = explainer.explain(X)["barbera"]
    np.testing.assert_array_equal(
        display.image_.get_array(), expected_image(phi, display.rows_, 9)
    )
    np.testing.assert_allclose(
        f_line(display), explainer.raw_predict(X)[display.rows_, position], rtol=1e-9
    )
    assert display.f_ax_.get_title(loc="left") == "output: barbera"
    assert "margin" in display.colorbar_.ax.get_xlabel()


def test_from_explainer_draws_what_from_values_draws(wine):
    explainer, X = wine
    built = HeatmapDisplay.from_explainer(
        explainer, X, output="grignolino", max_display=5, row_order="prediction"
    )
    given = HeatmapDisplay.from_values(
        explainer.explain(X),
        base_value=explainer.expected_value_,
        output="grignolino",
        max_display=5,
        row_order="prediction",
        raw_output=explainer.raw_output_,
    )
    np.testing.assert_array_equal(built.image_.get_array(), given.image_.get_array())
    np.testing.assert_array_equal(built.rows_, given.rows_)
    np.testing.assert_array_equal(f_line(built), f_line(given))
    assert built.features_ == given.features_
    assert built.colorbar_.ax.get_xlabel() == given.colorbar_.ax.get_xlabel()


def test_without_a_base_value_the_line_is_the_sum_of_phi():
    phi = np.array([[1.0, 2.0], [-1.0, 0.5], [0.0, 0.0]])
    display = HeatmapDisplay.from_values(phi, row_order=[2, 0, 1])
    np.testing.assert_array_equal(f_line(display), [0.0, 3.0, -0.5])
    assert display.f_ax_.get_ylabel() == "f(x) − base"


@pytest.mark.parametrize("n_rows", [1, 2, 1000])
def test_one_to_a_thousand_rows(n_rows):
    rng = np.random.default_rng(0)
    phi = rng.normal(size=(n_rows, 4))
    display = HeatmapDisplay.from_values(phi, base_value=1.0)
    assert display.image_.get_array().shape == (4, n_rows)
    assert display.ax_.get_xlim() == (-0.5, n_rows - 0.5)
    assert display.f_ax_.get_xlim() == display.ax_.get_xlim()
    assert outside_texts(display.figure_) == []


def test_axes_placed_by_hand_get_the_line_above_them():
    figure = plt.figure()
    ax = figure.add_axes((0.1, 0.1, 0.8, 0.6))
    display = HeatmapDisplay.from_values(np.eye(3), ax=ax)
    assert display.ax_ is ax
    assert display.f_ax_.get_position().y0 > ax.get_position().y1


LONG = [f"{'a very long feature name':<36}{j:04d}".replace(" ", "_") for j in range(6)]


@pytest.mark.parametrize("size", [None, (7.2, 6.0), (5.8, 4.0), (3.8, 3.0), (3.0, 3.0)])
def test_long_names_stay_inside_the_figure(size):
    rng = np.random.default_rng(0)
    phi = pd.DataFrame(rng.normal(size=(300, 6)), columns=LONG)
    phi = pd.concat({"a class with a long name": phi, "other": -phi}, axis=1)
    ax = None
    if size is not None:
        ax = plt.figure(figsize=size, layout="constrained").add_subplot()
    display = HeatmapDisplay.from_values(
        phi,
        base_value=pd.Series({"a class with a long name": 0.5, "other": -0.5}),
        max_rows=200,
        max_display=5,
        ax=ax,
        raw_output="log-odds",
    )
    assert len(LONG[0]) == 40
    assert outside_texts(display.figure_) == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"row_order": "random"}, r"row_order must be one of \['similarity', 'pre"),
        ({"row_order": [0, 0]}, "row_order names a row twice"),
        ({"row_order": [0, 3]}, r"positions outside 0..2: \[3\]"),
        ({"row_order": [0.5]}, "1-D array of row positions"),
        ({"row_order": []}, "1-D array of row positions"),
        ({"max_rows": 0}, "max_rows must be an int >= 1, got 0"),
        ({"output": "z"}, "phi has a single output"),
        ({"base_value": "zero"}, "base_value must be a number"),
    ],
)
def test_bad_input_is_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        HeatmapDisplay.from_values(np.ones((3, 2)), **kwargs)


def test_bad_output_and_shapes_are_named(wine):
    explainer, X = wine
    with pytest.raises(ValueError, match="output 'merlot' is not one of"):
        HeatmapDisplay.from_explainer(explainer, X, output="merlot")
    with pytest.raises(ValueError, match="phi must be the DataFrame"):
        HeatmapDisplay.from_values(np.ones(3))
    with pytest.raises(ValueError, match="max_display must be >= 1"):
        HeatmapDisplay.from_values(np.ones((3, 2)), max_display=0)
