"""The report's leave-one-out section: LOO beside Shapley, the sums, the reading."""

import html
import re

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_iris
from sklearn.linear_model import LinearRegression, LogisticRegression

from skshapley import ExactExplainer, PermutationExplainer, TreeExplainer
from skshapley.report import _figures, _leave_one_out, report
from skshapley.report._data import plotted_rows

from .test_report import SECTION_IDS, check_report, check_residual, n_figures
from .test_report_interactions import WITH_INTERACTIONS, number

pytest.importorskip("matplotlib")

WITH_LEAVE_ONE_OUT = (*SECTION_IDS[:5], "leave-one-out", *SECTION_IDS[5:])


def saturating(X) -> np.ndarray:
    """Copies read through a max, an AND-like product, an additive term; the
    last column is unused."""
    X = np.asarray(X, dtype=np.float64)
    return np.maximum(X[:, 0], X[:, 1]) + X[:, 2] * X[:, 3] + X[:, 4]


def saturating_data(n_rows=40, n_background=12, seed=0):
    """Rows where the copies s0 = s1 and the pair a2, a3 are on (1 or 2);
    a background where they are all 0; the additive x4 and the unused
    column anywhere."""
    rng = np.random.default_rng(seed)
    columns = ["s0", "s1", "a2", "a3", "x4", "unused"]

    def frame(n, on):
        signal = rng.choice([1.0, 2.0], size=n) if on else np.zeros(n)
        pair = rng.choice([1.0, 2.0], size=(n, 2)) if on else np.zeros((n, 2))
        values = np.column_stack(
            [signal, signal, pair, rng.normal(size=n), rng.normal(size=n)]
        )
        return pd.DataFrame(values, columns=columns)

    return frame(n_rows, True), frame(n_background, False)


@pytest.fixture(scope="module")
def saturated():
    X, background = saturating_data()
    return ExactExplainer(saturating).fit(background), X, background


def table_cells(source: str, div_id: str) -> list[list[str]]:
    """The cells of the table in ``<div id=div_id>``, row by row (as text)."""
    block = source[source.index(f'<div id="{div_id}">') :]
    body = block[block.index("<tbody>") : block.index("</tbody>")]
    rows = re.findall(r"<tr[^>]*>(.*?)</tr>", body)
    cells = [re.findall(r"<td[^>]*>(.*?)</td>", row) for row in rows]
    return [[re.sub(r"<[^>]+>", "", cell) for cell in row] for row in cells]


def expected_table(explainer, X, output=None) -> pd.DataFrame:
    """Mean |LOO|, mean |φ| and the signed means per feature, recomputed."""
    loo = explainer.leave_one_out(X, output=output)
    phi = explainer.explain(X, output=output)
    table = pd.DataFrame(
        {
            "abs_loo": loo.abs().mean(),
            "abs_phi": phi.abs().mean(),
            "loo": loo.mean(),
            "phi": phi.mean(),
        }
    )
    return table.sort_values("abs_phi", ascending=False, kind="stable")


def check_table(source: str, expected: pd.DataFrame) -> None:
    shown = table_cells(source, "leave-one-out-table")
    assert [cells[0] for cells in shown] == [str(name) for name in expected.index]
    # Written with 4 significant digits of the largest value of their kind.
    absolute = expected[["abs_loo", "abs_phi"]].to_numpy().max() * 1e-3
    signed = np.abs(expected[["loo", "phi"]].to_numpy()).max() * 1e-3
    for cells, (_, row) in zip(shown, expected.iterrows(), strict=True):
        assert number(cells[1]) == pytest.approx(row["abs_loo"], abs=absolute)
        assert number(cells[2]) == pytest.approx(row["abs_phi"], abs=absolute)
        assert number(cells[4]) == pytest.approx(row["loo"], abs=signed)
        assert number(cells[5]) == pytest.approx(row["phi"], abs=signed)
        if row["abs_phi"] > 0:
            ratio = row["abs_loo"] / row["abs_phi"]
            # Two decimals.
            assert number(cells[3].rstrip("×")) == pytest.approx(ratio, abs=0.005)


def value_of(page, key: str) -> float:
    return float(page.attributes[key]["data-value"])


def reading(page_source: str) -> dict[str, str]:
    """The reading's items by their bold label ("Redundant", ...)."""
    block = page_source[page_source.index('<ul id="leave-one-out-reading"') :]
    items = re.findall(r"<li>(.*?)</li>", block[: block.index("</ul>")])
    assert items
    texts = [html.unescape(re.sub(r"<[^>]+>", "", item)) for item in items]
    return {text.partition(":")[0]: text for text in texts}


