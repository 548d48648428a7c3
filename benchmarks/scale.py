"""Scaling: rows per second and peak memory against the number of rows explained,
in one process and on two Dask worker processes.

What is measured
----------------
One tree model, ``xgboost.XGBRegressor(n_estimators=200, max_depth=6,
tree_method="hist")`` (``HistGradientBoostingRegressor(max_iter=200,
max_depth=6)`` when xgboost is not installed), fitted on 10,000 seeded rows
of 20 standard-normal features (rounded to float32) with a nonlinear target.
``skshapley.TreeExplainer(model).fit()`` then explains n rows of the same
distribution, for n = 1e3, 1e4, 1e5, 1e6 (and 1e7 with ``--max-rows 1e7``,
if the machine has the memory: otherwise that size is skipped with a note).

* **one process**: ``explain(X)`` on a pandas DataFrame, with ``n_jobs``
  threads (``--n-jobs``, default all CPUs);
* **2 Dask workers**: ``distributed.LocalCluster(n_workers=2,
  threads_per_worker=1, processes=True)``, the rows a persisted
  ``dask.dataframe.DataFrame`` of 100,000-row partitions generated on the
  workers, the explainer with ``n_jobs=1``;
  ``explain(X).abs().sum().compute()`` is timed (the lazy explanation
  reduced per partition, as ``importance`` does, so that the attributions
  are never gathered in the client). Skipped, with a note, when
  ``distributed`` is not installed or when ``explain`` on a Dask DataFrame
  is not lazy in this version of skshapley.

Each (size, mode) runs in a new Python process, so that its peak memory is
its own: the peak resident set (``ru_maxrss`` of the process, and for Dask
the sum over the client and the workers). ``beyond`` is the peak minus the
process's memory before the rows existed, minus the rows and the
attributions themselves (8 bytes per value each): the working memory that
``max_memory`` bounds, which should not grow with n. ``--max-memory`` is
passed to the explainer as ``max_memory`` (ignored, with a note, in a
version without that parameter).

Columns: ``seconds`` is the best of ``--repeat`` runs of the explanation
(the rows and the fitted explainer are made once, outside the timings);
``rows/s`` is n over ``seconds``. The last line gives the throughput at the
largest size over that at 1e4: the target is 1 ± 0.2 (flat).

Usage::

    python benchmarks/scale.py                     # 1e3 ... 1e6 rows
    python benchmarks/scale.py --max-rows 1e7      # and 1e7, memory allowing
    python benchmarks/scale.py --max-memory 256MB  # the explainer's budget
    python benchmarks/scale.py --quick             # smoke run, 1e3 and 1e4 rows
"""

import argparse
import datetime
import json
import os
import pickle
import platform
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pandas as pd
import sklearn
from sklearn.ensemble import HistGradientBoostingRegressor

import skshapley

N_FEATURES = 20
N_TRAIN = 10_000
SIZES = (10**3, 10**4, 10**5, 10**6, 10**7)
PARTITION_ROWS = 100_000
MIB = 2**20


def make_model(quick: bool):
    """The fitted tree model and its name: XGBoost's if installed."""
    X = rows(N_TRAIN, seed=0)
    y = X["f0"] * X["f1"] + np.sin(3 * X["f2"]) + X["f3"].clip(0) + X["f4"]
    n_trees = 20 if quick else 200
    try:
        import xgboost
    except ImportError:
        model = HistGradientBoostingRegressor(
            max_iter=n_trees, max_depth=6, early_stopping=False, random_state=0
        )
        name = f"HistGradientBoostingRegressor(max_iter={n_trees}, max_depth=6)"
    else:
        model = xgboost.XGBRegressor(
            n_estimators=n_trees, max_depth=6, tree_method="hist", random_state=0
        )
        name = f"XGBRegressor(n_estimators={n_trees}, max_depth=6)"
    return model.fit(X, y), name


def rows(n: int, seed: int) -> pd.DataFrame:
    """n seeded rows of standard-normal features, rounded to float32."""
    values = np.random.default_rng(seed).standard_normal((n, N_FEATURES))
    return pd.DataFrame(
        values.astype(np.float32).astype(np.float64), columns=feature_names()
    )


def feature_names() -> list[str]:
    return [f"f{j}" for j in range(N_FEATURES)]


