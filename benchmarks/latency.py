"""Latency of path-dependent TreeSHAP on one row and small batches: skshapley
against the QuadraSHAP reference code, FastTreeSHAP, shap, shapiq and
XGBoost's and LightGBM's own contributions (issue 17).

What is measured
----------------
Four of ``trees.py``'s seeded workloads (the same models, data and rows; see
its docstring), each explained on its first 1 and 10 rows, and the forest
also on 100 rows:

* (a) ``RandomForestRegressor(n_estimators=100, max_depth=12)``, 20 features;
* (d) ``xgboost.XGBRegressor(n_estimators=200, max_depth=6)``, 50 features;
* (f) ``lightgbm.LGBMRegressor(n_estimators=300, num_leaves=63)``, 50 features;
* (b) ``GradientBoostingClassifier(n_estimators=100, max_depth=5)``,
  20 features (its log-odds margin);

and the fixed cost of a call: one row of a ``DecisionTreeRegressor(max_depth=3)``
fitted on a 2000 × 20 DataFrame, given as a NumPy array and as a one-row
DataFrame, explained by ``TreeExplainer(model).fit()`` with its default
``n_jobs``.

The methods are those of ``trees.py`` (``_anchors.py``), at one thread
(``n_jobs=1``, ``nthread`` / ``num_threads`` 1, inside
``threadpoolctl.threadpool_limits(1)``) and at ``--threads`` (default 2);
shap's, shapiq's and QuadraSHAP's kernels are single-threaded and repeat their
one-thread time there (marked ``1†``). Each method's explainer is built once
per thread count; what is timed is the library's own call on the rows
(skshapley's ``explain`` returning its DataFrame, shap's ``shap_values``,
shapiq's ``explain_X``, XGBoost's ``DMatrix`` and
``predict(pred_contribs=True)``, ...), never a conversion. The header names
the version of every library and of Python. Per case: one warm-up call, then
calls on the same rows until they took ``--budget`` seconds in all and at
least ``--repeat`` were made (fewer after a call of ``CALL_LIMIT`` seconds; a
method's larger cases are skipped, with a note, once its time per row says a
call would take longer: shapiq 1.4, in Python, takes seconds a row);
``best`` and ``median`` are the fastest and the median call. ``ratio`` is the
method's best time over skshapley's in the same case (> 1: skshapley is
faster); ``max|Δφ|`` the largest absolute difference from skshapley's values
on the same rows; ``residual`` the largest efficiency residual,
``max |Σφ + base - f(x)| / max |f(x)|`` with ``f`` the model's raw output
(XGBoost's is a float32 sum: ~1e-7 there for every method).

The closing *Targets* block checks issue 17's targets, on best times: one
row at one thread at least 2× faster than the fastest anchor on every model;
two threads at least 1.7× faster than one for one row and 100 rows of the
forest; a fixed cost of at most 30 µs (NumPy) and 100 µs (DataFrame). The
header prints the load average: timings are noisy on a loaded machine, and
the two-thread ones need two idle cores.

``--interventional`` times interventional values instead: workloads (a) and
(d), whose first 200 rows are the background for every method and the rows
after them are explained (1 and 10), by skshapley's
``TreeExplainer(model, feature_perturbation="interventional").fit(background)``,
shap's ``TreeExplainer(model, Independent(background, max_samples=200),
feature_perturbation="interventional")``, shapiq's, woodelf's and
FastTreeSHAP's (as in ``trees.py --interventional``), at 1 and ``--threads``
threads, with no targets. The forest's background tables exceed
what skshapley keeps from ``fit``: its few rows take pair walks (one walk
per tree with the background rows that reach each node) instead of
rebuilding them; the boosted model's are kept.

Run it from the repository root, in an environment where skshapley is
installed (QuadraSHAP: see ``README.md`` and ``--quadrashap-path``)::

    python benchmarks/latency.py             # full run, ~12 minutes on 2 busy cores
    python benchmarks/latency.py --quick     # smoke run, small models, seconds
    python benchmarks/latency.py --workload a --budget 2
    python benchmarks/latency.py --interventional    # ~2 minutes
"""

import argparse
import os
import statistics
import sys
import time
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from _anchors import (
    Unavailable,
    add_quadrashap_path,
    all_methods,
    efficiency_residual,
    interventional_methods,
    machine,
    versions_line,
    with_background,
)
from _workloads import (
    BOOSTER_WORKLOADS,
    SEED,
    booster_libraries,
    make_workloads,
    skshapley_rejects,
)
from sklearn.datasets import make_friedman1
from sklearn.tree import DecisionTreeRegressor
from threadpoolctl import threadpool_limits

