"""Reports of each kind of model, given y: sections, summary, every output."""

import re
from html import unescape

import numpy as np
import pytest
from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine
from sklearn.ensemble import (
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.kernel_ridge import KernelRidge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skshapley import ExactExplainer, ProductKernelExplainer, TreeExplainer, importance
from skshapley.report import report
from skshapley.report._report import write_report

from .test_report import Page, check_report

pytest.importorskip("matplotlib")

WITH_Y = ("summary", "model", "data", "importance", "global", "dependence",
          "waterfalls", "about")  # fmt: skip


def facts(source: str, heading: str) -> dict:
    """The ``(name, value)`` rows of the facts table under ``heading``."""
    start = source.index(f"<h3>{heading}</h3>")
    block = source[start : source.index("</table>", start)]
    rows = re.findall(r"<tr><th>(.*?)</th><td>(.*?)</td></tr>", block)
    return {unescape(name): unescape(value) for name, value in rows}


def regression():
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    X, y = X.iloc[:60], y.iloc[:60]
    model = GradientBoostingRegressor(n_estimators=10, random_state=0).fit(X, y)
    return TreeExplainer(model).fit(), X, y


def binary():
    X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    X, y = X.iloc[:80, :6], y.iloc[:80]
    model = HistGradientBoostingClassifier(max_iter=5, random_state=0).fit(X, y)
    return TreeExplainer(model).fit(), X, y


def multiclass():
    X, y = load_wine(return_X_y=True, as_frame=True)
    X = X.iloc[::3, :6]
    labels = np.array(["barolo", "grignolino", "barbera"])[y.iloc[::3]]
    model = RandomForestClassifier(n_estimators=8, max_depth=3, random_state=0)
    return TreeExplainer(model.fit(X, labels)).fit(), X, labels


def kernel():
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    X, y = X.iloc[:50, :5], y.iloc[:50]
    model = make_pipeline(StandardScaler(), KernelRidge(kernel="rbf", gamma=0.2))
    return ProductKernelExplainer(model.fit(X, y)).fit(), X, y


def grouped():
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    X, y = X.iloc[:60], y.iloc[:60]
    model = GradientBoostingRegressor(n_estimators=10, random_state=0).fit(X, y)
    groups = {"serum": ["s1", "s2", "s3", "s4", "s5", "s6"]}
    return TreeExplainer(model, groups=groups).fit(), X, y


@pytest.mark.parametrize("make", [regression, binary, multiclass, kernel, grouped])
def test_every_section_in_order(make, tmp_path):
    explainer, X, y = make()
    path = report(explainer, X, tmp_path / "r.html", y=y, top_k=1, download=True)
    source = path.read_text(encoding="utf-8")
    assert Page(source).h2_ids == list(WITH_Y)
    assert re.search(r'data-metric="\w+" data-value=', source)
    # The "This explanation" table does not repeat the cards.
    run = facts(source, "This explanation")
    assert not {"Rows explained", "Base value", "Efficiency residual",
                "Explain time"} & set(run)  # fmt: skip


def test_quadrature_used_is_stated_for_product_games(tmp_path):
    explainer, X, _ = kernel()
    path = report(explainer, X, tmp_path / "k.html", top_k=0)
    run = facts(path.read_text(encoding="utf-8"), "This explanation")
    assert explainer.quadrature_error_bound_ == 0.0
    assert run["Quadrature used"] == (
        f"{explainer.n_quadrature_points_} points per game, exact"
    )
    explainer, X, _ = regression()
    path = report(explainer, X, tmp_path / "t.html", top_k=0)
    points = explainer.n_quadrature_points_
    run = facts(path.read_text(encoding="utf-8"), "This explanation")
    assert run["Quadrature used"] == (
        f"{points.min()}–{points.max()} points per tree, exact"
    )


def test_quadrature_of_interventional_trees_and_fixed_points(tmp_path):
    explainer, X, _ = regression()
    interventional = TreeExplainer(
        explainer.model, feature_perturbation="interventional", n_quadrature_points=1
    ).fit(X.iloc[:10])
    path = report(interventional, X.iloc[:10], tmp_path / "i.html", top_k=0)
    source = path.read_text(encoding="utf-8")
    run = facts(source, "This explanation")
    assert run["Quadrature used"].startswith("1 point per tree (fixed)")
    assert "no error bound" in run["Quadrature used"]
    assert "the summary says how many were used" in source


def test_agnostic_explainers_state_no_quadrature(tmp_path):
    explainer, X, _ = regression()
    exact = ExactExplainer(explainer.model).fit(X.iloc[:5, :])
    X = X.iloc[:4]
    path = report(exact, X, tmp_path / "e.html", top_k=0)
    source = path.read_text(encoding="utf-8")
    assert "Quadrature used" not in source
    assert "how many were used" not in source


def test_every_output_mean_abs_table(tmp_path):
    explainer, X, _ = multiclass()
    path = report(explainer, X, tmp_path / "m.html", top_k=0, max_display=4)
    source = path.read_text(encoding="utf-8")
    start = source.index('id="importance-by-output"')
    block = source[start : source.index("</table>", start)]
    header = re.findall(r"<th(?: [^>]*)?>(.*?)</th>", block)
    assert header == ["Feature", *explainer.output_names_, "Total"]
    rows = re.findall(r"<tr>(.*?)</tr>", block)[1:]
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in rows]
    by_output = importance(explainer.explain(X))["mean_abs"].unstack(level=0)
    total = by_output.sum(axis=1).sort_values(ascending=False, kind="stable")
    assert [row[0] for row in cells[:3]] == list(total.index[:3])
    assert cells[3][0] == f"{len(total) - 3} other features (sum)"
    for row in cells[:3]:
        expected = [
            *by_output.loc[row[0], list(explainer.output_names_)],
            total[row[0]],
        ]
        # Four decimals at most (a common column format): within half a unit.
        np.testing.assert_allclose([float(v) for v in row[1:]], expected, atol=5e-5)


def test_output_advice_follows_the_option(tmp_path):
    explainer, X, _ = multiclass()
    path = write_report(
        explainer, X, tmp_path / "cli.html", y=None, title=None, top_k=0,
        max_display=5, output=None, progress=None, option="--output NAME",
    )  # fmt: skip
    note = " ".join(Page(path.read_text(encoding="utf-8")).text)
    assert "choose another with --output NAME" in note
    assert "output=" not in note
    path = report(explainer, X, tmp_path / "py.html", top_k=0)
    assert "report(..., output=...)" in path.read_text(encoding="utf-8")


def test_check_report_passes_with_every_option(tmp_path):
    explainer, X, y = binary()
    path = report(explainer, X, tmp_path / "all.html", y=y, download=True,
                  show_rows=[3, 1], top_k=2)  # fmt: skip
    # Bars, beeswarm, heatmap, two dependence plots, two waterfalls, decision.
    check_report(path, n_images=8, sections=WITH_Y)