def peak_mib() -> float:
    """This process's peak resident set, in MiB (ru_maxrss: KiB on Linux)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / MIB if sys.platform == "darwin" else peak / 1024


def current_mib() -> float:
    """This process's resident set now, in MiB (its peak where /proc is absent)."""
    try:
        status = Path("/proc/self/status").read_text()
    except OSError:
        return peak_mib()
    line = next(line for line in status.splitlines() if line.startswith("VmRSS:"))
    return int(line.split()[1]) / 1024


def explainer_params(settings: dict) -> dict:
    """``max_memory`` if given and the explainer has that parameter."""
    if settings["max_memory"] is None or not has_max_memory():
        return {}
    return {"max_memory": settings["max_memory"]}


def has_max_memory() -> bool:
    return "max_memory" in skshapley.TreeExplainer(None).get_params()


def best_seconds(run, repeat: int) -> float:
    """The best wall time of ``repeat`` calls of ``run``."""
    best = float("inf")
    for _ in range(repeat):
        began = time.perf_counter()
        run()
        best = min(best, time.perf_counter() - began)
    return best


def child_one_process(settings: dict) -> dict:
    """Explain n rows in this process: seconds and memory."""
    model = pickle.loads(Path(settings["model"]).read_bytes())
    explainer = skshapley.TreeExplainer(
        model, n_jobs=settings["n_jobs"], **explainer_params(settings)
    ).fit()
    before = current_mib()
    X = rows(settings["n"], seed=1)

    def run():
        # The result is dropped before the next run, so that one is alive.
        explainer.explain(X)

    seconds = best_seconds(run, settings["repeat"])
    return {"seconds": seconds, "peak": peak_mib(), "before": before}


def child_dask(settings: dict) -> dict:
    """Explain n rows on a LocalCluster of 2 worker processes."""
    import dask.array as da
    import dask.dataframe as dd
    from distributed import Client, LocalCluster, wait

    model = pickle.loads(Path(settings["model"]).read_bytes())
    explainer = skshapley.TreeExplainer(
        model, n_jobs=1, **explainer_params(settings)
    ).fit()
    n = settings["n"]
    with (
        LocalCluster(
            n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None
        ) as cluster,
        Client(cluster) as client,
    ):
        before = current_mib() + sum(client.run(current_mib).values())
        generated = da.random.RandomState(1).standard_normal(
            (n, N_FEATURES), chunks=(PARTITION_ROWS, N_FEATURES)
        )
        X = dd.from_dask_array(
            generated.astype(np.float32).astype(np.float64), columns=feature_names()
        ).persist()
        wait(X)
        seconds = best_seconds(
            lambda: explainer.explain(X).abs().sum().compute(), settings["repeat"]
        )
        peak = peak_mib() + sum(client.run(peak_mib).values())
    return {"seconds": seconds, "peak": peak, "before": before}


def dask_skip_reason() -> str | None:
    """Why the Dask runs are skipped, or None if they can run."""
    try:
        import dask.dataframe as dd
        import distributed  # noqa: F401
    except ImportError as exc:
        return (
            f"{exc.name} is not installed (pip install 'skshapley[dask]' distributed)"
        )
    model = HistGradientBoostingRegressor(max_iter=2).fit(rows(50, 0), np.arange(50))
    X = dd.from_pandas(rows(10, 1), npartitions=2)
    try:
        result = skshapley.TreeExplainer(model).fit().explain(X)
    # Before lazy Dask support, explain reads a Dask frame through pandas'
    # interchange protocol, which fails on it.
    except (AttributeError, TypeError, ValueError) as exc:
        return f"explain on a Dask DataFrame fails in this version ({exc})"
    if not hasattr(result, "dask"):  # computed eagerly: not a Dask collection
        return (
            f"explain on a Dask DataFrame returns a {type(result).__name__} "
            "in this version of skshapley, not a lazy Dask DataFrame"
        )
    return None


def run_child(mode: str, n: int, settings: dict) -> dict:
    """One (mode, n) run in a new process: what its child function returns."""
    child = json.dumps(settings | {"n": n, "mode": mode})
    command = [sys.executable, __file__, "--child", child]
    result = subprocess.run(command, capture_output=True, text=True, check=False)
    if result.returncode != 0:
        sys.stderr.write(result.stderr)
        raise SystemExit(f"the {mode} run of {n:,} rows failed")
    return json.loads(result.stdout.splitlines()[-1])