def test_the_section_shows_loo_beside_shapley(saturated, tmp_path):
    explainer, X, background = saturated
    path = report(explainer, X, tmp_path / "r.html", leave_one_out=True)
    page, source = check_report(
        path, n_images=n_figures(6, len(X)) + 1, sections=WITH_LEAVE_ONE_OUT
    )
    check_residual(page, explainer, X)
    expected = expected_table(explainer, X)
    check_table(source, expected)
    # The closed forms of this model, independently of the explainer: the
    # copies' LOO is 0 (the other copy keeps the max) and each has half of
    # s; the pair's LOO is the whole product, its φ half of it each; x4's
    # LOO and φ are both x4 - mean(background x4).
    s, product = X["s0"].to_numpy(), (X["a2"] * X["a3"]).to_numpy()
    additive = X["x4"].to_numpy() - background["x4"].mean()
    closed = {
        "s0": (0.0, np.mean(s / 2)),
        "s1": (0.0, np.mean(s / 2)),
        "a2": (np.mean(product), np.mean(product / 2)),
        "a3": (np.mean(product), np.mean(product / 2)),
        "x4": (np.mean(np.abs(additive)), np.mean(np.abs(additive))),
        "unused": (0.0, 0.0),
    }
    for name, (loo, phi) in closed.items():
        # Means of a few hundred background averages: rounding only.
        assert expected.loc[name, "abs_loo"] == pytest.approx(loo, abs=1e-12)
        assert expected.loc[name, "abs_phi"] == pytest.approx(phi, abs=1e-12)
    # The sums: exact values in data attributes, recomputed here.
    gap = saturating(X) - explainer.expected_value_
    loo_sums = explainer.leave_one_out(X).sum(axis=1).to_numpy()
    assert value_of(page, "leave-one-out-prediction") == pytest.approx(
        gap.mean(), rel=1e-12
    )
    assert value_of(page, "leave-one-out-sum") == pytest.approx(
        loo_sums.mean(), rel=1e-12
    )
    assert value_of(page, "leave-one-out-gap") == pytest.approx(
        np.abs(loo_sums - gap).mean(), rel=1e-12
    )
    # Here Σ LOO = 2 product + x4 - mean x4, and f(x) - base = s + product
    # + x4 - mean x4 (the background's f is its x4).
    assert value_of(page, "leave-one-out-gap") == pytest.approx(
        np.abs(product - s).mean(), rel=1e-12
    )


def test_the_reading_names_redundant_and_interacting_features(saturated, tmp_path):
    explainer, X, _ = saturated
    path = report(explainer, X, tmp_path / "r.html", leave_one_out=True)
    items = reading(path.read_text(encoding="utf-8"))
    assert set(items) == {"Redundant", "Interacting"}
    assert items["Redundant"].startswith("Redundant: s0, s1 — ")
    assert items["Interacting"].startswith("Interacting: a2, a3 — ")
    # x4 is additive (LOO = φ); the unused column's 0 and 0 are not read.
    assert "at most 0.5 × mean |φ|" in items["Redundant"]
    assert "at least 1.5 × mean |φ|" in items["Interacting"]


def test_an_additive_model_reads_as_agreement(tmp_path):
    # Interventional LOO equals Shapley on an additive model: nothing to read.
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(30, 3)), columns=["a", "b", "c"])
    model = LinearRegression().fit(X, X @ np.array([1.0, -2.0, 0.5]))
    explainer = ExactExplainer(model).fit(X.iloc[:10])
    path = report(explainer, X, tmp_path / "r.html", leave_one_out=True)
    source = path.read_text(encoding="utf-8")
    check_table(source, expected_table(explainer, X))
    items = reading(source)
    assert len(items) == 1
    assert next(iter(items)).startswith("No feature's mean |LOO| is below 0.5 ×")
    cells = table_cells(source, "leave-one-out-table")
    assert {cell[3] for cell in cells} == {"1.00×"}


def test_the_chosen_output_of_a_classifier(tmp_path):
    data = load_iris(as_frame=True)
    y = data.target_names[data.target]
    model = LogisticRegression(max_iter=500).fit(data.data, y)
    explainer = ExactExplainer(model).fit(data.data.iloc[::15])
    X = data.data.iloc[::10]
    path = report(
        explainer, X, tmp_path / "r.html", output="versicolor", leave_one_out=True,
        top_k=1,
    )  # fmt: skip
    page, source = check_report(
        path,
        n_images=n_figures(4, len(X), top_k=1, n_outputs=3) + 1,
        sections=WITH_LEAVE_ONE_OUT,
    )
    check_table(source, expected_table(explainer, X, output="versicolor"))
    gap = explainer.raw_predict(X)[:, 1] - explainer.expected_value_["versicolor"]
    assert value_of(page, "leave-one-out-prediction") == pytest.approx(
        gap.mean(), rel=1e-9, abs=1e-15
    )


