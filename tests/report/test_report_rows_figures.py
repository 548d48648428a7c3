"""The report's heatmap and decision plot: which rows they draw, and where."""

import numpy as np
import pytest
from scipy.special import expit

pytest.importorskip("matplotlib")

from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.ensemble import (
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
)

from skshapley import TreeExplainer
from skshapley.plotting import DecisionDisplay, HeatmapDisplay
from skshapley.report import report


def drawn(monkeypatch, display_class, snapshot=lambda display: display) -> list:
    """``snapshot`` of every display of ``display_class`` the report builds.

    Taken as soon as it is drawn: the report clears each figure once saved.
    """
    displays = []
    build = display_class.from_values.__func__

    def recording(cls, *args, **kwargs):
        display = build(cls, *args, **kwargs)
        displays.append(snapshot(display))
        return display

    monkeypatch.setattr(display_class, "from_values", classmethod(recording))
    return displays


@pytest.fixture(scope="module")
def binary():
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    X.index = [f"patient {i}" for i in range(len(X))]
    model = HistGradientBoostingClassifier(max_iter=20, random_state=0).fit(X, y)
    return TreeExplainer(model).fit(), X.iloc[:300]


@pytest.fixture(scope="module")
def regression():
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    model = GradientBoostingRegressor(n_estimators=20, random_state=0).fit(X, y)
    return TreeExplainer(model).fit(), X


def test_decision_plot_draws_the_shown_rows_in_bold_on_the_probability_scale(
    binary, monkeypatch, tmp_path
):
    explainer, X = binary
    displays = drawn(monkeypatch, DecisionDisplay)
    shown = ["patient 7", "patient 3"]
    report(explainer, X, tmp_path / "r.html", show_rows=shown, top_k=0)
    (display,) = displays
    widths = np.array([line.get_linewidth() for line in display.lines_])
    bold = np.flatnonzero(widths == widths.max())
    assert len(bold) == len(shown)
    # Rows 0, 3, ..., 297 (every third of the 300, 100 rows) and the shown
    # ones; patient 3 is both.
    assert len(display.lines_) == 99 + len(shown)
    # The bold lines end at the model's own probability of the shown rows.
    probability = explainer.model.predict_proba(X.loc[shown])[:, 1]
    ends = [display.lines_[j].get_xdata()[-1] for j in bold]
    np.testing.assert_allclose(ends, probability, rtol=1e-12)
    # The others are plotted rows, ending at theirs: none is a shown row.
    thin = [
        display.lines_[j].get_xdata()[-1] for j in np.flatnonzero(widths < widths.max())
    ]
    every = expit(explainer.raw_predict(X))
    assert all(np.isclose(every, end, rtol=1e-12, atol=0).any() for end in thin)
    assert not set(np.round(thin, 12)) & set(np.round(probability, 12))


def test_decision_plot_of_a_value_stays_on_its_scale(regression, monkeypatch, tmp_path):
    explainer, X = regression
    displays = drawn(monkeypatch, DecisionDisplay)
    report(explainer, X.iloc[:40], tmp_path / "r.html", show_rows=[5], top_k=0)
    (display,) = displays
    widths = [line.get_linewidth() for line in display.lines_]
    bold = display.lines_[int(np.argmax(widths))]
    expected = explainer.raw_predict(X.iloc[[5]])[0]
    assert bold.get_xdata()[-1] == pytest.approx(expected, rel=1e-12)
    assert bold.get_xdata()[0] == pytest.approx(explainer.expected_value_, rel=1e-12)
    assert len(display.lines_) == 40  # every row: fewer than 100


def test_heatmap_draws_a_sample_of_every_row_with_its_prediction(
    regression, monkeypatch, tmp_path
):
    explainer, X = regression
    displays = drawn(
        monkeypatch,
        HeatmapDisplay,
        lambda display: (display.rows_, display.f_ax_.get_lines()[-1].get_ydata()),
    )
    report(explainer, X, tmp_path / "r.html", top_k=0)
    ((rows, line),) = displays
    assert sorted(rows) == list(range(len(X)))  # 442 rows: all drawn
    predictions = explainer.raw_predict(X)[rows]
    np.testing.assert_allclose(line, predictions, rtol=1e-12)
