"""Run many model files through one limited process each, surviving crashes.

Starting a process per file costs a second of imports; fuzz suites run
hundreds of files. :func:`run_batch` runs a job (a function of this module)
over a list of files in a process under the limits of ``limited.py``; the
job appends one JSON line per file to a results file, so when a file
crashes the process (abort, segfault, memory or CPU limit), the driver
records the crash for that file and starts a new process after it.
"""

import contextlib
import io
import json
import traceback
from pathlib import Path

from limited import run_limited

_TESTS = str(Path(__file__).parent)


def run_batch(job: str, files, data, folder) -> list[dict]:
    """One result dict per file: the job's record, or ``{"crash": status}``."""
    folder = Path(folder)
    manifest, results = folder / f"{job}.manifest.json", folder / f"{job}.jsonl"
    manifest.write_text(json.dumps([str(path) for path in files]))
    results.write_text("")
    code = (
        f"import sys; sys.path.insert(0, {_TESTS!r}); import batch_runner; "
        f"batch_runner.{job}(*sys.argv[1:])"
    )
    done: list[dict] = []
    while len(done) < len(files):
        status, _, stderr = run_limited(
            [manifest, data, results, len(done)], cwd=folder, code=code
        )
        done = [json.loads(line) for line in results.read_text().splitlines()]
        if len(done) < len(files):  # the process died on file len(done)
            crash = {"crash": status, "stderr": stderr[-500:]}
            with results.open("a") as file:
                file.write(json.dumps(crash) + "\n")
            done.append(crash)
    return done


def _record_each(manifest, results, start, record_of) -> None:
    """Append ``record_of(file)`` to ``results`` for the files from ``start``."""
    files = json.loads(Path(manifest).read_text())
    for path in files[int(start) :]:
        record = record_of(path)
        with open(results, "a") as file:
            file.write(json.dumps(record) + "\n")


def explain(manifest, data, results, start) -> None:
    """``skshapley explain`` of each model file on ``data``.

    Records the status and stderr and, on success, per row and output the
    sum of the attributions and base value (from the command's table), the
    prediction of the model the command reads (its explainer's
    ``raw_predict``), and that model's scale (see :func:`_scale`).
    """
    import numpy as np
    import pandas as pd

    from skshapley import TreeExplainer
    from skshapley.cli import main
    from skshapley.cli._inputs import load_model

    X = pd.read_csv(data)

    def record_of(path):
        out, stderr = f"{path}.out.csv", io.StringIO()
        args = ["explain", "--model", path, "--data", data, "--out", out, "-q"]
        try:
            with contextlib.redirect_stderr(stderr):
                status = main(args)
        except BaseException:  # a traceback is what the tests look for
            status = 3
            stderr.write(traceback.format_exc())
        record = {"status": status, "stderr": stderr.getvalue()}
        if status == 0:
            table = pd.read_csv(out, index_col=0)
            Path(out).unlink()
            outputs = table.columns.str.rpartition("__").get_level_values(0)
            sums = table.T.groupby(outputs, sort=False).sum().T
            model = load_model(Path(path), trust_pickle=False)
            explainer = TreeExplainer(model).fit()
            record.update(
                sums=sums.to_numpy().tolist(),
                raw=np.reshape(explainer.raw_predict(X), (len(X), -1)).tolist(),
                **_scale(explainer.ensemble_),
            )
        return record

    _record_each(manifest, results, start, record_of)


def predict_margin(manifest, data, results, start) -> None:
    """XGBoost's own margin of each model file on ``data``, or its error."""
    import numpy as np
    import pandas as pd
    import xgboost

    X = pd.read_csv(data).to_numpy()

    def record_of(path):
        try:
            booster = xgboost.Booster(model_file=path)
            margin = booster.inplace_predict(
                X, predict_type="margin", validate_features=False
            )
        except xgboost.core.XGBoostError as exc:
            return {"error": str(exc)[:200]}
        return {"margin": np.reshape(margin, (len(X), -1)).tolist()}

    _record_each(manifest, results, start, record_of)


def _scale(ensemble) -> dict:
    """The number of trees, and the margin's scale: the largest |base value|
    plus each tree's largest |leaf value|."""
    import numpy as np

    sizes = np.diff(np.append(ensemble.roots, len(ensemble.feature)))
    tree_of_node = np.repeat(np.arange(ensemble.n_trees), sizes)
    largest = np.zeros(ensemble.n_trees)
    np.maximum.at(largest, tree_of_node, np.abs(ensemble.value).max(axis=1))
    scale = np.abs(ensemble.base_offset).max() + largest.sum()
    return {"scale": float(scale), "n_trees": int(ensemble.n_trees)}
