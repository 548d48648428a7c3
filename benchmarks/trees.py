"""Path-dependent TreeSHAP: skshapley against shap, shapiq, FastTreeSHAP,
QuadraSHAP and XGBoost's and LightGBM's own.

What is measured
----------------
Three scikit-learn tree ensembles and three XGBoost / LightGBM ones, fitted on
seeded synthetic data (sizes shrink with ``--quick``):

* (a) ``RandomForestRegressor(n_estimators=100, max_depth=12)`` on 10000 × 20
  ``make_friedman1`` data (5 informative features, 15 noise), explaining 500
  rows;
* (b) ``GradientBoostingClassifier(n_estimators=100, max_depth=5)`` on
  5000 × 20 binary ``make_classification`` data, explaining 1000 rows of the
  log-odds margin (``decision_function``);
* (c) ``HistGradientBoostingRegressor(max_iter=300, max_leaf_nodes=63)`` on
  10000 × 50 ``make_regression`` data, explaining 1000 rows;
* (d) ``xgboost.XGBRegressor(n_estimators=200, max_depth=6,
  tree_method="hist")`` on 10000 × 50 ``make_regression`` data, explaining
  1000 rows of its margin (``predict(X, output_margin=True)``);
* (e) ``xgboost.XGBRegressor(n_estimators=500, max_depth=8,
  tree_method="hist")`` on 20000 × 50 ``make_regression`` data, explaining
  1000 rows of its margin;
* (f) ``lightgbm.LGBMRegressor(n_estimators=300, num_leaves=63, verbose=-1)``
  on 10000 × 50 ``make_regression`` data, explaining 1000 rows of its raw
  score (``predict(X, raw_score=True)``).

(d), (e) and (f) are skipped, with a note, when xgboost or lightgbm is not
installed or when skshapley's TreeExplainer rejects the model (the TypeError
of an unsupported model).

The features are rounded to float32 (and kept as float64), so that every
method routes every row the way the fitted model does: scikit-learn's trees
and XGBoost's compare float32 features with their thresholds.

Each workload is explained, in one process and side by side, by

* ``skshapley.TreeExplainer(model, n_jobs=...).fit().explain(X)``;
* on (d), (e), (f), the library's own TreeSHAP: XGBoost's
  ``booster.predict(DMatrix(X, nthread=k), pred_contribs=True)`` after
  ``booster.set_param({"nthread": k})``, LightGBM's ``model.predict(X,
  pred_contrib=True, num_threads=k)``; their last column is the base value;
* ``shap.TreeExplainer(model, feature_perturbation="tree_path_dependent")``,
  ``shap_values(X, check_additivity=False)`` (its C++ TreeSHAP; single-threaded).
  On XGBoost and LightGBM models shap (0.51) does not run its own kernel but
  calls the library's ``pred_contribs`` / ``pred_contrib`` (a note says so);
  for XGBoost the script sets the booster's ``nthread`` to 1 for it;
* FastTreeSHAP (the ``fasttreeshap-fixed`` package, or the original
  ``fasttreeshap``), ``TreeExplainer(model, algorithm="v1" | "v2",
  n_jobs=...)``; its ``v2`` falls back to ``v1`` when it expects to run out of
  memory (deep trees: its tables grow as 2**depth), and the row then says
  ``(ran v1)``;
* the QuadraSHAP reference code (github.com/Majeed7/QuadraSHAP),
  ``quadrashap.TreeExplainer(model, tree_solver="quadrature_tree",
  use_cpp=True)``, its C++ Gauss–Legendre tree kernel (single-threaded), on
  the models it supports (random forests, extra trees, single trees). It is
  looked up as an installed package, or in the directory given by
  ``--quadrashap-path`` or the ``QUADRASHAP_PATH`` environment variable (a
  ``pip install --no-deps --target DIR`` of that repository);
* shapiq, ``shapiq.TreeExplainer(model, index="SV", max_order=1,
  min_order=1).explain_X(X)`` (Shapley values of order 1; its compiled
  QuadratureTreeSHAP from shapiq 1.7, TreeSHAP-IQ in Python in 1.4), one row
  at a time on one thread, on the models it accepts.

shap, shapiq, FastTreeSHAP, QuadraSHAP, xgboost and lightgbm are optional:
they are imported lazily, and a method that is missing or does not support a
model is skipped with a note (XGBoost's and LightGBM's own explain only their
models). The header names the version of every library and of Python.

Threads: first every method with one thread (``n_jobs=1``, inside
``threadpoolctl.threadpool_limits(1)`` so that no BLAS or OpenMP pool grows),
then all CPUs (``n_jobs=-1``) for skshapley, FastTreeSHAP and XGBoost's and
LightGBM's own (their ``nthread`` / ``num_threads``). shap's, shapiq's and
QuadraSHAP's kernels are single-threaded: in the all-CPU block they show their
one-thread times again (marked ``1†``), not a new run.

Columns: ``setup`` is the explainer's construction (and skshapley's ``fit``),
timed once; ``seconds`` is the best of ``--repeat`` explanation runs over all
the rows (fewer runs once they took ``TIME_BUDGET`` seconds in all); ``ms/row``
is ``seconds`` per explained row; ``ratio`` is the method's ``seconds`` over
skshapley's with the same threads (> 1: skshapley is faster; against shap's
time when skshapley is unavailable, which the header says); ``max|Δφ|`` is the
largest absolute difference from the values of that same reference, on the
rows both were timed on (values that are wrong but sum right show there);
``residual`` is the largest efficiency residual over the explained rows,

    max_rows |sum_i phi_i + base - f(x)| / max_rows |f(x)|,

with ``base`` the method's expected value and ``f(x)`` the model's raw output
(``predict`` for the regressors, ``decision_function`` for the classifier,
``predict(X, output_margin=True)`` for XGBoost, ``predict(X, raw_score=True)``
for LightGBM). XGBoost's margin and its ``pred_contribs`` are float32, so
every residual on (d) and (e) is ~1e-7 or more; a note gives each method's
residual against the margin summed in float64 instead (the float32 leaf
values of the leaves ``pred_leaf`` reaches, plus ``base_score``).
Every method first explains a few rows to warm up, then 1 and ``PILOT_ROWS``
rows, which estimate its time per row and its fixed time per call (FastTreeSHAP
v2 precomputes per call); a method whose first row took over
``SUBSET_BUDGET / PILOT_ROWS`` seconds runs 2 rows instead of ``PILOT_ROWS``.
A method whose full run would take more than
``SUBSET_BUDGET`` seconds is timed on the first rows only and its time scaled
linearly to all rows, ``fixed + (measured - fixed) * n_rows / n_timed``
(marked ``*``, with the rows and the fixed part in the notes; its residual is
over those rows).

Run it from the repository root, in an environment where skshapley is
installed::

    python benchmarks/trees.py            # full run, about 6 minutes on 2 cores
    python benchmarks/trees.py --quick    # smoke run, a few seconds
    python benchmarks/trees.py --repeat 5 # best of 5 runs per measurement
    python benchmarks/trees.py --workload d --workload e --workload f
    python benchmarks/trees.py --interactions  # interaction values instead
    python benchmarks/trees.py --interventional  # interventional values instead
    python benchmarks/trees.py --background-sweep  # against background sizes

Interaction values (``--interactions``): workloads (a) and (d) above,
explaining 200 rows (20 with ``--quick``), by
``TreeExplainer(model).fit().explain_interactions(X)``, shap's
``shap_interaction_values`` (its C++ on scikit-learn models; XGBoost's
``pred_interactions`` with one thread on XGBoost's), shapiq's order-2
``TreeExplainer(model, index="SII", max_order=2)`` (its pairs' SII halved,
and each diagonal entry its Shapley value less its row's other entries: shap's
convention), FastTreeSHAP's ``v1``
``shap_interaction_values`` when importable, and XGBoost's own
``booster.predict(DMatrix(X), pred_interactions=True)``, in the same table
(``residual`` sums every entry of the matrices). A note gives each method's
peak memory at one thread: the peak resident size (Linux ``VmHWM``, reset
through ``/proc/self/clear_refs``) of one explanation of the rows it was
timed on, above the resident size before it, in a spawned process.

Interventional values (``--interventional``): workloads (a) and (d) above,
with the first 1000 rows of the training data as the background and the next
1000 explained (100 and 100 with ``--quick``), by
``TreeExplainer(model, feature_perturbation="interventional").fit(background)``
(``setup`` includes this fit, which builds the background's tables), shap's
``TreeExplainer(model, Independent(background, max_samples=1000),
feature_perturbation="interventional")`` (the whole background: shap keeps
only 100 rows of it by default), shapiq's ``TreeExplainer(model,
mode="interventional", reference_dataset=background, index="SV",
max_order=1, min_order=1, backend="shapiq")`` (where it has a ``mode``; its
own OpenMP kernel, not the woodelf it hands large inputs to by default),
woodelf's ``WoodelfExplainer(model, background_frame,
feature_perturbation="interventional").shap_values(frame)`` (the
woodelf-explainer package; base: the model's mean raw output on the
background) and FastTreeSHAP's, each when importable, with the same
``--repeat``, scaling and peak-memory notes as the interaction runs.

Background sizes (``--background-sweep``): the interventional methods on one
``xgboost.XGBRegressor(n_estimators=100, max_depth=6)``, fitted on the first
60000 rows of 2,000,000 × 30 ``make_regression`` data, against backgrounds of
1,000, 10,000, 100,000 and 1,000,000 rows (the first rows of the data),
explaining the same 10,000 rows (those after the largest background) each
time; then 1 row and 1,000,000 rows against backgrounds of 1,000 and
1,000,000. shap's and shapiq's times grow as rows times background rows:
they run up to 10,000 background rows and 10,000 rows only; woodelf (linear
in both) runs everywhere. ``--quick``: 10 trees of depth 3, backgrounds of
100 and 1000 rows, 100 rows explained, then 1 and 1,000. A table per run,
then each anchor's time over skshapley's, per size, rows and threads (about
10 minutes on 2 cores, most of it woodelf's).
"""

