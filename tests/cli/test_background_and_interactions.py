"""The command's --background, --background-rows/--seed and --interactions."""

import pickle

import numpy as np
import pandas as pd
import pytest
from sklearn.datasets import load_diabetes, load_iris
from sklearn.ensemble import GradientBoostingClassifier, GradientBoostingRegressor
from sklearn.svm import SVR

from skshapley import ProductKernelExplainer, TreeExplainer

from .test_command import assert_one_line_error, call


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """Pickled models, data with a label column, background files."""
    folder = tmp_path_factory.mktemp("background")
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    paths = {"folder": folder, "X": X.iloc[:30]}
    paths["model"] = GradientBoostingRegressor(n_estimators=15, random_state=0)
    paths["model"].fit(X, y)
    paths["kernel"] = SVR().fit(X.iloc[:100], y.iloc[:100])
    iris = load_iris(as_frame=True)
    labels = iris.target_names[iris.target]
    paths["classifier"] = GradientBoostingClassifier(n_estimators=5, random_state=0)
    paths["classifier"].fit(iris.data, labels)
    paths["iris_X"] = iris.data.iloc[::10]
    for name in ("model", "kernel", "classifier"):
        with open(folder / f"{name}.pkl", "wb") as file:
            pickle.dump(paths[name], file)
    paths["data"] = folder / "rows.csv"
    X.iloc[:30].assign(target=y.iloc[:30]).to_csv(paths["data"], index=False)
    paths["background"] = X.iloc[100:300]
    paths["bg_csv"] = folder / "background.csv"
    paths["background"].assign(target=0.0).to_csv(paths["bg_csv"], index=False)
    paths["bg_parquet"] = folder / "background.parquet"
    paths["iris"] = folder / "iris.csv"
    paths["iris_X"].to_csv(paths["iris"], index=False)
    return paths


def explain(capfd, files, out, *options, model="model", data="data"):
    """``skshapley explain`` of a pickled model; returns the error stream."""
    target = ("--target", "target") if data == "data" else ()
    status, _, err = call(
        capfd, "explain", "--model", files["folder"] / f"{model}.pkl",
        "--data", files[data], *target, "--trust-pickle", "--out", out, "-q",
        *options,
    )  # fmt: skip
    assert status == 0, err
    return err


def interventional(files, background) -> TreeExplainer:
    explainer = TreeExplainer(files["model"], feature_perturbation="interventional")
    return explainer.fit(background)


@pytest.mark.parametrize("kind", ["bg_csv", "bg_parquet"])
def test_background_gives_interventional_values(capfd, files, tmp_path, kind):
    if kind == "bg_parquet":
        pytest.importorskip("pyarrow")
        files["background"].to_parquet(files[kind])  # no label column here
    out = tmp_path / "phi.csv"
    explain(capfd, files, out, "--background", files[kind])
    table = pd.read_csv(out, index_col="row")
    explainer = interventional(files, files["background"])
    expected = explainer.explain(files["X"])
    # Written as CSV text: 17 significant digits, read back exactly.
    np.testing.assert_array_equal(table.iloc[:, :-1].to_numpy(), expected.to_numpy())
    assert (table["base_value"] == explainer.expected_value_).all()
    # Not the path-dependent values: the background matters.
    path_dependent = TreeExplainer(files["model"]).fit().explain(files["X"])
    assert np.abs(table.iloc[:, :-1].to_numpy() - path_dependent.to_numpy()).max() > 1


def test_background_rows_are_the_seeded_sample(capfd, files, tmp_path):
    out = tmp_path / "phi.csv"
    options = ("--background", files["bg_csv"], "--background-rows", 40)
    explain(capfd, files, out, *options, "--seed", 7)
    chosen = np.sort(np.random.default_rng(7).choice(200, 40, replace=False))
    explainer = interventional(files, files["background"].iloc[chosen])
    table = pd.read_csv(out, index_col="row")
    np.testing.assert_array_equal(
        table.iloc[:, :-1].to_numpy(), explainer.explain(files["X"]).to_numpy()
    )
    # The default seed is 0; another seed, another sample and other values.
    explain(capfd, files, out, *options, "--force")
    chosen = np.sort(np.random.default_rng(0).choice(200, 40, replace=False))
    explainer = interventional(files, files["background"].iloc[chosen])
    default = pd.read_csv(out, index_col="row")
    np.testing.assert_array_equal(
        default.iloc[:, :-1].to_numpy(), explainer.explain(files["X"]).to_numpy()
    )
    assert not np.array_equal(default.to_numpy(), table.to_numpy())
    # More rows than the background has: all of them.
    explain(capfd, files, out, "--background", files["bg_csv"],
            "--background-rows", 500, "--force")  # fmt: skip
    everything = interventional(files, files["background"]).explain(files["X"])
    np.testing.assert_array_equal(
        pd.read_csv(out, index_col="row").iloc[:, :-1].to_numpy(),
        everything.to_numpy(),
    )