# trees.py's workloads timed here, in the order.
LATENCY_WORKLOADS = ("a", "d", "f", "b")

# Rows explained per call; the forest also at FOREST_ROWS (the two-thread
# target for a batch).
ROWS = (1, 10)
FOREST_ROWS = 100

# --interventional: the workloads, and their background (the first rows of
# the data; the rows explained follow it).
INTERVENTIONAL_WORKLOADS = ("a", "d")
BACKGROUND_ROWS = 200

# A case stops at its first call past this many seconds, even before
# --repeat calls, and a method's larger cases are skipped once its calls would
# take longer (an old release of an anchor, in Python, takes seconds a row).
CALL_LIMIT = 10.0

# Issue 17's targets.
ONE_ROW_SPEEDUP = 2.0  # fastest anchor / skshapley, one row, one thread
THREAD_SPEEDUP = 1.7  # skshapley one thread / two threads, the forest
FIXED_COST = {"NumPy": 30e-6, "DataFrame": 100e-6}  # seconds per call


@dataclass
class Timing:
    method: str
    block: int  # the threads of its block of the table
    threads: str  # the threads it ran with: "1†" for a single-threaded one
    rows: int
    best: float
    median: float
    calls: int
    residual: float | None = None
    difference: float | None = None  # max |phi - skshapley's phi|
    ratio: float | None = None
    phi: np.ndarray | None = field(default=None, repr=False)  # (rows, values)


def time_calls(call, X, budget, min_calls):
    """One warm-up call, then calls until ``budget`` seconds and ``min_calls``
    calls (fewer after a call of ``CALL_LIMIT`` seconds): (best, median,
    calls, the last result)."""
    call(X)  # the first calls start thread pools and fill caches
    times = []
    while len(times) < min_calls or sum(times) < budget:
        if max(times, default=0.0) >= CALL_LIMIT:  # one such call is enough
            break
        start = time.perf_counter()
        result = call(X)
        times.append(time.perf_counter() - start)
    return min(times), statistics.median(times), len(times), result


def measure_threads(workload, methods, threads, rows_list, args, single, notes):
    """Every method on every row count with ``threads`` threads: Timings."""
    timings = []
    with threadpool_limits(limits=threads):
        for method in methods:
            if not method.threaded and threads != 1:
                for timing in single.get(method.name, []):
                    again = Timing(**{**timing.__dict__, "block": threads})
                    again.threads = "1†"
                    timings.append(again)
                continue
            try:
                explain = method.prepare(workload.model, threads)
            except Unavailable as reason:
                if threads == 1:
                    notes.append(f"{method.name}: {reason}; skipped")
                continue
            seconds_a_row = 0.0  # of the method's last case
            for rows in rows_list:
                if seconds_a_row * rows > CALL_LIMIT:
                    notes.append(
                        f"{method.name} ({threads} thread{'s' * (threads > 1)}): "
                        f"{rows} rows skipped (~{seconds_a_row * rows:.0f} s a call)"
                    )
                    continue
                X = workload.X[:rows]
                best, median, calls, result = time_calls(
                    explain.call, X, args.budget, args.repeat
                )
                phi, base = explain.unpack(result)
                timing = Timing(
                    method.name, threads, str(threads), rows, best, median, calls
                )
                timing.residual = efficiency_residual(phi, base, workload.raw[:rows])
                timing.phi = np.asarray(phi, dtype=float).reshape(rows, -1)
                timings.append(timing)
                seconds_a_row = best / rows
            if threads == 1:
                single[method.name] = [t for t in timings if t.method == method.name]
    return timings


def compare(timings, reference_method="skshapley"):
    """Ratios and differences to skshapley's timing of the same case: the same
    rows in the same block."""
    reference = {(t.block, t.rows): t for t in timings if t.method == reference_method}
    for timing in timings:
        sk = reference.get((timing.block, timing.rows))
        if sk is None:
            continue
        timing.ratio = timing.best / sk.best
        timing.difference = float(np.abs(timing.phi - sk.phi).max())


def print_table(title, timings, unit, scale, notes):
    print(title)
    width = max(len(t.method) for t in timings)
    header = (
        f"    {'method':<{width}} {'threads':>7} {'rows':>5} {'best ' + unit:>10} "
        f"{'median ' + unit:>11} {'calls':>6} {'ratio':>7} {'max|Δφ|':>8} "
        f"{'residual':>9}"
    )
    print(header)
    print("    " + "-" * (len(header) - 4))
    for i, case in enumerate(sorted({(t.rows, t.block) for t in timings})):
        if i:
            print()
        for t in timings:
            if (t.rows, t.block) == case:
                print(
                    f"    {t.method:<{width}} {t.threads:>7} {t.rows:>5} "
                    f"{t.best * scale:>10.3f} {t.median * scale:>11.3f} "
                    f"{t.calls:>6} {ratio_text(t.ratio):>7} "
                    f"{fmt(t.difference, '.1e'):>8} {fmt(t.residual, '.1e'):>9}"
                )
    for note in notes:
        print(f"    note: {note}")
    print()


