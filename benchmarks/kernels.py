"""Exact Shapley values of kernel models: skshapley against shapiq's PKeX-Shapley
and a NumPy twin of the quadrature formula.

What is measured
----------------
Two scikit-learn kernel models with the RBF kernel and its default ``gamma``,
on seeded synthetic data (standard-normal features, a nonlinear target of the
first features plus noise, standardized), for every ``d`` in {10, 100, 1000,
5000} (sizes shrink with ``--quick``):

* ``KernelRidge(kernel="rbf")`` (``gamma=None``: ``1 / d``) fitted on 500
  points, its 500 reference points;
* ``SVR(kernel="rbf")`` (``gamma="scale"``, ``C=1``, ``epsilon=0.1``), its
  training size tuned so that it has about 500 support vectors (the header of
  each block prints the count).

``--quick`` uses d in {10, 100} and 100 reference points, and gives shapiq
1 s instead of 10 (see below).

Five fresh rows from the same distribution are explained, in one process and
on the same rows, by

* ``skshapley.ProductKernelExplainer(model, n_quadrature_points="auto",
  n_jobs=...)``: ``fit()`` (parsing the model) runs once, outside the timings
  (its time is printed); ``explain(X)`` is timed, which includes building the
  kernel factors. With more than one thread it runs again with ``n_jobs=1``,
  the like-for-like comparison with the single-threaded methods below;
* the *NumPy twin*: the same quadrature formula written the plain vectorized
  way in this script, single-threaded, row by row. Per row, the factors minus
  one ``b = a - 1 = expm1(-gamma (x - R)**2)`` of shape (m, d) in one
  vectorized pass, then

      phi_j = sum_i alpha_i b_ij sum_q w_q prod_{k != j} (1 + t_q b_ik),

  with each product over ``k != j`` the full product divided by its own
  factor. The full products are sums of ``log1p(t_q b_ik)``, exponentiated
  relative to their running maximum (so nothing underflows at d = 5000), over
  chunks of reference points. It uses as many Gauss–Legendre points as
  skshapley's ``"auto"`` chose (``attrs["n_quadrature_points"]``), the nodes
  from ``numpy.polynomial.legendre.leggauss`` mapped to [0, 1];
* shapiq's ``ProductKernelExplainer`` (``from shapiq.explainer.product_kernel
  import ProductKernelExplainer``; ``shapiq.ProductKernelExplainer`` is ``None``),
  the PKeX-Shapley algorithm (elementary symmetric polynomials per feature,
  O(m d^3) per row), single-threaded, row by row. It takes the ``SVR`` itself;
  it rejects ``KernelRidge``, so it gets the equivalent
  ``ProductKernelModel`` (training points, ``dual_coef_``, ``gamma = 1 / d``,
  intercept 0) with a ``predict`` method, which its base class requires. It
  runs while its estimated time per row (its last measured time per row times
  ``(d / d_last)**3``) is under ``--pkex-budget`` seconds and ``d <=
  --pkex-max-d``; otherwise its row says ``skipped``. It explains the rows one
  by one and stops once they took ``SUBSET_BUDGET`` seconds; its time per row
  is then over the rows it explained (marked ``*``, the notes say how many);
* the exact rule: skshapley with ``n_quadrature_points = ceil(d / 2)``, which
  integrates the polynomial exactly and is the reference of the errors.

Columns: ``points`` is the Gauss–Legendre points per game; ``seconds`` the
best of ``--repeat`` runs over all the rows (fewer runs once they took
``TIME_BUDGET`` seconds in all); ``per row`` that time over the rows;
``ratio`` the method's time over skshapley ``"auto"``'s with all threads
(> 1: skshapley is faster); ``max err`` the largest difference from the exact
rule relative to its largest value, ``max |phi - phi_exact| / max
|phi_exact|`` over the rows and features; ``residual`` the largest efficiency
residual ``max_rows |sum_j phi_j + base - f(x)| / max_rows |f(x)|``, with
``base`` the method's expected value and ``f(x) = sum_i alpha_i exp(-gamma
||x - r_i||**2) + c`` summed directly from the differences in long double,
not scikit-learn's ``predict`` (its ``||x||**2 + ||r||**2 - 2 x.r`` loses
~1e-14 relative at d = 5000, more than the methods' own residuals; the block
header gives ``predict``'s and ``raw_predict``'s differences from it).

A note per block compares every method, on the first row, with the twin run
in long double (x86 extended precision) with twice the points ``"auto"``
chose (or the exact rule, if fewer): the errors against the exact rule
cannot show a rounding error that skshapley's two rules share; this can.

Timings with more than one thread are only meaningful on an otherwise idle
machine (a preempted OpenMP thread stalls a whole parallel region): the header
prints the load average, and the last line the load at the end.

``--latency`` measures small calls instead: for each model and ``d``, one
row and 10 rows explained by ``explain`` with ``n_jobs=1`` and with all
threads (``--n-jobs``), the two alternating call by call so that both see
the same load; it prints the minimum and median of ``--repeat`` calls (at
least 5) and the speedup, the 1-thread time over the many-thread time (min
over min, median over median).

Run it from the repository root, in an environment where skshapley is
installed::

    python benchmarks/kernels.py            # full run, about 1.5 minutes on 2 cores
    python benchmarks/kernels.py --quick    # smoke run, a few seconds
    python benchmarks/kernels.py --repeat 5 # best of 5 runs per measurement
    python benchmarks/kernels.py --d 1000 --d 5000 --n-jobs 1
    python benchmarks/kernels.py --latency --d 100 --d 1000 --d 5000
"""

