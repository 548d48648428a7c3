"""The report's ``data`` section: rows, columns, types, missing values."""

import re

import numpy as np
import pandas as pd
import pytest
from sklearn.ensemble import HistGradientBoostingRegressor

from skshapley import TreeExplainer, importance
from skshapley.report import report

pytest.importorskip("matplotlib")


def data_rows(path) -> dict:
    """``{column: (type, missing, distinct)}`` from the data table's rows."""
    source = path.read_text(encoding="utf-8")
    section = source[source.index('id="data"') : source.index('id="importance"')]
    rows = {}
    for name, cells in re.findall(r'<tr data-column="([^"]*)">(.*?)</tr>', section):
        kind = re.findall(r"<td>(\w+)</td>", cells)[0]
        missing = int(re.search(r'data-missing="(\d+)"', cells).group(1))
        distinct = re.search(r'data-distinct="(\d+)"', cells)
        rows[name] = (kind, missing, distinct and int(distinct.group(1)))
    return rows


@pytest.fixture(scope="module")
def mixed():
    """Numeric columns with NaN, a boolean, a category and a text column."""
    rng = np.random.default_rng(0)
    n = 120
    X = pd.DataFrame(
        {
            "age": rng.normal(50, 10, n),
            "income": rng.lognormal(10, 1, n),
            "smoker": rng.random(n) < 0.3,
            "region": pd.Categorical(rng.choice(["north", "south", "east"], n)),
            "score": rng.integers(0, 5, n).astype(float),
        }
    )
    X.loc[rng.random(n) < 0.2, "income"] = np.nan
    X.loc[:4, "age"] = np.nan
    y = 2 * X["score"] + X["smoker"] + np.nan_to_num(X["age"]) / 10
    model = HistGradientBoostingRegressor(max_iter=10, random_state=0)
    model.fit(X, y)
    return TreeExplainer(model).fit(), X


def test_counts_are_pandas(mixed, tmp_path):
    explainer, X = mixed
    before = X.copy(deep=True)
    path = report(explainer, X, tmp_path / "d.html", top_k=0)
    pd.testing.assert_frame_equal(X, before)  # X is never modified
    rows = data_rows(path)
    assert set(rows) == set(X.columns)
    assert {name: kind for name, (kind, _, _) in rows.items()} == {
        "age": "numeric",
        "income": "numeric",
        "smoker": "boolean",
        "region": "categorical",
        "score": "numeric",
    }
    missing = X.isna().sum()
    assert {name: m for name, (_, m, _) in rows.items()} == missing.to_dict()
    assert rows["region"][2] == X["region"].nunique()
    assert rows["smoker"][2] == X["smoker"].nunique()
    assert rows["age"][2] is None  # numeric: min, median, max instead
    assert '<th class="num">Distinct</th>' in path.read_text(encoding="utf-8")
    text = path.read_text(encoding="utf-8")
    assert f"{len(X):,} rows and {X.shape[1]} columns" in text
    assert f"{int(missing.sum())} values missing" in text


def test_columns_in_importance_order_and_the_rest_in_one_line(mixed, tmp_path):
    explainer, X = mixed
    path = report(explainer, X, tmp_path / "d.html", top_k=0, max_display=3)
    order = list(importance(explainer.explain(X)).index[:3])
    assert list(data_rows(path)) == order
    rest = [column for column in X.columns if column not in order]
    note = re.search(r'id="data-rest">([^<]*)<', path.read_text(encoding="utf-8"))
    assert note.group(1).startswith(f"{len(rest)} more columns")
    assert f"{int(X[rest].isna().sum().sum())} values missing" in note.group(1)


def test_numeric_summary_is_min_median_max(mixed, tmp_path):
    explainer, X = mixed
    path = report(explainer, X[["age", "score", "smoker", "region", "income"]],
                  tmp_path / "d.html", top_k=0)  # fmt: skip
    source = path.read_text(encoding="utf-8")
    row = re.search(r'<tr data-column="score">(.*?)</tr>', source).group(1)
    numbers = re.findall(r'<td class="num">([^<]*)</td>', row)
    # Min, median, max, distinct (empty for numbers); missing has a data-.
    assert numbers[3] == ""
    low, middle, high = (float(text) for text in numbers[:3])
    assert (low, middle, high) == (
        X["score"].min(),
        X["score"].median(),
        X["score"].max(),
    )


def test_arrays_are_numeric_columns_named_as_the_model(mixed, tmp_path):
    _, X = mixed
    numeric = X[["age", "income", "score"]]
    model = HistGradientBoostingRegressor(max_iter=5, random_state=0)
    model.fit(numeric.to_numpy(), numeric["score"].to_numpy())
    array = numeric.to_numpy()
    path = report(TreeExplainer(model).fit(), array, tmp_path / "a.html", top_k=0)
    rows = data_rows(path)
    assert set(rows) == {"x0", "x1", "x2"}
    assert all(kind == "numeric" for kind, _, _ in rows.values())
    assert [rows[f"x{j}"][1] for j in range(3)] == list(np.isnan(array).sum(axis=0))
    # Only numbers: each has a range, no count of distinct values.
    assert '<th class="num">Distinct</th>' not in path.read_text(encoding="utf-8")


def test_an_array_takes_the_models_column_names(tmp_path):
    """Rows given as an array are described, and plotted, by the names the
    model was fitted with: the data section and the dependence plots."""
    rng = np.random.default_rng(1)
    X = pd.DataFrame(rng.normal(size=(80, 3)), columns=["dose", "weight", "age"])
    y = X["dose"] * 2 + X["weight"]
    model = HistGradientBoostingRegressor(max_iter=10, random_state=0).fit(X, y)
    path = report(TreeExplainer(model).fit(), X.to_numpy(), tmp_path / "a.html")
    assert set(data_rows(path)) == set(X.columns)
    source = path.read_text(encoding="utf-8")
    assert 'alt="Dependence plot of dose"' in source
