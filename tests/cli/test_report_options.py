"""The command's row and report options: ``--target`` in the report,
``--rows N`` and ``--rows START:STOP``, ``--show-rows``, ``--download`` and
the refusal of a ``.pdf`` report.

The command runs in this process (``main``), and what it writes is read
back: the report's ``data-*`` attributes, the attributions table.
"""

import base64
import pickle
import shlex
from html.parser import HTMLParser

import numpy as np
import pandas as pd
import pytest
from sklearn import metrics
from sklearn.datasets import load_diabetes, load_iris
from sklearn.ensemble import GradientBoostingRegressor, RandomForestClassifier

from skshapley import TreeExplainer
from skshapley.cli import main
from skshapley.cli._options import build_parser

N_ROWS = 442  # the diabetes data


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A regression and a multiclass model (string labels), and their data."""
    folder = tmp_path_factory.mktemp("report_options")
    X, y = load_diabetes(return_X_y=True, as_frame=True, scaled=False)
    model = GradientBoostingRegressor(n_estimators=10, random_state=0).fit(X, y)
    paths = {"X": X, "y": y, "model": model}
    paths["tree"] = folder / "tree.pkl"
    paths["tree"].write_bytes(pickle.dumps(model))
    paths["data"] = folder / "diabetes.csv"
    X.assign(target=y).to_csv(paths["data"], index=False)
    paths["features"] = folder / "features.csv"
    X.to_csv(paths["features"], index=False)
    # Rows named by strings, and by numbers that are not their positions.
    paths["patients"] = folder / "patients.csv"
    patients = [f"p{i}" for i in range(N_ROWS)]
    X.assign(target=y, patient=patients).to_csv(paths["patients"], index=False)
    paths["numbered"] = folder / "numbered.csv"
    numbers = 1000 + 7 * np.arange(N_ROWS)
    X.assign(target=y, number=numbers).to_csv(paths["numbered"], index=False)

    iris = load_iris(as_frame=True)
    species = iris.target_names[iris.target]
    classifier = RandomForestClassifier(n_estimators=10, random_state=0)
    paths["iris_X"] = iris.data
    paths["species"] = species
    paths["classifier_model"] = classifier.fit(iris.data, species)
    paths["classifier"] = folder / "classifier.pkl"
    paths["classifier"].write_bytes(pickle.dumps(classifier))
    paths["iris"] = folder / "iris.csv"
    iris.data.assign(species=species).to_csv(paths["iris"], index=False)
    return paths


def call(capfd, *args):
    """``main`` in this process: (exit status, stdout, stderr)."""
    status = main([str(arg) for arg in args])
    out, err = capfd.readouterr()
    return status, out, err


def report(files, capfd, tmp_path, *options, model="tree", data="data"):
    """The report's HTML text, written by the command with ``options``.

    The data's ``target`` column, if it has one, is ``--target``.
    """
    out = tmp_path / "report.html"
    if data in ("data", "patients", "numbered") and "--target" not in options:
        options = ("--target", "target", *options)
    status, _, err = call(
        capfd, "report", "--model", files[model], "--data", files[data],
        "--trust-pickle", "--out", out, "-q", *options,
    )  # fmt: skip
    assert status == 0, err
    return out.read_text(encoding="utf-8")


def explain(files, capfd, tmp_path, *options, data="data"):
    """The attributions table ``skshapley explain`` writes, and its text."""
    out = tmp_path / "phi.csv"
    status, _, err = call(
        capfd, "explain", "--model", files["tree"], "--data", files[data],
        "--trust-pickle", "--target", "target", "--out", out, "--force", "-q",
        *options,
    )  # fmt: skip
    assert status == 0, err
    text = out.read_text(encoding="utf-8")
    return pd.read_csv(out, index_col=0), text


def error_line(status, err, expected_status):
    """The one error line, once its status is checked."""
    assert status == expected_status, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("skshapley: error: ")
    return lines[0]


class _Tags(HTMLParser):
    """Every start tag of a page, with its attributes."""

    def __init__(self):
        super().__init__()
        self.tags = []

    def handle_starttag(self, tag, attrs):
        self.tags.append((tag, dict(attrs)))


def tags(page: str) -> list[tuple[str, dict]]:
    parser = _Tags()
    parser.feed(page)
    return parser.tags


def reported_metrics(page: str) -> dict[str, float]:
    """The quality section's numbers, by metric."""
    return {
        attrs["data-metric"]: float(attrs["data-value"])
        for _, attrs in tags(page)
        if "data-metric" in attrs
    }


