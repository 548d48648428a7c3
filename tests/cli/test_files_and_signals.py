"""What the command writes and reads: atomic outputs, inputs kept, Ctrl-C, bombs.

Outputs are written to a temporary file and renamed; an output that is an
input, or that exists (without ``--force``), is refused before any work;
Ctrl-C stops a long explanation promptly even when stderr is a pipe; a data
file that expands beyond ``--max-data-bytes`` is refused within a memory
limit.
"""

import gzip
import os
import pickle
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from limited import assert_clean_outcome, run_limited
from sklearn.datasets import load_diabetes
from sklearn.ensemble import RandomForestRegressor
from sklearn.tree import DecisionTreeRegressor

from skshapley import TreeExplainer
from skshapley.cli import main

OLD = "previous contents\n"


@pytest.fixture(scope="module")
def files(tmp_path_factory):
    """A small tree model (pickled) and the diabetes data, made once."""
    folder = tmp_path_factory.mktemp("files")
    X, y = load_diabetes(return_X_y=True, as_frame=True, scaled=False)
    model = DecisionTreeRegressor(max_depth=4, random_state=0).fit(X, y)
    paths = {"folder": folder, "X": X, "model_object": model}
    paths["model"] = folder / "tree.pkl"
    paths["model"].write_bytes(pickle.dumps(model))
    paths["data"] = folder / "diabetes.csv"
    X.to_csv(paths["data"], index=False)
    return paths


def call(capfd, *args):
    status = main([str(arg) for arg in args])
    out, err = capfd.readouterr()
    return status, out, err


def explain_args(files, out, *extra):
    return ["explain", "--model", files["model"], "--data", files["data"],
            "--trust-pickle", "--out", out, "-q", *extra]  # fmt: skip


def assert_one_error(status, err, expected, *fragments):
    assert status == expected, err
    lines = err.strip().splitlines()
    assert len(lines) == 1, err
    assert lines[0].startswith("skshapley: error: "), err
    for fragment in fragments:
        assert fragment in lines[0], lines[0]


def leftovers(folder: Path) -> list[str]:
    return sorted(path.name for path in folder.iterdir() if path.suffix == ".tmp")


# --- never replace an input, never overwrite by accident -----------------------


@pytest.mark.parametrize(
    ("which", "link"),
    [("data", "same path"), ("data", "symbolic link"), ("data", "hard link"),
     ("model", "symbolic link"), ("model", "hard link")],
)  # fmt: skip
def test_output_that_is_an_input_is_refused(files, tmp_path, capfd, which, link):
    # (--out with a model file's own name is refused by its suffix, below.)
    # The input is copied so that a failure of the test cannot damage the
    # module's files.
    source = tmp_path / files[which].name
    source.write_bytes(files[which].read_bytes())
    before = source.read_bytes()
    out = source if link == "same path" else tmp_path / "out.csv"
    if link == "symbolic link":
        out.symlink_to(source)
    elif link == "hard link":
        os.link(source, out)
    status, _, err = call(
        capfd, *explain_args({**files, which: source}, out, "--force")
    )
    assert_one_error(status, err, 1, "is the input file", "refusing to replace it")
    assert source.read_bytes() == before


def test_existing_output_needs_force(files, tmp_path, capfd):
    out = tmp_path / "phi.csv"
    out.write_text(OLD)
    status, _, err = call(capfd, *explain_args(files, out))
    assert_one_error(status, err, 1, "exists", "--force")
    assert out.read_text() == OLD
    status, _, err = call(capfd, *explain_args(files, out, "--force"))
    assert status == 0, err
    table = pd.read_csv(out, index_col="row")
    np.testing.assert_allclose(
        table.sum(axis=1), files["model_object"].predict(files["X"]), rtol=1e-12
    )
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("name", ["model.json", "r.pdf", "report"])
def test_report_output_must_be_html(files, tmp_path, capfd, name):
    out = tmp_path / name
    status, _, err = call(
        capfd, "report", "--model", files["model"], "--data", files["data"],
        "--trust-pickle", "--out", out,
    )  # fmt: skip
    assert_one_error(status, err, 2, ".html", name)
    assert not out.exists()


@pytest.mark.parametrize("name", ["phi.csv", "phi.csv.gz", "phi.parquet"])
def test_written_file_has_the_usual_permissions(files, tmp_path, capfd, name):
    if name.endswith(".parquet"):
        pytest.importorskip("pyarrow")
    out = tmp_path / name
    status, _, err = call(capfd, *explain_args(files, out, "--rows", 5))
    assert status == 0, err
    reader = pd.read_parquet if name.endswith(".parquet") else pd.read_csv
    assert len(reader(out)) == 5  # .csv.gz is really compressed: pandas infers it
    mask = os.umask(0)
    os.umask(mask)
    assert out.stat().st_mode & 0o777 == 0o666 & ~mask
    assert leftovers(tmp_path) == []


