"""DependenceDisplay: a feature's Shapley values against its values."""

import numpy as np
import pandas as pd
import pytest

plt = pytest.importorskip("matplotlib.pyplot")

from skshapley.plotting import DependenceDisplay  # noqa: E402
from skshapley.plotting._dependence import strongest_interaction  # noqa: E402


def test_draws_on_the_given_axes(diabetes):
    explainer, X = diabetes
    figure, ax = plt.subplots()
    display = DependenceDisplay.from_explainer(explainer, X, "bmi", ax=ax)
    assert display.ax_ is ax
    assert display.figure_ is figure


def test_points_are_the_feature_values_and_their_shapley_values(diabetes):
    explainer, X = diabetes
    phi = explainer.explain(X)
    display = DependenceDisplay.from_values(phi, X, "bmi", color=None)
    assert display.figure_ is display.ax_.figure
    offsets = display.scatter_.get_offsets()
    np.testing.assert_array_equal(offsets[:, 0], X["bmi"].to_numpy())
    np.testing.assert_array_equal(offsets[:, 1], phi["bmi"].to_numpy())
    assert display.colorbar_ is None
    assert display.ax_.get_xlabel() == "bmi"
    assert display.ax_.get_ylabel() == "Shapley value of bmi"


def test_colour_by_a_named_column(diabetes):
    explainer, X = diabetes
    display = DependenceDisplay.from_explainer(explainer, X, "bmi", color="s5")
    assert display.color_feature == "s5"
    assert display.colorbar_.ax.get_ylabel() == "s5"
    pd.testing.assert_series_equal(display.color_values, X["s5"])


def test_auto_colour_finds_the_interacting_feature():
    # f = x0 * x1 + x2: at a fixed x0, x0's Shapley value x0 * x1 / 2 (for
    # centred features) moves with x1 only.
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(300, 3)), columns=["x0", "x1", "x2"])
    phi = pd.DataFrame(
        {"x0": X.x0 * X.x1 / 2, "x1": X.x0 * X.x1 / 2, "x2": X.x2}, index=X.index
    )
    display = DependenceDisplay.from_values(phi, X, "x0")
    assert display.color_feature == "x1"
    # Shapley values that vary with nothing else: no interaction to show
    assert strongest_interaction(X.x2, pd.Series(0.0, index=X.index), X) is None
    # a feature alone in X: nothing to colour by
    alone = DependenceDisplay.from_values(phi[["x2"]], X[["x2"]], "x2")
    assert alone.color_feature is None
    assert alone.colorbar_ is None


def test_auto_colour_ignores_missing_and_reads_categories():
    rng = np.random.default_rng(1)
    n = 200
    group = rng.choice(["a", "b"], size=n)
    x0 = rng.normal(size=n)
    noise = rng.normal(size=n)
    noise[::3] = np.nan
    X = pd.DataFrame({"x0": x0, "group": group, "noise": noise})
    phi = pd.DataFrame(
        {"x0": x0 * (group == "b"), "group": 0.0, "noise": 0.0}, index=X.index
    )
    display = DependenceDisplay.from_values(phi, X, "x0")
    assert display.color_feature == "group"
    labels = [t.get_text() for t in display.colorbar_.ax.get_yticklabels()]
    assert labels == ["a", "b"]


def test_non_numeric_feature_is_drawn_at_its_category_codes():
    X = pd.DataFrame({"colour": ["red", "blue", "red"], "size": [1.0, 2.0, 3.0]})
    phi = pd.DataFrame({"colour": [1.0, -1.0, 0.5], "size": [0.0, 0.1, 0.2]})
    display = DependenceDisplay.from_values(phi, X, "colour", color=None)
    np.testing.assert_array_equal(display.scatter_.get_offsets()[:, 0], [1, 0, 1])
    ticks = [t.get_text() for t in display.ax_.get_xticklabels()]
    assert ticks == ["blue", "red"]


def test_multi_output(iris):
    explainer, X = iris
    feature = "petal length (cm)"
    default = DependenceDisplay.from_explainer(explainer, X, feature)
    assert default.ax_.get_title(loc="left") == "output: 0"
    display = DependenceDisplay.from_explainer(explainer, X, feature, output="2")
    assert display.ax_.get_title(loc="left") == "output: 2"
    expected = explainer.explain(X)[2][feature].to_numpy()
    np.testing.assert_array_equal(display.scatter_.get_offsets()[:, 1], expected)


def test_kernel_explainer_with_an_array(kernel):
    explainer, X = kernel
    phi = explainer.explain(X)
    display = DependenceDisplay.from_values(phi, X.to_numpy(), "bp", color="bmi")
    np.testing.assert_array_equal(display.scatter_.get_offsets()[:, 0], X["bp"])