def memory_allows(n: int) -> bool:
    """Whether n rows, their attributions and a copy fit in available memory."""
    try:
        meminfo = Path("/proc/meminfo").read_text()
    except OSError:
        return n <= 10**6
    line = next(
        line for line in meminfo.splitlines() if line.startswith("MemAvailable:")
    )
    available = int(line.split()[1]) * 1024
    return 4 * 8 * n * N_FEATURES < available


def beyond(run: dict, n: int) -> float:
    """Peak memory beyond the process before the rows, the rows and the result."""
    data = 2 * 8 * n * N_FEATURES / MIB  # the rows and their attributions
    return run["peak"] - run["before"] - data


def cells(run: dict | None, n: int) -> str:
    if run is None:
        return f"{'-':>8} {'-':>10} {'-':>9} {'-':>8}"
    return (
        f"{run['seconds']:>7.2f}s {n / run['seconds']:>10,.0f} "
        f"{run['peak']:>9,.0f} {beyond(run, n):>8,.0f}"
    )


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small, for a smoke run")
    parser.add_argument("--repeat", type=int, default=3, help="timed runs per size")
    parser.add_argument(
        "--max-rows", type=float, default=None, help="largest size (default 1e6)"
    )
    parser.add_argument(
        "--max-memory",
        default=None,
        help="the explainer's max_memory (bytes or '512MB')",
    )
    parser.add_argument(
        "--n-jobs", type=int, default=-1, help="threads of the one-process runs"
    )
    parser.add_argument("--child", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child is not None:  # one run, in its own process
        settings = json.loads(args.child)
        child = child_dask if settings["mode"] == "dask" else child_one_process
        print(json.dumps(child(settings)))
        return
    max_rows = args.max_rows or (10**4 if args.quick else 10**6)
    sizes = [n for n in SIZES if n <= max_rows]

    print(
        f"skshapley {skshapley.__version__} | scikit-learn {sklearn.__version__} | "
        f"numpy {np.__version__} | Python {platform.python_version()} | "
        f"{os.cpu_count()} CPUs | load {os.getloadavg()[0]:.2f} | "
        f"{datetime.datetime.now().isoformat(timespec='seconds')}"
        f"{' | quick' if args.quick else ''}"
    )
    model, name = make_model(args.quick)
    print(f"model: {name}, {N_FEATURES} features", flush=True)
    if args.max_memory is not None and not has_max_memory():
        print(f"note: --max-memory {args.max_memory} ignored: no max_memory parameter")
    skip = dask_skip_reason()
    if skip is not None:
        print(f"note: the Dask runs are skipped: {skip}")
    print()
    print(
        f"{'rows':>10} | {'one process (n_jobs=' + str(args.n_jobs) + ')':^39} | "
        f"{'2 Dask workers (1 thread each)':^39}"
    )
    columns = f"{'seconds':>8} {'rows/s':>10} {'peak MiB':>9} {'beyond':>8}"
    print(f"{'':>10} | {columns} | {columns}")
    rates = {}
    with tempfile.TemporaryDirectory() as directory:
        path = Path(directory) / "model.pkl"
        path.write_bytes(pickle.dumps(model))
        settings = {
            "model": str(path),
            "repeat": args.repeat,
            "n_jobs": args.n_jobs,
            "max_memory": args.max_memory,
        }
        for n in sizes:
            if not memory_allows(n):
                print(f"{n:>10,} | skipped: not enough memory available")
                continue
            one = run_child("one process", n, settings)
            dask = None if skip else run_child("dask", n, settings)
            rates[n] = n / one["seconds"]
            print(f"{n:>10,} | {cells(one, n)} | {cells(dask, n)}", flush=True)
    print()
    if 10**4 in rates and max(rates) > 10**4:
        largest = max(rates)
        print(
            f"one process: rows/s at {largest:,} rows over rows/s at 10,000 rows: "
            f"{rates[largest] / rates[10**4]:.2f} (target: 1 ± 0.2)"
        )
    print(
        "peak MiB: peak resident set (Dask: client plus workers); beyond: the "
        "peak minus the memory before the rows, the rows and their attributions."
    )


if __name__ == "__main__":
    main()
