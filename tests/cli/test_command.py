"""The ``skshapley`` command, end to end.

The subprocess tests run the command as a user does (each costs a Python
start-up, about 1.5 s); the others call ``main`` in this process and read
what it writes with ``capfd``, which also captures what compiled libraries
print on file descriptor 2.
"""

import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_diabetes, load_iris
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVR

from skshapley.cli import main

N_TREES = 20
FEATURES = ["age", "sex", "bmi", "bp", "s1", "s2", "s3", "s4", "s5", "s6"]


def run(*args, cwd):
    """The command in a new process: (exit status, stdout, stderr)."""
    result = subprocess.run(
        [sys.executable, "-m", "skshapley.cli", *map(str, args)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )
    return result.returncode, result.stdout, result.stderr


def call(capfd, *args):
    """``main`` in this process: (exit status, stdout, stderr)."""
    status = main([str(arg) for arg in args])
    out, err = capfd.readouterr()
    return status, out, err


def assert_one_line_error(status, err, expected_status, *fragments):
    assert status == expected_status, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("skshapley: error: ")
    for fragment in fragments:
        assert fragment in lines[0]


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Models saved in every supported format, and data files, made once."""
    folder = tmp_path_factory.mktemp("cli")
    X, y = load_diabetes(return_X_y=True, as_frame=True, scaled=False)
    paths = {"folder": folder, "X": X}
    data = X.assign(target=y)
    paths["data"] = folder / "diabetes.csv"
    data.to_csv(paths["data"], index=False)
    paths["missing_bmi"] = folder / "missing_bmi.csv"
    data.drop(columns="bmi").to_csv(paths["missing_bmi"], index=False)
    paths["with_id"] = folder / "with_id.csv"
    data.assign(patient=[f"p{i}" for i in range(len(X))]).to_csv(
        paths["with_id"], index=False
    )

    xgboost = pytest.importorskip("xgboost")
    booster = xgboost.XGBRegressor(n_estimators=N_TREES, max_depth=3).fit(X, y)
    paths["xgboost"] = folder / "model.json"
    booster.get_booster().save_model(paths["xgboost"])

    iris = load_iris(as_frame=True)
    classifier = xgboost.XGBClassifier(n_estimators=5, max_depth=2)
    classifier.fit(iris.data, iris.target)
    paths["classifier"] = folder / "classifier.ubj"
    classifier.get_booster().save_model(paths["classifier"])
    paths["iris"] = folder / "iris.csv"
    iris.data.to_csv(paths["iris"], index=False)

    lightgbm = pytest.importorskip("lightgbm")
    lgbm = lightgbm.LGBMRegressor(n_estimators=N_TREES, verbose=-1).fit(X, y)
    paths["lightgbm"] = folder / "model.txt"
    lgbm.booster_.save_model(paths["lightgbm"])

    gbr = GradientBoostingRegressor(n_estimators=N_TREES, random_state=0).fit(X, y)
    paths["gbr"] = gbr
    paths["pickle"] = folder / "model.pkl"
    with open(paths["pickle"], "wb") as file:
        pickle.dump(gbr, file)
    # Changed by issue 14: a LinearRegression is explained (model-agnostically);
    # a transformer, with no predict, is what no explainer takes.
    paths["transformer"] = folder / "transformer.joblib"
    with open(paths["transformer"], "wb") as file:
        pickle.dump(StandardScaler().fit(X), file)

    sio = pytest.importorskip("skops.io")
    paths["skops_tree"] = folder / "tree.skops"
    sio.dump(gbr, paths["skops_tree"])
    kernel = make_pipeline(StandardScaler(), SVR(C=10.0)).fit(X, y)
    paths["skops_kernel"] = folder / "kernel.skops"
    sio.dump(kernel, paths["skops_kernel"])
    paths["kernel"] = kernel
    return paths


# --- subprocesses: what a user runs --------------------------------------------


def test_default_report_in_a_fresh_directory(tmp_path):
    pytest.importorskip("matplotlib")
    status, out, err = run("report", cwd=tmp_path)
    assert status == 0, err
    written = tmp_path / "skshapley-report.html"
    assert Path(out.strip()) == written.resolve()
    assert "<html" in written.read_text(encoding="utf-8").lower()
    assert "Traceback" not in err


@pytest.mark.parametrize("model", ["lightgbm", "skops_tree", "skops_kernel"])
def test_explain_saved_models_in_a_new_process(files, tmp_path, model):
    out_path = tmp_path / "phi.csv"
    status, _, err = run(
        "explain", "--model", files[model], "--data", files["data"],
        "--target", "target", "--out", out_path, "-q",
        cwd=tmp_path,
    )  # fmt: skip
    assert status == 0, err
    table = pd.read_csv(out_path, index_col=0)
    X = files["X"].iloc[:5]
    if model == "lightgbm":
        import lightgbm

        booster = lightgbm.Booster(model_file=str(files["lightgbm"]))
        expected = booster.predict(X, raw_score=True)
    else:
        expected = (files["gbr"] if model == "skops_tree" else files["kernel"]).predict(
            X
        )
    np.testing.assert_allclose(table.iloc[:5].sum(axis=1), expected, rtol=1e-9)


def test_report_of_an_xgboost_model(files, tmp_path):
    pytest.importorskip("matplotlib")
    out_path = tmp_path / "xgb.html"
    status, out, err = run(
        "report", "--model", files["xgboost"], "--data", files["data"],
        "--target", "target", "--rows", 100, "--out", out_path, "-q",
        cwd=tmp_path,
    )  # fmt: skip
    assert status == 0, err
    assert out == err == ""  # -q: nothing but errors
    page = out_path.read_text(encoding="utf-8")
    assert "<html" in page.lower()
    assert "XGBoost model file on" in page  # the title names the file's kind


def test_explain_xgboost_sums_to_the_margin(files, tmp_path):
    xgboost = pytest.importorskip("xgboost")
    out_path = tmp_path / "phi.csv"
    status, out, err = run(
        "explain", "--model", files["xgboost"], "--data", files["data"],
        "--target", "target", "--out", out_path, cwd=tmp_path,
    )  # fmt: skip
    assert status == 0, err
    assert Path(out.strip()) == out_path.resolve()
    table = pd.read_csv(out_path, index_col="row")
    assert list(table.columns) == [*FEATURES, "base_value"]
    assert list(table.index) == list(range(len(files["X"])))
    rows = files["X"].iloc[:5]
    booster = xgboost.Booster(model_file=str(files["xgboost"]))
    margin = booster.predict(xgboost.DMatrix(rows), output_margin=True)
    # XGBoost adds its 20 trees in float32, at most 2 roundings per tree of
    # running sums below 1000 (diabetes targets are 25 to 346).
    atol = 2 * N_TREES * np.spacing(np.float32(1000))
    np.testing.assert_allclose(table.iloc[:5].sum(axis=1), margin, rtol=0, atol=atol)


def test_console_script(tmp_path):
    script = shutil.which("skshapley", path=str(Path(sys.executable).parent))
    if script is None:
        pytest.skip("the console script is not installed next to Python")
    result = subprocess.run(
        [script, "--version"], capture_output=True, text=True, check=True
    )
    assert result.stdout.strip()


def test_model_libraries_are_imported_only_for_their_files(tmp_path):
    code = (
        "import sys; from skshapley.cli import main; "
        "status = main(['explain', '--rows', '5', '-q']); "
        "print(sorted(m for m in ('xgboost', 'lightgbm', 'skops', 'matplotlib') "
        "if m in sys.modules)); sys.exit(status)"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_pickle_is_refused_without_trust(files, tmp_path):
    status, _, err = run(
        "explain", "--model", files["pickle"], "--data", files["data"],
        "--target", "target", cwd=tmp_path,
    )  # fmt: skip
    assert_one_line_error(status, err, 1, "--trust-pickle", "runs code")
    assert not (tmp_path / "attributions.csv").exists()


@pytest.mark.parametrize(
    ("args", "status", "fragment"),
    [
        (["--model", "nowhere.json", "--data", "nowhere.csv"], 1, "not found"),
        (["--model", "transformer.joblib", "--data", "diabetes.csv", "--target",
          "target", "--trust-pickle"], 1, "skshapley does not support"),
        (["--rows", "many"], 2, "--rows"),
    ],
    ids=["missing file", "unsupported model", "usage"],
)  # fmt: skip
def test_bad_input_fails_cleanly_in_a_subprocess(files, args, status, fragment):
    code, out, err = run("explain", *args, cwd=files["folder"])
    assert_one_line_error(code, err, status, fragment)
    assert out == ""


# --- in process: formats and options --------------------------------------------


def test_pickle_is_loaded_with_trust(files, tmp_path, capfd):
    out_path = tmp_path / "phi.csv"
    status, _, err = call(
        capfd, "explain", "--model", files["pickle"], "--data", files["data"],
        "--target", "target", "--trust-pickle", "--out", out_path,
    )  # fmt: skip
    assert status == 0, err
    table = pd.read_csv(out_path, index_col="row")
    # float64 throughout: the sums agree to rounding.
    np.testing.assert_allclose(
        table.sum(axis=1), files["gbr"].predict(files["X"]), rtol=1e-12
    )


def test_lightgbm_text_model(files, tmp_path, capfd):
    out_path = tmp_path / "phi.csv"
    status, out, err = call(
        capfd, "explain", "--model", files["lightgbm"], "--data", files["data"],
        "--target", "target", "--out", out_path,
    )  # fmt: skip
    assert status == 0, err
    assert "TreeExplainer (LightGBM model file" in err
    assert "[LightGBM]" not in out + err
    assert list(pd.read_csv(out_path, index_col="row").columns)[-1] == "base_value"


def test_skops_tree_model_trusts_scikit_learn_classes(files, tmp_path, capfd):
    out_path = tmp_path / "phi.csv"
    status, _, err = call(
        capfd, "explain", "--model", files["skops_tree"], "--data", files["data"],
        "--target", "target", "--rows", 10, "--out", out_path,
    )  # fmt: skip
    assert status == 0, err
    table = pd.read_csv(out_path, index_col="row")
    assert len(table) == 10
    assert table.index.is_monotonic_increasing
    rows = files["X"].loc[table.index]
    np.testing.assert_allclose(
        table.sum(axis=1), files["gbr"].predict(rows), rtol=1e-12
    )


def test_skops_kernel_model_with_groups(files, tmp_path, capfd):
    out_path = tmp_path / "phi.csv"
    status, _, err = call(
        capfd, "explain", "--model", files["skops_kernel"], "--data",
        files["data"], "--target", "target", "--rows", 5, "--out", out_path,
        "--groups", "blood=s1,s2,s3,s4,s5,s6", "body=bmi,bp",
    )  # fmt: skip
    assert status == 0, err
    assert "ProductKernelExplainer" in err
    table = pd.read_csv(out_path, index_col="row")
    assert list(table.columns) == ["blood", "body", "age", "sex", "base_value"]
    rows = files["X"].loc[table.index]
    np.testing.assert_allclose(
        table.sum(axis=1), files["kernel"].predict(rows), rtol=1e-9
    )


def test_tree_model_with_groups(files, tmp_path, capfd):
    out_path = tmp_path / "phi.csv"
    status, _, err = call(
        capfd, "explain", "--model", files["skops_tree"], "--data",
        files["data"], "--target", "target", "--rows", 5, "--out", out_path,
        "--groups", "blood=s1,s2,s3,s4,s5,s6",
    )  # fmt: skip
    assert status == 0, err
    assert "TreeExplainer" in err
    table = pd.read_csv(out_path, index_col="row")
    assert list(table.columns)[:2] == ["blood", "age"]
    rows = files["X"].loc[table.index]
    np.testing.assert_allclose(
        table.sum(axis=1), files["gbr"].predict(rows), rtol=1e-12
    )


def test_skops_file_with_untrusted_types_is_refused(files, tmp_path, capfd):
    sio = pytest.importorskip("skops.io")
    path = tmp_path / "odd.skops"
    sio.dump({"model": files["gbr"], "when": pd.Timestamp(0)}, path)
    status, _, err = call(
        capfd, "explain", "--model", path, "--data", files["data"], "--target",
        "target",
    )  # fmt: skip
    assert_one_line_error(status, err, 1, "does not trust", "--trust-pickle")


def test_parquet_in_and_out(files, tmp_path, capfd):
    pytest.importorskip("pyarrow")
    data = tmp_path / "data.parquet"
    pd.read_csv(files["data"]).to_parquet(data)
    out_path = tmp_path / "phi.parquet"
    status, _, err = call(
        capfd, "explain", "--model", files["xgboost"], "--data", data,
        "--target", "target", "--rows", 20, "--out", out_path,
    )  # fmt: skip
    assert status == 0, err
    table = pd.read_parquet(out_path)
    assert table.shape == (20, len(FEATURES) + 1)
    assert table.index.name == "row"


def test_index_column_names_the_rows(files, tmp_path, capfd):
    out_path = tmp_path / "phi.csv"
    status, _, err = call(
        capfd, "explain", "--model", files["xgboost"], "--data", files["with_id"],
        "--target", "target", "--index", "patient", "--rows", 3, "--out", out_path,
    )  # fmt: skip
    assert status == 0, err
    table = pd.read_csv(out_path, index_col=0)
    assert table.index.name == "patient"
    assert all(label.startswith("p") for label in table.index)


def test_several_outputs_and_output_choice(files, tmp_path, capfd):
    all_outputs = tmp_path / "all.csv"
    status, _, err = call(
        capfd, "explain", "--model", files["classifier"], "--data", files["iris"],
        "--out", all_outputs,
    )  # fmt: skip
    assert status == 0, err
    columns = pd.read_csv(all_outputs, index_col="row").columns
    assert len(columns) == 3 * 5
    assert columns[0].startswith("0__")
    assert columns[4] == "0__base_value"
    one = tmp_path / "one.csv"
    status, _, err = call(
        capfd, "explain", "--model", files["classifier"], "--data", files["iris"],
        "--output", "2", "--out", one,
    )  # fmt: skip
    assert status == 0, err
    table = pd.read_csv(one, index_col="row")
    assert list(table.columns)[-1] == "base_value"
    assert table.shape[1] == 5
    np.testing.assert_array_equal(
        table.to_numpy(), pd.read_csv(all_outputs, index_col="row").iloc[:, 10:]
    )


def test_default_explain_writes_attributions(tmp_path, monkeypatch, capfd):
    monkeypatch.chdir(tmp_path)
    status, out, err = call(capfd, "explain", "--rows", 50)
    assert status == 0, err
    assert Path(out.strip()) == (tmp_path / "attributions.csv").resolve()
    assert "diabetes" in err
    # The demo says what it fitted (once the options are checked).
    assert "no --model: fitted GradientBoostingRegressor" in err
    assert len(pd.read_csv(tmp_path / "attributions.csv")) == 50


# --- in process: errors -----------------------------------------------------------


def corrupt_file(folder: Path, name: str) -> Path:
    path = folder / name
    path.write_text("not a model\n")
    return path


@pytest.mark.parametrize(
    ("args", "status", "fragments"),
    [
        (["--model", "{folder}/model.h5", "--data", "{data}"], 1,
         ["unsupported extension", ".json", ".skops", ".joblib"]),
        (["--model", "{xgboost}", "--data", "{folder}/data.xlsx"], 1,
         ["unsupported extension", ".parquet"]),
        (["--model", "{xgboost}", "--data", "{folder}/nowhere.csv"], 1,
         ["not found"]),
        (["--model", "{folder}", "--data", "{data}"], 1,
         ["unsupported extension"]),
        (["--model", "{xgboost}", "--data", "{data}", "--target", "label"], 1,
         ["--target", "'label'", "bmi"]),
        (["--model", "{xgboost}", "--data", "{data}"], 1,
         ["unknown: ['target']"]),
        (["--model", "{xgboost}", "--data", "{missing_bmi}", "--target", "target"],
         1, ["missing: ['bmi']"]),
        (["--model", "{bad_json}", "--data", "{data}"], 1,
         ["cannot read", "XGBoost model"]),
        (["--model", "{bad_txt}", "--data", "{data}"], 1,
         ["cannot read", "LightGBM"]),
        (["--model", "{bad_skops}", "--data", "{data}"], 1,
         ["cannot read", "skops"]),
        (["--model", "{bad_pickle}", "--data", "{data}", "--trust-pickle"], 1,
         ["cannot load"]),
        (["--model", "{transformer}", "--data", "{data}", "--target", "target",
          "--trust-pickle"], 1,
         ["skshapley does not support StandardScaler", "tree ensembles"]),
        (["--model", "{skops_kernel}", "--data", "{data}", "--target", "target",
          "--groups", "g=s1,nothing"], 1, ["'nothing'"]),
        (["--model", "{xgboost}", "--data", "{data}", "--target", "target",
          "--output", "class 7"], 1, ["--output", "target"]),
        (["--model", "{xgboost}", "--data", "{data}", "--target", "target",
          "--out", "{folder}/no/such/dir.csv"], 1, ["cannot write"]),
        (["--model", "{xgboost}"], 2, ["--model and --data"]),
        (["--target", "target"], 2, ["--target"]),
        (["--out", "phi.xlsx"], 2, [".parquet"]),
        (["--groups", "blood"], 2, ["NAME=COL"]),
        (["--groups", "a=s1", "a=s2"], 2, ["twice"]),
        (["--rows", "-3"], 2, ["positive"]),
        (["--colour"], 2, ["--colour"]),
    ],
)  # fmt: skip
def test_bad_input_fails_in_one_line(files, tmp_path, capfd, args, status, fragments):
    names = {key: value for key, value in files.items() if isinstance(value, Path)}
    names["bad_json"] = corrupt_file(tmp_path, "bad.json")
    names["bad_txt"] = corrupt_file(tmp_path, "bad.txt")
    names["bad_skops"] = corrupt_file(tmp_path, "bad.skops")
    names["bad_pickle"] = corrupt_file(tmp_path, "bad.pkl")
    args = [arg.format(**names) for arg in args]
    code, out, err = call(capfd, "explain", *args)
    assert_one_line_error(code, err, status, *fragments)
    assert out == ""


def test_usage_error_without_a_command(capfd):
    code, _, err = call(capfd)
    assert_one_line_error(code, err, 2, "COMMAND", "skshapley --help")


def test_help_exits_zero(capfd):
    with pytest.raises(SystemExit) as exit_info:
        main(["explain", "--help"])
    assert exit_info.value.code == 0
    assert "base_value" in capfd.readouterr().out
