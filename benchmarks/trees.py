"""Path-dependent TreeSHAP: skshapley against shap, FastTreeSHAP and QuadraSHAP.

What is measured
----------------
Three scikit-learn tree ensembles, fitted on seeded synthetic data (sizes
shrink with ``--quick``):

* (a) ``RandomForestRegressor(n_estimators=100, max_depth=12)`` on 10000 × 20
  ``make_friedman1`` data (5 informative features, 15 noise), explaining 500
  rows;
* (b) ``GradientBoostingClassifier(n_estimators=100, max_depth=5)`` on
  5000 × 20 binary ``make_classification`` data, explaining 1000 rows of the
  log-odds margin (``decision_function``);
* (c) ``HistGradientBoostingRegressor(max_iter=300, max_leaf_nodes=63)`` on
  10000 × 50 ``make_regression`` data, explaining 1000 rows.

The features are rounded to float32 (and kept as float64), so that every
method routes every row the way the fitted model does: scikit-learn's trees
compare float32 features with their thresholds.

Each workload is explained, in one process and side by side, by

* ``skshapley.TreeExplainer(model, n_jobs=...).fit().explain(X)``;
* ``shap.TreeExplainer(model, feature_perturbation="tree_path_dependent")``,
  ``shap_values(X, check_additivity=False)`` (its C++ TreeSHAP; single-threaded);
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
  ``pip install --no-deps --target DIR`` of that repository).

shap, FastTreeSHAP and QuadraSHAP are optional: they are imported lazily, and
a method that is missing or does not support a model is skipped with a note.

Threads: first every method with one thread (``n_jobs=1``, inside
``threadpoolctl.threadpool_limits(1)`` so that no BLAS or OpenMP pool grows),
then all CPUs (``n_jobs=-1``) for skshapley and FastTreeSHAP. shap's and
QuadraSHAP's kernels are single-threaded: in the all-CPU block they show their
one-thread times again (marked ``1†``), not a new run.

Columns: ``setup`` is the explainer's construction (and skshapley's ``fit``),
timed once; ``seconds`` is the best of ``--repeat`` explanation runs over all
the rows (fewer runs once they took ``TIME_BUDGET`` seconds in all); ``ms/row``
is ``seconds`` per explained row; ``ratio`` is the method's ``seconds`` over
skshapley's with the same threads (> 1: skshapley is faster; against shap's
time when skshapley is unavailable, which the header says); ``residual`` is the
largest efficiency residual over the explained rows,

    max_rows |sum_i phi_i + base - f(x)| / max_rows |f(x)|,

with ``base`` the method's expected value and ``f(x)`` the model's raw output
(``predict`` for the regressors, ``decision_function`` for the classifier).
Every method first explains a few rows to warm up, then 1 and ``PILOT_ROWS``
rows, which estimate its time per row and its fixed time per call (FastTreeSHAP
v2 precomputes per call). A method whose full run would take more than
``SUBSET_BUDGET`` seconds is timed on the first rows only and its time scaled
linearly to all rows, ``fixed + (measured - fixed) * n_rows / n_timed``
(marked ``*``, with the rows and the fixed part in the notes; its residual is
over those rows).

Run it from the repository root, in an environment where skshapley is
installed::

    python benchmarks/trees.py            # full run, about 5 minutes on 2 cores
    python benchmarks/trees.py --quick    # smoke run, a few seconds
    python benchmarks/trees.py --repeat 5 # best of 5 runs per measurement
"""

import argparse
import datetime
import importlib
import os
import platform
import sys
import time
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import sklearn
from sklearn.datasets import make_classification, make_friedman1, make_regression
from sklearn.ensemble import (
    GradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestRegressor,
)
from threadpoolctl import threadpool_limits

import skshapley
from skshapley._threads import effective_n_threads

SEED = 0

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


# -- workloads ---------------------------------------------------------------


@dataclass
class Workload:
    key: str
    title: str
    model: object
    X: np.ndarray  # the rows to explain
    raw: np.ndarray  # the model's raw output on them, (n_rows, n_outputs)
    fit_seconds: float
    structure: str


def float32_rounded(X):
    return X.astype(np.float32).astype(np.float64)


