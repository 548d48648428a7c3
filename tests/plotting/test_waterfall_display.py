"""WaterfallDisplay: from the base value to the prediction, one arrow each."""

import numpy as np
import pandas as pd
import pytest

plt = pytest.importorskip("matplotlib.pyplot")

from sklearn.ensemble import GradientBoostingRegressor  # noqa: E402

from skshapley import TreeExplainer  # noqa: E402
from skshapley.plotting import WaterfallDisplay  # noqa: E402


def spans(display):
    """(start, end) of each arrow, top row first: its tail and its tip."""
    return np.array([(a.get_xy()[0, 0], a.get_xy()[2, 0]) for a in display.arrows_])


def check_cascade(display, base, prediction):
    """Bottom arrow starts at the base value, each at the previous end, the top
    one ends at the prediction."""
    bottom_up = spans(display)[::-1]
    np.testing.assert_allclose(bottom_up[0, 0], base, rtol=1e-12)
    np.testing.assert_allclose(bottom_up[1:, 0], bottom_up[:-1, 1], rtol=1e-12)
    # Efficiency: base + Σφ = f(x); 1e-9 relative covers summation rounding.
    np.testing.assert_allclose(bottom_up[-1, 1], prediction, rtol=1e-9)
    np.testing.assert_allclose(display.prediction_, prediction, rtol=1e-9)


def test_draws_on_the_given_axes(diabetes):
    explainer, X = diabetes
    figure, ax = plt.subplots()
    display = WaterfallDisplay.from_explainer(explainer, X, 1003, ax=ax)
    assert display.ax_ is ax
    assert display.figure_ is figure


def test_goes_from_the_base_value_to_the_raw_prediction(diabetes):
    explainer, X = diabetes
    display = WaterfallDisplay.from_explainer(explainer, X, 1003)
    assert display.figure_ is display.ax_.figure
    prediction = explainer.raw_predict(X.loc[[1003]])[0]
    check_cascade(display, explainer.expected_value_, prediction)
    texts = [text.get_text() for text in display.ax_.texts]
    assert f"base value = {explainer.expected_value_:.4g}" in texts
    assert f"f(x) = {prediction:.4g}" in texts


def test_largest_first_labelled_feature_equals_value(diabetes):
    explainer, X = diabetes
    phi = explainer.explain(X.loc[[1003]]).iloc[0]
    display = WaterfallDisplay.from_explainer(explainer, X, 1003)
    order = phi.abs().sort_values(ascending=False, kind="stable").index
    expected = [
        f"{name} = {X.loc[1003, name]:.3g}".replace("-", "\u2212") for name in order
    ]
    assert display.labels_ == expected
    np.testing.assert_allclose(np.diff(spans(display), axis=1)[:, 0], phi[order])
    rising = [a for a, v in zip(display.arrows_, phi[order], strict=True) if v > 0]
    colors = {tuple(arrow.get_facecolor()) for arrow in rising}
    assert colors == {plt.matplotlib.colors.to_rgba("#e4324e")}


def test_max_display_folds_the_smallest_into_one_row(diabetes):
    explainer, X = diabetes
    phi = explainer.explain(X.loc[[1005]]).iloc[0]
    display = WaterfallDisplay.from_explainer(explainer, X, 1005, max_display=4)
    assert len(display.arrows_) == 4
    assert display.labels_[-1] == "7 other features"
    smallest = phi.abs().sort_values(ascending=False, kind="stable").index[3:]
    np.testing.assert_allclose(np.diff(spans(display)[-1]), phi[smallest].sum())
    check_cascade(
        display, explainer.expected_value_, explainer.raw_predict(X.loc[[1005]])[0]
    )


def test_multi_output(iris):
    explainer, X = iris
    raw = explainer.raw_predict(X.loc[[120]])[0]
    default = WaterfallDisplay.from_explainer(explainer, X, 120)
    assert default.ax_.get_title(loc="left") == "output: 0"
    check_cascade(default, explainer.expected_value_[0], raw[0])
    display = WaterfallDisplay.from_explainer(explainer, X, 120, output=2)
    assert display.ax_.get_title(loc="left") == "output: 2"
    check_cascade(display, explainer.expected_value_[2], raw[2])