import argparse
import dataclasses
import os
import sys
import time
from dataclasses import dataclass, field

import numpy as np
from _anchors import (
    Method,
    Unavailable,
    add_quadrashap_path,
    all_methods,
    booster_library,
    efficiency_residual,
    import_fasttreeshap,
    import_shap,
    interventional_methods,
    machine,
    module_version,
    shapiq_interactions_method,
    skshapley_version,
    versions_line,
    with_background,
    xgboost_predict,
)
from _workloads import (
    BOOSTER_WORKLOADS,
    SWEEP_WORKLOAD,
    WORKLOADS,
    booster_libraries,
    make_workloads,
    skshapley_rejects,
)
from threadpoolctl import threadpool_limits

from skshapley._runtime.threads import effective_n_threads

# A measurement stops repeating once its runs took this many seconds in all.
TIME_BUDGET = 7.0

# A method whose run over all rows is estimated to take longer than this is
# timed on the first rows only, as many as fit in this budget (at least
# PILOT_ROWS), and its time is scaled linearly to all rows: time = fixed +
# (measured - fixed) * n_rows / n_timed, with the fixed part (per call, not per
# row) estimated from the warm-up runs on 1 and PILOT_ROWS rows.
SUBSET_BUDGET = 3.0

# Rows of the warm-up runs, which also estimate the time per row.
PILOT_ROWS = 10


