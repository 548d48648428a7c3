"""The Spark recipe of the "Scaling out" page runs, with Spark, as documented.

The recipe (``docs/user_guide/spark_recipe.py``, included in the page) fits
a tree explainer, broadcasts it, explains a Spark DataFrame with
``mapInPandas`` on a local Spark (2 cores) and asserts that the values equal
an in-memory ``explain`` of the same rows exactly. It needs pyspark (a test
dependency) and a Java runtime (on this project's machines).
"""

import subprocess
import sys
from pathlib import Path

import pytest

RECIPE = Path(__file__).parents[1] / "docs" / "user_guide" / "spark_recipe.py"


@pytest.mark.slow
def test_the_spark_recipe_equals_explain_in_memory(tmp_path):
    done = subprocess.run(
        [sys.executable, str(RECIPE)],
        capture_output=True, text=True, cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert done.returncode == 0, done.stderr[-3000:]
    assert "442 rows explained by Spark, equal to the in-memory values" in done.stdout