def tree_structure(model) -> str:
    """Trees, leaves and largest depth of a fitted scikit-learn ensemble."""
    try:
        if hasattr(model, "_predictors"):  # HistGradientBoosting*
            predictors = [p for it in model._predictors for p in it]
            leaves = sum(p.get_n_leaf_nodes() for p in predictors)
            depth = max(p.get_max_depth() for p in predictors)
        else:
            trees = [e.tree_ for e in np.ravel(model.estimators_)]
            predictors = trees
            leaves = sum(t.n_leaves for t in trees)
            depth = max(t.max_depth for t in trees)
    except Exception:  # private attributes; the benchmark does not need them
        return ""
    return f"{len(predictors)} trees, {leaves} leaves, max depth {depth}"


def make_workloads(quick: bool, keys):
    """Fit the models (not timed against the methods) and pick the rows."""
    specs = {
        "a": (
            (1000, 10, 50, {"n_estimators": 10, "max_depth": 6})
            if quick
            else (10_000, 20, 500, {"n_estimators": 100, "max_depth": 12})
        ),
        "b": (
            (500, 10, 100, {"n_estimators": 10, "max_depth": 3})
            if quick
            else (5_000, 20, 1000, {"n_estimators": 100, "max_depth": 5})
        ),
        "c": (
            (1000, 10, 100, {"max_iter": 20, "max_leaf_nodes": 15})
            if quick
            else (10_000, 50, 1000, {"max_iter": 300, "max_leaf_nodes": 63})
        ),
    }
    for key in keys:
        n_samples, n_features, n_explain, params = specs[key]
        if key == "a":
            X, y = make_friedman1(
                n_samples, n_features=n_features, noise=1.0, random_state=SEED
            )
            model = RandomForestRegressor(**params, random_state=SEED, n_jobs=-1)
            data = "make_friedman1"
        elif key == "b":
            X, y = make_classification(
                n_samples, n_features=n_features, n_informative=n_features // 2,
                random_state=SEED,
            )  # fmt: skip
            model = GradientBoostingClassifier(**params, random_state=SEED)
            data = "make_classification, binary"
        else:
            X, y = make_regression(
                n_samples, n_features=n_features, n_informative=n_features // 2,
                noise=10.0, random_state=SEED,
            )  # fmt: skip
            model = HistGradientBoostingRegressor(**params, random_state=SEED)
            data = "make_regression"
        X = float32_rounded(X)
        start = time.perf_counter()
        model.fit(X, y)
        fit_seconds = time.perf_counter() - start
        X_explain = X[:n_explain]
        if hasattr(model, "decision_function"):
            raw = model.decision_function(X_explain)
            output = "log-odds margin"
        else:
            raw = model.predict(X_explain)
            output = "prediction"
        args = ", ".join(f"{k}={v}" for k, v in params.items())
        title = (
            f"({key}) {type(model).__name__}({args}) | {n_samples}x{n_features} "
            f"{data} | explain {n_explain} rows ({output})"
        )
        yield Workload(
            key, title, model, X_explain, raw.reshape(n_explain, -1), fit_seconds,
            tree_structure(model),
        )  # fmt: skip


# -- methods -----------------------------------------------------------------
#
# A method's `prepare(model, n_jobs)` builds its explainer and returns a
# function `explain(X) -> (phi, base)`: `phi` of shape (n_rows, n_features) or
# (n_rows, n_outputs, n_features), `base` a scalar or (n_outputs,).


class Unavailable(Exception):
    """The method is not installed or does not support the model."""


@dataclass
class Method:
    name: str
    prepare: Callable
    threaded: bool  # whether it has a thread count (n_jobs)
    version: str = ""
    notes: list = field(default_factory=list)


def skshapley_method():
    """skshapley's TreeExplainer, or None while it is not importable."""
    try:
        from skshapley import TreeExplainer
    except ImportError as error:
        return None, f"skshapley.TreeExplainer not importable ({error})"

    def prepare(model, n_jobs):
        explainer = TreeExplainer(model, n_jobs=n_jobs).fit()

        def explain(X):
            phi = explainer.explain(X)
            columns = phi.columns
            if columns.nlevels > 1:  # (output, feature)
                outputs = columns.get_level_values(0).unique()
                values = np.stack([phi[o].to_numpy() for o in outputs], axis=1)
            else:
                values = phi.to_numpy()
            return values, np.asarray(explainer.expected_value_, dtype=float)

        explain.raw_predict = explainer.raw_predict
        return explain

    return Method("skshapley", prepare, threaded=True), None