# -- measuring ---------------------------------------------------------------


@dataclass
class Row:
    method: str
    threads: str
    setup: float | None = None
    seconds: float | None = None
    n_rows: int = 0
    timed_rows: int = 0
    runs: int = 0
    residual: float | None = None
    ratio: float | None = None
    residual64: float | None = None  # against Workload.raw64
    fixed: float = 0.0  # the part of a scaled time that was not scaled
    note: str = ""
    # the values on the rows timed, (timed_rows, values), and their largest
    # difference from the reference's (skshapley's) on the rows both timed
    phi: np.ndarray | None = field(default=None, repr=False)
    difference: float | None = None

    @property
    def scaled(self):
        return self.timed_rows < self.n_rows


def best_time(func, repeat):
    """Best wall time of up to ``repeat`` calls, the calls made, the last result."""
    times = []
    while len(times) < repeat and sum(times) < TIME_BUDGET:
        start = time.perf_counter()
        result = func()
        times.append(time.perf_counter() - start)
    return min(times), len(times), result


def elapsed(func):
    start = time.perf_counter()
    func()
    return time.perf_counter() - start


def measure(method, workload, n_jobs, repeat, threads_label):
    """Build the method's explainer and time it on the workload's rows."""
    row = Row(method.name, threads_label, n_rows=len(workload.X))
    start = time.perf_counter()
    explain = method.prepare(workload.model, n_jobs)
    row.setup = time.perf_counter() - start

    X = workload.X
    n_rows = len(X)
    pilot = min(PILOT_ROWS, n_rows)
    first = elapsed(lambda: explain(X[:1]))  # warm-up, and a first estimate
    if first * pilot > SUBSET_BUDGET:  # slow: 2 pilot rows, no more warm-up
        pilot = min(2, n_rows)
    else:
        explain(X[:pilot])  # warm-up
    one = elapsed(lambda: explain(X[:1]))
    several = elapsed(lambda: explain(X[:pilot]))
    per_row = max(several - one, 0.0) / (pilot - 1) if pilot > 1 else several
    fixed = max(one - per_row, 0.0)
    n_timed = n_rows
    if method.scalable and fixed + per_row * n_rows > SUBSET_BUDGET and per_row > 0:
        n_timed = int((SUBSET_BUDGET - fixed) / per_row)
        n_timed = min(n_rows, max(pilot, n_timed))
    seconds, row.runs, (phi, base) = best_time(lambda: explain(X[:n_timed]), repeat)
    row.timed_rows = n_timed
    row.phi = np.asarray(phi, dtype=float).reshape(n_timed, -1)
    row.fixed = min(fixed, seconds)
    row.seconds = row.fixed + (seconds - row.fixed) * n_rows / n_timed
    if getattr(explain, "ran", None):
        row.method += f" (ran {explain.ran})"
    row.residual = efficiency_residual(phi, base, workload.raw[:n_timed])
    if workload.raw64 is not None:
        row.residual64 = efficiency_residual(phi, base, workload.raw64[:n_timed])
    if hasattr(explain, "raw_predict"):
        raw = np.asarray(explain.raw_predict(X), dtype=float).reshape(n_rows, -1)
        difference = np.abs(raw - workload.raw).max() / np.abs(workload.raw).max()
        row.note = f"max|Δ|/max|f| = {difference:.1e}"
    return row


