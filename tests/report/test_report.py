"""The HTML report: one self-contained, well-formed file with every section."""

import base64
import binascii
import re
import sys
from html.parser import HTMLParser
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_diabetes, load_iris
from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor
from sklearn.exceptions import NotFittedError
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVR
from sklearn.tree import DecisionTreeRegressor

from skshapley import ProductKernelExplainer, TreeExplainer
from skshapley.report import report

matplotlib = pytest.importorskip("matplotlib")
matplotlib.use("Agg")
plt = pytest.importorskip("matplotlib.pyplot")

SECTION_IDS = [
    "summary", "data", "importance", "global", "dependence", "waterfalls", "about"
]  # fmt: skip
VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
        "source", "track", "wbr"}  # fmt: skip
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


class Page(HTMLParser):
    """What a report holds: tags, ids, images, text; and whether tags nest."""

    def __init__(self, text: str):
        super().__init__(convert_charrefs=True)
        self.tags, self.ids, self.h2_ids, self.images = [], [], [], []
        self.attributes, self.text, self.errors, self.open = {}, [], [], []
        self.feed(text)
        self.close()
        if self.open:
            self.errors.append(f"unclosed {self.open}")

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        if "id" in attrs:
            self.ids.append(attrs["id"])
            self.attributes[attrs["id"]] = attrs
            if tag == "h2":
                self.h2_ids.append(attrs["id"])
        if tag == "img":
            self.images.append(attrs)
        if tag not in VOID:
            self.open.append(tag)

    def handle_endtag(self, tag):
        if not self.open or self.open[-1] != tag:
            self.errors.append(f"</{tag}> closes {self.open[-1:]}")
        else:
            self.open.pop()

    def handle_data(self, data):
        self.text.append(data)


def check_report(
    path, *, n_images: int, sections=tuple(SECTION_IDS)
) -> tuple[Page, str]:
    """The checks every report passes; returns the parsed page and its source."""
    source = path.read_bytes().decode("utf-8")  # strict: UTF-8 or an error
    assert source.startswith("<!doctype html>\n")
    page = Page(source)
    assert page.errors == []
    assert page.tags[:2] == ["html", "head"]
    assert page.h2_ids == list(sections)
    assert len(page.ids) == len(set(page.ids)), "ids must be unique"
    # Self-contained: no scripts, nothing fetched.
    assert "script" not in page.tags
    assert not {"link", "iframe", "object", "embed"} & set(page.tags)
    assert not re.search(r"https?://", source, flags=re.IGNORECASE)
    assert "url(" not in source
    assert len(page.images) == n_images
    for image in page.images:
        prefix, _, data = image["src"].partition(",")
        assert prefix == "data:image/png;base64"
        try:
            png = base64.b64decode(data, validate=True)
        except binascii.Error:
            pytest.fail("an image is not valid base64")
        assert png.startswith(PNG_SIGNATURE)
        assert image["alt"]
    return page, source


def n_figures(n_features: int, n_rows: int, top_k: int = 4, n_outputs=1) -> int:
    """Bars, beeswarm and heatmap, the dependence plots, a waterfall per
    distinct prediction and the decision plot; the overview of every output's
    importance for several outputs."""
    return 4 + min(top_k, n_features) + min(3, n_rows) + (n_outputs > 1)


def efficiency_residual(explainer, X) -> float:
    """max |Σφ + base − raw| over rows and outputs, computed independently."""
    phi = explainer.explain(X)
    raw = np.asarray(explainer.raw_predict(X)).reshape(len(X), -1)
    if isinstance(phi.columns, pd.MultiIndex):
        totals = pd.concat(
            [phi[name].sum(axis=1) for name in explainer.output_names_], axis=1
        ).to_numpy()
        base = explainer.expected_value_.to_numpy()
    else:
        totals = phi.sum(axis=1).to_numpy()[:, None]
        base = explainer.expected_value_
    return float(np.abs(totals + base - raw).max()), float(np.abs(raw).max())