def ratio_text(ratio):
    """Two decimals, three below 0.1 (a fast anchor's fixed cost)."""
    if ratio is None:
        return "—"
    return f"{ratio:.2f}" if ratio >= 0.1 else f"{ratio:.3f}"


def fmt(value, spec):
    return "—" if value is None else format(value, spec)


def fixed_cost(methods, args):
    """Every method on one row of a one-tree model, as NumPy and as a
    DataFrame, with all CPUs (skshapley's and FastTreeSHAP's default n_jobs):
    Timings."""
    X, y = make_friedman1(2000, n_features=20, random_state=SEED)
    frame = pd.DataFrame(X, columns=[f"x{j}" for j in range(X.shape[1])])
    model = DecisionTreeRegressor(max_depth=3, random_state=SEED).fit(frame, y)
    raw = model.predict(frame.iloc[:1]).reshape(1, 1)
    timings = []
    for method in (m for m in methods if m.supports(model)):
        try:
            explain = method.prepare(model, -1)
        except Unavailable:
            continue
        for block, row in enumerate((X[:1], frame.iloc[:1])):
            best, median, calls, result = time_calls(
                explain.call, row, args.budget, args.repeat
            )
            phi, base = explain.unpack(result)
            timing = Timing(method.name, block, "all", 1, best, median, calls)
            timing.residual = efficiency_residual(phi, base, raw)
            timing.phi = np.asarray(phi, dtype=float).reshape(1, -1)
            timings.append(timing)
    compare(timings)
    for timing in timings:  # the blocks: NumPy row, DataFrame row
        timing.method += f" ({list(FIXED_COST)[timing.block]})"
    return timings


def target(label, value, goal, unit="×", at_most=False):
    met = value is not None and (value <= goal if at_most else value >= goal)
    shown = "n/a" if value is None else f"{value:.2f}{unit}"
    sign = "≤" if at_most else "≥"
    print(f"    {'PASS' if met else 'FAIL'}  {label}: {shown} ({sign} {goal:g}{unit})")
    return met


def print_targets(results, fixed, threads):
    """Issue 17's targets, on best times, with PASS / FAIL."""
    print("Targets (issue 17; best times):")
    for title, timings in results:
        one = [t for t in timings if t.rows == 1 and t.threads == "1"]
        sk = next((t for t in one if t.method == "skshapley"), None)
        anchors = [t for t in one if t.method != "skshapley"]
        fastest = min(anchors, key=lambda t: t.best, default=None)
        value = None if sk is None or fastest is None else fastest.best / sk.best
        name = title.split(" |")[0]
        against = f" against {fastest.method}" if fastest else " (no anchor ran)"
        target(f"{name}, one row, 1 thread{against}", value, ONE_ROW_SPEEDUP)
    forest = dict(results).get(next((t for t, _ in results if t.startswith("(a)")), ""))
    for rows in (1, FOREST_ROWS):
        sk = {
            t.threads: t.best
            for t in forest or []
            if t.method == "skshapley" and t.rows == rows
        }
        value = sk["1"] / sk[str(threads)] if "1" in sk and str(threads) in sk else None
        label = f"(a) forest, {rows} row{'s' * (rows > 1)}, {threads} threads vs 1"
        target(label, value, THREAD_SPEEDUP)
    for kind, goal in FIXED_COST.items():
        sk = next((t for t in fixed if t.method == f"skshapley ({kind})"), None)
        value = None if sk is None else sk.best * 1e6
        target(f"fixed cost, {kind} row", value, goal * 1e6, " µs", at_most=True)