def shap_method():
    try:
        shap = importlib.import_module("shap")
    except ImportError as error:
        return None, f"shap not importable ({error}); skipped"

    def prepare(model, n_jobs):
        explainer = shap.TreeExplainer(
            model, feature_perturbation="tree_path_dependent"
        )

        def explain(X):
            phi = explainer.shap_values(X, check_additivity=False)
            if isinstance(phi, list):  # older shap: one array per output
                phi = np.stack(phi, axis=1)
            elif np.ndim(phi) == 3:  # (n_rows, n_features, n_outputs)
                phi = np.moveaxis(phi, 2, 1)
            return phi, explainer.expected_value

        return explain

    return Method("shap path-dependent", prepare, False, shap.__version__), None


def fasttreeshap_methods():
    module = None
    for name in ("fasttreeshap_fixed", "fasttreeshap"):
        try:
            with warnings.catch_warnings():  # "IPython could not be loaded!"
                warnings.simplefilter("ignore")
                module = importlib.import_module(name)
            break
        except ImportError:
            continue
    if module is None:
        return [], "fasttreeshap(-fixed) not importable; skipped"
    version = f"{module.__name__} {getattr(module, '__version__', '?')}"

    def make(algorithm):
        method = Method(f"fasttreeshap {algorithm}", None, True, version)

        def prepare(model, n_jobs):
            explainer = module.TreeExplainer(
                model, feature_perturbation="tree_path_dependent",
                algorithm=algorithm, n_jobs=n_jobs,
            )  # fmt: skip

            def explain(X):
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    phi = explainer.shap_values(X, check_additivity=False)
                for warning in caught:
                    if "Switched to algorithm v1" in str(warning.message):
                        explain.ran = "v1"
                    note = f"{method.name}: {warning.message}"
                    if note not in method.notes:
                        method.notes.append(note)
                if isinstance(phi, list):
                    phi = np.stack(phi, axis=1)
                elif np.ndim(phi) == 3:
                    phi = np.moveaxis(phi, 2, 1)
                return phi, explainer.expected_value

            return explain

        method.prepare = prepare
        return method

    return [make("v1"), make("v2")], None


def quadrashap_method(path):
    if path and path not in sys.path:
        sys.path.append(path)
    try:
        quadrashap = importlib.import_module("quadrashap")
        from quadrashap._cpp_ext import HAS_CPP_EXT
    except ImportError as error:
        return None, (
            f"quadrashap not importable ({error}); skipped (see --quadrashap-path)"
        )
    if not HAS_CPP_EXT:
        return None, "quadrashap: its C++ kernel (_core) is not built; skipped"
    supported = ("RandomForest", "ExtraTrees", "DecisionTree")

    def prepare(model, n_jobs):
        if not type(model).__name__.startswith(supported):
            raise Unavailable(
                f"supports {', '.join(supported)} models only, "
                f"not {type(model).__name__}"
            )
        explainer = quadrashap.TreeExplainer(
            model, feature_perturbation="tree_path_dependent",
            tree_solver="quadrature_tree", use_cpp=True,
        )  # fmt: skip

        def explain(X):
            phi = explainer.shap_values(X, check_additivity=False)
            if np.ndim(phi) == 3:
                phi = np.moveaxis(phi, 2, 1)
            return phi, explainer.expected_value

        return explain

    location = os.path.dirname(os.path.dirname(quadrashap.__file__))
    try:
        from importlib.metadata import PathDistribution
        from pathlib import Path

        dists = list(Path(location).glob("quadrashap-*.dist-info"))
        version = PathDistribution(dists[0]).version if dists else "?"
    except Exception:
        version = "?"
    name = "quadrashap C++ quadrature"
    return Method(name, prepare, False, f"{version} ({location})"), None


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
    fixed: float = 0.0  # the part of a scaled time that was not scaled
    note: str = ""

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


def efficiency_residual(phi, base, raw):
    """``max |sum(phi) + base - raw| / max |raw|`` over the rows."""
    phi = np.asarray(phi, dtype=float)
    n_rows, n_outputs = raw.shape
    phi = phi.reshape(n_rows, -1, phi.shape[-1])
    base = np.asarray(base, dtype=float).reshape(-1)
    if phi.shape[1] != n_outputs or base.size not in (1, n_outputs):
        raise ValueError(
            f"{phi.shape[1]} outputs explained, base of size {base.size}, "
            f"model has {n_outputs}"
        )
    residual = np.abs(phi.sum(axis=-1) + base - raw).max()
    return float(residual / np.abs(raw).max())