def reported_residual(page: Page) -> tuple[float, float]:
    attributes = page.attributes["efficiency-residual"]
    return float(attributes["data-value"]), float(attributes["data-relative"])


def check_residual(page, explainer, X):
    residual, relative = reported_residual(page)
    expected, largest = efficiency_residual(explainer, X)
    # Both are rounding errors of sums of the same values added in different
    # orders: they agree to a few units in the last place of the largest output.
    assert residual == pytest.approx(expected, abs=16 * np.spacing(largest))
    assert relative == pytest.approx(residual / largest, rel=1e-12)
    assert relative < 1e-12  # exact explainers: efficiency to rounding


@pytest.fixture(autouse=True)
def no_figure_left_open():
    before = plt.get_fignums()
    yield
    assert plt.get_fignums() == before


@pytest.fixture(scope="module")
def diabetes():
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    model = GradientBoostingRegressor(n_estimators=40, random_state=0).fit(X, y)
    return TreeExplainer(model).fit(), X.iloc[::3]


@pytest.fixture(scope="module")
def iris():
    data = load_iris(as_frame=True)
    y = data.target_names[data.target]
    model = GradientBoostingClassifier(n_estimators=10, random_state=0)
    model.fit(data.data, y)
    return TreeExplainer(model).fit(), data.data.iloc[::2]


def test_tree_explainer_report(diabetes, tmp_path):
    explainer, X = diabetes
    X_before = X.copy(deep=True)
    path = report(explainer, X, tmp_path / "diabetes.html")
    assert path == tmp_path / "diabetes.html"
    page, _ = check_report(path, n_images=n_figures(10, len(X)))
    pd.testing.assert_frame_equal(X, X_before)
    check_residual(page, explainer, X)
    text = " ".join(page.text)
    assert "GradientBoostingRegressor" in text
    assert f"{len(X)} rows" in text
    for package in ("skshapley", "numpy", "scikit-learn", "matplotlib"):
        assert package in text
    assert page.tags.count("figcaption") == 3  # the waterfalls say which row
    assert "output=" not in text  # one output: nothing to choose


def test_multi_output_default_is_the_first(iris, tmp_path):
    explainer, X = iris
    path = report(explainer, X, tmp_path / "iris.html", top_k=1)
    page, _ = check_report(path, n_images=n_figures(4, len(X), top_k=1, n_outputs=3))
    check_residual(page, explainer, X)
    note = " ".join(page.text)
    assert "3 outputs" in note
    assert "output setosa" in note
    assert "the first; choose another with report(..., output=...)" in note


def test_multi_output_chosen(iris, tmp_path):
    explainer, X = iris
    path = report(explainer, X, tmp_path / "iris.html", output="virginica", top_k=2)
    page, _ = check_report(path, n_images=n_figures(4, len(X), top_k=2, n_outputs=3))
    text = " ".join(page.text)
    assert "output virginica" in text
    assert "chosen with output=" in text
    # The base value shown is the chosen output's.
    base = explainer.expected_value_["virginica"]
    assert f"{base:.4g}".replace("-", "−") in text


def test_kernel_explainer_pipeline(tmp_path):
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    X, y = X.iloc[:120], y.iloc[:120]
    model = make_pipeline(StandardScaler(), SVR(C=50.0)).fit(X, y)
    explainer = ProductKernelExplainer(model).fit()
    X_before = X.copy(deep=True)
    path = report(explainer, X, tmp_path / "svr.html", top_k=2)
    page, _ = check_report(path, n_images=n_figures(10, len(X), top_k=2))
    pd.testing.assert_frame_equal(X, X_before)
    check_residual(page, explainer, X)
    assert "ProductKernelExplainer" in " ".join(page.text)


