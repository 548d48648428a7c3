"""DecisionDisplay: each row's path from the base value to f(x)."""

import numpy as np
import pandas as pd
import pytest

plt = pytest.importorskip("matplotlib.pyplot")

from matplotlib.colors import to_rgba  # noqa: E402

# The lead switches this to clip16's tests/plotting/text_bounds.py at merge.
from plotting.text_bounds import outside_texts  # noqa: E402
from sklearn.datasets import load_breast_cancer, load_iris  # noqa: E402
from sklearn.ensemble import HistGradientBoostingClassifier  # noqa: E402

from skshapley import TreeExplainer  # noqa: E402
from skshapley.plotting import DecisionDisplay  # noqa: E402


@pytest.fixture(scope="module")
def cancer():
    """A binary boosted classifier explained on its log-odds, and 60 rows."""
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    model = HistGradientBoostingClassifier(max_iter=20, random_state=0).fit(X, y)
    return TreeExplainer(model).fit(), X.iloc[:60]


@pytest.fixture(scope="module")
def flowers():
    """A three-class boosted classifier of irises named by strings (margins)."""
    X, y = load_iris(return_X_y=True, as_frame=True)
    names = np.array(["setosa", "versicolor", "virginica"])[y]
    model = HistGradientBoostingClassifier(max_iter=10, random_state=0)
    return TreeExplainer(model.fit(X, names)).fit(), X.iloc[::5]


def running_totals(phi: pd.DataFrame, base: float, n_shown: int) -> np.ndarray:
    """Per row: the base value, then + the folded features' sum, then + each
    shown feature from the least important to the most."""
    order = phi.abs().mean().sort_values(ascending=False, kind="stable").index
    steps = [phi[name].to_numpy() for name in order[:n_shown][::-1]]
    if len(order) > n_shown:
        steps.insert(0, phi[order[n_shown:]].sum(axis=1).to_numpy())
    totals = [np.full(len(phi), base)]
    for step in steps:
        totals.append(totals[-1] + step)
    return np.column_stack(totals)


def xdata(display) -> np.ndarray:
    return np.array([line.get_xdata() for line in display.lines_])


def test_lines_climb_from_the_base_value_to_the_prediction(diabetes):
    explainer, X = diabetes
    display = DecisionDisplay.from_explainer(explainer, X.iloc[:30], max_display=4)
    phi = explainer.explain(X.iloc[:30])
    base = explainer.expected_value_
    np.testing.assert_allclose(xdata(display), running_totals(phi, base, 3))
    assert (xdata(display)[:, 0] == base).all()
    # Efficiency end to end, up to the rounding of 10 summed values.
    np.testing.assert_allclose(
        xdata(display)[:, -1], explainer.raw_predict(X.iloc[:30]), rtol=1e-9
    )
    order = phi.abs().mean().sort_values(ascending=False, kind="stable").index
    assert display.features_ == [*order[:3], "7 other features"]
    for line in display.lines_:
        np.testing.assert_array_equal(line.get_ydata(), np.arange(5))
    ticks = [tick.get_text() for tick in display.ax_.get_yticklabels()]
    assert ticks == display.features_[::-1]
    (base_line,) = [
        line for line in display.ax_.get_lines() if line.get_linestyle() == "--"
    ]
    assert set(base_line.get_xdata()) == {base}
    assert display.ax_.get_xlabel() == "model output"
    # Every line inside the axes, clear of their edges.
    low, high = display.ax_.get_xlim()
    assert low < xdata(display).min()
    assert xdata(display).max() < high


def test_logit_draws_the_probabilities_of_the_model(cancer):
    explainer, X = cancer
    assert explainer.raw_output_ == "log-odds"
    display = DecisionDisplay.from_explainer(explainer, X, link="logit")
    phi = explainer.explain(X)
    totals = running_totals(phi, explainer.expected_value_, 19)
    np.testing.assert_allclose(xdata(display), 1 / (1 + np.exp(-totals)), rtol=1e-12)
    # predict_proba's own sigmoid of the same log-odds: 1e-9 covers the
    # rounding of 30 summed values.
    np.testing.assert_allclose(
        xdata(display)[:, -1],
        explainer.model.predict_proba(X)[:, 1],
        rtol=1e-9,
        atol=1e-12,
    )
    assert display.ax_.get_xlabel() == "probability"