def run_workload(workload, methods, reference_name, repeat, errors):
    """Both thread blocks for one workload: (rows, notes)."""
    notes, raw_notes = [], []
    all_threads = effective_n_threads(-1)
    blocks = [(1, "1"), (-1, str(all_threads))]
    rows = []
    single = {}
    methods = [m for m in methods if m.supports(workload.model)]
    for n_jobs, label in blocks:
        block = []
        for method in methods:
            if not method.threaded and n_jobs != 1:
                if method.name in single:  # its one-thread time again
                    again = Row(**{**single[method.name].__dict__, "threads": "1†"})
                    block.append(again)
                continue
            try:
                if n_jobs == 1:
                    with threadpool_limits(limits=1):
                        row = measure(method, workload, 1, repeat, label)
                else:
                    row = measure(method, workload, -1, repeat, label)
            except Unavailable as reason:
                if n_jobs == 1:
                    notes.append(f"{method.name}: {reason}; skipped")
                continue
            except Exception as error:
                note = f"{method.name} (n_jobs={n_jobs}) failed: {error!r}"
                notes.append(note)
                if method.name == "skshapley":
                    errors.append(f"{workload.key}: {note}")
                continue
            if n_jobs == 1:
                single[method.name] = row
            block.append(row)
            if row.scaled:
                notes.append(
                    f"{method.name} ({label} thread{'s' * (label != '1')}): timed "
                    f"on the first {row.timed_rows} of {row.n_rows} rows, scaled "
                    f"by {row.n_rows / row.timed_rows:.1f} beyond a fixed "
                    f"{row.fixed:.3f} s"
                )
            if row.note:
                raw_notes.append(f"{row.note} ({label} thread{'s' * (label != '1')})")
        reference = next((r for r in block if r.method == reference_name), None)
        if reference is None and reference_name != "skshapley":
            reference = single.get(reference_name)
        for row in block:
            if reference is not None:
                row.ratio = row.seconds / reference.seconds
                row.difference = max_difference(row.phi, reference.phi)
        rows.append(block)
    if raw_notes:
        notes.append("skshapley raw_predict vs the model's raw output: " + (
            raw_notes[0].rsplit(" (", 1)[0]
            if len({n.rsplit(" (", 1)[0] for n in raw_notes}) == 1
            else "; ".join(raw_notes)
        ))  # fmt: skip
    residual64 = {}
    for row in (row for block in rows for row in block):
        if row.residual64 is not None and row.threads != "1†":
            name = row.method
            residual64[name] = max(residual64.get(name, 0.0), row.residual64)
    if residual64:
        notes.append(
            "the model's raw output is a float32 sum, so the residuals above "
            "cannot go below ~1e-7; against it summed in float64 from the "
            "leaves (pred_leaf): "
            + ", ".join(f"{name} {value:.1e}" for name, value in residual64.items())
        )
    for method in methods:
        notes += [n for n in method.notes if n not in notes]
        method.notes.clear()
    return rows, notes