def test_groups_are_not_columns_of_X(tmp_path):
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    X, y = X.iloc[:40], y.iloc[:40]
    blood = ["s1", "s2", "s3", "s4", "s5", "s6"]
    explainer = ProductKernelExplainer(SVR(C=50.0).fit(X, y), groups={"blood": blood})
    explainer.fit()
    path = report(explainer, X, tmp_path / "groups.html", top_k=2)
    page, _ = check_report(path, n_images=n_figures(5, len(X), top_k=2))
    check_residual(page, explainer, X)
    text = " ".join(page.text)
    # A group has no value: no dependence plot, and it is said why.
    assert "Players that are not columns of X have no values" in text
    assert "blood" in text
    dependence_alts = [i["alt"] for i in page.images if i["alt"].startswith("Depend")]
    assert len(dependence_alts) == 2
    assert not any("blood" in alt for alt in dependence_alts)


def test_names_and_labels_are_escaped(tmp_path):
    rng = np.random.default_rng(0)
    names = ["<b>&x", 'say "hi"', "a'b", "plain", "x<y", "&amp;"]
    X = pd.DataFrame(
        rng.normal(size=(40, len(names))),
        columns=names,
        index=[f"<i>row {i}</i>" for i in range(40)],
    )
    y = 4 * X["<b>&x"] + 3 * X["&amp;"] + X["x<y"] ** 2
    explainer = TreeExplainer(DecisionTreeRegressor(max_depth=4).fit(X, y)).fit()
    X_before = X.copy(deep=True)
    path = report(
        explainer, X, tmp_path / "escape.html", title="<script>", max_display=4, top_k=2
    )
    page, source = check_report(path, n_images=n_figures(len(names), 40, top_k=2))
    pd.testing.assert_frame_equal(X, X_before)
    assert not {"b", "i"} & set(page.tags)
    assert "&lt;b&gt;&amp;x" in source
    assert "&lt;i&gt;row " in source
    assert "&amp;amp;" in source  # a name that looks like an entity stays text
    assert "<script>" in " ".join(page.text)  # the title, as text
    text = " ".join(page.text)
    assert "<b>&x" in text  # the importance table names the feature
    assert "3 other features" in text  # max_display=4: 3 rows + the rest


def test_array_input_and_few_rows(iris, tmp_path):
    explainer, X = iris
    model = GradientBoostingClassifier(n_estimators=5, random_state=0)
    model.fit(X.to_numpy(), explainer.model.predict(X))
    explainer = TreeExplainer(model).fit()
    rows = X.to_numpy()[[0, 60]]  # two predictions: waterfalls show distinct ones
    rows_before = rows.copy()
    path = report(
        explainer, rows, tmp_path / "array.html", output="versicolor", top_k=1
    )
    page, _ = check_report(
        path, n_images=n_figures(4, 2, top_k=1, n_outputs=3)
    )  # 2 waterfalls
    np.testing.assert_array_equal(rows, rows_before)
    check_residual(page, explainer, rows)
    text = " ".join(page.text)
    assert "output versicolor" in text
    assert "x0" in text  # an array's columns take the model's names


def test_frame_columns_by_position_when_the_model_knows_no_names(iris, tmp_path):
    # Fitted on an array: the explainer matches a DataFrame's columns by
    # position (columns_by_name_ is False), and so does the report, which
    # then has the features' values to plot against.
    explainer, X = iris
    model = GradientBoostingClassifier(n_estimators=5, random_state=0)
    model.fit(X.to_numpy(), explainer.model.predict(X))
    explainer = TreeExplainer(model).fit()
    assert not explainer.columns_by_name_
    path = report(explainer, X, tmp_path / "by-position.html", top_k=2)
    page, _ = check_report(path, n_images=n_figures(4, len(X), top_k=2, n_outputs=3))
    dependence = [i["alt"] for i in page.images if i["alt"].startswith("Depend")]
    assert len(dependence) == 2
    assert all(alt.split()[-1] in {"x0", "x1", "x2", "x3"} for alt in dependence)


