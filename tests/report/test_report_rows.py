"""The waterfalls: the rows asked for, or distinct highest / median / lowest."""

import re
from html import unescape

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_diabetes, load_iris
from sklearn.ensemble import (
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)

from skshapley import TreeExplainer
from skshapley.report import report

pytest.importorskip("matplotlib")


def shown(path) -> list[tuple[str, str]]:
    """``(data-row, caption text)`` of each waterfall, in page order."""
    source = path.read_text(encoding="utf-8")
    found = re.findall(
        r'<figure data-row="([^"]*)">.*?<figcaption>(.*?)</figcaption>', source
    )
    return [
        (unescape(row), unescape(re.sub("<[^>]+>", "", text))) for row, text in found
    ]


def caption_number(caption: str, name: str) -> float:
    """The number after ``name`` in a caption (typographic minus undone)."""
    text = re.search(rf"{re.escape(name)} ([−\d.e+]+)", caption).group(1)
    return float(text.replace("−", "-"))


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    X = X.iloc[:60].set_axis([f"patient-{j}" for j in range(60)])
    model = GradientBoostingRegressor(n_estimators=10, random_state=0)
    return TreeExplainer(model.fit(X, y.iloc[:60])).fit(), X


def test_chosen_rows_in_their_order_with_their_predictions(diabetes, tmp_path):
    explainer, X = diabetes
    labels = ["patient-7", "patient-3", "patient-7", "patient-41"]
    path = report(explainer, X, tmp_path / "r.html", show_rows=labels, top_k=0)
    figures = shown(path)
    assert [row for row, _ in figures] == ["patient-7", "patient-3", "patient-41"]
    raw = explainer.raw_predict(X.loc[["patient-7", "patient-3", "patient-41"]])
    for (_, caption), value in zip(figures, raw, strict=True):
        assert caption.startswith("Chosen row")
        # Four significant digits, as the caption writes them.
        assert caption_number(caption, "f(x) =") == float(f"{value:.4g}")


def test_array_rows_are_positions(diabetes, tmp_path):
    explainer, X = diabetes
    path = report(
        explainer, X.to_numpy(), tmp_path / "a.html", show_rows=[5, 0], top_k=0
    )
    assert [row for row, _ in shown(path)] == ["5", "0"]


def test_default_rows_are_highest_median_lowest(diabetes, tmp_path):
    explainer, X = diabetes
    path = report(explainer, X, tmp_path / "d.html", top_k=0)
    raw = explainer.raw_predict(X)
    order = np.argsort(raw, kind="stable")
    expected = [
        X.index[order[-1]],
        X.index[order[(len(X) - 1) // 2]],
        X.index[order[0]],
    ]
    figures = shown(path)
    assert [row for row, _ in figures] == expected
    assert [caption.split(" prediction")[0] for _, caption in figures] == [
        "Highest",
        "Median",
        "Lowest",
    ]


def test_median_differs_from_lowest_with_tied_probabilities(tmp_path):
    X, y = load_iris(return_X_y=True, as_frame=True)
    model = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, y)
    explainer = TreeExplainer(model).fit()
    proba = explainer.raw_predict(X)[:, 0]  # setosa: two thirds of rows at 0
    assert np.sort(proba)[(len(X) - 1) // 2] == proba.min()  # the tie
    path = report(explainer, X, tmp_path / "p.html", output=0, top_k=0)
    figures = shown(path)
    values = [proba[int(row)] for row, _ in figures]
    assert len(set(values)) == len(values) == 3
    assert values[0] == proba.max()
    assert values[2] == proba.min()
    assert proba.min() < values[1] < proba.max()
    # A probability of 0 is written 0, never as rounding noise.
    assert re.search(r"f\(x\) = 0\b", figures[2][1])


def test_probability_of_log_odds_rows_is_predict_proba(tmp_path):
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    X, y = X.iloc[:100, :5], y.iloc[:100]
    model = HistGradientBoostingClassifier(max_iter=5, random_state=0).fit(X, y)
    explainer = TreeExplainer(model).fit()
    path = report(explainer, X, tmp_path / "b.html", top_k=0)
    proba = model.predict_proba(X)[:, 1]
    for row, caption in shown(path):
        number = caption_number(caption, "probability of class 1:")
        assert number == float(f"{proba[int(row)]:.4g}")
    summary = path.read_text(encoding="utf-8")
    base = 1 / (1 + np.exp(-explainer.expected_value_))
    assert f"sigmoid(base value), is {base:.4g}" in summary


@pytest.mark.parametrize(
    ("show_rows", "error", "match"),
    [
        (["patient-3", "nobody"], ValueError, "not in X: nobody.*e.g. patient-0"),
        ([], ValueError, "1 to 12 rows"),
        ([f"patient-{j}" for j in range(13)], ValueError, "1 to 12 rows, got 13"),
        ("patient-3", TypeError, "sequence of row labels"),
        (3, TypeError, "sequence of row labels"),
    ],
)
def test_bad_show_rows(diabetes, tmp_path, show_rows, error, match):
    explainer, X = diabetes
    with pytest.raises(error, match=match):
        report(explainer, X, tmp_path / "bad.html", show_rows=show_rows)