def max_difference(phi, reference):
    """``max |phi - reference|`` on the rows both hold, or None when their
    values differ in number (outputs)."""
    if phi.shape[1] != reference.shape[1]:
        return None
    n = min(len(phi), len(reference))
    return float(np.abs(phi[:n] - reference[:n]).max())


# -- interaction values (--interactions) -----------------------------------
#
# The same measurement, of interaction values: a method's explain(X) returns
# the (n_rows, n_outputs, n_features**2) interaction matrices, flattened, and
# the base, so that the efficiency residual sums every entry.

INTERACTION_WORKLOADS = ("a", "d")

# Rows explained by the interaction runs (fewer with --quick).
INTERACTION_ROWS = 200


def interaction_methods(libraries):
    """skshapley's, shap's, shapiq's, FastTreeSHAP's and XGBoost's interaction
    values."""
    from skshapley import TreeExplainer

    def prepare_skshapley(model, n_jobs):
        explainer = TreeExplainer(model, n_jobs=n_jobs).fit()
        n_outputs, d = len(explainer.output_names_), len(explainer.player_names_)

        def explain(X):
            values = explainer.explain_interactions(X).to_numpy()
            values = values.reshape(len(X), d, n_outputs, d).transpose(0, 2, 1, 3)
            base = np.asarray(explainer.expected_value_, dtype=float)
            return values.reshape(len(X), n_outputs, d * d), base

        explain.raw_predict = explainer.raw_predict
        return explain

    methods = [
        Method("skshapley interactions", prepare_skshapley, True, skshapley_version())
    ]
    shap = import_shap()
    if shap is not None:

        def prepare_shap(model, n_jobs):
            if booster_library(model) == "xgboost":  # shap calls pred_interactions
                model.get_booster().set_param({"nthread": 1})
            explainer = shap.TreeExplainer(model)

            def explain(X):
                values = explainer.shap_interaction_values(X)
                return values.reshape(len(X), 1, -1), explainer.expected_value

            return explain

        methods.append(
            Method("shap interactions", prepare_shap, False, module_version(shap))
        )
    method, _ = shapiq_interactions_method()
    if method is not None:
        methods.append(method)
    fasttreeshap = import_fasttreeshap()
    if fasttreeshap is not None:

        def prepare_fasttreeshap(model, n_jobs, module=fasttreeshap):
            explainer = module.TreeExplainer(model, algorithm="v1", n_jobs=n_jobs)

            def explain(X):
                values = explainer.shap_interaction_values(X)
                return values.reshape(len(X), 1, -1), explainer.expected_value

            return explain

        methods.append(Method(
            "fasttreeshap v1 interactions", prepare_fasttreeshap, True,
            module_version(fasttreeshap),
        ))  # fmt: skip
    xgboost = libraries.get("xgboost")
    if xgboost is not None:

        def prepare_xgboost(model, n_jobs):
            predict = xgboost_predict(xgboost, model, n_jobs, pred_interactions=True)

            def explain(X):
                values = predict(X)
                # The last row and column hold the bias (at their corner).
                base = values[:, -1, -1].reshape(len(X), 1)
                return values[:, :-1, :-1].reshape(len(X), 1, -1), base

            return explain

        methods.append(Method(
            "xgboost pred_interactions", prepare_xgboost, True,
            module_version(xgboost),
            supports=lambda model: isinstance(model, xgboost.XGBModel),
        ))  # fmt: skip
    return methods


def _peak_child(name, model, X, connection):
    """In a spawned process: the peak resident memory of one explanation.

    Linux only: the peak (VmHWM) is reset through /proc/self/clear_refs after
    the explainer is built, so that it measures the explanation only, above
    the resident size (VmRSS) at that moment.
    """
    libraries, _ = booster_libraries(INTERACTION_WORKLOADS)
    methods = interaction_methods(libraries) + interventional_methods()[0]
    method = next(m for m in methods if m.name == name)
    with threadpool_limits(limits=1):
        explain = method.prepare(model, 1)
        explain(X[:1])
        with open("/proc/self/clear_refs", "w") as refs:
            refs.write("5")
        before = _status_kib("VmRSS")
        explain(X)
        connection.send(_status_kib("VmHWM") - before)


def _status_kib(field):
    with open("/proc/self/status") as status:
        line = next(line for line in status if line.startswith(field + ":"))
    return int(line.split()[1])