def test_with_interactions_too_and_a_permutation_explainer(tmp_path):
    X, background = saturating_data(n_rows=12)
    explainer = PermutationExplainer(saturating, n_permutations=3, random_state=0)
    explainer.fit(background)
    path = report(explainer, X, tmp_path / "r.html", leave_one_out=True)
    check_table(path.read_text(encoding="utf-8"), expected_table(explainer, X))
    # Interactions need explain_interactions, which the model-agnostic
    # explainers do not have; the section order is fixed all the same.
    with pytest.raises(NotImplementedError, match="interaction"):
        report(explainer, X, tmp_path / "s.html", interactions=True)
    assert WITH_INTERACTIONS.index("interactions") < len(WITH_INTERACTIONS)


def test_more_than_5000_rows_are_sampled(tmp_path):
    # Two features and one background row: 3 model rows per LOO row.
    rng = np.random.default_rng(2)
    X = pd.DataFrame(rng.normal(size=(5200, 2)), columns=["u", "v"])
    explainer = ExactExplainer(lambda rows: np.asarray(rows).prod(axis=1))
    explainer.fit(X.iloc[:1])
    path = report(explainer, X, tmp_path / "r.html", leave_one_out=True, top_k=0)
    source = path.read_text(encoding="utf-8")
    assert "Means over 5,000 rows (a random sample of the 5,200)" in source
    shown = X.iloc[plotted_rows(len(X))]
    check_table(source, expected_table(explainer, shown))


def test_explainers_without_leave_one_out_are_refused(saturated, tmp_path):
    from sklearn.tree import DecisionTreeRegressor

    X, _ = saturating_data()
    tree = DecisionTreeRegressor(max_depth=2).fit(X, saturating(X))
    with pytest.raises(ValueError, match="ExactExplainer or PermutationExplainer"):
        report(TreeExplainer(tree).fit(), X, tmp_path / "r.html", leave_one_out=True)
    assert not (tmp_path / "r.html").exists()
    explainer, X, _ = saturated
    with pytest.raises(TypeError, match="leave_one_out must be a bool"):
        report(explainer, X, tmp_path / "r.html", leave_one_out="yes")


def test_the_figure_text_fits(saturated, tmp_path, monkeypatch):
    # Every label, tick and the legend inside the figure, with long names.
    _, X, background = saturated
    names = {"s0": "signal (first copy)", "s1": "signal (second copy)"}
    long = ExactExplainer(saturating).fit(background.rename(columns=names))
    checked = []

    def png(figure, alt, *, dpi):
        image = original(figure, alt, dpi=dpi)  # lays the figure out
        if alt.startswith("Mean absolute leave-one-out"):
            renderer = FigureCanvasAgg(figure).get_renderer()
            figure.draw(renderer)
            # What is drawn (ticks outside the axes' limits are not), in
            # inches, within a hundredth of an inch of the figure's edges.
            drawn = figure.get_tightbbox(renderer)
            width, height = figure.get_size_inches()
            assert drawn.x0 >= -0.01
            assert drawn.y0 >= -0.01
            assert drawn.x1 <= width + 0.01
            assert drawn.y1 <= height + 0.01
            (ax,) = figure.axes
            legend = [text.get_text() for text in ax.get_legend().get_texts()]
            ticks = [label.get_text() for label in ax.get_yticklabels()]
            checked.extend([*legend, *ticks])
        return image

    from matplotlib.backends.backend_agg import FigureCanvasAgg

    original = _figures.png
    monkeypatch.setattr(_figures, "png", png)
    report(long, X.rename(columns=names), tmp_path / "r.html", leave_one_out=True)
    assert "signal (second copy)" in checked
    assert "mean |leave-one-out value|" in checked


def test_the_reading_thresholds():
    # "At most 0.5 x" and "at least 1.5 x" include the bounds; values both
    # below 5% of the largest mean |φ| (here 2.0: below 0.1) are not read.
    frame = pd.DataFrame(
        {
            "mean_abs_loo": [3.0, 0.0, 1.0, 2.9, 0.0, 0.09, 0.11, 1.0],
            "mean_abs_shapley": [2.0, 2.0, 2.0, 2.0, 0.0, 0.01, 0.01, 1.0],
        },
        index=["at 1.5", "at 0", "at 0.5", "at 1.45", "zero", "small", "above", "1"],
    )
    redundant, interacting = _leave_one_out.reading(frame)
    assert redundant == ["at 0", "at 0.5"]
    assert interacting == ["at 1.5", "above"]
