"""The attributions download, and the report's file name."""

import base64
import io
import re

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_iris
from sklearn.ensemble import RandomForestClassifier

from skshapley import TreeExplainer
from skshapley.report import _download, report

from .test_report import Page

pytest.importorskip("matplotlib")


@pytest.fixture(scope="module")
def iris():
    X, y = load_iris(return_X_y=True, as_frame=True)
    X = X.iloc[::5]
    labels = np.array(["setosa", "versicolor", "virginica"])[y.iloc[::5]]
    model = RandomForestClassifier(n_estimators=5, max_depth=3, random_state=0)
    return TreeExplainer(model.fit(X, labels)).fit(), X


def link(path) -> dict:
    """The attributes of the element with id ``download``."""
    return Page(path.read_text(encoding="utf-8")).attributes["download"]


def test_download_holds_the_attributions(iris, tmp_path):
    explainer, X = iris
    path = report(explainer, X, tmp_path / "iris.html", download=True, top_k=0)
    attributes = link(path)
    assert attributes["download"] == "iris-attributions.csv"
    prefix = "data:text/csv;base64,"
    assert attributes["href"].startswith(prefix)
    csv = base64.b64decode(attributes["href"][len(prefix) :]).decode("utf-8")
    table = pd.read_csv(io.StringIO(csv), index_col=0)
    phi = explainer.explain(X)
    # One column per output and feature, then each output's base value.
    for output in explainer.output_names_:
        np.testing.assert_array_equal(
            table[[f"{output}__{f}" for f in X.columns]].to_numpy(),
            phi[output].to_numpy(),
        )
        assert (
            table[f"{output}__base_value"] == explainer.expected_value_[output]
        ).all()
    assert list(table.index) == list(X.index)


def test_too_large_a_table_is_a_note(iris, tmp_path, monkeypatch):
    explainer, X = iris
    monkeypatch.setattr(_download, "DOWNLOAD_LIMIT", 100)
    path = report(explainer, X, tmp_path / "big.html", download=True, top_k=0)
    source = path.read_text(encoding="utf-8")
    assert "data:text/csv" not in source
    note = re.search(r'<p class="note" id="download">([^<]*)</p>', source).group(1)
    assert "too large" in note
    assert "skshapley explain" in note
    assert "explainer.explain(X).to_csv(...)" in note


def test_no_download_by_default(iris, tmp_path):
    explainer, X = iris
    path = report(explainer, X, tmp_path / "plain.html", top_k=0)
    assert 'id="download"' not in path.read_text(encoding="utf-8")


def test_download_must_be_a_bool(iris, tmp_path):
    explainer, X = iris
    with pytest.raises(TypeError, match="download must be a bool, got str"):
        report(explainer, X, tmp_path / "r.html", download="yes")


@pytest.mark.parametrize("name", ["r.pdf", "r.png", "r", "r.html.txt"])
def test_only_html_names(iris, tmp_path, name):
    explainer, X = iris
    with pytest.raises(ValueError, match=r"\.html or \.htm.*print it to PDF"):
        report(explainer, X, tmp_path / name)
    assert not (tmp_path / name).exists()


@pytest.mark.parametrize("name", ["r.HTML", "r.htm"])
def test_html_suffixes_in_any_case(iris, tmp_path, name):
    explainer, X = iris
    assert report(explainer, X, tmp_path / name, top_k=0).exists()