def peak_memory_notes(workload, blocks) -> list[str]:
    """A note of each method's peak memory, on the same rows for all: the
    fewest any method was timed on."""
    rows = workload.X[: min(row.timed_rows for row in blocks[0])]
    peaks = []
    for row in blocks[0]:
        peak = peak_memory_mib(row.method, workload.model, rows)
        if peak is not None:
            peaks.append(f"{row.method} {peak:.1f} MiB")
    if not peaks:
        return []
    return [
        f"peak memory of one explanation of {len(rows)} rows, one thread, "
        "in a spawned process (Linux VmHWM above VmRSS before it): " + ", ".join(peaks)
    ]


def peak_memory_mib(name, model, X):
    """The peak memory of ``name``'s explanation of ``X``, in MiB, or None."""
    if not os.path.exists("/proc/self/clear_refs"):
        return None
    import multiprocessing

    context = multiprocessing.get_context("spawn")
    receive, send = context.Pipe(duplex=False)
    process = context.Process(target=_peak_child, args=(name, model, X, send))
    process.start()
    peak = receive.recv() if receive.poll(600) else None
    process.join()
    return None if peak is None else peak / 1024


def print_side_run_header(args, methods, libraries, notes) -> None:
    """The header of the --interactions, --interventional and
    --background-sweep runs: versions, machine, how ratios read, and notes
    (skipped methods)."""
    print(versions_line(methods, libraries))
    print(f"{machine()} | best of {args.repeat} runs{' | quick' if args.quick else ''}")
    print("ratio = time / skshapley's time with the same threads (> 1: slower)")
    for note in notes:
        print(f"note: {note}")
    print()


def run_interactions(args):
    """The interaction runs: both workloads, both thread blocks, peak memory."""
    libraries, skipped = booster_libraries(INTERACTION_WORKLOADS)
    methods = interaction_methods(libraries)
    print_side_run_header(args, methods, libraries, skipped)
    errors = []
    n_rows = 20 if args.quick else INTERACTION_ROWS
    for workload in make_workloads(
        args.quick, INTERACTION_WORKLOADS, libraries, n_rows
    ):
        if isinstance(workload, str):
            print(f"{workload}\n")
            continue
        blocks, notes = run_workload(
            workload, methods, "skshapley interactions", args.repeat, errors
        )
        notes += peak_memory_notes(workload, blocks)
        print_workload(workload, blocks, notes)
    print(
        "max|Δφ| = largest difference from skshapley's values (every entry of "
        "the matrices), same threads; residual = max |Σ_jk Φ_jk + base - f(x)| "
        "/ max |f(x)|"
    )
    if errors:
        print("skshapley failed:", *errors, sep="\n  ", file=sys.stderr)
        sys.exit(1)


# -- interventional values (--interventional) -------------------------------
#
# The same measurement, of interventional values against a background: the
# workload's model is a WithBackground, and `setup` includes skshapley's fit
# (its tables of the background).

INTERVENTIONAL_WORKLOADS = ("a", "d")

# Background rows, and rows explained, by the interventional runs (fewer with
# --quick): the first rows of the training data, then the next ones.
INTERVENTIONAL_ROWS = 1000


def run_interventional(args):
    """The interventional runs: both workloads, both thread blocks, peak memory."""
    libraries, skipped = booster_libraries(INTERVENTIONAL_WORKLOADS)
    methods, reasons = interventional_methods()
    print_side_run_header(args, methods, libraries, skipped + reasons)
    errors = []
    n_rows = 100 if args.quick else INTERVENTIONAL_ROWS
    for workload in make_workloads(
        args.quick, INTERVENTIONAL_WORKLOADS, libraries, 2 * n_rows
    ):
        if isinstance(workload, str):
            print(f"{workload}\n")
            continue
        workload = background_workload(workload, n_rows, n_rows)
        blocks, notes = run_workload(
            workload, methods, "skshapley interventional", args.repeat, errors
        )
        notes += peak_memory_notes(workload, blocks)
        print_workload(workload, blocks, notes)
    print_interventional_footer(errors)


def background_workload(workload, n_background, start, n_rows=None):
    """``with_background(workload, n_background, start)``, its title saying
    the rows explained (the first ``n_rows``, default all) and the
    background's size."""
    sized = with_background(workload, n_background, start)
    if n_rows is not None:
        sized = dataclasses.replace(
            sized, X=sized.X[:n_rows], raw=sized.raw[:n_rows],
            raw64=None if sized.raw64 is None else sized.raw64[:n_rows],
        )  # fmt: skip
    title = workload.title.replace(
        f"explain {len(workload.X)} rows", f"explain {len(sized.X)} rows"
    )
    return dataclasses.replace(sized, title=f"{title}, background {n_background} rows")