def test_failed_write_keeps_the_previous_file(files, tmp_path, capfd, monkeypatch):
    out = tmp_path / "phi.csv"
    out.write_text(OLD)

    def fail_half_way(self, path, *args, **kwargs):
        Path(path).write_text("partial,")
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(pd.DataFrame, "to_csv", fail_half_way)
    status, _, err = call(capfd, *explain_args(files, out, "--force"))
    assert_one_error(status, err, 1, "cannot write", "No space left")
    assert out.read_text() == OLD
    assert leftovers(tmp_path) == []


def test_interrupted_report_keeps_the_previous_file(
    files, tmp_path, capfd, monkeypatch
):
    pytest.importorskip("matplotlib")
    out = tmp_path / "r.html"
    out.write_text(OLD)
    args = ["report", "--model", files["model"], "--data", files["data"],
            "--trust-pickle", "--rows", 20, "--out", out, "-q"]  # fmt: skip
    status, _, err = call(capfd, *args)
    assert_one_error(status, err, 1, "exists", "--force")

    def interrupted(*args, **kwargs):
        raise KeyboardInterrupt

    # By module object: the name skshapley.report is the function report.
    writer = sys.modules["skshapley.report._report"]
    monkeypatch.setattr(writer, "_page", interrupted)
    status, _, err = call(capfd, *args, "--force")
    assert_one_error(status, err, 130, "interrupted")
    assert out.read_text() == OLD
    assert leftovers(tmp_path) == []
    monkeypatch.undo()
    status, _, err = call(capfd, *args, "--force")
    assert status == 0, err
    assert out.read_text(encoding="utf-8").startswith("<!doctype html>")


def test_failed_report_write_is_one_error_and_keeps_the_file(
    files, tmp_path, capfd, monkeypatch
):
    pytest.importorskip("matplotlib")
    out = tmp_path / "r.html"
    out.write_text(OLD)
    write_text = Path.write_text

    def fail_half_way(self, text, *args, **kwargs):
        write_text(self, text[:100], *args, **kwargs)
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(Path, "write_text", fail_half_way)
    status, _, err = call(
        capfd, "report", "--model", files["model"], "--data", files["data"],
        "--trust-pickle", "--rows", 20, "--out", out, "--force", "-q",
    )  # fmt: skip
    monkeypatch.undo()
    assert_one_error(status, err, 1, "cannot write", "No space left")
    assert out.read_text() == OLD
    assert leftovers(tmp_path) == []


# --- Ctrl-C ------------------------------------------------------------------------


def start(args, cwd):
    """The command in a new process, stderr piped (not a terminal).

    Ctrl-C is restored to its default in the child: a test run started in
    the background of a non-interactive shell (``nohup``, ``&``) ignores
    SIGINT, which children inherit, and Python then never raises
    KeyboardInterrupt.
    """
    return subprocess.Popen(
        [sys.executable, "-m", "skshapley.cli", *map(str, args)],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        cwd=cwd,
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )


def test_sigint_during_the_write_keeps_the_previous_file(files, tmp_path):
    # Enough rows that writing the table takes about a second: the signal
    # is sent once the temporary file has data in it.
    big = tmp_path / "big.csv"
    pd.concat([files["X"]] * 400, ignore_index=True).to_csv(big, index=False)
    out = tmp_path / "phi.csv"
    out.write_text(OLD)
    process = start(
        ["explain", "--model", files["model"], "--data", big, "--trust-pickle",
         "--out", out, "--force", "-q"], tmp_path,
    )  # fmt: skip
    try:
        deadline = time.monotonic() + 300  # a hang guard only
        while time.monotonic() < deadline and process.poll() is None:
            partial = [p for p in tmp_path.glob(".phi.csv.*.tmp") if p.stat().st_size]
            if partial:
                break
            time.sleep(0.005)
        assert partial, "the temporary file was never written"
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=300)
    finally:
        process.kill()
    assert process.returncode == 130, err
    assert err.strip().splitlines() == ["skshapley: error: interrupted"]
    assert out.read_text() == OLD
    assert leftovers(tmp_path) == []


@pytest.mark.parametrize("quiet", [False, True], ids=["shown", "quiet"])
def test_explanations_are_chunked_with_or_without_a_progress_line(
    files, tmp_path, capfd, monkeypatch, quiet
):
    # The explainer explains in chunks, between which Ctrl-C is handled, only
    # when it is given a progress callback: the command always gives one.
    given = []
    explain = TreeExplainer.explain

    def recorded(self, X, *, progress=None):
        given.append(progress)
        return explain(self, X, progress=progress)

    monkeypatch.setattr(TreeExplainer, "explain", recorded)
    args = explain_args(files, tmp_path / "phi.csv")
    if not quiet:
        args.remove("-q")
    status, _, err = call(capfd, *args)
    assert (status, err.count("error")) == (0, 0), err
    assert len(given) == 1
    assert callable(given[0])