import argparse
import datetime
import functools
import math
import os
import platform
import sys
import time
from dataclasses import dataclass, field

import numpy as np
import sklearn
from sklearn.kernel_ridge import KernelRidge
from sklearn.metrics.pairwise import rbf_kernel
from sklearn.svm import SVR
from threadpoolctl import threadpool_limits

import skshapley
from skshapley._runtime.threads import effective_n_threads

SEED = 0

DIMENSIONS = (10, 100, 1000, 5000)
QUICK_DIMENSIONS = (10, 100)

# Reference points (KernelRidge training points, SVR support vectors).
N_REFERENCES = 500
QUICK_REFERENCES = 100

N_ROWS = 5

# A measurement stops repeating once its runs took this many seconds in all.
TIME_BUDGET = 10.0

# shapiq explains the rows one by one and stops once they took this long.
SUBSET_BUDGET = 10.0
QUICK_SUBSET_BUDGET = 1.0

# The twin handles as many reference points at a time as keep its
# (references, nodes, features) arrays below this many float64 elements.
CHUNK_ELEMENTS = 2**22

# Targets of the issue.
TARGET_SECONDS = 1.0  # per row at the largest d
TARGET_ERROR = 1e-12  # relative to the exact rule
TARGET_SPEEDUP = 10.0  # over PKeX-Shapley wherever it finishes


# -- the models --------------------------------------------------------------


@dataclass
class Workload:
    name: str
    d: int
    model: object
    reference: np.ndarray  # (m, d)
    alpha: np.ndarray  # (m,)
    gamma: float
    intercept: float
    X: np.ndarray  # the explained rows
    raw: np.ndarray  # the model's output f(X), summed directly (see direct_output)
    predict: np.ndarray  # model.predict(X)
    fit_seconds: float
    description: str


def make_data(n, d, rng):
    """Standard-normal features and a standardized nonlinear target."""
    X = rng.standard_normal((n, d))
    y = np.sin(X[:, 0]) + X[:, 1] * X[:, 2] + 0.5 * X[:, 3] + 0.3 * X[:, 4] ** 2
    y += 0.3 * rng.standard_normal(n)
    return X, (y - y.mean()) / y.std()


