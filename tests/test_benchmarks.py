"""The benchmark scripts keep running (a smoke run; their timings are not checked)."""

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