class ShiftedExplainer(TreeExplainer):
    """A broken explainer: one value off by 0.25, so efficiency fails."""

    def explain(self, X, *, progress=None):
        phi = super().explain(X, progress=progress)
        phi.iloc[1, 2] += 0.25
        return phi


def test_residual_reports_a_violation(diabetes, tmp_path):
    explainer, X = diabetes
    broken = ShiftedExplainer(explainer.model).fit()
    path = report(broken, X.iloc[:10], tmp_path / "broken.html", top_k=0)
    page, _ = check_report(path, n_images=n_figures(10, 10, top_k=0))
    residual, relative = reported_residual(page)
    expected, largest = efficiency_residual(broken, X.iloc[:10])
    assert residual == pytest.approx(0.25, rel=1e-9)
    assert residual == pytest.approx(expected, rel=1e-12)
    assert relative == pytest.approx(0.25 / largest, rel=1e-9)


def test_progress_is_called_while_explaining(diabetes, tmp_path):
    # The command shows its progress line through ``progress``: the rows are
    # explained in chunks, and the report is the same as without it.
    explainer, X = diabetes
    calls = []
    path = report(
        explainer, X, tmp_path / "chunks.html", progress=lambda *c: calls.append(c)
    )
    page, _ = check_report(path, n_images=n_figures(10, len(X)))
    # 64 rows first, then at most 4 times as many per chunk, up to every row.
    assert calls[0] == (64, len(X))
    assert calls[-1] == (len(X), len(X))
    assert [done for done, _ in calls] == sorted({done for done, _ in calls})
    plain, _ = check_report(
        report(explainer, X, tmp_path / "plain.html"), n_images=n_figures(10, len(X))
    )
    assert reported_residual(page) == reported_residual(plain)


@pytest.mark.parametrize(
    ("kwargs", "error", "match"),
    [
        ({"top_k": -1}, ValueError, "top_k must be at least 0, got -1"),
        ({"max_display": 0}, ValueError, "max_display must be at least 1, got 0"),
        ({"max_display": 2.5}, TypeError, "max_display must be an int"),
        ({"output": "nope"}, ValueError, "output 'nope' is not one of the model's"),
        ({"title": 3}, TypeError, "title must be a str"),
        ({"progress": "yes"}, TypeError, "progress must be True, False, None or a"),
    ],
)
def test_bad_parameters(diabetes, tmp_path, kwargs, error, match):
    explainer, X = diabetes
    with pytest.raises(error, match=match):
        report(explainer, X, tmp_path / "bad.html", **kwargs)
    assert not (tmp_path / "bad.html").exists()


def test_unfitted_explainer(diabetes, tmp_path):
    explainer, X = diabetes
    with pytest.raises(NotFittedError):
        report(TreeExplainer(explainer.model), X, tmp_path / "unfitted.html")


def test_without_matplotlib(diabetes, tmp_path, monkeypatch):
    explainer, X = diabetes
    monkeypatch.setitem(sys.modules, "matplotlib", None)  # import fails
    with pytest.raises(ImportError, match=r'pip install "skshapley\[plot\]"'):
        report(explainer, X, tmp_path / "no-plots.html")


def test_a_failed_write_leaves_the_previous_file(diabetes, tmp_path, monkeypatch):
    # The disk fills up half-way through the page: the old report stays whole
    # and no temporary file is left beside it.
    explainer, X = diabetes
    path = tmp_path / "report.html"
    path.write_text("previous report")
    write_text = Path.write_text

    def half_then_fail(self, text, *args, **kwargs):
        write_text(self, text[: len(text) // 2], *args, **kwargs)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_text", half_then_fail)
    with pytest.raises(OSError, match="No space left"):
        report(explainer, X.iloc[:20], path)
    monkeypatch.undo()
    assert path.read_text() == "previous report"
    assert sorted(tmp_path.iterdir()) == [path]