def measure(method, workload, n_jobs, repeat, threads_label):
    """Build the method's explainer and time it on the workload's rows."""
    row = Row(method.name, threads_label, n_rows=len(workload.X))
    start = time.perf_counter()
    explain = method.prepare(workload.model, n_jobs)
    row.setup = time.perf_counter() - start

    X = workload.X
    n_rows = len(X)
    pilot = min(PILOT_ROWS, n_rows)
    explain(X[:pilot])  # warm-up
    one = elapsed(lambda: explain(X[:1]))
    several = elapsed(lambda: explain(X[:pilot]))
    per_row = max(several - one, 0.0) / (pilot - 1) if pilot > 1 else several
    fixed = max(one - per_row, 0.0)
    n_timed = n_rows
    if fixed + per_row * n_rows > SUBSET_BUDGET and per_row > 0:
        n_timed = int((SUBSET_BUDGET - fixed) / per_row)
        n_timed = min(n_rows, max(pilot, n_timed))
    seconds, row.runs, (phi, base) = best_time(lambda: explain(X[:n_timed]), repeat)
    row.timed_rows = n_timed
    row.fixed = min(fixed, seconds)
    row.seconds = row.fixed + (seconds - row.fixed) * n_rows / n_timed
    if getattr(explain, "ran", None):
        row.method += f" (ran {explain.ran})"
    row.residual = efficiency_residual(phi, base, workload.raw[:n_timed])
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
        rows.append(block)
    if raw_notes:
        notes.append("skshapley raw_predict vs the model's raw output: " + (
            raw_notes[0].rsplit(" (", 1)[0]
            if len({n.rsplit(" (", 1)[0] for n in raw_notes}) == 1
            else "; ".join(raw_notes)
        ))  # fmt: skip
    for method in methods:
        notes += [n for n in method.notes if n not in notes]
        method.notes.clear()
    return rows, notes


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
        f"{'ms/row':>9} {'runs':>4} {'ratio':>7} {'residual':>9}"
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
                f"{fmt(row.residual, '.1e'):>9}"
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
        "--workload", action="append", choices=("a", "b", "c"),
        help="run only these workloads (repeatable; default: all)",
    )  # fmt: skip
    parser.add_argument(
        "--quadrashap-path", default=os.environ.get("QUADRASHAP_PATH"),
        help="directory holding the quadrashap package, appended to sys.path "
        "(default: $QUADRASHAP_PATH)",
    )  # fmt: skip
    args = parser.parse_args()

    methods, skipped = [], []
    sk, reason = skshapley_method()
    if sk is not None:
        methods.append(sk)
    else:
        skipped.append(reason)
    shap, reason = shap_method()
    if shap is not None:
        methods.append(shap)
    else:
        skipped.append(reason)
    fasttree, reason = fasttreeshap_methods()
    methods += fasttree
    if reason:
        skipped.append(reason)
    quadra, reason = quadrashap_method(args.quadrashap_path)
    if quadra is not None:
        methods.append(quadra)
    else:
        skipped.append(reason)
    reference_name = "skshapley" if sk is not None else "shap path-dependent"

    versions = [f"skshapley {skshapley.__version__}"]
    versions += [
        f"{m.name.split()[0]} {m.version}" for m in (shap, quadra) if m is not None
    ]
    if fasttree:
        versions.append(fasttree[0].version)
    print(" | ".join(versions))
    print(
        f"numpy {np.__version__} | scikit-learn {sklearn.__version__} | "
        f"Python {platform.python_version()} | {platform.machine()} | "
        f"{os.cpu_count()} CPUs (n_jobs=-1: {effective_n_threads(-1)} threads) | "
        f"load {os.getloadavg()[0]:.2f} | "
        f"{datetime.datetime.now().isoformat(timespec='seconds')} | "
        f"best of {args.repeat} runs{' | quick' if args.quick else ''}"
    )
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
    for workload in make_workloads(args.quick, args.workload or ("a", "b", "c")):
        blocks, notes = run_workload(
            workload, methods, reference_name, args.repeat, errors
        )
        print_workload(workload, blocks, notes)
    print(
        "* timed on the first rows and scaled linearly (see the notes); "
        "1† single-threaded method, its one-thread time repeated; residual = "
        "max |Σφ + base - f(x)| / max |f(x)|"
    )
    print(f"load at the end {os.getloadavg()[0]:.2f}")
    if errors:
        print("skshapley failed:", *errors, sep="\n  ", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