def direct_output(X, reference, alpha, gamma, intercept):
    """``f(x) = sum_i alpha_i exp(-gamma ||x - r_i||**2) + c`` from the differences.

    In long double where the platform has it. scikit-learn's ``predict`` gets
    ``||x - r||**2`` as ``||x||**2 + ||r||**2 - 2 x.r``, which loses ~1e-14
    relative at d = 5000: more than the values' own errors.
    """
    dtype = np.longdouble
    alpha, reference = alpha.astype(dtype), reference.astype(dtype)
    return np.array([
        float((alpha * np.exp(-dtype(gamma) * ((x.astype(dtype) - reference) ** 2)
                              .sum(axis=1))).sum() + dtype(intercept))
        for x in X
    ])  # fmt: skip


def make_workloads(d, m, rng):
    """KernelRidge and SVR on ``d`` features, each with about ``m`` references."""
    X_pool, y_pool = make_data(8 * m, d, rng)
    X_rows, _ = make_data(N_ROWS, d, rng)

    start = time.perf_counter()
    ridge = KernelRidge(kernel="rbf").fit(X_pool[:m], y_pool[:m])
    fit_seconds = time.perf_counter() - start
    alpha = np.asarray(ridge.dual_coef_, dtype=float).ravel()
    yield Workload(
        'KernelRidge(kernel="rbf")', d, ridge, ridge.X_fit_, alpha, 1.0 / d, 0.0,
        X_rows, direct_output(X_rows, ridge.X_fit_, alpha, 1.0 / d, 0.0),
        ridge.predict(X_rows), fit_seconds,
        f"{m} training points = reference points, gamma = 1/d = {1.0 / d:.3g}",
    )  # fmt: skip

    # SVR: the training size that gives about m support vectors (C and
    # epsilon stay at their defaults); a few refits, each scaled by the
    # fraction of support vectors the previous one had.
    n_train = m
    start = time.perf_counter()
    for _ in range(6):
        svr = SVR(kernel="rbf").fit(X_pool[:n_train], y_pool[:n_train])
        n_sv = len(svr.support_)
        if abs(n_sv - m) <= 0.02 * m:
            break
        n_train = min(len(X_pool), max(m, round(n_train * m / n_sv)))
    fit_seconds = time.perf_counter() - start
    alpha = np.asarray(svr.dual_coef_, dtype=float).ravel()
    gamma, intercept = float(svr._gamma), float(svr.intercept_[0])
    yield Workload(
        'SVR(kernel="rbf")', d, svr, svr.support_vectors_, alpha, gamma, intercept,
        X_rows,
        direct_output(X_rows, svr.support_vectors_, alpha, gamma, intercept),
        svr.predict(X_rows), fit_seconds,
        f"{n_train} training points, {n_sv} support vectors = reference points, "
        f'gamma="scale" = {svr._gamma:.3g}, C=1, epsilon=0.1',
    )  # fmt: skip


# -- the NumPy twin ------------------------------------------------------------


@functools.lru_cache
def leggauss01(n_points):
    """Gauss–Legendre nodes and weights on [0, 1]: NumPy's, mapped, cached."""
    x, w = np.polynomial.legendre.leggauss(n_points)
    return (x + 1.0) / 2.0, w / 2.0