def test_the_report_says_how_the_background_was_sampled(capfd, files, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "report.html"
    status, _, err = call(
        capfd, "report", "--model", files["folder"] / "model.pkl",
        "--data", files["data"], "--target", "target", "--trust-pickle",
        "--background", files["bg_csv"], "--background-rows", 40, "--seed", 3,
        "--out", out,
    )  # fmt: skip
    assert status == 0, err
    assert "background: 40 of 200 rows, sampled with seed 3" in err
    page = out.read_text(encoding="utf-8")
    about = page[page.index('id="about"') :]
    assert "background: 40 of 200 rows, sampled with seed 3" in about
    assert "background.csv" in about
    assert "interventional" in page


def test_a_kernel_model_takes_a_background(capfd, files, tmp_path):
    # Changed by issue 35: a kernel model with --background gets the
    # interventional value function (it was refused before).
    out = tmp_path / "phi.csv"
    explain(capfd, files, out, "--background", files["bg_csv"], model="kernel")
    explainer = ProductKernelExplainer(
        files["kernel"], feature_perturbation="interventional"
    ).fit(files["background"])
    expected = explainer.explain(files["X"])
    got = pd.read_csv(out)[expected.columns]
    np.testing.assert_allclose(got.to_numpy(), expected.to_numpy(), rtol=1e-9)


@pytest.mark.parametrize(
    ("options", "fragment"),
    [
        (("--background-rows", "5"), "--background-rows needs --background"),
        (("--seed", "5"), "--seed needs --background"),
        (("--background", "{bg}", "--seed", "5"), "--seed needs --background-rows"),
        (("--background", "{bg}", "--background-rows", "0"), "positive integer"),
        (("--background", "{bg}", "--background-rows", "3", "--seed", "-1"),
         "non-negative integer"),
    ],
)  # fmt: skip
def test_usage_errors(capfd, files, tmp_path, options, fragment):
    options = [str(o).replace("{bg}", str(files["bg_csv"])) for o in options]
    status, _, err = call(capfd, "explain", "--out", tmp_path / "phi.csv", *options)
    assert_one_line_error(status, err, 2, fragment)


def test_background_file_errors(capfd, files, tmp_path):
    def explain_with(background, *more):
        return call(
            capfd, "explain", "--model", files["folder"] / "model.pkl",
            "--data", files["data"], "--target", "target", "--trust-pickle",
            "--background", background, "--out", tmp_path / "phi.csv", *more,
        )  # fmt: skip

    status, _, err = explain_with(tmp_path / "nothing.csv")
    assert_one_line_error(status, err, 1, "background file not found")
    status, _, err = explain_with(tmp_path / "background.txt")
    assert_one_line_error(status, err, 1, "background file", "unsupported extension")
    files["X"].drop(columns="bmi").to_csv(tmp_path / "no_bmi.csv", index=False)
    status, _, err = explain_with(tmp_path / "no_bmi.csv")
    assert_one_line_error(status, err, 1, "bmi")
    files["X"].iloc[:0].to_csv(tmp_path / "empty.csv", index=False)
    status, _, err = explain_with(tmp_path / "empty.csv")
    assert_one_line_error(status, err, 1, "has no rows")
    # --out may not replace the background file, even with --force.
    status, _, err = call(
        capfd, "explain", "--background", files["bg_csv"], "--out", files["bg_csv"],
        "--force",
    )  # fmt: skip
    assert_one_line_error(status, err, 1, "is the input file")


def long_table(path) -> pd.DataFrame:
    return pd.read_parquet(path) if path.suffix == ".parquet" else pd.read_csv(path)


@pytest.mark.parametrize("suffix", [".csv", ".parquet"])
def test_explain_interactions_writes_the_long_table(capfd, files, tmp_path, suffix):
    if suffix == ".parquet":
        pytest.importorskip("pyarrow")
    out = tmp_path / f"interactions{suffix}"
    explain(capfd, files, out, "--interactions")
    table = long_table(out)
    assert list(table.columns) == ["row", "feature", "other", "value"]
    explainer = TreeExplainer(files["model"]).fit()
    expected = explainer.explain_interactions(files["X"])
    n, d = files["X"].shape
    assert len(table) == n * d * d
    # Each line against the frame, read by its labels.
    lookup = table.set_index(["row", "feature", "other"])["value"]
    for (row, feature), values in expected.iterrows():
        for other, value in values.items():
            assert lookup[(row, feature, other)] == value
    # Summed over "other", each (row, feature) is that row's Shapley value.
    sums = table.groupby(["row", "feature"], sort=False)["value"].sum().unstack()
    phi = explainer.explain(files["X"])
    np.testing.assert_allclose(
        sums.loc[phi.index, phi.columns].to_numpy(), phi.to_numpy(), rtol=1e-12,
        atol=1e-10,
    )  # fmt: skip


def test_several_outputs_come_first_unless_one_is_chosen(capfd, files, tmp_path):
    out = tmp_path / "interactions.csv"
    explain(capfd, files, out, "--interactions", model="classifier", data="iris")
    table = pd.read_csv(out)
    assert list(table.columns) == ["output", "row", "feature", "other", "value"]
    explainer = TreeExplainer(files["classifier"]).fit()
    # The command numbers the file's rows from 0.
    expected = explainer.explain_interactions(files["iris_X"].reset_index(drop=True))
    assert list(table["output"].unique()) == ["setosa", "versicolor", "virginica"]
    lookup = table.set_index(["output", "row", "feature", "other"])["value"]
    for (row, feature), values in expected.iterrows():
        for (output, other), value in values.items():
            assert lookup[(output, row, feature, other)] == value
    # With --output, that output's lines only, without the column.
    explain(capfd, files, out, "--interactions", "--output", "virginica", "--force",
            model="classifier", data="iris")  # fmt: skip
    one = pd.read_csv(out)
    assert list(one.columns) == ["row", "feature", "other", "value"]
    chosen = table[table["output"] == "virginica"].drop(columns="output")
    pd.testing.assert_frame_equal(one, chosen.reset_index(drop=True))


def test_report_interactions(capfd, files, tmp_path):
    pytest.importorskip("matplotlib")
    out = tmp_path / "report.html"
    status, _, err = call(
        capfd, "report", "--model", files["folder"] / "classifier.pkl",
        "--data", files["iris"], "--trust-pickle", "--interactions",
        "--background", files["iris"], "--out", out, "-q",
    )  # fmt: skip
    assert status == 0, err
    page = out.read_text(encoding="utf-8")
    assert '<h2 id="interactions">' in page
    assert "background: 15 rows" in page