@pytest.mark.parametrize("command", ["explain", "report"])
def test_sigint_stops_a_long_explanation_promptly(tmp_path, command):
    if command == "report":
        pytest.importorskip("matplotlib")
    out = "phi.csv" if command == "explain" else "r.html"
    X, y = load_diabetes(return_X_y=True, as_frame=True, scaled=False)
    model = RandomForestRegressor(n_estimators=100, random_state=0).fit(X, y)
    (tmp_path / "forest.pkl").write_bytes(pickle.dumps(model))
    copies = 100
    pd.concat([X] * copies, ignore_index=True).to_csv(
        tmp_path / "rows.csv", index=False
    )
    # What the whole explanation would take, measured here on the same rows.
    explainer = TreeExplainer(model).fit()
    began = time.perf_counter()
    explainer.explain(X)
    work = copies * (time.perf_counter() - began)
    process = start(
        [command, "--model", "forest.pkl", "--data", "rows.csv", "--trust-pickle",
         "--out", out], tmp_path,
    )  # fmt: skip
    try:
        lines = []
        while not any(line.startswith("skshapley: explaining") for line in lines):
            line = process.stderr.readline()
            assert line, "".join(lines)
            lines.append(line)
        time.sleep(0.5)  # well inside the explanation
        interrupted = time.perf_counter()
        process.send_signal(signal.SIGINT)
        _, err = process.communicate(timeout=max(300, 4 * work))  # a hang guard
        waited = time.perf_counter() - interrupted
    finally:
        process.kill()
    assert process.returncode == 130, err
    assert err.strip().splitlines() == ["skshapley: error: interrupted"]
    # Chunks take about half a second: the process stops long before the
    # work it was given would have ended.
    assert waited < work / 5, (waited, work)
    assert not (tmp_path / out).exists()
    assert leftovers(tmp_path) == []


# --- data size ------------------------------------------------------------------------


def gzip_bomb(path: Path, n_columns: int, gigabytes: int) -> None:
    """A .csv.gz of ``n_columns`` zeros per row, ``gigabytes`` GB decompressed.

    Written as many copies of one compressed member (gzip readers read the
    members one after another): a few MB on disk, made in a second.
    """
    header = ",".join(f"c{j}" for j in range(n_columns)) + "\n"
    row = ",".join(["0"] * n_columns) + "\n"
    block = (row * (2**24 // len(row))).encode()
    member = gzip.compress(block, compresslevel=9)
    with open(path, "wb") as file:
        file.write(gzip.compress(header.encode()))
        for _ in range(gigabytes * 2**30 // len(block)):
            file.write(member)


def test_gzip_bomb_is_refused_within_a_memory_limit(files, tmp_path):
    bomb = tmp_path / "bomb.csv.gz"
    gzip_bomb(bomb, n_columns=10, gigabytes=10)
    assert bomb.stat().st_size < 50 * 2**20
    status, _, err = run_limited(
        ["explain", "--model", files["model"], "--data", bomb, "--trust-pickle",
         "--out", tmp_path / "phi.csv"], cwd=tmp_path,
    )  # fmt: skip
    assert_clean_outcome(status, err)
    assert_one_error(status, err, 1, "bomb.csv.gz", "--max-data-bytes")
    assert not (tmp_path / "phi.csv").exists()


@pytest.mark.parametrize("name", ["rows.csv", "rows.csv.gz", "rows.parquet"])
def test_data_beyond_the_limit_is_refused(files, tmp_path, capfd, name):
    if name.endswith(".parquet"):
        pytest.importorskip("pyarrow")
    data = tmp_path / name
    writer = data.suffix == ".parquet" and files["X"].to_parquet
    (writer or files["X"].to_csv)(data, index=False)
    out = tmp_path / "phi.csv"
    status, _, err = call(capfd, *explain_args({**files, "data": data}, out,
                                               "--max-data-bytes", "10K"))  # fmt: skip
    assert_one_error(status, err, 1, "more than 10,240 bytes", "--max-data-bytes")
    # The same file is read under a limit that it fits.
    status, _, err = call(capfd, *explain_args({**files, "data": data}, out,
                                               "--max-data-bytes", "1M"))  # fmt: skip
    assert status == 0, err
    assert len(pd.read_csv(out)) == len(files["X"])


@pytest.mark.parametrize("text", ["0", "-5", "10X", "M"])
def test_max_data_bytes_must_be_a_size(files, tmp_path, capfd, text):
    status, _, err = call(capfd, "explain", "--max-data-bytes", text)
    assert_one_error(status, err, 2, "--max-data-bytes", repr(text))
