"""Every display's texts stay inside its figure and clear of each other.

Each display is drawn at the size the report gives it, in the report's
style, for short and for 40-60 character feature names, for one output
and for several (string class labels), and for regression, binary
log-odds, class probabilities and a kernel model (whose base value is far
from its predictions). matplotlib's renderer measures every drawn text
(:mod:`text_bounds`).
"""

import importlib
import re

import numpy as np
import pandas as pd
import pytest

pytest.importorskip("matplotlib")

from plotting.text_bounds import (
    drawn_texts,
    outside_texts,
    overlapping_texts,
)
from sklearn.datasets import load_breast_cancer, load_diabetes, load_wine
from sklearn.ensemble import (
    GradientBoostingRegressor,
    HistGradientBoostingClassifier,
    RandomForestClassifier,
)
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import LinearRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from skshapley import (
    ExactExplainer,
    ProductKernelExplainer,
    TreeExplainer,
)
from skshapley.plotting import (
    BeeswarmDisplay,
    DependenceDisplay,
    ImportanceDisplay,
    InteractionDisplay,
    OutputImportanceDisplay,
    WaterfallDisplay,
)
from skshapley.plotting._inputs import interaction_values
from skshapley.report import report

# The report's own figure sizes and style (a module, not the function
# ``skshapley.report.report`` that shadows it as an attribute).
figures = importlib.import_module("skshapley.report._figures")

# Appended to every name for the long-names cases: 40 to 60 characters.
_LONG = "_measured_at_the_baseline_visit_in_units"


def _named(X: pd.DataFrame, long: bool) -> pd.DataFrame:
    return X.rename(columns=lambda name: f"{name}{_LONG}"[:60]) if long else X


def _case(kind: str, long: bool):
    """A fitted explainer, its rows, and what its output is."""
    if kind == "regression":
        X, y = load_diabetes(return_X_y=True, as_frame=True)
        X = _named(X, long)
        model = GradientBoostingRegressor(n_estimators=15, random_state=0)
        return TreeExplainer(model.fit(X, y)).fit(), X.iloc[:80]
    if kind == "log-odds":
        X, y = load_breast_cancer(return_X_y=True, as_frame=True)
        X = _named(X.iloc[:, :8], long)
        model = HistGradientBoostingClassifier(max_iter=15, random_state=0)
        return TreeExplainer(model.fit(X, y)).fit(), X.iloc[:80]
    if kind == "probability":  # several outputs, named by string labels
        X, y = load_wine(return_X_y=True, as_frame=True)
        X = _named(X, long)
        labels = np.array(["barolo", "grignolino", "barbera"])[y]
        model = RandomForestClassifier(n_estimators=10, random_state=0)
        return TreeExplainer(model.fit(X, labels)).fit(), X.iloc[::2]
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    X = _named(X.iloc[:, :6], long)
    model = KernelRidge(kernel="rbf", gamma=2.0, alpha=0.1).fit(X, y)
    return ProductKernelExplainer(model).fit(), X.iloc[:60]


_CASES = {}


@pytest.fixture(
    scope="module",
    params=[
        (kind, long)
        for kind in ("regression", "log-odds", "probability", "kernel")
        for long in (False, True)
    ],
    ids=lambda p: f"{p[0]}-{'long' if p[1] else 'short'}",
)
def case(request):
    """An explainer, rows, their Shapley values and interaction values."""
    explainer, X = _case(*request.param)
    phi = explainer.explain(X)
    output = explainer.output_names_[-1] if len(explainer.output_names_) > 1 else None
    return {
        "explainer": explainer,
        "X": X,
        "phi": phi,
        "output": output,
        "raw_output": explainer.raw_output_,
        "interactions": explainer.explain_interactions(X.iloc[:20], output=output),
    }


def assert_legible(figure):
    assert outside_texts(figure) == []
    assert overlapping_texts(figure) == []


def _rows(case, per_row: float, *, extra: int = 0) -> float:
    """The report's height for the case's rows (at most 20, as it draws)."""
    n_rows = min(case["X"].shape[1], 20) + extra
    return figures._rows_height(n_rows, per_row=per_row)


def _per_row(case) -> float:
    longest = max(len(str(name)) for name in case["X"].columns)
    return 0.3 if longest <= figures._ONE_LINE_NAME else 0.42


def test_importance(case):
    height = _rows(case, _per_row(case), extra=1)
    with figures._canvas(5.8, height) as (figure, ax):
        ImportanceDisplay.from_values(
            case["phi"], output=case["output"], raw_output=case["raw_output"], ax=ax
        )
        assert_legible(figure)


