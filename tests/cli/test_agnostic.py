"""The command with model-agnostic explainers: --method, --permutations, --seed,
--background for any model, and report --leave-one-out."""

import pickle
import re

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_diabetes
from sklearn.ensemble import GradientBoostingRegressor
from sklearn.linear_model import LogisticRegression
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler

from skshapley import ExactExplainer, PermutationExplainer, TreeExplainer

from .test_command import assert_one_line_error, call


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A logistic pipeline (skops) and a boosted tree (pickle), data, background."""
    folder = tmp_path_factory.mktemp("agnostic")
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    X = X[["age", "sex", "bmi", "bp", "s5"]]
    labels = np.where(y > 140, "high", "low")
    paths = {"folder": folder, "X": X.iloc[:6], "background": X.iloc[100:108]}
    logistic = make_pipeline(StandardScaler(), LogisticRegression()).fit(X, labels)
    # Depth 4: trees with three or more players, on which the orders drawn
    # matter (with two, an order and its reverse give the exact values).
    tree = GradientBoostingRegressor(n_estimators=10, max_depth=4, random_state=0)
    paths["logistic"], paths["tree"] = logistic, tree.fit(X, y)
    sio = pytest.importorskip("skops.io")
    sio.dump(logistic, folder / "logistic.skops")
    with open(folder / "tree.pkl", "wb") as file:
        pickle.dump(paths["tree"], file)
    paths["data"] = folder / "rows.csv"
    paths["X"].assign(target=y.iloc[:6]).to_csv(paths["data"], index=False)
    # Changed by issue 16: the report measures the model against --target,
    # so the classifier's rows carry its own labels.
    paths["labelled"] = folder / "labelled.csv"
    paths["X"].assign(target=labels[:6]).to_csv(paths["labelled"], index=False)
    paths["bg"] = folder / "background.csv"
    paths["background"].to_csv(paths["bg"], index=False)
    return paths


def command(capfd, files, name, out, *options, subcommand="explain"):
    """``skshapley <subcommand>`` of a saved model: (status, stderr)."""
    model = files["folder"] / ("logistic.skops" if name == "logistic" else "tree.pkl")
    data = files["labelled" if name == "logistic" else "data"]
    status, _, err = call(
        capfd, subcommand, "--model", model, "--data", data,
        "--target", "target", "--trust-pickle", "--out", out, "-q", *options,
    )  # fmt: skip
    return status, err


def written(path) -> pd.DataFrame:
    return pd.read_csv(path, index_col="row")


def check_table(table: pd.DataFrame, explainer, X) -> None:
    """The table is ``explainer.explain(X)`` and its base values, as written.

    Equal to rounding, not exactly: the CSV holds 17 significant digits and
    is read back exactly, but a model's matrix products (scikit-learn's, by
    BLAS) round differently with the memory layout of the rows, which
    differs between a frame read from CSV and a slice of one in memory.
    """
    phi = explainer.explain(X)
    base = explainer.expected_value_
    tolerance = 1e-13 * np.abs(phi.to_numpy()).max()
    if isinstance(phi.columns, pd.MultiIndex):
        for name in explainer.output_names_:
            part = table.filter(like=f"{name}__")
            np.testing.assert_allclose(
                part.iloc[:, :-1].to_numpy(), phi[name].to_numpy(), atol=tolerance
            )
            assert (part[f"{name}__base_value"] == base[name]).all()
    else:
        np.testing.assert_allclose(
            table.iloc[:, :-1].to_numpy(), phi.to_numpy(), atol=tolerance
        )
        assert (table["base_value"] == base).all()


def test_a_logistic_pipeline_against_a_background(capfd, files, tmp_path):
    out = tmp_path / "phi.csv"
    status, err = command(capfd, files, "logistic", out, "--background", files["bg"])
    assert status == 0, err
    explainer = ExactExplainer(files["logistic"]).fit(files["background"])
    check_table(written(out), explainer, files["X"])
    # predict_proba of a binary classifier: its positive class only ("low",
    # classes_[1]), one column per feature as the explainer's frame has them.
    assert list(written(out).columns[:2]) == ["age", "sex"]


def test_a_model_agnostic_explainer_needs_a_background(capfd, files, tmp_path):
    status, err = command(capfd, files, "logistic", tmp_path / "phi.csv")
    assert_one_line_error(
        status, err, 1, "Pipeline(StandardScaler, LogisticRegression) is explained "
        "by ExactExplainer", "pass --background",
    )  # fmt: skip
    status, err = command(
        capfd, files, "tree", tmp_path / "phi.csv", "--method", "exact"
    )
    assert_one_line_error(status, err, 1, "ExactExplainer", "pass --background")
    assert not (tmp_path / "phi.csv").exists()


def test_method_exact_explains_a_tree_model_by_enumeration(capfd, files, tmp_path):
    out = tmp_path / "phi.csv"
    status, err = command(
        capfd, files, "tree", out, "--method", "exact", "--background", files["bg"]
    )
    assert status == 0, err
    explainer = ExactExplainer(files["tree"]).fit(files["background"])
    check_table(written(out), explainer, files["X"])
    # The same game as the tree explainer's interventional one: equal to
    # rounding (outputs of order 100, 2**5 coalitions averaged).
    tree = TreeExplainer(files["tree"], feature_perturbation="interventional")
    expected = tree.fit(files["background"]).explain(files["X"])
    np.testing.assert_allclose(
        written(out).iloc[:, :-1].to_numpy(), expected.to_numpy(), rtol=0, atol=1e-10
    )


@pytest.mark.parametrize(
    ("options", "params"),
    [
        ((), {"random_state": 0}),
        (("--permutations", "3", "--seed", "4"),
         {"n_permutations": 3, "random_state": 4}),
    ],
    ids=["defaults", "given"],
)  # fmt: skip
def test_method_permutation_is_seeded(capfd, files, tmp_path, options, params):
    out = tmp_path / "phi.csv"
    status, err = command(
        capfd, files, "tree", out, "--method", "permutation",
        "--background", files["bg"], *options,
    )  # fmt: skip
    assert status == 0, err
    explainer = PermutationExplainer(files["tree"], **params)
    check_table(written(out), explainer.fit(files["background"]), files["X"])


@pytest.mark.parametrize(
    ("model", "options", "fragments"),
    [
        ("logistic", ("--bg", "--method", "exact", "--permutations", "3"),
         ["--permutations is for the permutation explainer; --method exact"]),
        ("logistic", ("--bg", "--permutations", "3"),
         ["--permutations is for the permutation explainer", "ExactExplainer",
          "--method permutation"]),
        ("tree", ("--bg", "--permutations", "3"),
         ["--permutations is for the permutation explainer", "TreeExplainer"]),
        ("logistic", ("--seed", "3"), ["--seed needs --background"]),
        ("logistic", ("--bg", "--method", "exact", "--seed", "3"),
         ["--seed needs --background-rows or the permutation explainer"]),
        ("tree", ("--bg", "--seed", "3"),
         ["--seed needs --background-rows or the permutation explainer"]),
    ],
)  # fmt: skip
def test_options_of_another_explainer_are_usage_errors(
    capfd, files, tmp_path, model, options, fragments
):
    options = [
        option
        for given in options
        for option in (("--background", files["bg"]) if given == "--bg" else (given,))
    ]
    status, err = command(capfd, files, model, tmp_path / "phi.csv", *options)
    assert_one_line_error(status, err, 2, *fragments)


# --- report --leave-one-out ----------------------------------------------------


def data_value(source: str, key: str) -> float:
    return float(re.search(rf'id="{key}" data-value="([^"]+)"', source)[1])


def test_report_leave_one_out(capfd, files, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "report.html"
    status, err = command(
        capfd, files, "logistic", out, "--background", files["bg"],
        "--leave-one-out", "--output", "low", subcommand="report",
    )  # fmt: skip
    assert status == 0, err
    source = out.read_text(encoding="utf-8")
    assert '<h2 id="leave-one-out">Leave-one-out beside Shapley</h2>' in source
    explainer = ExactExplainer(files["logistic"]).fit(files["background"])
    loo = explainer.leave_one_out(files["X"], output="low")
    # A binary classifier: one output, its positive class "low" (classes_[1]).
    assert explainer.output_names_ == ("low",)
    gap = explainer.raw_predict(files["X"]) - explainer.expected_value_
    # The section's sums are the chosen output's, over every row shown here.
    assert data_value(source, "leave-one-out-sum") == pytest.approx(
        loo.sum(axis=1).mean(), rel=1e-12
    )
    assert data_value(source, "leave-one-out-prediction") == pytest.approx(
        gap.mean(), rel=1e-12
    )
    assert data_value(source, "leave-one-out-gap") == pytest.approx(
        np.abs(loo.sum(axis=1) - gap).mean(), rel=1e-12
    )


def test_report_leave_one_out_needs_a_model_agnostic_explainer(capfd, files, tmp_path):
    out = tmp_path / "report.html"
    for options in [(), ("--background", files["bg"])]:
        status, err = command(
            capfd, files, "tree", out, "--leave-one-out", *options,
            subcommand="report",
        )  # fmt: skip
        assert_one_line_error(
            status, err, 1, "--leave-one-out needs a model-agnostic explainer",
            "TreeExplainer", "use --method exact/permutation with --background",
        )  # fmt: skip
    assert not out.exists()
    status, err = command(
        capfd, files, "tree", out, "--leave-one-out", "--method", "permutation",
        "--permutations", "2", "--background", files["bg"], subcommand="report",
    )  # fmt: skip
    assert status == 0, err
    assert 'id="leave-one-out"' in out.read_text(encoding="utf-8")


def test_method_exact_needs_a_model_object(capfd, files, tmp_path):
    # A model file that skshapley reads itself (no predict to call) is the
    # tree explainer's only: --method exact says so, not "unsupported".
    xgboost = pytest.importorskip("xgboost")
    path = tmp_path / "model.json"
    xgboost.XGBRegressor(n_estimators=2).fit(files["X"], np.arange(6.0)).save_model(
        path
    )
    status, _, err = call(
        capfd, "explain", "--model", path, "--data", files["data"], "--target",
        "target", "--method", "exact", "--background", files["bg"],
        "--out", tmp_path / "phi.csv",
    )  # fmt: skip
    assert_one_line_error(
        status, err, 1, "ExactExplainer does not support XGBoost model file",
        "any model with predict",
    )  # fmt: skip