def numpy_twin_row(x, reference, alpha, gamma, n_points, dtype=np.float64):
    """Shapley values of one row, the plain vectorized way (see the docstring).

    ``dtype=np.longdouble`` gives the extended-precision twin of the notes.
    """
    t, w = (v.astype(dtype) for v in leggauss01(n_points))
    x, reference, alpha = (np.asarray(v, dtype=dtype) for v in (x, reference, alpha))
    m, d = reference.shape
    b = np.expm1(-dtype(gamma) * (x - reference) ** 2)  # a - 1, (m, d), one pass
    phi = np.zeros(d, dtype=dtype)
    shift = -np.inf  # phi holds the values times exp(-shift)
    chunk = max(1, CHUNK_ELEMENTS // (n_points * d))
    for start in range(0, m, chunk):
        bc = b[start : start + chunk]
        tb = t[None, :, None] * bc[:, None, :]  # F - 1, (c, q, d)
        log_full = np.log1p(tb).sum(axis=2)  # log prod_k F, (c, q)
        top = log_full.max()
        if top > shift:
            phi *= np.exp(shift - top)
            shift = top
        coef = alpha[start : start + chunk, None] * w * np.exp(log_full - shift)
        tb += 1.0
        np.divide(coef[:, :, None], tb, out=tb)  # weighted prod_{k != j} F
        phi += (bc * tb.sum(axis=1)).sum(axis=0)
    return phi * np.exp(shift)


# -- the methods ---------------------------------------------------------------


@dataclass
class Row:
    method: str
    threads: str
    points: int | None = None
    seconds: float | None = None  # over all the rows
    n_rows: int = N_ROWS
    timed_rows: int = N_ROWS
    runs: int = 0
    ratio: float | None = None
    error: float | None = None
    residual: float | None = None
    skipped: str = ""
    phi: np.ndarray | None = field(default=None, repr=False)
    short: str = ""  # the method in the notes

    @property
    def scaled(self):
        return self.timed_rows < self.n_rows


def best_time(func, repeat, budget=TIME_BUDGET):
    """Best wall time of up to ``repeat`` calls, the calls made, the last result."""
    times = []
    while len(times) < repeat and sum(times) < budget:
        start = time.perf_counter()
        result = func()
        times.append(time.perf_counter() - start)
    return min(times), len(times), result


def efficiency_residual(phi, base, raw):
    """``max |sum(phi) + base - raw| / max |raw|`` over the rows."""
    return float(np.abs(phi.sum(axis=1) + base - raw).max() / np.abs(raw).max())


def run_skshapley(workload, n_quadrature_points, n_jobs, repeat, label):
    """Fit once (untimed here), then time ``explain`` on all the rows."""
    start = time.perf_counter()
    explainer = skshapley.ProductKernelExplainer(
        workload.model, n_quadrature_points=n_quadrature_points, n_jobs=n_jobs
    ).fit()
    fit_seconds = time.perf_counter() - start
    seconds, runs, result = best_time(lambda: explainer.explain(workload.X), repeat)
    phi = result.to_numpy(dtype=float)
    row = Row(
        label, str(effective_n_threads(n_jobs)),
        points=int(result.attrs["n_quadrature_points"]), seconds=seconds,
        runs=runs, phi=phi,
        residual=efficiency_residual(
            phi, float(explainer.expected_value_), workload.raw
        ),
    )  # fmt: skip
    return row, explainer, result, fit_seconds


def run_twin(workload, n_points, repeat):
    def explain():
        return np.stack([
            numpy_twin_row(x, workload.reference, workload.alpha, workload.gamma,
                           n_points)
            for x in workload.X
        ])  # fmt: skip

    with threadpool_limits(limits=1):  # outside the timings: it costs ~1 ms
        seconds, runs, phi = best_time(explain, repeat)
    base = workload.alpha.sum() + workload.intercept
    return Row(
        "NumPy twin (same points)", "1", points=n_points, seconds=seconds,
        runs=runs, phi=phi, residual=efficiency_residual(phi, base, workload.raw),
        short="twin",
    )  # fmt: skip


class ShapiqMethod:
    """shapiq's PKeX-Shapley explainer, with a time budget per row."""

    name = "shapiq PKeX-Shapley"

    def __init__(self, max_d, budget, subset_budget):
        self.max_d = max_d
        self.budget = budget
        self.subset_budget = subset_budget
        self.last = {}  # model name -> (d, seconds per row)
        try:
            import importlib.metadata

            from shapiq.explainer.product_kernel import (
                ProductKernelExplainer,
                ProductKernelModel,
            )
        except ImportError as error:
            self.unavailable = f"shapiq is not installed ({error})"
            return
        self.unavailable = ""
        self.explainer_class = ProductKernelExplainer
        try:
            self.version = importlib.metadata.version("shapiq")
        except importlib.metadata.PackageNotFoundError:
            self.version = "?"

        class KernelRidgeModel(ProductKernelModel):
            """shapiq's own model format, with the ``predict`` its base needs."""

            def predict(self, X):
                kernel = rbf_kernel(np.atleast_2d(X), self.X_train, gamma=self.gamma)
                return kernel @ self.alpha + self.intercept

        self.kernel_ridge_model = KernelRidgeModel

    def model_for(self, workload):
        if isinstance(workload.model, SVR):
            return workload.model  # shapiq converts an SVR itself
        m, d = workload.reference.shape
        return self.kernel_ridge_model(
            X_train=workload.reference, alpha=workload.alpha, n=m, d=d,
            gamma=workload.gamma, kernel_type="rbf", intercept=workload.intercept,
        )  # fmt: skip

    def run(self, workload, repeat):
        d = workload.d
        row = Row(self.name, "1", short="PKeX")
        if self.unavailable:
            row.skipped = f"skipped ({self.unavailable})"
            return row
        if d > self.max_d:
            row.skipped = f"skipped (d > --pkex-max-d {self.max_d})"
            return row
        if workload.name in self.last:
            last_d, last_per_row = self.last[workload.name]
            estimate = last_per_row * (d / last_d) ** 3
            if estimate > self.budget:
                row.skipped = (
                    f"skipped (>budget: ~{fmt_time(estimate)}/row estimated "
                    f"> {self.budget:g} s)"
                )
                return row
        explainer = self.explainer_class(self.model_for(workload))

        def explain(n_rows):
            phi = np.empty((n_rows, d))
            for i in range(n_rows):
                phi[i] = explainer.explain(workload.X[i]).get_n_order_values(1)
            return phi

        with threadpool_limits(limits=1):  # outside the timings: it costs ~1 ms
            # The first row decides how many rows are timed.
            start = time.perf_counter()
            explain(1)
            first = time.perf_counter() - start
            n_timed = min(N_ROWS, max(1, int(self.subset_budget / max(first, 1e-9))))
            seconds, runs, phi = best_time(lambda: explain(n_timed), repeat)
        row.seconds = seconds * N_ROWS / n_timed
        row.timed_rows, row.runs, row.phi = n_timed, runs, phi
        row.residual = efficiency_residual(
            phi, explainer.empty_prediction, workload.raw[:n_timed]
        )
        self.last[workload.name] = (d, seconds / n_timed)
        return row


def warm_up(n_jobs):
    """Throwaway explanations: the process's first parallel calls are slow.

    (Here the first three calls with two threads took ~20 ms each, then
    0.5 ms: thread creation and wake-up, not the method.)
    """
    X, y = make_data(50, 10, np.random.default_rng(SEED))
    model = KernelRidge(kernel="rbf").fit(X, y)
    for jobs in {n_jobs, 1}:
        explainer = skshapley.ProductKernelExplainer(model, n_jobs=jobs).fit()
        for _ in range(10):
            explainer.explain(X)
    numpy_twin_row(X[0], X, model.dual_coef_, 0.1, 5)


def run_workload(workload, shapiq, n_jobs, repeat):
    """All methods on one workload: (rows, header lines, notes, summary)."""
    rows, notes = [], []
    threads = effective_n_threads(n_jobs)

    # Warm-up (OpenMP pool, first-call costs), untimed.
    skshapley.ProductKernelExplainer(workload.model, n_jobs=n_jobs).fit().explain(
        workload.X
    )
    auto, explainer, result, fit_seconds = run_skshapley(
        workload, "auto", n_jobs, repeat, 'skshapley "auto"'
    )
    auto.short = "auto"
    rows.append(auto)
    n_auto = auto.points
    bound = float(result.attrs["quadrature_error_bound"])
    if threads > 1:
        single = run_skshapley(workload, "auto", 1, repeat, 'skshapley "auto"')[0]
        single.short = "auto 1 thread"
        rows.append(single)
    rows.append(run_twin(workload, n_auto, repeat))
    try:
        rows.append(shapiq.run(workload, repeat))
    except Exception as error:  # not skshapley's failure: say so, go on
        rows.append(Row(shapiq.name, "1", skipped=f"failed: {error!r}"))
    exact_points = math.ceil(workload.d / 2)
    exact = run_skshapley(
        workload, exact_points, n_jobs, repeat, "skshapley exact rule"
    )[0]
    exact.short = "exact rule"
    rows.append(exact)

    reference = exact.phi
    scale = np.abs(reference).max()
    for row in rows:
        if row.phi is None:
            continue
        row.ratio = row.seconds / auto.seconds
        n = len(row.phi)
        row.error = float(np.abs(row.phi - reference[:n]).max() / scale)
        if row.scaled:
            notes.append(
                f"{row.method}: timed on the first {row.timed_rows} of "
                f"{row.n_rows} rows, seconds scaled by "
                f"{row.n_rows / row.timed_rows:.1f}; its errors over those rows"
            )
    if np.finfo(np.longdouble).eps < 1e-18:  # x86 extended precision
        # Which of the float64 computations is closer to the true values: the
        # twin in long double on the first row, with the exact rule or twice
        # the points "auto" chose (far below 1e-19 for these kernels).
        n_points = min(exact_points, 2 * n_auto)
        truth = numpy_twin_row(
            workload.X[0], workload.reference, workload.alpha, workload.gamma,
            n_points, dtype=np.longdouble,
        )  # fmt: skip
        top = np.abs(truth).max()
        differences = ", ".join(
            f"{row.short} {float(np.abs(row.phi[0] - truth).max() / top):.1e}"
            for row in rows
            if row.phi is not None
        )
        notes.append(
            f"first row, max|Δ|/max|φ| vs the twin in long double with "
            f"{n_points} points: {differences}"
        )
    f_scale = np.abs(workload.raw).max()
    raw_difference = np.abs(explainer.raw_predict(workload.X) - workload.raw).max()
    predict_difference = np.abs(workload.predict - workload.raw).max()
    header = [
        f"fit {workload.fit_seconds:.2f} s | skshapley fit() "
        f"{fit_seconds * 1e3:.1f} ms (parsing, once; not part of any time below)",
        f'"auto" chose {n_auto} points (exact rule: {exact_points}), '
        f"quadrature_error_bound {bound:.1e} | max|Δ|/max|f| vs f summed "
        f"directly: skshapley raw_predict {raw_difference / f_scale:.1e}, "
        f"sklearn predict {predict_difference / f_scale:.1e}",
    ]
    return rows, header, notes


# -- latency -------------------------------------------------------------------

# Rows per call in --latency mode.
LATENCY_ROWS = (1, 10)
LATENCY_MIN_REPEAT = 5


def latency_times(explainers, X, repeat):
    """Wall times of ``explain(X)`` per explainer, calls alternating between them."""
    for explainer in explainers.values():
        explainer.explain(X)  # untimed: first-call costs
    times = {jobs: [] for jobs in explainers}
    for _ in range(max(repeat, LATENCY_MIN_REPEAT)):
        for jobs, explainer in explainers.items():
            start = time.perf_counter()
            explainer.explain(X)
            times[jobs].append(time.perf_counter() - start)
    return {jobs: (min(t), float(np.median(t))) for jobs, t in times.items()}


def run_latency(dims, m, threads, repeat):
    """One row and 10 rows at 1 and ``threads`` threads, per model and ``d``."""
    print(
        f"{'model':<26} {'d':>5} {'rows':>4}   {'1 thread min / median':>23}   "
        f"{f'{threads} threads min / median':>23}   {'speedup':>11}"
    )
    rng = np.random.default_rng(SEED)
    for d in dims:
        X, _ = make_data(max(LATENCY_ROWS), d, np.random.default_rng(SEED + 1))
        for workload in make_workloads(d, m, rng):
            explainers = {
                jobs: skshapley.ProductKernelExplainer(
                    workload.model, n_jobs=jobs
                ).fit()
                for jobs in sorted({1, threads})
            }
            for n_rows in LATENCY_ROWS:
                times = latency_times(explainers, X[:n_rows], repeat)
                one, many = times[1], times[threads]
                print(
                    f"{workload.name:<26} {d:>5} {n_rows:>4}   "
                    f"{fmt_time(one[0]):>10} / {fmt_time(one[1]):>10}   "
                    f"{fmt_time(many[0]):>10} / {fmt_time(many[1]):>10}   "
                    f"{one[0] / many[0]:>4.2f} / {one[1] / many[1]:>4.2f}"
                )
                sys.stdout.flush()
    print(
        f"\nspeedup = 1-thread time / {threads}-thread time (min / median); "
        f"load at the end {os.getloadavg()[0]:.2f}"
    )


# -- output ------------------------------------------------------------------


def fmt_time(seconds):
    """A time with three significant digits in s, ms or µs."""
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if seconds >= scale or unit == "µs":
            return f"{seconds / scale:.3g} {unit}"


def fmt(value, spec):
    return "—" if value is None else format(value, spec)


def print_workload(workload, rows, header, notes):
    print(f"{workload.name}, d = {workload.d}: {workload.description}")
    for line in header:
        print(f"    {line}")
    columns = (
        f"    {'method':<26} {'threads':>7} {'points':>6} {'seconds':>10} "
        f"{'per row':>10} {'runs':>4} {'ratio':>8} {'max err':>9} {'residual':>9}"
    )
    print(columns)
    print("    " + "-" * (len(columns) - 4))
    for row in rows:
        if row.skipped:
            print(f"    {row.method:<26} {row.threads:>7} {'':>6} {row.skipped}")
            continue
        seconds = fmt_time(row.seconds) + ("*" if row.scaled else " ")
        per_row = fmt_time(row.seconds / row.n_rows)
        print(
            f"    {row.method:<26} {row.threads:>7} {fmt(row.points, 'd'):>6} "
            f"{seconds:>10} {per_row:>10} "
            f"{row.runs:>4} {fmt(row.ratio, '.2f'):>8} {fmt(row.error, '.1e'):>9} "
            f"{fmt(row.residual, '.1e'):>9}"
        )
    for note in notes:
        print(f"    note: {note}")
    print()


def print_targets(results, dims, threads):
    """The issue's targets, from the rows of skshapley "auto" and shapiq."""
    print("Targets")
    largest = max(dims)
    for name, by_d in results.items():
        if largest in by_d:
            auto = by_d[largest][0]
            per_row = auto.seconds / auto.n_rows
            fast = "under" if per_row < TARGET_SECONDS else "OVER"
            exact = "<=" if auto.error <= TARGET_ERROR else "ABOVE"
            print(
                f'    {name}, d = {largest}: skshapley "auto" ({threads} threads) '
                f"{fmt_time(per_row)}/row ({fast} {TARGET_SECONDS:g} s), "
                f"max err {auto.error:.1e} ({exact} {TARGET_ERROR:g})"
            )
        worst = max(rows[0].error for rows in by_d.values())
        print(f'    {name}: skshapley "auto" max err over all d {worst:.1e}')
        speedups = [
            (d, row.ratio)
            for d, rows in by_d.items()
            for row in rows
            if row.method == ShapiqMethod.name and row.ratio is not None
        ]
        if speedups:
            text = ", ".join(f"d = {d}: {ratio:.0f}x" for d, ratio in speedups)
            least = min(ratio for _, ratio in speedups)
            verdict = "met" if least >= TARGET_SPEEDUP else "NOT met"
            print(
                f'    {name}: skshapley "auto" vs shapiq PKeX-Shapley where it '
                f"finished: {text} (>= {TARGET_SPEEDUP:g}x: {verdict})"
            )
    if largest < 5000:
        print(f"    (the targets are for d = 5000; this run's largest d is {largest})")
    print()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--quick", action="store_true",
        help=f"d in {QUICK_DIMENSIONS} and {QUICK_REFERENCES} reference points, "
        "for a smoke run",
    )  # fmt: skip
    parser.add_argument(
        "--repeat", type=int, default=3, help="timed runs per measurement (best of)"
    )
    parser.add_argument(
        "--d", type=int, action="append", dest="dims",
        help=f"numbers of features (repeatable; default {DIMENSIONS}, "
        f"with --quick {QUICK_DIMENSIONS})",
    )  # fmt: skip
    parser.add_argument(
        "--n-jobs", type=int, default=-1,
        help="skshapley's threads (default -1: all CPUs); with more than one, "
        'skshapley "auto" also runs with n_jobs=1',
    )  # fmt: skip
    parser.add_argument(
        "--pkex-max-d", type=int, default=1000,
        help="largest d given to shapiq's PKeX-Shapley (default 1000)",
    )  # fmt: skip
    parser.add_argument(
        "--pkex-budget", type=float, default=30.0,
        help="skip shapiq's PKeX-Shapley at a d where its estimated time per "
        "row exceeds this many seconds (default 30)",
    )  # fmt: skip
    parser.add_argument(
        "--latency", action="store_true",
        help="time one row and 10 rows at 1 thread and all threads instead "
        "(see the docstring)",
    )  # fmt: skip
    args = parser.parse_args()
    dims = sorted(set(args.dims or (QUICK_DIMENSIONS if args.quick else DIMENSIONS)))
    m = QUICK_REFERENCES if args.quick else N_REFERENCES
    threads = effective_n_threads(args.n_jobs)
    if args.latency:
        print(
            f"skshapley {skshapley.__version__} | {os.cpu_count()} CPUs | load "
            f"{os.getloadavg()[0]:.2f} | {m} reference points | at least "
            f"{max(args.repeat, LATENCY_MIN_REPEAT)} calls per measurement"
        )
        warm_up(args.n_jobs)
        run_latency(dims, m, threads, args.repeat)
        return

    shapiq = ShapiqMethod(
        args.pkex_max_d, args.pkex_budget,
        QUICK_SUBSET_BUDGET if args.quick else SUBSET_BUDGET,
    )  # fmt: skip
    versions = [f"skshapley {skshapley.__version__}"]
    if not shapiq.unavailable:
        versions.append(f"shapiq {shapiq.version}")
    print(" | ".join(versions))
    print(
        f"numpy {np.__version__} | scikit-learn {sklearn.__version__} | "
        f"Python {platform.python_version()} | {platform.machine()} | "
        f"{os.cpu_count()} CPUs (skshapley n_jobs={args.n_jobs}: {threads} "
        f"threads) | load {os.getloadavg()[0]:.2f} | "
        f"{datetime.datetime.now().isoformat(timespec='seconds')} | "
        f"best of {args.repeat} runs{' | quick' if args.quick else ''}"
    )
    print(
        f"{m} reference points, {N_ROWS} explained rows, d in {dims}; "
        f'ratio = time / skshapley "auto"\'s time with {threads} threads '
        "(> 1: slower); max err vs the exact rule"
    )
    if shapiq.unavailable:
        print(f"note: {shapiq.unavailable}; its rows are skipped")
    print()

    warm_up(args.n_jobs)
    rng = np.random.default_rng(SEED)
    results = {}
    errors = []
    for d in dims:
        for workload in make_workloads(d, m, rng):
            try:
                rows, header, notes = run_workload(
                    workload, shapiq, args.n_jobs, args.repeat
                )
            except Exception as error:
                print(f"{workload.name}, d = {d}\n    skshapley failed: {error!r}\n")
                errors.append(f"{workload.name}, d = {d}: {error!r}")
                continue
            print_workload(workload, rows, header, notes)
            results.setdefault(workload.name, {})[d] = rows
            sys.stdout.flush()
    if results:
        print_targets(results, dims, threads)
    print(
        "* timed on the first rows, scaled linearly to all rows (see the notes); "
        "max err = max |φ - φ_exact| / max |φ_exact|; residual = "
        "max |Σφ + base - f(x)| / max |f(x)|"
    )
    print(f"load at the end {os.getloadavg()[0]:.2f}")
    if errors:
        print("skshapley failed:", *errors, sep="\n  ", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