def print_interventional_footer(errors) -> None:
    """What the columns mean, then exit 1 if skshapley failed."""
    print(
        "setup = building the explainer (skshapley: fit, its background's "
        "tables); * timed on the first rows and scaled linearly; max|Δφ| = "
        "largest difference from skshapley's values, same threads"
    )
    if errors:
        print("skshapley failed:", *errors, sep="\n  ", file=sys.stderr)
        sys.exit(1)


# -- background sizes (--background-sweep) ----------------------------------
#
# Interventional values of one XGBoost model (100 trees of depth 6, 30
# features) against backgrounds of growing size, the first rows of the
# sweep's data, explaining the same rows (those after the largest background)
# each time; then one row and many rows against the smallest and the largest
# background. Beyond ALL_ANCHORS_UP_TO background rows, and for the row
# counts, only the anchors whose time is linear in rows plus background
# rows (woodelf's) run: the others' grows as their product (hours).

SWEEP_BACKGROUNDS = (1_000, 10_000, 100_000, 1_000_000)
QUICK_SWEEP_BACKGROUNDS = (100, 1_000)
SWEEP_ROWS = 10_000
SWEEP_ROW_COUNTS = (1, 1_000_000)
QUICK_SWEEP_ROW_COUNTS = (1, 1_000)
ALL_ANCHORS_UP_TO = 10_000
LINEAR_ANCHORS = ("woodelf interventional",)


def run_background_sweep(args):
    """A table per background size and row count (both thread blocks), then
    every anchor's time over skshapley's per size."""
    libraries, skipped = booster_libraries([SWEEP_WORKLOAD])
    methods, reasons = interventional_methods()
    print_side_run_header(args, methods, libraries, skipped + reasons)
    sizes = QUICK_SWEEP_BACKGROUNDS if args.quick else SWEEP_BACKGROUNDS
    counts = QUICK_SWEEP_ROW_COUNTS if args.quick else SWEEP_ROW_COUNTS
    n_rows = 100 if args.quick else SWEEP_ROWS
    n_data = max(sizes) + max(n_rows, *counts)
    workload = next(make_workloads(args.quick, [SWEEP_WORKLOAD], libraries, n_data))
    if isinstance(workload, str):  # skipped: no xgboost
        print(workload)
        return
    linear = [
        m for m in methods if m.name.startswith("skshapley") or m.name in LINEAR_ANCHORS
    ]
    runs = [(size, n_rows) for size in sizes]
    runs += [(size, count) for size in (min(sizes), max(sizes)) for count in counts]
    errors, results = [], []
    for size, count in runs:
        sized = background_workload(workload, size, max(sizes), count)
        some = methods if size <= ALL_ANCHORS_UP_TO and count == n_rows else linear
        blocks, notes = run_workload(
            sized, some, "skshapley interventional", args.repeat, errors
        )
        print_workload(sized, blocks, notes)
        results.append((size, count, blocks))
    print_sweep_ratios(results)
    print_interventional_footer(errors)


def print_sweep_ratios(results) -> None:
    """Per background size, rows and threads: skshapley's time (setup and all
    rows: fit and explain both counted) and each anchor's ratio (its setup
    and time over skshapley's)."""
    anchors = list(dict.fromkeys(
        row.method
        for _, _, blocks in results
        for block in blocks
        for row in block
        if not row.method.startswith("skshapley")
    ))  # fmt: skip
    print(
        "(setup + time) / skshapley's (fit + explain), per background size and "
        "rows explained (> 1: skshapley is faster)"
    )
    widths = [max(len(name), 8) for name in anchors]
    header = (
        f"    {'background':>10} {'rows':>9} {'threads':>7} {'skshapley ms':>12} "
        + " ".join(
            f"{name:>{width}}" for name, width in zip(anchors, widths, strict=True)
        )
    )
    print(header)
    print("    " + "-" * (len(header) - 4))
    for size, count, blocks in results:
        for block in blocks:
            sk = next((r for r in block if r.method.startswith("skshapley")), None)
            if sk is None:  # failed: reported with the table
                continue
            total = sk.setup + sk.seconds
            ratios = {row.method: (row.setup + row.seconds) / total for row in block}
            cells = " ".join(
                f"{fmt(ratios.get(name), '.2f'):>{width}}"
                for name, width in zip(anchors, widths, strict=True)
            )
            ms = total * 1e3
            print(f"    {size:>10,} {count:>9,} {sk.threads:>7} {ms:>12.3f} {cells}")
    print()


