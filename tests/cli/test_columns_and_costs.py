"""Issue 36, item 4: what the command says about its cost and the data's columns.

The model evaluations of a model-agnostic run, said before it starts (and a
smaller --background-rows when they are many); a hint to pass --index for a
column of row identifiers; --ignore-extra-columns; and the column of a
value that scikit-learn refuses without naming it.
"""

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_diabetes
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.linear_model import Ridge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import FunctionTransformer, StandardScaler

from skshapley import ExactExplainer
from skshapley.cli import _explaining

from .test_command import assert_one_line_error, call

FEATURES = ["age", "sex", "bmi", "bp", "s5"]
N_ROWS, N_BACKGROUND = 6, 8


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A Ridge pipeline and a boosted tree (pickles), data and background files."""
    folder = tmp_path_factory.mktemp("columns")
    X, y = load_diabetes(return_X_y=True, as_frame=True, scaled=False)
    X = X[FEATURES]
    paths = {"folder": folder, "X": X.iloc[:N_ROWS]}
    paths["background"] = X.iloc[100 : 100 + N_BACKGROUND]
    models = {
        "ridge": make_pipeline(StandardScaler(), Ridge()).fit(X, y),
        "tree": GradientBoostingRegressor(n_estimators=5, random_state=0).fit(X, y),
        # np.log1p raises TypeError for text: an error that names no column.
        "log": make_pipeline(FunctionTransformer(np.log1p), Ridge()).fit(X, y),
        "array": make_pipeline(StandardScaler(), Ridge()).fit(X.to_numpy(), y),
        "scaled tree": make_pipeline(
            StandardScaler(), GradientBoostingRegressor(n_estimators=5)
        ).fit(X, y),
    }
    for name, model in models.items():
        paths[name] = folder / f"{name}.pkl"
        paths[name].write_bytes(pickle.dumps(model))
    paths["ridge model"] = models["ridge"]
    paths["data"] = folder / "rows.csv"
    paths["X"].to_csv(paths["data"], index=False)
    paths["bg"] = folder / "background.csv"
    paths["background"].to_csv(paths["bg"], index=False)
    return paths


def explain(capfd, files, model, data, out, *options):
    """``skshapley explain`` of ``model`` on ``data``: (status, stdout, stderr)."""
    return call(
        capfd, "explain", "--model", files[model], "--data", data,
        "--trust-pickle", "--out", out, *options,
    )  # fmt: skip


def written(path) -> pd.DataFrame:
    return pd.read_csv(path, index_col=0)


def table_file(tmp_path, frame: pd.DataFrame, name="rows.csv", **to_csv):
    path = tmp_path / name
    frame.to_csv(path, **{"index": False, **to_csv})
    return path


# --- the cost of a model-agnostic run, said before it starts -------------------------


def cost_line(err: str) -> str:
    (line,) = [line for line in err.splitlines() if "model evaluations" in line]
    return line


def test_exact_run_says_its_evaluations_before_it_starts(
    files, tmp_path, capfd, monkeypatch
):
    def never(*args, **kwargs):
        raise KeyboardInterrupt  # the explanation itself: not reached by the note

    monkeypatch.setattr(ExactExplainer, "explain", never)
    status, _, err = explain(
        capfd, files, "ridge", files["data"], tmp_path / "phi.csv",
        "--background", files["bg"],
    )  # fmt: skip
    assert status == 130
    # Every coalition but the empty and the full one, against each
    # background row, and the row itself: ExactExplainer's upper bound.
    per_row = (2 ** len(FEATURES) - 2) * N_BACKGROUND + 1
    assert cost_line(err) == (
        f"skshapley: exact method: up to {N_ROWS * per_row:,} model evaluations "
        f"({per_row:,} per row, against {N_BACKGROUND} background rows)"
    )
    assert err.index("model evaluations") < err.index("interrupted")
    assert "--background-rows" not in err  # few: no advice


def test_many_evaluations_suggest_background_rows_that_fit(
    files, tmp_path, capfd, monkeypatch
):
    per_row = (2 ** len(FEATURES) - 2) * N_BACKGROUND + 1
    limit = N_ROWS * per_row // 2  # about half the background fits
    monkeypatch.setattr(_explaining, "MANY_EVALUATIONS", limit)
    options = ("--background", files["bg"], "--force")
    status, _, err = explain(
        capfd, files, "ridge", files["data"], tmp_path / "phi.csv", *options
    )
    assert status == 0, err
    line = cost_line(err)
    assert f"samples the background down to about {limit:,}" in line
    suggested = int(line.split("--background-rows ")[1].split()[0])
    assert 1 <= suggested < N_BACKGROUND
    # Following the advice keeps under the limit, and ends the advice.
    status, _, err = explain(
        capfd, files, "ridge", files["data"], tmp_path / "phi.csv", *options,
        "--background-rows", suggested,
    )  # fmt: skip
    assert status == 0, err
    line = cost_line(err)
    total = int(line.split("up to ")[1].split()[0].replace(",", ""))
    assert total <= limit
    assert "--background-rows" not in line
    assert f"against {suggested} background rows" in line


@pytest.mark.parametrize(
    ("method", "advice"),
    [("exact", "(--groups) or --method permutation"), ("permutation", "(--groups)")],
)
def test_too_many_evaluations_for_any_background_suggest_fewer_rows(
    files, tmp_path, capfd, monkeypatch, method, advice
):
    monkeypatch.setattr(_explaining, "MANY_EVALUATIONS", N_ROWS)  # the rows alone
    status, _, err = explain(
        capfd, files, "ridge", files["data"], tmp_path / "phi.csv",
        "--background", files["bg"], "--method", method,
    )  # fmt: skip
    assert status == 0, err
    line = cost_line(err)
    assert line.startswith(f"skshapley: {method} method: up to ")
    assert "explain fewer rows (--rows)" in line
    assert line.endswith(advice)


def test_no_cost_line_for_trees_or_when_quiet(files, tmp_path, capfd):
    status, _, err = explain(
        capfd, files, "tree", files["data"], tmp_path / "phi.csv",
        "--background", files["bg"],
    )  # fmt: skip
    assert status == 0, err
    assert "model evaluations" not in err
    status, _, err = explain(
        capfd, files, "ridge", files["data"], tmp_path / "phi.csv",
        "--background", files["bg"], "--force", "-q",
    )  # fmt: skip
    assert (status, err) == (0, "")


# --- a column of row identifiers -----------------------------------------------------


@pytest.mark.parametrize(
    ("column", "values", "reason"),
    [
        ("patient", [f"p{i}" for i in range(N_ROWS)], "a different text in each row"),
        ("row_id", list(range(N_ROWS)), "by its name"),
        ("PatientID", [7] * N_ROWS, "by its name"),
    ],
)
def test_identifier_column_suggests_index(
    files, tmp_path, capfd, column, values, reason
):
    data = table_file(tmp_path, files["X"].assign(**{column: values}))
    status, _, err = explain(capfd, files, "tree", data, tmp_path / "phi.csv")
    assert_one_line_error(
        status, err, 1, f"unknown: [{column!r}]",
        f"{column!r} looks like a column of row identifiers ({reason}): pass "
        f"--index {column} to name the rows by it",
    )  # fmt: skip
    assert "--target" not in err  # the one unknown column is the identifier
    status, _, err = explain(
        capfd, files, "tree", data, tmp_path / "phi.csv", "--index", column
    )
    assert status == 0, err
    assert written(tmp_path / "phi.csv").index.name == column


def test_pandas_index_column_and_a_label(files, tmp_path, capfd):
    frame = files["X"].assign(target=np.arange(N_ROWS) % 2)
    data = table_file(tmp_path, frame, index=True)  # its column: "Unnamed: 0"
    status, _, err = explain(capfd, files, "tree", data, tmp_path / "phi.csv")
    assert_one_line_error(
        status, err, 1, "pass --index Unnamed: 0 to name",
        "; if 'target' is the label, pass --target target",
    )  # fmt: skip


@pytest.mark.parametrize(
    "extra",
    [
        {"weight": np.linspace(1, 2, N_ROWS)},  # unique, but numbers
        {"city": ["Paris", "Lyon"] * (N_ROWS // 2)},  # text, repeated
    ],
    ids=["unique numbers", "repeated text"],
)
def test_other_unknown_columns_are_no_identifiers(files, tmp_path, capfd, extra):
    data = table_file(tmp_path, files["X"].assign(**extra))
    status, _, err = explain(capfd, files, "tree", data, tmp_path / "phi.csv")
    name = next(iter(extra))
    assert_one_line_error(
        status, err, 1, f"if {name!r} is the label, pass --target {name}"
    )
    assert "--index" not in err


def test_several_unknown_columns_suggest_ignore_extra_columns(files, tmp_path, capfd):
    data = table_file(tmp_path, files["X"].assign(a=1.0, b=2.0))
    status, _, err = explain(capfd, files, "tree", data, tmp_path / "phi.csv")
    assert_one_line_error(
        status, err, 1, "unknown: ['a', 'b']; --ignore-extra-columns leaves out"
    )


# --- --ignore-extra-columns ----------------------------------------------------------


def test_ignore_extra_columns_of_data_and_background(files, tmp_path, capfd):
    data = table_file(tmp_path, files["X"].assign(notes="ok", weight=1.5))
    background = table_file(
        tmp_path, files["background"].assign(split="train"), "bg.csv"
    )
    out = tmp_path / "phi.csv"
    status, _, err = explain(
        capfd, files, "ridge", data, out, "--background", background,
        "--ignore-extra-columns",
    )  # fmt: skip
    assert status == 0, err
    lines = err.splitlines()
    assert (
        "skshapley: --ignore-extra-columns: left out 2 columns of rows.csv that "
        "the model does not know: 'notes', 'weight'"
    ) in lines
    assert (
        "skshapley: --ignore-extra-columns: left out 1 column of bg.csv that the "
        "model does not know: 'split'"
    ) in lines
    explainer = ExactExplainer(files["ridge model"]).fit(files["background"])
    expected = explainer.explain(files["X"])
    # The CSV holds 17 significant digits; the model's products round with
    # the rows' memory layout (as in test_agnostic.check_table).
    np.testing.assert_allclose(
        written(out)[FEATURES].to_numpy(), expected.to_numpy(), rtol=1e-12
    )


def test_ignore_extra_columns_still_needs_every_model_column(files, tmp_path, capfd):
    data = table_file(tmp_path, files["X"].drop(columns="bmi").assign(extra=1))
    status, _, err = explain(
        capfd, files, "tree", data, tmp_path / "phi.csv", "--ignore-extra-columns"
    )
    assert_one_line_error(status, err, 1, "missing: ['bmi'], unknown: []")
    assert "left out" not in err  # the note waits for the data to be checked


def test_ignore_extra_columns_of_a_model_file(files, tmp_path, capfd):
    # An XGBoost JSON file: the columns' names come from the parsed model.
    xgboost = pytest.importorskip("xgboost")
    X, y = files["X"], np.arange(N_ROWS, dtype=float)
    path = tmp_path / "model.json"
    xgboost.XGBRegressor(n_estimators=2).fit(X, y).get_booster().save_model(path)
    data = table_file(tmp_path, X.assign(extra=1))
    status, _, err = explain(
        capfd, {"json": path}, "json", data, tmp_path / "phi.csv",
        "--ignore-extra-columns",
    )  # fmt: skip
    assert status == 0, err
    assert "model does not know: 'extra'" in err


def test_ignore_extra_columns_refused_for_positional_models(files, tmp_path, capfd):
    data = table_file(tmp_path, files["X"].assign(extra=1))
    status, _, err = explain(
        capfd, files, "array", data, tmp_path / "phi.csv",
        "--background", files["bg"], "--ignore-extra-columns",
    )  # fmt: skip
    assert_one_line_error(status, err, 1, "reads them by position")


def test_ignore_extra_columns_needs_model_and_data(tmp_path, capfd):
    status, _, err = call(
        capfd, "explain", "--ignore-extra-columns", "--out", tmp_path / "phi.csv"
    )
    assert_one_line_error(status, err, 2, "--ignore-extra-columns needs --model")


@pytest.mark.parametrize("command", ["explain", "report"])
def test_help_documents_the_new_option(capfd, command):
    with pytest.raises(SystemExit):
        call(capfd, command, "--help")
    text = " ".join(capfd.readouterr().out.split())
    assert "--ignore-extra-columns leave out the columns of --data and" in text


# --- values the model refuses, in errors that name no column -------------------------


def refused(files, tmp_path, capfd, frame, *options, model="ridge"):
    """The error line of explaining ``frame`` against the background."""
    data = table_file(tmp_path, frame)
    status, _, err = explain(
        capfd, files, model, data, tmp_path / "phi.csv",
        "--background", files["bg"], *options,
    )  # fmt: skip
    assert_one_line_error(status, err, 1, "the model refuses the data: ")
    return err


def test_text_in_a_scaled_column_is_named(files, tmp_path, capfd):
    frame = files["X"].astype(object)
    frame.loc[3, "bmi"] = "abc"  # after rows the model takes
    err = refused(files, tmp_path, capfd, frame)
    assert (
        "column 'bmi' (row 3: 'abc'): ValueError: could not convert string to "
        "float: 'abc'"
    ) in err
    assert "model evaluations" not in err  # refused before the run


def test_explainers_own_message_naming_the_column_is_kept(files, tmp_path, capfd):
    # TreeExplainer reads the values itself, and names the column: its
    # message describes the whole column (the value that is no number).
    frame = files["X"].astype(object)
    frame.loc[3, "bmi"] = "abc"
    data = table_file(tmp_path, frame)
    status, _, err = explain(
        capfd, files, "tree", data, tmp_path / "phi.csv", "--background", files["bg"]
    )
    assert_one_line_error(
        status, err, 1, "Column 'bmi' of X must hold real numbers", "'abc'"
    )
    assert "refuses" not in err


def test_every_refused_column_of_the_first_row_is_named(files, tmp_path, capfd):
    frame = files["X"].astype(object)
    frame.loc[0, "sex"] = "male"  # the first row: the background's is tried
    frame.loc[0, "bp"] = np.nan
    frame.loc[2, "s5"] = "x"  # a later row: not the one traced
    err = refused(files, tmp_path, capfd, frame)
    assert "column 'sex' (row 0: 'male'): ValueError: could not convert" in err
    assert (
        "column 'bp' (row 0: a missing value): ValueError: Input X contains NaN" in err
    )
    assert "'s5'" not in err


def test_refused_row_is_named_by_index(files, tmp_path, capfd):
    frame = files["X"].assign(patient=[f"p{i}" for i in range(N_ROWS)])
    frame["age"] = frame["age"].astype(object)
    frame.loc[4, "age"] = "old"
    err = refused(files, tmp_path, capfd, frame, "--index", "patient")
    assert "column 'age' (row 'p4': 'old')" in err


def test_type_error_is_traced_to_its_column(files, tmp_path, capfd):
    frame = files["X"].astype(object)
    frame.loc[1, "s5"] = "?"
    err = refused(files, tmp_path, capfd, frame, model="log")
    # The column is read as text, which np.log1p refuses from its first row.
    assert (
        "column 's5' (row 0: '4.8598'): TypeError: loop of ufunc does not "
        "support argument 0 of type str"
    ) in err


@pytest.mark.parametrize(("row", "named"), [(3, True), (0, False)])
def test_tree_pipeline_without_background(files, tmp_path, capfd, row, named):
    # Its preprocessing is scikit-learn's; an accepted row to try the
    # columns in is an earlier row of the data, if any.
    frame = files["X"].astype(object)
    frame.loc[row, "bmi"] = "abc"
    data = table_file(tmp_path, frame)
    status, _, err = explain(capfd, files, "scaled tree", data, tmp_path / "phi.csv")
    assert_one_line_error(status, err, 1, "could not convert string to float: 'abc'")
    assert ("column 'bmi' (row 3: 'abc')" in err) is named