def test_output_importance(case):
    with figures._canvas(7.2, _rows(case, _per_row(case))) as (figure, ax):
        OutputImportanceDisplay.from_values(
            case["phi"], raw_output=case["raw_output"], ax=ax
        )
        assert_legible(figure)


def test_beeswarm(case):
    with figures._canvas(5.8, _rows(case, _per_row(case))) as (figure, ax):
        BeeswarmDisplay.from_values(
            case["phi"],
            case["X"],
            output=case["output"],
            raw_output=case["raw_output"],
            ax=ax,
        )
        assert_legible(figure)


def test_dependence(case):
    X = case["X"]
    with figures._canvas(5.6, 3.9) as (figure, ax):
        DependenceDisplay.from_values(
            case["phi"],
            X,
            X.columns[0],
            color=X.columns[-1],
            output=case["output"],
            raw_output=case["raw_output"],
            ax=ax,
        )
        assert_legible(figure)


@pytest.mark.parametrize("width", [3.8, 5.6], ids=["three-columns", "two-columns"])
def test_waterfall(case, width):
    """The rows of the lowest and of the highest prediction."""
    explainer, X, phi = case["explainer"], case["X"], case["phi"]
    output = case["output"]
    raw = np.asarray(explainer.raw_predict(X)).reshape(len(X), -1)[:, -1]
    height = figures._rows_height(11, per_row=_per_row(case), extra=1.2)
    for position in (int(np.argmin(raw)), int(np.argmax(raw))):
        with figures._canvas(width, height) as (figure, ax):
            WaterfallDisplay.from_values(
                phi.iloc[position],
                explainer.expected_value_,
                x_row=X.iloc[position],
                output=output,
                raw_output=case["raw_output"],
                ax=ax,
            )
            assert_legible(figure)


def test_interaction_heatmap(case):
    """The six first features, as the report draws its strongest pairs'."""
    values, players, output = interaction_values(case["interactions"], case["output"])
    side = min(max(0.42 * 6 + 2.2, 3.6), 9.0)
    with figures._canvas(side + 1.2, side) as (figure, ax):
        InteractionDisplay.from_values(
            values[:, :6, :6],
            feature_names=players[:6],
            output=output,
            ax=ax,
            diagonal=False,
        )
        assert_legible(figure)


# --- the helper itself: a check that cannot fail is no check ---------------


def test_a_text_outside_the_figure_is_reported():
    """3 px out is reported; 3 px in, on the right, top or bottom, is not."""
    with figures._canvas(4.0, 3.0) as (figure, ax):
        width, height = figure.bbox.width, figure.bbox.height
        ax.set_xlabel("inside")
        figure.text(0.8, 0.5, "reaching out of the figure", ha="left")
        figure.text(1 + 3 / width, 0.3, "3 px out", ha="right")
        figure.text(1 - 3 / width, 0.2, "3 px in", ha="right")
        figure.text(0.1, 1 - 3 / height, "top, 3 px in", va="top")
        figure.text(0.1, 3 / height, "bottom, 3 px in", va="bottom")
        figure.text(0.5, -3 / height, "bottom, 3 px out", va="bottom")
        assert sorted(outside_texts(figure)) == [
            "3 px out",
            "bottom, 3 px out",
            "reaching out of the figure",
        ]


def test_overlapping_texts_are_reported_and_hidden_ticks_are_not():
    with figures._canvas(4.0, 3.0) as (figure, ax):
        ax.set_xticks([0, 5, 20], ["zero", "five", "never drawn"])
        ax.set_xlim(0, 10)  # after the ticks, which widen the limits
        ax.text(0.2, 0.5, "first text")
        ax.text(0.25, 0.5, "second text")
        assert overlapping_texts(ax) == [("first text", "second text")]
        assert "never drawn" not in [t.get_text() for t, _ in drawn_texts(figure)]
        assert outside_texts(figure) == []


# --- numbers that are 0 up to rounding are written 0 -----------------------


def test_a_zero_prediction_is_labelled_zero_not_a_rounding_residue():
    """A probability of 0 computed as 0.3 - 0.3 + 5.551e-17."""
    base = 0.3
    phi = pd.Series({"a": -0.2, "b": -0.1 + 5.551e-17})
    display = WaterfallDisplay.from_values(phi, base)
    assert display.prediction_ != 0.0  # the residue is there
    texts = [text.get_text() for text in display.ax_.texts]
    assert "f(x) = 0" in texts
    assert not any("e-17" in text or "e\u221217" in text for text in texts)


def test_importance_values_near_zero_are_written_zero():
    phi = pd.DataFrame({"a": [1.0, -1.0], "b": [1e-17, -1e-17]})
    display = ImportanceDisplay.from_values(phi)
    texts = [text.get_text() for text in display.ax_.texts]
    assert texts == ["1", "0"]