def shown_rows(page: str) -> list[str]:
    """The labels of the rows whose waterfalls the report shows, in order."""
    return [attrs["data-row"] for tag, attrs in tags(page) if "data-row" in attrs]


def section_ids(page: str) -> list[str]:
    """The sections' ids, in order (each section's heading carries it)."""
    return [attrs["id"] for tag, attrs in tags(page) if tag == "h2"]


# --- --target: the model's quality ---------------------------------------------


def test_target_gives_the_regression_quality_of_the_explained_rows(
    files, capfd, tmp_path
):
    # A random sample: the targets must be those of the sampled rows, which
    # 'explain' (same --rows) lists.
    page = report(files, capfd, tmp_path, "--target", "target", "--rows", 60)
    rows, _ = explain(files, capfd, tmp_path, "--rows", 60)
    assert len(rows) == 60
    X, y = files["X"].loc[rows.index], files["y"].loc[rows.index]
    predicted = files["model"].predict(X)
    assert "model" in section_ids(page)
    assert reported_metrics(page) == {
        "r2": metrics.r2_score(y, predicted),
        "mae": metrics.mean_absolute_error(y, predicted),
        "rmse": metrics.root_mean_squared_error(y, predicted),
    }


def test_target_gives_the_quality_of_a_classifier_with_string_labels(
    files, capfd, tmp_path
):
    page = report(
        files, capfd, tmp_path, "--target", "species", "--rows", "40:140",
        model="classifier", data="iris",
    )  # fmt: skip
    model = files["classifier_model"]
    X, y = files["iris_X"].iloc[40:140], files["species"][40:140]
    probabilities = model.predict_proba(X)
    found = reported_metrics(page)
    assert found["accuracy"] == metrics.accuracy_score(y, model.predict(X))
    assert found["balanced_accuracy"] == metrics.balanced_accuracy_score(
        y, model.predict(X)
    )
    assert found["log_loss"] == pytest.approx(
        metrics.log_loss(y, probabilities, labels=model.classes_), rel=1e-12
    )  # the same sum, maybe clipped or added in another order
    assert found["roc_auc"] == pytest.approx(
        metrics.roc_auc_score(
            y, probabilities, multi_class="ovr", average="macro", labels=model.classes_
        ),
        rel=1e-12,
    )


def test_without_target_there_is_no_quality_section(files, capfd, tmp_path):
    page = report(files, capfd, tmp_path, "--rows", 30, data="features")
    ids = section_ids(page)
    assert "model" not in ids
    assert {"summary", "data", "waterfalls"} <= set(ids)
    assert reported_metrics(page) == {}


# --- --rows: a sample or a range ------------------------------------------------


@pytest.mark.parametrize(
    ("rows", "expected"),
    [
        ("10:20", range(10, 20)),
        (":5", range(5)),
        ("-4:", range(N_ROWS - 4, N_ROWS)),
        ("430:1000", range(430, N_ROWS)),
    ],
)
def test_a_range_of_rows_explains_exactly_those_rows(
    files, capfd, tmp_path, rows, expected
):
    # "--rows=-4:": argparse would read a lone "-4:" as an option.
    table, _ = explain(files, capfd, tmp_path, f"--rows={rows}")
    assert list(table.index) == list(expected)
    explainer = TreeExplainer(files["model"]).fit()
    phi = explainer.explain(files["X"].iloc[list(expected)])
    # The same explainer on the same rows: only the CSV's decimal round trip
    # could differ, and pandas writes the shortest repr and reads it back
    # exactly.
    pd.testing.assert_frame_equal(
        table.drop(columns="base_value"), phi, check_names=False, check_exact=True
    )
    np.testing.assert_array_equal(table["base_value"], explainer.expected_value_)


