"""The report's interactions section and its overview of every output."""

import importlib
import re

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_diabetes, load_iris
from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor

from skshapley import TreeExplainer
from skshapley.report import report

from .test_report import SECTION_IDS, check_report, check_residual, n_figures

pytest.importorskip("matplotlib")

WITH_INTERACTIONS = (*SECTION_IDS[:5], "interactions", *SECTION_IDS[5:])


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    model = GradientBoostingRegressor(n_estimators=30, max_depth=3, random_state=0)
    return TreeExplainer(model.fit(X, y)).fit(), X.iloc[::4]


@pytest.fixture(scope="module")
def iris():
    data = load_iris(as_frame=True)
    y = data.target_names[data.target]
    model = GradientBoostingClassifier(n_estimators=10, random_state=0)
    return TreeExplainer(model.fit(data.data, y)).fit(), data.data.iloc[::2]


def pairs_table(source: str) -> list[list[str]]:
    """The cells of the strongest-pairs table, row by row (as text)."""
    block = source[source.index('<div id="pairs">') :]
    body = block[block.index("<tbody>") : block.index("</tbody>")]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", body)
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in rows]
    return [[re.sub(r"<[^>]+>", "", cell) for cell in row] for row in cells]


def number(text: str) -> float:
    return float(text.replace("−", "-").replace(",", ""))


def expected_pairs(explainer, X, output=None) -> list[tuple]:
    """(feature, other, mean |index|, mean index), strongest first, by label."""
    frame = explainer.explain_interactions(X)
    if output is not None:
        frame = frame[output]
    names = list(frame.columns)
    pairs = []
    for j, first in enumerate(names):
        for second in names[j + 1 :]:
            index = 2 * frame.xs(first, level="feature")[second].to_numpy()
            pairs.append((first, second, np.abs(index).mean(), index.mean()))
    return sorted(pairs, key=lambda pair: -pair[2])


def check_pairs(source, expected):
    shown = pairs_table(source)
    assert len(shown) == min(10, len(expected))
    for rank, (cells, pair) in enumerate(zip(shown, expected, strict=False), 1):
        assert cells[0] == str(rank)
        assert (cells[1], cells[2]) == pair[:2]
        # Written with 4 significant digits of the column's largest value.
        largest = expected[0][2]
        assert number(cells[3]) == pytest.approx(pair[2], abs=largest * 1e-3)
        assert number(cells[5]) == pytest.approx(pair[3], abs=largest * 1e-3)


def test_the_section_lists_the_strongest_pairs(diabetes, tmp_path):
    explainer, X = diabetes
    path = report(explainer, X, tmp_path / "r.html", interactions=True)
    page, source = check_report(
        path, n_images=n_figures(10, len(X)) + 1, sections=WITH_INTERACTIONS
    )
    check_residual(page, explainer, X)
    check_pairs(source, expected_pairs(explainer, X))
    toc = re.findall(r'href="#([a-z]+)"', source)
    assert toc == list(WITH_INTERACTIONS)
    assert "Mean absolute Shapley interaction values" in [i["alt"] for i in page.images]
    text = " ".join(page.text)
    assert "largest mean |Shapley interaction value|" in text  # dependence colours
    assert f"over {len(X)} rows" in text


def test_without_interactions_there_is_no_section(diabetes, tmp_path):
    explainer, X = diabetes
    path = report(explainer, X.iloc[:30], tmp_path / "r.html")
    _, source = check_report(path, n_images=n_figures(10, 30))
    assert 'href="#interactions"' not in source
    assert "estimated from the values themselves" in source


def test_several_outputs_show_the_chosen_outputs_pairs_and_an_overview(iris, tmp_path):
    explainer, X = iris
    path = report(
        explainer, X, tmp_path / "r.html", interactions=True, output="virginica"
    )
    page, source = check_report(
        path,
        n_images=n_figures(4, len(X), n_outputs=3) + 1,
        sections=WITH_INTERACTIONS,
    )
    check_pairs(source, expected_pairs(explainer, X, "virginica"))
    alts = [image["alt"] for image in page.images]
    assert "Mean absolute Shapley value per feature and output" in alts
    assert "each of the 3 outputs" in " ".join(page.text)


def test_a_sample_of_rows_is_said(diabetes, tmp_path, monkeypatch):
    explainer, X = diabetes
    data = importlib.import_module("skshapley.report._data")
    plotted_rows = data.plotted_rows
    monkeypatch.setattr(data, "plotted_rows", lambda n: plotted_rows(n, 40))
    calls = []
    original = type(explainer).explain_interactions

    def spy(self, rows, **kwargs):
        calls.append(rows)
        return original(self, rows, **kwargs)

    monkeypatch.setattr(type(explainer), "explain_interactions", spy)
    path = report(explainer, X, tmp_path / "r.html", interactions=True, top_k=0)
    _, source = check_report(
        path, n_images=n_figures(10, len(X), top_k=0) + 1, sections=WITH_INTERACTIONS
    )
    (rows,) = calls
    rng_rows = np.sort(np.random.default_rng(0).choice(len(X), 40, replace=False))
    pd.testing.assert_frame_equal(rows, X.iloc[rng_rows])
    check_pairs(source, expected_pairs(explainer, rows))
    assert f"over 40 rows (a random sample of the {len(X)})" in source


class NoInteractions(TreeExplainer):
    supports_interactions = False


def test_an_explainer_without_interactions_is_refused_before_explaining(
    diabetes, tmp_path
):
    explainer, X = diabetes
    plain = NoInteractions(explainer.model).fit()
    with pytest.raises(NotImplementedError, match="NoInteractions has no interact"):
        report(plain, X, tmp_path / "r.html", interactions=True)
    assert not (tmp_path / "r.html").exists()
    with pytest.raises(TypeError, match="interactions must be a bool"):
        report(explainer, X, tmp_path / "r.html", interactions="yes")