# --- through the report: every figure it draws ------------------------------


def _report_figures(monkeypatch, explainer, X, tmp_path, **kwargs) -> dict:
    """Every figure a report draws, by its alternative text: texts checked."""
    checked = {}
    png = figures.png

    def checking_png(figure, alt, *, dpi):
        checked[alt] = (outside_texts(figure), overlapping_texts(figure))
        ax = figure.axes[0]
        # Top first on the screen (a heatmap's y axis points down).
        height = [ax.transData.transform((0, y))[1] for y in ax.get_yticks()]
        by_height = zip(height, ax.get_yticklabels(), strict=True)
        checked[alt + " labels"] = [
            text.get_text() for _, text in sorted(by_height, key=lambda t: -t[0])
        ]
        checked[alt + " dots"] = [
            float(np.abs(c.get_offsets()[:, 0]).mean())
            for c in figure.axes[0].collections
            if len(c.get_offsets())
        ]
        return png(figure, alt, dpi=dpi)

    monkeypatch.setattr(figures, "png", checking_png)
    path = report(explainer, X, tmp_path / "report.html", **kwargs)
    return checked, path.read_text(encoding="utf-8")


def _report_cases():
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    X = X.rename(columns={"bmi": "body_mass_index_measured_at_baseline_kg_per_m2"})
    model = GradientBoostingRegressor(n_estimators=15, random_state=0)
    yield "regression", TreeExplainer(model.fit(X, y)).fit(), X.iloc[:150]
    X, y = load_wine(return_X_y=True, as_frame=True)
    labels = np.array(["barolo", "grignolino", "barbera"])[y]
    model = RandomForestClassifier(n_estimators=10, random_state=0).fit(X, labels)
    yield "multiclass", TreeExplainer(model).fit(), X
    X = _named(X.iloc[:, :6], True)
    model = make_pipeline(StandardScaler(), SVC(kernel="rbf")).fit(X, y == 0)
    yield "kernel", ExactExplainer(model).fit(X.iloc[::8]), X.iloc[::3]


# Exact explainers have leave-one-out values: the kernel report draws them.
_OPTIONS = {"kernel": {"leave_one_out": True}}


@pytest.mark.parametrize("name", ["regression", "multiclass", "kernel"])
def test_no_report_figure_has_a_text_outside_or_overlapping(
    name, monkeypatch, tmp_path
):
    _, explainer, X = next(c for c in _report_cases() if c[0] == name)
    checked, _ = _report_figures(
        monkeypatch, explainer, X, tmp_path, **_OPTIONS.get(name, {})
    )
    texts = {alt: found for alt, found in checked.items() if isinstance(found, tuple)}
    assert len(texts) >= 7  # bars, beeswarm, dependence plots, waterfalls
    assert {alt: found for alt, found in texts.items() if found != ([], [])} == {}


def test_table_bars_beeswarm_and_heatmap_share_the_order_of_every_row(
    monkeypatch, tmp_path
):
    """10,000 rows: the beeswarm's sample alone would order them otherwise.

    A linear model explained against one background row of zeros has
    φ = its coefficient (1) times x. |φ| of ``a`` is 1 + 1e-6 on every row;
    ``b`` and ``c`` take 0.5 and 1.5 in turn, mirrored, so that over every
    row they are tied at 1 just below ``a``, while in any sample one of
    them is above 1 by at least 1e-4 (a sample is never exactly balanced
    here: checked below).
    """
    rng = np.random.default_rng(0)
    n = 10_000
    signs = rng.choice([-1.0, 1.0], size=(n, 3))
    high = rng.permutation(np.repeat([True, False], n // 2))
    magnitude = np.column_stack(
        [np.full(n, 1 + 1e-6), np.where(high, 1.5, 0.5), np.where(high, 0.5, 1.5)]
    )
    X = pd.DataFrame(signs * magnitude, columns=["a", "b", "c"])
    model = LinearRegression().fit(X, X.sum(axis=1))
    explainer = ExactExplainer(model).fit(
        pd.DataFrame(np.zeros((1, 3)), columns=X.columns)
    )
    checked, html = _report_figures(monkeypatch, explainer, X, tmp_path, top_k=1)
    importance = html[html.index('id="importance"') :]
    table = re.findall(r'<td class="feature">([^<]*)</td>', importance)
    bars = checked["Mean absolute Shapley value per feature labels"]
    swarm = checked["Shapley values of every row, by feature labels"]
    sampled = checked["Shapley values of every row, by feature dots"]
    heatmap = checked["Shapley values of every row and feature labels"]
    assert table[0] == "a"
    # The beeswarm's dots are a sample, whose own order starts with b or c.
    assert max(sampled) > 1 + 5e-5
    assert table == bars == swarm == heatmap