def test_logit_needs_log_odds_and_link_must_be_known(flowers):
    explainer, X = flowers
    assert explainer.raw_output_ == "margin"
    with pytest.raises(ValueError, match=r"only log-odds give.*'margin'"):
        DecisionDisplay.from_explainer(explainer, X, link="logit")
    with pytest.raises(ValueError, match=r"link must be one of \['identity', 'logit'"):
        DecisionDisplay.from_explainer(explainer, X, link="probit")
    with pytest.raises(ValueError, match=r"only log-odds give.*None"):
        DecisionDisplay.from_values(np.ones((2, 2)), 0.0, link="logit")


def test_one_output_of_several_by_its_name(flowers):
    explainer, X = flowers
    display = DecisionDisplay.from_explainer(explainer, X, output="virginica")
    position = list(explainer.output_names_).index("virginica")
    phi = explainer.explain(X)["virginica"]
    base = explainer.expected_value_["virginica"]
    np.testing.assert_allclose(xdata(display), running_totals(phi, base, 4))
    np.testing.assert_allclose(
        xdata(display)[:, -1], explainer.raw_predict(X)[:, position], rtol=1e-9
    )
    assert display.ax_.get_title(loc="left") == "output: virginica"
    assert display.ax_.get_xlabel() == "model output, margin"


def test_from_explainer_draws_what_from_values_draws(flowers):
    explainer, X = flowers
    built = DecisionDisplay.from_explainer(
        explainer, X, output="versicolor", max_display=2, highlight=[1]
    )
    given = DecisionDisplay.from_values(
        explainer.explain(X),
        explainer.expected_value_,
        feature_values=X,
        output="versicolor",
        max_display=2,
        highlight=[1],
        raw_output=explainer.raw_output_,
    )
    np.testing.assert_array_equal(xdata(built), xdata(given))
    assert built.features_ == given.features_ == given.labels_
    np.testing.assert_array_equal(
        [to_rgba(line.get_color()) for line in built.lines_],
        [to_rgba(line.get_color()) for line in given.lines_],
    )


def test_lines_are_coloured_by_prediction_and_highlighted(diabetes):
    explainer, X = diabetes
    display = DecisionDisplay.from_explainer(explainer, X.iloc[:10], highlight=[2, 7])
    ends = explainer.raw_predict(X.iloc[:10])
    colors = np.array([to_rgba(line.get_color()) for line in display.lines_])
    widths = np.array([line.get_linewidth() for line in display.lines_])
    plain = np.array([k not in (2, 7) for k in range(10)])
    # The colour map's colour at each f(x), on a scale from the lowest to
    # the highest (1e-9: f(x) from raw_predict, the lines from base + Σφ).
    levels = (ends - ends.min()) / (ends.max() - ends.min())
    expected = display.colorbar_.cmap(levels)
    np.testing.assert_allclose(colors[plain], expected[plain], atol=1e-2)
    assert (colors[2] == colors[7]).all()
    assert not np.isclose(colors[plain], colors[2]).all(axis=1).any()
    assert widths[2] == widths[7] > widths[plain].max()
    np.testing.assert_allclose(
        display.colorbar_.mappable.get_clim(), (ends.min(), ends.max()), rtol=1e-9
    )