def test_a_range_of_rows_in_the_report(files, capfd, tmp_path):
    page = report(files, capfd, tmp_path, "--rows", "100:110")
    shown = [int(label) for label in shown_rows(page)]
    assert shown
    assert all(100 <= label < 110 for label in shown)
    predictions = files["model"].predict(files["X"].iloc[100:110])
    # The default waterfalls: the highest and lowest of those rows.
    assert 100 + int(np.argmax(predictions)) in shown
    assert 100 + int(np.argmin(predictions)) in shown


def test_a_count_of_rows_is_a_seeded_sample_in_file_order(files, capfd, tmp_path):
    table, _ = explain(files, capfd, tmp_path, "--rows", 50)
    # As documented: numpy.random.default_rng(0).choice, without replacement.
    chosen = np.random.default_rng(0).choice(N_ROWS, 50, replace=False)
    assert list(table.index) == sorted(chosen)
    everything, _ = explain(files, capfd, tmp_path, "--rows", 1000)
    assert list(everything.index) == list(range(N_ROWS))


@pytest.mark.parametrize(
    ("rows", "status", "fragments"),
    [
        ("5:5", 1, ["--rows 5:5 selects no rows", "442 rows"]),
        ("500:", 1, ["--rows 500: selects no rows", "0 to 441"]),
        ("a:b", 2, ["--rows", "START:STOP", "'a:b'"]),
        ("1:2:3", 2, ["START:STOP", "'1:2:3'"]),
        ("0", 2, ["positive", "'0'"]),
    ],
)
def test_bad_rows_are_one_line_errors(files, capfd, tmp_path, rows, status, fragments):
    for command in ("explain", "report"):
        out = tmp_path / ("phi.csv" if command == "explain" else "r.html")
        code, _, err = call(
            capfd, command, "--model", files["tree"], "--data", files["data"],
            "--trust-pickle", "--target", "target", f"--rows={rows}", "--out", out,
        )  # fmt: skip
        line = error_line(code, err, status)
        for fragment in fragments:
            assert fragment in line
        assert not out.exists()


# --- --show-rows: the waterfalls ---------------------------------------------------


def test_show_rows_by_file_position(files, capfd, tmp_path):
    page = report(files, capfd, tmp_path, "--show-rows", "7,3,7", "--show-rows", "0")
    assert shown_rows(page) == ["7", "3", "0"]  # in order, each once


def test_show_rows_by_index_label(files, capfd, tmp_path):
    page = report(
        files, capfd, tmp_path, "--index", "patient", "--target", "target",
        "--show-rows", "p17,p5", data="patients",
    )  # fmt: skip
    assert shown_rows(page) == ["p17", "p5"]


def test_show_rows_by_a_numeric_index_label(files, capfd, tmp_path):
    page = report(
        files, capfd, tmp_path, "--index", "number", "--target", "target",
        "--rows", "10:20", "--show-rows", "1077", data="numbered",
    )  # fmt: skip
    assert shown_rows(page) == ["1077"]  # 1000 + 7 * 11, read as a number