# -- output ------------------------------------------------------------------


def fmt(value, spec):
    return "—" if value is None else format(value, spec)


def print_workload(workload, blocks, notes):
    print(workload.title)
    print(
        f"    fit {workload.fit_seconds:.1f} s (not part of any time below)"
        + (f" | {workload.structure}" if workload.structure else "")
    )
    header = (
        f"    {'method':<27} {'threads':>7} {'setup s':>8} {'seconds':>9} "
        f"{'ms/row':>9} {'runs':>4} {'ratio':>7} {'max|Δφ|':>8} {'residual':>9}"
    )
    print(header)
    print("    " + "-" * (len(header) - 4))
    for i, block in enumerate(blocks):
        if i:
            print()
        for row in block:
            seconds = f"{row.seconds:.3f}" + ("*" if row.scaled else " ")
            ms = row.seconds / row.n_rows * 1e3
            print(
                f"    {row.method:<27} {row.threads:>7} {row.setup:>8.3f} "
                f"{seconds:>9} {ms:>9.3f} {row.runs:>4} {fmt(row.ratio, '.2f'):>7} "
                f"{fmt(row.difference, '.1e'):>8} {fmt(row.residual, '.1e'):>9}"
            )
    for note in notes:
        print(f"    note: {note}")
    print()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--quick", action="store_true", help="small sizes, for a smoke run"
    )
    parser.add_argument(
        "--repeat", type=int, default=3, help="timed runs per measurement (best of)"
    )
    parser.add_argument(
        "--workload", action="append", choices=WORKLOADS,
        help="run only these workloads (repeatable; default: all)",
    )  # fmt: skip
    add_quadrashap_path(parser)
    parser.add_argument(
        "--interactions", action="store_true",
        help="time interaction values instead (workloads a and d, 200 rows)",
    )  # fmt: skip
    parser.add_argument(
        "--interventional", action="store_true",
        help="time interventional values instead (workloads a and d, background "
        "1000 rows, 1000 rows)",
    )  # fmt: skip
    parser.add_argument(
        "--background-sweep", action="store_true",
        help="time interventional values against backgrounds of 1000, 10000 and "
        "50000 rows instead (XGBoost, 100 trees of depth 6, 30 features)",
    )  # fmt: skip
    args = parser.parse_args()
    if args.interactions:
        return run_interactions(args)
    if args.interventional:
        return run_interventional(args)
    if args.background_sweep:
        return run_background_sweep(args)
    keys = [k for k in WORKLOADS if k in (args.workload or WORKLOADS)]

    libraries, reasons = booster_libraries(keys)
    sk, methods, versions, skipped = all_methods(libraries, args.quadrashap_path)
    skipped = reasons + skipped
    reference_name = "skshapley" if sk is not None else "shap path-dependent"
    print(versions)
    quick = " | quick" if args.quick else ""
    print(f"{machine()} | best of {args.repeat} runs{quick}")
    if sk is None:
        print(
            "ratio = time / shap's one-thread time (skshapley's TreeExplainer "
            "is unavailable)"
        )
    else:
        print("ratio = time / skshapley's time with the same threads (> 1: slower)")
    for reason in skipped:
        print(f"note: {reason}")
    print()

    errors = []
    for workload in make_workloads(args.quick, keys, libraries):
        if isinstance(workload, str):  # skipped
            print(f"{workload}\n")
            continue
        if sk is not None and workload.key in BOOSTER_WORKLOADS:
            reason = skshapley_rejects(workload.model)
            if reason is not None:
                print(
                    f"{workload.title}\n    skipped: skshapley rejects it: {reason}\n"
                )
                continue
        blocks, notes = run_workload(
            workload, methods, reference_name, args.repeat, errors
        )
        print_workload(workload, blocks, notes)
    print(
        "* timed on the first rows and scaled linearly (see the notes); "
        "1† single-threaded method, its one-thread time repeated; max|Δφ| = "
        "largest difference from skshapley's values, same threads, on the rows "
        "both were timed on; residual = max |Σφ + base - f(x)| / max |f(x)|"
    )
    print(f"load at the end {os.getloadavg()[0]:.2f}")
    if errors:
        print("skshapley failed:", *errors, sep="\n  ", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