def test_unknown_names_are_named(diabetes):
    explainer, X = diabetes
    phi = explainer.explain(X)
    with pytest.raises(ValueError, match=r"Unknown feature \['height'\]"):
        DependenceDisplay.from_values(phi, X, "height")
    with pytest.raises(ValueError, match=r"Unknown color column \['weight'\]"):
        DependenceDisplay.from_values(phi, X, "bmi", color="weight")
    with pytest.raises(ValueError, match="X has no column 'bmi'"):
        DependenceDisplay.from_values(phi, X.drop(columns="bmi"), "bmi")


def test_colours_clip_at_the_5th_and_95th_percentiles():
    from matplotlib import colormaps

    X = pd.DataFrame({"a": np.arange(101.0), "b": np.arange(101.0)})
    phi = pd.DataFrame({"a": np.zeros(101), "b": np.zeros(101)})
    display = DependenceDisplay.from_values(phi, X, "a", color="b")
    display.plot(cmap="viridis")
    colors = display.scatter_.get_facecolors()[:, :3]
    viridis = colormaps["viridis"]
    np.testing.assert_allclose(
        colors[[0, 5, 50, 95, 100]], viridis([0.0, 0.0, 0.5, 1.0, 1.0])[:, :3]
    )
    assert display.colorbar_.mappable.norm.vmin == 5.0


def interaction_frame(values: np.ndarray, names: list) -> pd.DataFrame:
    """A hand-made explain_interactions frame of (n_samples, d, d) values."""
    index = pd.MultiIndex.from_product(
        [range(len(values)), names], names=["row", "feature"]
    )
    return pd.DataFrame(values.reshape(-1, len(names)), index=index, columns=names)


def test_auto_colour_is_the_largest_mean_abs_interaction():
    rng = np.random.default_rng(3)
    names = ["a", "b", "c", "d"]
    X = pd.DataFrame(rng.normal(size=(40, 4)), columns=names)
    # b correlates with a's Shapley values (the heuristic's pick); the
    # interaction values say d.
    phi = pd.DataFrame(rng.normal(size=(40, 4)), columns=names)
    phi["a"] = 3.0 * X["b"]
    values = np.zeros((40, 4, 4))
    values[:, 0, 1] = values[:, 1, 0] = 0.1
    values[:, 0, 3] = values[:, 3, 0] = rng.choice([-0.3, 0.3], size=40)
    values[:, 0, 2] = values[:, 2, 0] = 0.2
    frame = interaction_frame(values, names)
    heuristic = DependenceDisplay.from_values(phi, X, "a")
    assert heuristic.color_feature == "b"
    display = DependenceDisplay.from_values(phi, X, "a", interactions=frame)
    assert display.color_feature == "d"
    pd.testing.assert_series_equal(display.color_values, X["d"])
    # A partner without a column in X is not a candidate.
    display = DependenceDisplay.from_values(
        phi, X[["a", "b", "c"]], "a", interactions=frame
    )
    assert display.color_feature == "c"
    values[:, 0, 1:] = values[:, 1:, 0] = 0.0
    display = DependenceDisplay.from_values(
        phi, X, "a", interactions=interaction_frame(values, names)
    )
    assert display.color_feature is None
    assert display.colorbar_ is None


def test_interactions_must_be_of_the_drawn_rows():
    names = ["a", "b"]
    phi = pd.DataFrame(np.ones((5, 2)), columns=names)
    frame = interaction_frame(np.ones((4, 2, 2)), names)
    with pytest.raises(ValueError, match="they must be phi's 5 rows"):
        DependenceDisplay.from_values(phi, phi, "a", interactions=frame)


@pytest.mark.parametrize("fixture", ["diabetes", "iris"])
def test_from_explainer_colours_by_the_explainers_interactions(request, fixture):
    explainer, X = request.getfixturevalue(fixture)
    X = X.iloc[:60]
    feature = str(X.columns[2])
    display = DependenceDisplay.from_explainer(explainer, X, feature)
    # Independently: the interaction values of the first output, by .loc.
    frame = explainer.explain_interactions(X)
    if isinstance(frame.columns, pd.MultiIndex):
        frame = frame[explainer.output_names_[0]]
    strength = {
        other: np.mean([abs(frame.loc[(row, feature), other]) for row in X.index])
        for other in frame.columns
        if other != feature
    }
    assert display.color_feature == max(strength, key=strength.get)
    again = DependenceDisplay.from_values(
        explainer.explain(X), X, feature, interactions=frame,
        raw_output=explainer.raw_output_,
    )  # fmt: skip
    assert again.color_feature == display.color_feature
    # A named colour or None asks for no interaction values.
    assert (
        DependenceDisplay.from_explainer(
            explainer, X, feature, color=None
        ).color_feature
        is None
    )