@pytest.mark.parametrize(
    ("data", "options", "fragments"),
    [
        ("data", ["--show-rows", "3,500"],
         ["labelled 500", "file positions", "0, 1, 2"]),
        ("patients", ["--index", "patient", "--show-rows", "p1,x9"],
         ["labelled x9", "--index labels", "p0, p1, p2"]),
        ("numbered", ["--index", "number", "--show-rows", "p1"],
         ["'p1' is not a label", "int64"]),
        ("data", ["--rows", "10", "--show-rows", "0"],
         ["labelled 0", "--rows 10 explains a random sample"]),
        ("data", ["--rows", "10:20", "--show-rows", "9"],
         ["labelled 9", "such as 10, 11", "--rows 10:20 explains only those rows"]),
    ],
    ids=["position", "label", "type", "sampled", "range"],
)  # fmt: skip
def test_unknown_rows_to_show_are_one_line_errors(
    files, capfd, tmp_path, data, options, fragments
):
    out = tmp_path / "r.html"
    status, _, err = call(
        capfd, "report", "--model", files["tree"], "--data", files[data],
        "--trust-pickle", "--target", "target", "--out", out, *options,
    )  # fmt: skip
    line = error_line(status, err, 1)
    for fragment in fragments:
        assert fragment in line
    assert not out.exists()


def test_show_rows_needs_a_label(files, capfd, tmp_path):
    status, _, err = call(
        capfd, "report", "--model", files["tree"], "--data", files["data"],
        "--show-rows", ",", "--out", tmp_path / "r.html",
    )  # fmt: skip
    line = error_line(status, err, 2)
    assert "expected row labels separated by commas, got ','" in line


# --- --download, .pdf, --output NAME, --help ----------------------------------------


def test_download_holds_the_table_that_explain_writes(files, capfd, tmp_path):
    options = ("--index", "patient", "--target", "target", "--rows", "20:45")
    page = report(files, capfd, tmp_path, *options, "--download", data="patients")
    links = [attrs for tag, attrs in tags(page) if attrs.get("id") == "download"]
    assert len(links) == 1
    header, _, payload = links[0]["href"].partition(",")
    assert header == "data:text/csv;base64"
    assert links[0]["download"].endswith("-attributions.csv")
    _, written = explain(files, capfd, tmp_path, *options, data="patients")
    assert base64.b64decode(payload).decode("utf-8") == written


def test_no_download_without_the_option(files, capfd, tmp_path):
    page = report(files, capfd, tmp_path, "--rows", 20)
    assert not [attrs for _, attrs in tags(page) if attrs.get("id") == "download"]


def test_a_pdf_is_refused_with_how_to_make_one(files, capfd, tmp_path):
    out = tmp_path / "r.pdf"
    status, _, err = call(
        capfd, "report", "--model", files["tree"], "--data", files["data"],
        "--trust-pickle", "--out", out,
    )  # fmt: skip
    line = error_line(status, err, 2)
    assert "'" + str(out) + "'" in line
    assert "print it to PDF" in line
    assert not out.exists()


def test_a_multiclass_report_says_to_choose_with_the_option(files, capfd, tmp_path):
    page = report(
        files, capfd, tmp_path, "--target", "species", "--rows", 30,
        model="classifier", data="iris",
    )  # fmt: skip
    assert "--output NAME" in page
    assert "output=" not in page.replace("--output NAME", "")


@pytest.mark.parametrize("command", ["report", "explain"])
def test_the_help_examples_are_valid_commands(capfd, command):
    with pytest.raises(SystemExit):
        main([command, "--help"])
    text = capfd.readouterr().out
    starts = [line for line in text.splitlines() if "skshapley " + command in line]
    # A long example is continued on the next line after a backslash; a
    # continuation eaten by the source's string would leave a run of spaces.
    assert not [line for line in starts if "  " in line.strip()]
    text = text.replace("\\\n", " ")
    examples = [
        line.split()[1:]
        for line in text.splitlines()
        if line.strip().startswith(f"skshapley {command} ")
    ]
    assert len(examples) >= 2
    for example in examples:
        args = build_parser().parse_args(shlex.split(" ".join(example)))
        assert args.command == command
