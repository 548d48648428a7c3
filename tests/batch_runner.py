"""Run many model files through one limited process each, surviving crashes.

Starting a process per file costs a second of imports; fuzz suites run
thousands of files. :func:`run_batch` runs a job (a function of this
module) over a list of files in a process under the limits of
``limited.py``; the job appends one JSON line per file to a results file,
so when a file crashes the process (abort, segfault, memory or CPU limit),
the driver records the crash for that file and starts a new process after
it.

The jobs: :func:`explain` (the command) and the model libraries' own
predictions, :func:`xgboost_margin`, :func:`lightgbm_raw_score` and
:func:`skops_output`.
"""

import contextlib
import io
import json
import os
import resource
import traceback
from pathlib import Path

import numpy as np
import pandas as pd
from limited import CPU_LIMIT_SECONDS, run_limited

_TESTS = str(Path(__file__).parent)

# A batch process's CPU budget grows with its files (thousands of small
# ones): a fixed budget made the fuzz suites fail on a loaded machine, where
# each file costs more CPU time. Hangs are caught per file instead, by the
# jobs' own per-file limits.
_CPU_SECONDS_PER_FILE = 0.1

# Each file the command explains gets this many CPU seconds.
_EXPLAIN_CPU_SECONDS = 10


def run_batch(job: str, files, data, folder) -> list[dict]:
    """One result dict per file: the job's record, or ``{"crash": status}``.

    Each of ``files`` is a path, or for a job that takes more per file, a
    tuple of a path and the job's other arguments for it.
    """
    folder = Path(folder)
    manifest, results = folder / f"{job}.manifest.json", folder / f"{job}.jsonl"
    entries = [file if isinstance(file, tuple) else (file,) for file in files]
    manifest.write_text(json.dumps([[str(arg) for arg in e] for e in entries]))
    results.write_text("")
    code = (
        f"import sys; sys.path.insert(0, {_TESTS!r}); import batch_runner; "
        f"batch_runner.{job}(*sys.argv[1:])"
    )
    done: list[dict] = []
    while len(done) < len(files):
        left = len(files) - len(done)
        status, _, stderr = run_limited(
            [manifest, data, results, len(done)],
            cwd=folder,
            code=code,
            cpu_seconds=CPU_LIMIT_SECONDS + int(_CPU_SECONDS_PER_FILE * left),
        )
        done = [json.loads(line) for line in results.read_text().splitlines()]
        if len(done) < len(files):  # the process died on file len(done)
            crash = {"crash": status, "stderr": stderr[-500:]}
            with results.open("a") as file:
                file.write(json.dumps(crash) + "\n")
            done.append(crash)
    return done


def _record_each(manifest, results, start, record_of, cpu_seconds=None) -> None:
    """Append ``record_of(path, *arguments)`` to ``results`` for each
    manifest entry from ``start``; with ``cpu_seconds``, each entry has
    that many more CPU seconds (then the CPU limit ends the process)."""
    hard = resource.getrlimit(resource.RLIMIT_CPU)[1]
    for entry in json.loads(Path(manifest).read_text())[int(start) :]:
        if cpu_seconds is not None:
            usage = resource.getrusage(resource.RUSAGE_SELF)
            used = int(usage.ru_utime + usage.ru_stime)
            resource.setrlimit(
                resource.RLIMIT_CPU, (min(used + cpu_seconds, hard), hard)
            )
        record = record_of(*entry)
        with open(results, "a") as file:
            file.write(json.dumps(record) + "\n")


def explain(manifest, data, results, start) -> None:
    """``skshapley explain`` of each model file on ``data``.

    Records the status and stderr and, on success, per row and output the
    sum of the attributions and base value (from the command's table) and
    the largest of their magnitudes, the prediction of the model the
    command read (its explainer's ``raw_predict``) and, for a tree
    ensemble, that model's scales (see :func:`_scales`).
    """
    from skshapley.cli import _main
    from skshapley.cli._categories import as_model_categories, model_categories

    X = pd.read_csv(data)
    # The explainers the command makes, kept for their raw predictions.
    made, make_explainer = [], _main.make_explainer

    def making(*args, **choice):
        made.append(make_explainer(*args, **choice))
        return made[-1]

    _main.make_explainer = making

    def record_of(path):
        out, stderr = f"{path}.out.csv", io.StringIO()
        args = ["explain", "--model", path, "--data", data, "--out", out, "-q"]
        try:
            with contextlib.redirect_stderr(stderr):
                status = _main.main(args)
        except BaseException:  # a traceback is what the tests look for
            status = 3
            stderr.write(traceback.format_exc())
        record = {"status": status, "stderr": stderr.getvalue()}
        if status == 0:
            table = pd.read_csv(out, index_col=0)
            Path(out).unlink()
            record.update(_sums(table))
            # The rows as the command read them (categories from text).
            model = made[-1].model
            raw = made[-1].raw_predict(as_model_categories(X, model_categories(model)))
            record["raw"] = np.reshape(raw, (len(X), -1)).tolist()
            if hasattr(made[-1], "ensemble_"):
                record.update(_scales(made[-1].ensemble_))
        made.clear()
        return record

    _record_each(manifest, results, start, record_of, cpu_seconds=_EXPLAIN_CPU_SECONDS)


