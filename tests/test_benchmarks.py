"""The benchmark scripts keep running (a smoke run; their timings are not checked)."""

import re
import subprocess
import sys
from pathlib import Path

import pytest

# The scripts; `_*.py` are the helper modules they share.
BENCHMARKS = sorted(
    path
    for path in (Path(__file__).parents[1] / "benchmarks").glob("*.py")
    if not path.name.startswith("_")
)


# Benchmark-like: each starts a process that imports the libraries we compare
# with (shap's numba compile alone takes ~15 s).
@pytest.mark.slow
@pytest.mark.parametrize("path", BENCHMARKS, ids=lambda path: path.stem)
def test_benchmark_quick_run(path):
    result = subprocess.run(
        [sys.executable, str(path), "--quick", "--repeat", "1"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 0, result.stderr
    assert "skshapley" in result.stdout


# -- latency.py: its table and its targets, recomputed from what it prints ----

LATENCY = Path(__file__).parents[1] / "benchmarks" / "latency.py"

# One line of a latency table: method, threads, rows, best, median, calls,
# ratio, max|Δφ|, residual.
TABLE_LINE = re.compile(
    r"^    (?P<method>\S.*?)\s+(?P<threads>all|\d+†?)\s+(?P<rows>\d+)\s+"
    r"(?P<best>[\d.]+)\s+(?P<median>[\d.]+)\s+(?P<calls>\d+)\s+"
    r"(?P<ratio>[\d.]+|—)\s+(?P<difference>\S+)\s+(?P<residual>\S+)$"
)
TARGET_LINE = re.compile(
    r"^    (?P<verdict>PASS|FAIL)  (?P<label>.+): (?P<value>[\d.]+)(?P<unit>×| µs) "
    r"\((?P<sign>[≥≤]) (?P<goal>[\d.]+)"
)


@pytest.fixture(scope="module")
def latency_output():
    """The forest and the fixed cost only, 2 calls per case (small models)."""
    result = subprocess.run(
        [sys.executable, str(LATENCY), "--quick", "--workload", "a",
         "--repeat", "2", "--budget", "0"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    tables, title = {}, None
    lines = result.stdout.splitlines()
    for line in lines:
        if line.startswith(("fixed cost", "(a)")):
            title = line[:3]
            tables[title] = []
        match = TABLE_LINE.match(line)
        if match and title is not None:
            row = match.groupdict()
            for key in ("best", "median", "difference", "residual"):
                row[key] = float(row[key]) if row[key] != "—" else None
            row["ratio"] = None if row["ratio"] == "—" else float(row["ratio"])
            row["rows"], row["calls"] = int(row["rows"]), int(row["calls"])
            tables[title].append(row)
    targets = [
        m.groupdict() for m in map(TARGET_LINE.match, result.stdout.splitlines()) if m
    ]
    return tables, targets


def block(row):
    """The case a row belongs to: its rows and the threads of its block."""
    return row["rows"], row["threads"].replace("1†", "2")


@pytest.mark.slow
def test_latency_cases_and_values(latency_output):
    tables, _ = latency_output
    forest = tables["(a)"]
    sk = {block(r): r for r in forest if r["method"] == "skshapley"}
    assert set(sk) == {(rows, t) for rows in (1, 10, 100) for t in ("1", "2")}
    for row in forest + tables["fix"]:
        assert row["calls"] >= 2
        assert row["best"] <= row["median"]
        # efficiency of exact values: rounding only (the forest's outputs ~10)
        assert row["residual"] < 1e-12, row
        # shap, FastTreeSHAP and QuadraSHAP are independent exact
        # implementations: they agree with skshapley up to rounding
        assert row["difference"] < 1e-10, row


@pytest.mark.slow
def test_latency_ratios_are_best_over_skshapley_best(latency_output):
    tables, _ = latency_output
    for name, table in tables.items():
        key = (lambda r: r["method"].split(" (")[-1]) if name == "fix" else block
        sk = {key(r): r for r in table if r["method"].startswith("skshapley")}
        for row in table:
            reference = sk[key(row)]
            expected = row["best"] / reference["best"]
            # printed with 3 decimals, the ratio with 2
            rounding = 5e-4 * expected * (1 / row["best"] + 1 / reference["best"])
            assert abs(row["ratio"] - expected) <= 5e-3 + rounding, (row, reference)


@pytest.mark.slow
def test_latency_targets_recomputed(latency_output):
    tables, targets = latency_output
    forest, fixed = tables["(a)"], tables["fix"]
    one = [r for r in forest if block(r) == (1, "1") and r["threads"] == "1"]
    sk = {block(r): r["best"] for r in forest if r["method"] == "skshapley"}
    expected = [
        min(r["best"] for r in one if r["method"] != "skshapley") / sk[1, "1"],
        sk[1, "1"] / sk[1, "2"],
        sk[100, "1"] / sk[100, "2"],
        next(r["best"] for r in fixed if r["method"] == "skshapley (NumPy)"),
        next(r["best"] for r in fixed if r["method"] == "skshapley (DataFrame)"),
    ]
    assert len(targets) == len(expected)
    for target, value in zip(targets, expected, strict=True):
        shown, goal = float(target["value"]), float(target["goal"])
        assert shown == pytest.approx(value, rel=0.02, abs=0.01), target
        met = shown <= goal if target["sign"] == "≤" else shown >= goal
        assert target["verdict"] == ("PASS" if met else "FAIL"), target


@pytest.mark.slow
def test_latency_interventional_run():
    # skshapley's interventional values of a few rows (the forest's by pair
    # walks, its tables being rebuilt at each call only on the full model)
    # agree with shap's, given the same background, up to its float32 sums.
    result = subprocess.run(
        [sys.executable, str(LATENCY), "--interventional", "--quick",
         "--repeat", "2", "--budget", "0"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    rows = [m.groupdict() for m in map(TABLE_LINE.match, lines) if m]
    sk = [r for r in rows if r["method"] == "skshapley interventional"]
    # two workloads, 1 and 10 rows, 1 and 2 threads
    assert len(sk) == 8
    for row in sk:
        assert float(row["residual"]) < 1e-6, row
    shap = [r for r in rows if r["method"] == "shap interventional"]
    assert shap, result.stdout
    for row in shap:
        assert float(row["difference"]) < 1e-5, row


# -- trees.py --interactions: every anchor's matrices in shap's convention -----

TREES = Path(__file__).parents[1] / "benchmarks" / "trees.py"

# One line of its tables: method, threads, setup, seconds, ms/row, runs,
# ratio, max|Δφ|, residual.
TREES_LINE = re.compile(
    r"^    (?P<method>\S.*?)\s+(?P<threads>\d+†?)\s+\S+\s+\S+\s+\S+\s+\d+\s+\S+\s+"
    r"(?P<difference>\S+)\s+(?P<residual>\S+)$"
)


@pytest.mark.slow
def test_trees_interactions_agree():
    # shap's, shapiq's (its SII, converted) and XGBoost's matrices equal
    # skshapley's, entry by entry, up to XGBoost's float32 sums.
    result = subprocess.run(
        [sys.executable, str(TREES), "--interactions", "--quick", "--repeat", "1"],
        capture_output=True, text=True, timeout=600,
    )  # fmt: skip
    assert result.returncode == 0, result.stderr
    lines = result.stdout.splitlines()
    rows = [m.groupdict() for m in map(TREES_LINE.match, lines) if m]
    methods = {row["method"] for row in rows}
    assert {"skshapley interactions", "shap interactions"} <= methods, result.stdout
    assert "shapiq interactions" in methods or "shapiq" not in result.stdout
    for row in rows:
        assert float(row["difference"]) < 1e-4, row
        assert float(row["residual"]) < 1e-6, row