def run_interventional(args, keys):
    """One row and 10 rows of interventional values, at 1 and ``--threads``
    threads, against the same background for every method: tables."""
    keys = [k for k in keys if k in INTERVENTIONAL_WORKLOADS]
    libraries, reasons = booster_libraries(keys)
    methods, skipped = interventional_methods()
    print(versions_line(methods, libraries))
    print(machine())
    print("ratio = best time / skshapley's best time in the same case (> 1: slower)")
    for reason in reasons + skipped:
        print(f"note: {reason}")
    print()
    n_background = 50 if args.quick else BACKGROUND_ROWS
    for workload in make_workloads(
        args.quick, keys, libraries, n_background + max(ROWS)
    ):
        if isinstance(workload, str):  # skipped
            print(f"{workload}\n")
            continue
        workload = with_background(workload, n_background)
        notes, single, timings = [], {}, []
        for threads in (1, args.threads):
            timings += measure_threads(
                workload, methods, threads, ROWS, args, single, notes
            )
        compare(timings, "skshapley interventional")
        title = workload.title.split(" | explain")[0]
        fit = f"    fit {workload.fit_seconds:.1f} s | {workload.structure}"
        print_table(
            f"{title} | interventional, background {n_background} rows\n{fit}",
            timings, "ms", 1e3, notes,
        )  # fmt: skip
    print(f"load at the end {os.getloadavg()[0]:.2f}")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="small models, short budget (smoke run)"
    )
    parser.add_argument(
        "--repeat", type=int, default=5, help="timed calls per case, at least"
    )
    parser.add_argument(
        "--budget", type=float, default=None,
        help="seconds of timed calls per case (default 0.5; 0.02 with --quick)",
    )  # fmt: skip
    parser.add_argument(
        "--threads", type=int, default=2, help="the threads of the second block"
    )
    parser.add_argument(
        "--workload", action="append", choices=LATENCY_WORKLOADS,
        help="time only these workloads (repeatable; default: all)",
    )  # fmt: skip
    parser.add_argument(
        "--interventional", action="store_true",
        help=f"interventional values instead (workloads a and d, background "
        f"{BACKGROUND_ROWS} rows), against shap's, shapiq's, woodelf's and "
        "FastTreeSHAP's",
    )  # fmt: skip
    add_quadrashap_path(parser)
    args = parser.parse_args()
    if args.budget is None:
        args.budget = 0.02 if args.quick else 0.5
    keys = [k for k in LATENCY_WORKLOADS if k in (args.workload or LATENCY_WORKLOADS)]
    if args.interventional:
        return run_interventional(args, keys)

    libraries, reasons = booster_libraries(keys)
    sk, methods, versions, skipped = all_methods(libraries, args.quadrashap_path)
    if sk is None:
        sys.exit(f"skshapley is not importable: {skipped[0]}")
    print(versions)
    quick = " | quick (small models)" if args.quick else ""
    print(
        f"{machine()} | per case: 1 warm-up call, then ≥ {args.budget:g} s and "
        f"≥ {args.repeat} calls{quick}"
    )
    print("ratio = best time / skshapley's best time in the same case (> 1: slower)")
    for reason in reasons + skipped:
        print(f"note: {reason}")
    load, cpus = os.getloadavg()[0], os.cpu_count() or 1
    if load > cpus - 1:  # another runnable process for the second thread's core
        print(
            f"note: load {load:.1f} on {cpus} CPUs: the times include waiting "
            f"for a core ({args.threads}-thread calls most), upper bounds"
        )
    print()

    fixed = fixed_cost(methods, args)
    title = (
        "fixed cost: one row, DecisionTreeRegressor(max_depth=3), 20 features, "
        "n_jobs=-1 (skshapley's default)"
    )
    print_table(title, fixed, "µs", 1e6, [])

    results, errors = [], []
    for workload in make_workloads(args.quick, keys, libraries, FOREST_ROWS):
        if isinstance(workload, str):  # skipped
            print(f"{workload}\n")
            continue
        title = workload.title.replace(f"explain {FOREST_ROWS} rows", "explaining")
        if workload.key in BOOSTER_WORKLOADS:
            reason = skshapley_rejects(workload.model)
            if reason is not None:
                print(f"{title}\n    skipped: skshapley rejects it: {reason}\n")
                continue
        rows = (*ROWS, FOREST_ROWS) if workload.key == "a" else ROWS
        notes, single, timings = [], {}, []
        supported = [m for m in methods if m.supports(workload.model)]
        for threads in (1, args.threads):
            timings += measure_threads(
                workload, supported, threads, rows, args, single, notes
            )
        if not any(t.method == "skshapley" for t in timings):
            errors.append(f"({workload.key}): skshapley did not run")
        compare(timings)
        for method in supported:
            notes += [n for n in method.notes if n not in notes]
            method.notes.clear()
        fit = f"    fit {workload.fit_seconds:.1f} s | {workload.structure}"
        print_table(f"{title}\n{fit}", timings, "ms", 1e3, notes)
        results.append((title, timings))
    print_targets(results, fixed, args.threads)
    print(f"load at the end {os.getloadavg()[0]:.2f}")
    if errors:  # after the tables: what did run stays readable
        sys.exit("skshapley failed: " + "; ".join(errors))


if __name__ == "__main__":
    main()