def _sums(table) -> dict:
    """Per row and output of an attributions table, the sum of the
    attributions and base value, and the largest of their magnitudes."""
    outputs = table.columns.str.rpartition("__").get_level_values(0)
    terms = [table.loc[:, outputs == o].to_numpy(float) for o in outputs.unique()]
    with np.errstate(invalid="ignore"):  # inf - inf: NaN, as it should be
        sums = np.column_stack([term.sum(axis=1) for term in terms])
    largest = np.column_stack([np.abs(term).max(axis=1) for term in terms])
    return {"sums": sums.tolist(), "largest": largest.tolist()}


def _scales(ensemble) -> dict:
    """The number of trees; the margin's scale: the largest |base value| plus
    each tree's largest |leaf value|; and the sum of every node's |value|."""
    sizes = np.diff(np.append(ensemble.roots, len(ensemble.feature)))
    tree_of_node = np.repeat(np.arange(ensemble.n_trees), sizes)
    largest = np.zeros(ensemble.n_trees)
    np.maximum.at(largest, tree_of_node, np.abs(ensemble.value).max(axis=1))
    return {
        "n_trees": int(ensemble.n_trees),
        "scale": float(np.abs(ensemble.base_offset).max() + largest.sum()),
        "total_value": float(np.abs(ensemble.value).sum()),
    }


def _record_predictions(manifest, results, start, n_rows, predict, errors, **options):
    """Append ``{"prediction": n_rows by outputs}`` of ``predict(path, *arguments)``
    for each manifest entry from ``start``, or ``{"error": ...}`` if it raises
    one of ``errors``; ``options`` go to :func:`_record_each`."""

    def record_of(path, *arguments):
        try:
            prediction = np.asarray(predict(path, *arguments), dtype=np.float64)
            return {"prediction": prediction.reshape(n_rows, -1).tolist()}
        except errors as exc:
            return {"error": f"{type(exc).__name__}: {exc}"[:200]}

    _record_each(manifest, results, start, record_of, **options)


def xgboost_margin(manifest, data, results, start) -> None:
    """XGBoost's own margin of each model file on ``data``, or its error."""
    import xgboost

    frame = pd.read_csv(data)
    X = frame.to_numpy()

    def predict(path):
        booster = xgboost.Booster(model_file=path)
        document = json.loads(bytes(booster.save_raw("json")))
        gradient_booster = document["learner"]["gradient_booster"]
        forest = gradient_booster.get("gbtree", gradient_booster)["model"]
        tables = forest.get("cats", {}).get("enc", [])
        if any(len(table["values"]) for table in tables):
            # A model of pandas categories: XGBoost recodes a frame's
            # category columns by value, against the tables in the file.
            rows = frame.astype(
                {
                    name: "category"
                    for name, kind in zip(
                        booster.feature_names, booster.feature_types, strict=True
                    )
                    if kind == "c" and name in frame
                }
            )
            return booster.predict(
                xgboost.DMatrix(rows, enable_categorical=True), output_margin=True
            )
        return booster.inplace_predict(
            X, predict_type="margin", validate_features=False
        )

    _record_predictions(
        manifest, results, start, len(X), predict, xgboost.core.XGBoostError
    )


def lightgbm_raw_score(manifest, data, results, start) -> None:
    """LightGBM's own ``predict(raw_score=True)`` of each model file on
    ``data``, or its error; each file gets 5 CPU seconds, as a cycle in the
    trees makes LightGBM's walk loop forever."""
    import lightgbm

    # LightGBM's own messages, not always UTF-8, are dropped.
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, 1)
    os.dup2(devnull, 2)
    X = np.genfromtxt(data, delimiter=",", skip_header=1)

    def predict(path):
        params = {"num_threads": 1, "verbose": -1}
        booster = lightgbm.Booster(model_file=path, params=params)
        raw = booster.predict(X, raw_score=True, num_threads=1)
        # In random-forest mode the raw output is the average of the
        # iterations, raw_score their sum.
        if b"\naverage_output\n" in Path(path).read_bytes():
            raw = raw / booster.current_iteration()
        return raw

    # Exception: a LightGBMError, or one from the pandas_categorical JSON.
    _record_predictions(
        manifest, results, start, len(X), predict, Exception, cpu_seconds=5
    )


def skops_output(manifest, data, results, start) -> None:
    """The output of each skops file's own model on ``data`` by the method
    named with the file (``predict``, ``decision_function``, ...), or its error."""
    import warnings

    import skops.io as sio

    warnings.simplefilter("ignore")
    X = pd.read_csv(data)

    def predict(path, method):
        model = sio.load(path, trusted=sio.get_untrusted_types(file=path))
        return getattr(model, method)(X)

    _record_predictions(manifest, results, start, len(X), predict, Exception)
