"""Errors a user can act on: one line, a distinct exit status, a useful hint.

Exit statuses: 0 success, 1 a problem with a file, the model or the data,
2 a usage error, 3 an internal error (a bug), 130 Ctrl-C (tested in
``test_files_and_signals.py``).
"""

import pickle
import sys
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_diabetes, load_iris
from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor
from sklearn.kernel_ridge import KernelRidge
from sklearn.linear_model import LinearRegression
from sklearn.preprocessing import StandardScaler

from skshapley import TreeExplainer, UnsupportedModelError
from skshapley.cli import _inputs, _main, main

N_TREES = 10


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Pickled models and data files, made once."""
    folder = tmp_path_factory.mktemp("errors")
    X, y = load_diabetes(return_X_y=True, as_frame=True, scaled=False)
    paths = {"folder": folder, "X": X}
    gbr = GradientBoostingRegressor(n_estimators=N_TREES, random_state=0).fit(X, y)
    paths["gbr"] = gbr

    def save(name, obj):
        paths[name] = folder / f"{name}.pkl"
        paths[name].write_bytes(pickle.dumps(obj))

    save("tree", gbr)
    # Changed by issue 14: a LinearRegression is explained (model-agnostically);
    # a transformer, with no predict, is what no explainer takes.
    save("transformer", StandardScaler().fit(X))
    paths["data"] = folder / "diabetes.csv"
    X.assign(target=y).to_csv(paths["data"], index=False)
    iris = load_iris(as_frame=True)
    save(
        "classifier",
        GradientBoostingClassifier(n_estimators=3).fit(iris.data, iris.target),
    )
    paths["iris"] = folder / "iris.csv"
    iris.data.to_csv(paths["iris"], index=False)
    return paths


def call(capfd, *args):
    status = main([str(arg) for arg in args])
    out, err = capfd.readouterr()
    return status, out, err


def explain(files, capfd, *extra, model="tree", data="data"):
    return call(
        capfd, "explain", "--model", files[model], "--data", files[data],
        "--trust-pickle", "--out", files["folder"] / "never.csv", "-q", *extra,
    )  # fmt: skip


def error_line(status, err, expected):
    """The one error line, after checking the status and that it is alone."""
    assert status == expected, err
    assert "Traceback" not in err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("skshapley: error: "), err
    return lines[0]


# --- the exit statuses ------------------------------------------------------------


def test_success_is_status_0(files, tmp_path, capfd):
    out = tmp_path / "phi.csv"
    status, _, err = call(
        capfd, "explain", "--model", files["tree"], "--data", files["data"],
        "--trust-pickle", "--target", "target", "--out", out, "-q",
    )  # fmt: skip
    assert (status, err) == (0, "")
    table = pd.read_csv(out, index_col="row")
    np.testing.assert_allclose(
        table.sum(axis=1), files["gbr"].predict(files["X"]), rtol=1e-12
    )


def test_internal_error_is_status_3_with_a_hint_to_report_it(files, capfd, monkeypatch):
    def broken(model, groups, background, **choice):
        raise KeyError("a bug")

    monkeypatch.setattr(_main, "make_explainer", broken)
    status, _, err = explain(files, capfd, "--target", "target")
    line = error_line(status, err, 3)
    assert "internal error (KeyError: 'a bug')" in line
    assert "please report it" in line
    assert "https://github.com/skshapley/skshapley/issues" in line
    assert "--debug" in line
    status, _, err = explain(files, capfd, "--target", "target", "--debug")
    assert status == 3
    assert "Traceback (most recent call last)" in err
    assert 'raise KeyError("a bug")' in err
    assert err.strip().splitlines()[-1].startswith("skshapley: error: internal error")


def test_out_of_memory_is_status_1(files, capfd, monkeypatch):
    def too_big(model, groups, background, **choice):
        raise MemoryError

    monkeypatch.setattr(_main, "make_explainer", too_big)
    status, _, err = explain(files, capfd, "--target", "target")
    assert "not enough memory" in error_line(status, err, 1)


@pytest.mark.parametrize(
    ("command", "module", "expected"),
    [
        ("report", "matplotlib", 'the report needs matplotlib, which is not '
         'installed: pip install "skshapley[plot]"'),
        ("explain", "pyarrow", "writing Parquet files needs pyarrow, which is "
         "not installed: pip install pyarrow"),
    ],
)  # fmt: skip
def test_a_missing_optional_library_is_status_1(
    files, tmp_path, capfd, monkeypatch, command, module, expected
):
    monkeypatch.setitem(sys.modules, module, None)  # import fails
    monkeypatch.setenv("MPLBACKEND", "Agg")  # main sets it for the report
    out = tmp_path / ("phi.parquet" if module == "pyarrow" else "report.html")
    status, _, err = call(capfd, command, "--out", out, "-q")
    assert error_line(status, err, 1) == f"skshapley: error: {expected}"
    assert not out.exists()


def test_an_import_error_of_a_bug_is_internal(files, capfd, monkeypatch):
    def broken(model, groups, background, **choice):
        raise ImportError("a bug")

    monkeypatch.setattr(_main, "make_explainer", broken)
    status, _, err = explain(files, capfd, "--target", "target")
    assert "internal error (ImportError: a bug)" in error_line(status, err, 3)


@pytest.mark.parametrize(
    ("error", "status", "fragment"),
    [
        (UnsupportedModelError("multi-output trees"), 1, "cannot read"),
        (ValueError("not JSON"), 1, "cannot read"),
        (TypeError("a bug"), 3, "internal error (TypeError: a bug)"),
    ],
)
def test_only_unsupported_models_are_reported_as_unreadable_files(
    files, capfd, monkeypatch, error, status, fragment
):
    def read(path):
        raise error

    monkeypatch.setattr(_inputs, "read_xgboost_model", read)
    model = files["folder"] / "model.json"
    model.write_text("{}")
    status_, _, err = call(
        capfd, "explain", "--model", model, "--data", files["data"],
        "--out", files["folder"] / "never.csv", "-q",
    )  # fmt: skip
    assert fragment in error_line(status_, err, status)


def test_warnings_are_one_line_each_and_none_after_an_error(
    files, tmp_path, capfd, monkeypatch
):
    fitted = _main.make_explainer

    def warning(model, groups, background, **choice):
        warnings.warn("first\nsecond line", UserWarning, stacklevel=1)
        warnings.warn("first\nsecond line", UserWarning, stacklevel=1)  # shown once
        return fitted(model, groups, background, **choice)

    monkeypatch.setattr(_main, "make_explainer", warning)
    status, _, err = call(
        capfd, "explain", "--model", files["tree"], "--data", files["data"],
        "--trust-pickle", "--target", "target", "--out", tmp_path / "phi.csv",
    )  # fmt: skip
    assert status == 0, err
    assert err.strip().splitlines()[-1] == "skshapley: warning: first second line"
    assert err.count("warning") == 1
    status, _, err = call(
        capfd, "explain", "--model", files["tree"], "--data", files["data"],
        "--trust-pickle", "--target", "target", "--out", tmp_path / "phi.csv",
        "--force", "-q",
    )  # fmt: skip
    assert (status, err) == (0, "")  # -q: nothing but errors
    status, _, err = call(  # no --target: an error after the warnings
        capfd, "explain", "--model", files["tree"], "--data", files["data"],
        "--trust-pickle", "--out", tmp_path / "never.csv",
    )  # fmt: skip
    assert "unknown: ['target']" in error_line(status, err, 1)


def test_epilog_and_docstring_state_the_statuses(capfd):
    with pytest.raises(SystemExit):
        main(["--help"])
    text = " ".join(capfd.readouterr().out.split())
    for fragment in ("1 a problem with a file", "2 a usage error",
                     "3 an internal error", "--debug", "130 interrupted"):  # fmt: skip
        assert fragment in text
    assert "3 for an internal error" in " ".join(main.__doc__.split())


# --- errors the user can act on ------------------------------------------------------


@pytest.mark.parametrize(
    ("options", "status", "fragments"),
    [
        (["--groups", "g=s1,s1"], 1, ["Group 'g' lists 's1' twice"]),
        (["--groups", "a=s1,s2", "b=s2,s3"], 1, ["'s2'", "two groups", "'a'", "'b'"]),
        (["--groups", "g=s1,nothing"], 1, ["'nothing'", "not one of the model's"]),
        (["--index", "target"], 2, ["--index and --target", "'target'"]),
    ],
    ids=["member twice", "column in two groups", "unknown column", "index=target"],
)  # fmt: skip
def test_option_errors(files, capfd, options, status, fragments):
    code, _, err = explain(files, capfd, "--target", "target", *options)
    line = error_line(code, err, status)
    for fragment in fragments:
        assert fragment in line


def test_repeated_header_names_are_named(files, tmp_path, capfd):
    data = tmp_path / "repeated.csv"
    frame = files["X"].iloc[:5]
    pd.concat([frame, frame[["bmi"]]], axis=1).to_csv(data, index=False)
    assert pd.read_csv(data).columns[-1] == "bmi.1"  # what pandas would explain
    status, _, err = explain({**files, "data": data}, capfd)
    line = error_line(status, err, 1)
    assert "repeated column names: bmi;" in line


def test_forgotten_target_is_suggested(files, capfd):
    status, _, err = explain(files, capfd)
    line = error_line(status, err, 1)
    assert "unknown: ['target']" in line
    assert "if 'target' is the label, pass --target target" in line


def test_no_target_hint_when_columns_are_simply_wrong(files, tmp_path, capfd):
    data = tmp_path / "renamed.csv"
    files["X"].rename(columns={"bmi": "BMI"}).to_csv(data, index=False)
    status, _, err = explain({**files, "data": data}, capfd)
    line = error_line(status, err, 1)
    assert "'BMI'" in line
    assert "--target" not in line


def test_strings_in_a_numeric_column_pass_the_explainers_message(
    files, tmp_path, capfd
):
    frame = files["X"].astype(object)
    frame.loc[3, "bmi"] = "abc"
    data = tmp_path / "strings.csv"
    frame.to_csv(data, index=False)
    with pytest.raises(ValueError, match=r"number|numeric|bmi") as expected:
        TreeExplainer(files["gbr"]).fit().explain(pd.read_csv(data))
    status, _, err = explain({**files, "data": data}, capfd)
    line = error_line(status, err, 1)
    assert " ".join(str(expected.value).split()) in line


def test_unsupported_model_is_one_short_line(files, capfd):
    status, _, err = explain(files, capfd, "--target", "target", model="transformer")
    line = error_line(status, err, 1)
    assert "skshapley does not support StandardScaler" in line
    assert "XGBoost" in line
    assert "LightGBM" in line
    assert "product-kernel models" in line
    assert "Supported models" in line  # where the full list is
    assert len(line) < 300
    assert len(line) < 500


def test_type_error_of_a_supported_model_is_not_unsupported(files, capfd, monkeypatch):
    # A TypeError that is not the explainers' UnsupportedModelError is not
    # "unsupported model": not listed as a refusal, not retried elsewhere.
    def broken(model):
        raise TypeError("unsupported operand type(s) for +: 'int' and 'str'")

    monkeypatch.setattr(
        "skshapley.trees._explainer.TreeExplainer._parse", staticmethod(broken)
    )
    status, _, err = explain(files, capfd, "--target", "target")
    line = error_line(status, err, 3)
    assert "internal error (TypeError: unsupported operand" in line
    assert "ProductKernelExplainer" not in line


@pytest.mark.parametrize("gamma", [np.nan, -1.0])
def test_bad_kernel_gamma_is_one_line(files, tmp_path, capfd, gamma):
    X, y = files["X"], np.arange(len(files["X"]), dtype=float)
    model = KernelRidge(kernel="rbf", gamma=0.1).fit(X, y)
    model.gamma = gamma  # as a tampered file could hold
    path = tmp_path / "kernel.pkl"
    path.write_bytes(pickle.dumps(model))
    status, _, err = explain({**files, "kernel": path}, capfd, "--target",
                             "target", model="kernel")  # fmt: skip
    error_line(status, err, 1)


@pytest.mark.parametrize("name", ["garbage.json", "garbage.ubj", "garbage.txt",
                                  "garbage.skops"])  # fmt: skip
def test_binary_garbage_model_is_one_line(files, tmp_path, capfd, name):
    library = {".json": "xgboost", ".ubj": "xgboost", ".txt": "lightgbm"}
    pytest.importorskip(library.get(name[name.index(".") :], "skops"))
    path = tmp_path / name
    path.write_bytes(np.random.default_rng(0).bytes(4096))
    status, _, err = explain({**files, "garbage": path}, capfd, model="garbage")
    line = error_line(status, err, 1)
    assert "garbage" in line


def test_report_tells_how_to_choose_an_output_on_the_command_line(
    files, tmp_path, capfd
):
    pytest.importorskip("matplotlib")
    out = tmp_path / "classes.html"
    status, _, err = call(
        capfd, "report", "--model", files["classifier"], "--data", files["iris"],
        "--trust-pickle", "--rows", 20, "--out", out, "-q",
    )  # fmt: skip
    assert status == 0, err
    html = out.read_text(encoding="utf-8")
    assert "choose another with --output NAME" in html
    assert "output=" not in html.replace("--output NAME", "")


def test_names_with_math_text_characters_in_a_report(tmp_path, capfd):
    pytest.importorskip("matplotlib")
    names = ["$x$", "a$b", "\\frac", "$\\frac$", "x_$^"]
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(40, len(names))), columns=names)
    model = GradientBoostingRegressor(n_estimators=5, random_state=0)
    model.fit(X, X["$x$"] * X["\\frac"])
    (tmp_path / "model.pkl").write_bytes(pickle.dumps(model))
    X.to_csv(tmp_path / "rows.csv", index=False)
    out = tmp_path / "r.html"
    status, _, err = call(
        capfd, "report", "--model", tmp_path / "model.pkl", "--data",
        tmp_path / "rows.csv", "--trust-pickle", "--out", out, "-q",
    )  # fmt: skip
    assert status == 0, err
    html = out.read_text(encoding="utf-8")
    assert "$\\frac$" in html
    assert "x_$^" in html


# -- careless input, third round: refused before any work, one line ---------


@pytest.fixture(scope="module")
def linear(tmp_path_factory):
    """A model that only the model-agnostic explainers take, and its data."""
    folder = tmp_path_factory.mktemp("careless")
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(30, 3)), columns=["a", "b", "c"])
    model = folder / "linear.pkl"
    model.write_bytes(pickle.dumps(LinearRegression().fit(X, X["a"] - X["b"])))
    data = folder / "rows.csv"
    X.to_csv(data, index=False)
    return model, data, folder


@pytest.mark.parametrize("method", [None, "exact", "permutation"])
def test_interactions_of_a_model_agnostic_explainer_are_refused_before_work(
    linear, capfd, method, monkeypatch
):
    model, data, folder = linear
    explained = []
    monkeypatch.setattr(
        "skshapley.agnostic._explainer.AgnosticExplainer.fit",
        lambda *a, **k: explained.append(1),
    )
    out = folder / "inter.csv"
    args = ["explain", "--model", model, "--trust-pickle", "--data", data,
            "--background", data, "--interactions", "--out", out, "-q"]  # fmt: skip
    if method:
        args += ["--method", method]
    status, _, err = call(capfd, *args)
    assert status == 2
    assert err.count("\n") == 1
    assert "--interactions needs exact interaction values" in err
    assert "ExactExplainer" in err or "PermutationExplainer" in err
    assert not explained
    assert not out.exists()


@pytest.mark.parametrize("count", [str(2**31), str(2**63), "0", "-3", "ten"])
def test_a_permutation_count_past_the_limit_is_a_usage_error(linear, capfd, count):
    model, data, folder = linear
    status, _, err = call(
        capfd, "explain", "--model", model, "--trust-pickle", "--data", data,
        "--background", data, "--method", "permutation", "--permutations", count,
        "--out", folder / "p.csv", "-q",
    )  # fmt: skip
    assert status == 2
    assert "argument --permutations: expected" in err


@pytest.mark.parametrize(
    ("column", "shown"),
    [
        (["n0", "n1", "n2"] * 147 + ["n0"], "'n0' (str)"),
        (pd.date_range("2020-01-01", periods=442).astype(str), "'2020-01-01' (str)"),
    ],
    ids=["text", "dates"],
)
def test_a_text_target_of_a_regressor_is_refused_naming_the_value(
    files, capfd, column, shown
):
    data = files["folder"] / "text_target.csv"
    files["X"].assign(label=list(column)).to_csv(data, index=False)
    out = files["folder"] / "text_target.html"
    status, _, err = call(
        capfd, "report", "--model", files["tree"], "--trust-pickle", "--data", data,
        "--target", "label", "--out", out, "-q",
    )  # fmt: skip
    assert status == 1
    assert err.count("\n") == 1
    assert f"y must hold real numbers (as float64); it holds {shown}" in err
    assert "--target names that column" in err
    assert not out.exists()


def test_a_background_file_past_the_limit_names_it_and_what_to_do(linear, capfd):
    model, data, folder = linear
    big = folder / "big.csv"
    big.write_text("a,b,c\n" + "1,2,3\n" * 2000)
    status, _, err = call(
        capfd, "explain", "--model", model, "--trust-pickle", "--data", data,
        "--background", big, "--max-data-bytes", "4K", "--background-rows", "10",
        "--out", folder / "b.csv", "-q",
    )  # fmt: skip
    assert status == 1
    assert f"background file {big} holds more than 4,096 bytes" in err
    assert "--background-rows samples the rows only after the whole file" in err