def test_one_row_is_labelled_with_its_values(diabetes):
    explainer, X = diabetes
    display = DecisionDisplay.from_explainer(explainer, X.loc[[1003]], max_display=4)
    phi = explainer.explain(X.loc[[1003]]).iloc[0]
    order = phi.abs().sort_values(ascending=False, kind="stable").index[:3]
    expected = [
        f"{name} = {X.loc[1003, name]:.3g}".replace("-", "\u2212") for name in order
    ]
    assert display.labels_ == [*expected, "7 other features"]
    assert display.colorbar_ is None
    assert len(display.lines_) == 1
    row = DecisionDisplay.from_values(
        explainer.explain(X).loc[1003],
        explainer.expected_value_,
        feature_values=X.loc[1003],
        max_display=4,
    )
    assert row.labels_ == display.labels_
    np.testing.assert_array_equal(xdata(row), xdata(display))


LONG = [f"{'a very long feature name':<36}{j:04d}".replace(" ", "_") for j in range(25)]


@pytest.mark.parametrize("size", [None, (7.2, 6.0), (5.8, 4.0), (3.8, 3.0)])
@pytest.mark.parametrize("n_rows", [1, 40])
def test_long_names_stay_inside_the_figure(size, n_rows):
    rng = np.random.default_rng(0)
    phi = pd.DataFrame(rng.normal(size=(n_rows, 25)), columns=LONG)
    X = pd.DataFrame(rng.normal(size=(n_rows, 25)) * 1e4, columns=LONG)
    ax = None
    if size is not None:
        ax = plt.figure(figsize=size, layout="constrained").add_subplot()
    display = DecisionDisplay.from_values(
        pd.concat({"a class with a long name": phi}, axis=1),
        0.3,
        feature_values=X,
        ax=ax,
        link="logit",
        raw_output="log-odds",
    )
    assert len(LONG[0]) == 40
    assert display.features_[-1] == "6 other features"
    assert outside_texts(display.figure_) == []


@pytest.mark.parametrize(
    ("kwargs", "message"),
    [
        ({"highlight": [3]}, r"highlight has positions outside 0..2: \[3\]"),
        ({"highlight": 1.5}, "highlight must be a row position"),
        ({"highlight": [True]}, "highlight must be a row position"),
        ({"highlight": [[0]]}, "highlight must be a row position"),
        ({"output": "z"}, "phi has a single output"),
        ({"max_display": 0}, "max_display must be >= 1"),
        ({"feature_values": np.ones((2, 2))}, r"X has shape \(2, 2\) and phi"),
    ],
)
def test_bad_input_is_named(kwargs, message):
    with pytest.raises(ValueError, match=message):
        DecisionDisplay.from_values(np.ones((3, 2)), 0.0, **kwargs)


def test_bad_shapes_and_base_values_are_named(flowers):
    explainer, X = flowers
    phi = explainer.explain(X)
    with pytest.raises(ValueError, match="phi must be the DataFrame"):
        DecisionDisplay.from_values(np.ones((2, 2, 2)), 0.0)
    with pytest.raises(ValueError, match="base_value must be a number"):
        DecisionDisplay.from_values(phi, "zero")
    with pytest.raises(ValueError, match="output 'rose' is not one of"):
        DecisionDisplay.from_values(phi, explainer.expected_value_, output="rose")
    with pytest.raises(ValueError, match="X's index differs from phi's"):
        DecisionDisplay.from_values(
            phi, explainer.expected_value_, feature_values=X[::-1]
        )


def test_highlighted_extreme_rows_stay_inside_the_axes(diabetes):
    explainer, X = diabetes
    rows = X.iloc[:60]
    ends = explainer.explain(rows).sum(axis=1).to_numpy()
    extremes = [int(np.argmax(ends)), int(np.argmin(ends))]
    display = DecisionDisplay.from_explainer(explainer, rows, highlight=extremes)
    display.figure_.canvas.draw()
    frame = display.ax_.get_window_extent()
    for position in extremes:
        line = display.lines_[position]
        # The line's extent in pixels, its width included.
        half_width = line.get_linewidth() * display.figure_.dpi / 72 / 2
        points = display.ax_.transData.transform(line.get_xydata())
        assert frame.x0 <= points[:, 0].min() - half_width
        assert points[:, 0].max() + half_width <= frame.x1
        assert points[:, 1].max() + half_width <= frame.y1
    assert outside_texts(display.figure_) == []