def test_from_values_with_a_row_of_phi(iris):
    explainer, X = iris
    phi = explainer.explain(X)
    display = WaterfallDisplay.from_values(
        phi.loc[7], explainer.expected_value_, x_row=X.loc[[7]], output="1"
    )
    check_cascade(display, explainer.expected_value_[1], explainer.raw_predict(X)[7, 1])
    assert all(" = " in label for label in display.labels_)


def test_kernel_explainer_with_an_array(kernel):
    explainer, X = kernel
    display = WaterfallDisplay.from_explainer(explainer, X.to_numpy(), 3)
    prediction = explainer.raw_predict(X.iloc[[3]])[0]
    check_cascade(display, explainer.expected_value_, prediction)
    assert display.labels_[0].startswith(tuple(X.columns))


def test_arrays_strings_and_integers_in_labels():
    display = WaterfallDisplay.from_values(
        np.array([2.0, -0.5, 0.25]),
        1.0,
        x_row=["red", 3, 1234567.0],
        feature_names=["colour", "count", "income"],
    )
    assert display.labels_ == ["colour = red", "count = 3", "income = 1.23e+06"]
    check_cascade(display, 1.0, 2.75)
    unnamed = WaterfallDisplay.from_values([0.0, 0.0], 5.0)
    assert unnamed.labels_ == ["x0", "x1"]
    check_cascade(unnamed, 5.0, 5.0)


def test_bad_input_is_named(iris, diabetes):
    explainer, X = iris
    phi = explainer.explain(X)
    with pytest.raises(ValueError, match="row 'nope' is not a label of X's index"):
        WaterfallDisplay.from_explainer(explainer, X, "nope")
    with pytest.raises(
        ValueError, match="phi_row must be one row; got a DataFrame of 2"
    ):
        WaterfallDisplay.from_values(phi.iloc[:2], explainer.expected_value_)
    with pytest.raises(ValueError, match=r"output 5 is not one of phi's outputs"):
        WaterfallDisplay.from_values(phi.iloc[0], explainer.expected_value_, output=5)
    with pytest.raises(ValueError, match="base_value must be a number"):
        WaterfallDisplay.from_values(phi.iloc[0], "zero")
    with pytest.raises(
        ValueError, match="base_value has 3 outputs and the Shapley values one"
    ):
        WaterfallDisplay.from_values(
            phi.iloc[0, :4].droplevel(0), explainer.expected_value_
        )
    with pytest.raises(ValueError, match="row must be a position in X"):
        WaterfallDisplay.from_explainer(explainer, X.to_numpy(), 500)
    with pytest.raises(ValueError, match="x_row has shape"):
        WaterfallDisplay.from_values([1.0, 2.0], 0.0, x_row=[1.0])
    duplicated = diabetes[1].iloc[[0, 0]]
    with pytest.raises(ValueError, match="has the label 1000 2 times"):
        WaterfallDisplay.from_explainer(diabetes[0], duplicated, 1000)
    with pytest.raises(ValueError, match="max_display must be >= 1"):
        WaterfallDisplay.from_values(
            phi.iloc[0], explainer.expected_value_, max_display=0
        )


def test_the_display_can_be_built_and_plotted_in_two_steps():
    phi = pd.Series({"a": 1.0, "b": -2.0})
    display = WaterfallDisplay(phi, 10.0, feature_values=pd.Series({"a": 0.5}))
    display.plot(max_display=1)
    assert display.labels_ == ["2 other features"]
    check_cascade(display, 10.0, 9.0)
    display.plot()
    assert display.labels_ == ["b", "a = 0.5"]


def test_a_model_without_names_takes_values_by_position(diabetes):
    X = diabetes[1]
    model = GradientBoostingRegressor(n_estimators=5, random_state=0)
    explainer = TreeExplainer(model.fit(X.to_numpy(), X["bp"])).fit()
    unnamed = X.set_axis(range(X.shape[1]), axis=1)  # columns 0..9, names x0..x9
    display = WaterfallDisplay.from_explainer(explainer, unnamed, 1002)
    value = f"{X.loc[1002, 'bmi']:.3g}".replace("-", "\u2212")
    assert f"x2 = {value}" in display.labels_


def test_arrow_values_are_written_with_one_precision():
    phi = pd.Series({"a": 0.3, "b": -0.25, "c": 0.1})
    display = WaterfallDisplay.from_values(phi, 1.0)
    values = [text.get_text() for text in display.ax_.texts[:3]]  # bottom first
    assert values == ["+0.10", "\u22120.25", "+0.30"]
