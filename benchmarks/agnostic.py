"""Model-agnostic explainers: skshapley's ExactExplainer and PermutationExplainer
against shap's, on the same model, background, rows and sampling budget.

What is compared
----------------
Three models fitted on real scikit-learn data sets with 10 features each:

* (a) ``MLPRegressor(hidden_layer_sizes=(32,))`` after a ``StandardScaler``,
  on the diabetes data (``predict``);
* (b) ``LogisticRegression`` after a ``StandardScaler``, on the ten "mean"
  features of the breast cancer data (``predict_proba``: two outputs);
* (c) ``HistGradientBoostingRegressor(max_iter=100)`` on the diabetes data
  (``predict``; a model whose evaluations cost the most).

The value function is the interventional one, ``v(S)`` = the mean of the
model's output over the background rows with the features of ``S`` taken from
the explained row. Both libraries get the same background (the first 100
training rows; shap through ``shap.maskers.Independent(background,
max_samples=len(background))``, which keeps all of them: by default it keeps
100) and explain the same 20 rows (``--quick``: 20 background rows and 3
explained rows, 2 seeds, the smaller budget only).

Both explainers receive the same callable: the model's method wrapped in a
counter of the rows it is given, so that the model evaluations are counted
the same way for both, independently of either library. The table gives the
rows evaluated per explained row, all calls included (skshapley evaluates
``v(∅)`` once in ``fit``, shap once per row).

* Exact: ``skshapley.ExactExplainer(f).fit(background).explain(X)`` and
  ``shap.ExactExplainer(f, masker)(X)``: both evaluate every coalition,
  ``2**p`` hybrid blocks of the background per row, and skip hybrid rows
  known to repeat: shap those equal to the previous one in its Gray-code
  order, skshapley every one that a background row's values equal to the
  explained row's make identical to another (diabetes' two-valued ``sex``
  saves a quarter of the rows), so skshapley evaluates at most as many.
* Permutation, at equal model evaluations: shap's PermutationExplainer
  evaluates, per permutation, the empty coalition and each prefix forwards
  and backwards, ``2p + 1`` coalitions, so ``max_evals`` coalitions make
  ``max_evals // (2p + 1)`` antithetic pairs. skshapley's
  ``PermutationExplainer(f, n_permutations=K, antithetic=True)`` evaluates
  ``2 (p - 1)`` coalitions per pair (``v(∅)`` and ``v(N)`` are computed once).
  With ``l = lcm(2 (p - 1), 2p + 1)`` coalitions per row, and multiples ``t``
  of it, skshapley gets ``K = t l / (2 (p - 1))`` pairs and shap
  ``max_evals = t l``: the same sampling budget, and the same number of
  model rows but for the rows each library skips as repeated (fewer for
  skshapley, see above) and skshapley's one ``v(∅)`` and ``f(x)``. Both are run with
  ``--seeds`` seeds (skshapley's ``random_state``, shap's ``seed``).

The error is the root mean square, over rows, features and outputs, of the
difference from skshapley's exact Shapley values (their correctness is tested
against brute-force enumeration in the test suite); the difference between the
two exact explainers is printed too. For the permutation explainers it is the
root mean square over all seeds' runs. Times are the best of ``--repeat``
runs for the exact explainers and the best over the seeds for the permutation
ones, each including the explainer's construction (skshapley's ``fit``).
Each method runs once on one row before it is timed (shap compiles its exact
solver with numba on first use). Every run is inside
``threadpool_limits(--threads)`` (default 1: the models' BLAS and OpenMP
calls single-threaded). Ratios above 1 favour skshapley.

shap is required (``pip install ".[test]"`` installs it).

Usage::

    python benchmarks/agnostic.py            # full run, a few minutes on 2 cores
    python benchmarks/agnostic.py --quick    # smoke run, under a minute

Each workload's table ends with checks of the comparison itself: the
matched runs evaluate the model within 15% as many rows, and the two exact
explainers agree to 1e-12 relative to the largest value (an assertion fails
otherwise).
"""

import argparse
import datetime
import math
import os
import platform
import time
from dataclasses import dataclass

import numpy as np
import shap
import sklearn
from sklearn.datasets import load_breast_cancer, load_diabetes
from sklearn.ensemble import HistGradientBoostingRegressor
from sklearn.linear_model import LogisticRegression
from sklearn.neural_network import MLPRegressor
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import StandardScaler
from threadpoolctl import threadpool_limits

import skshapley

N_BACKGROUND = 100


@dataclass
class Workload:
    """A fitted model's method with its background and the rows to explain."""

    name: str
    method: object  # the model's bound method, X -> array
    background: np.ndarray
    X: np.ndarray

    @property
    def n_features(self):
        return self.X.shape[1]


class CountingModel:
    """The model's method, counting the rows and calls it is given."""

    def __init__(self, method):
        self.method = method
        self.rows = 0
        self.calls = 0

    def __call__(self, X):
        self.rows += len(X)
        self.calls += 1
        return self.method(X)


def make_workloads(quick):
    n_rows = 3 if quick else 20
    n_background = 20 if quick else N_BACKGROUND
    diabetes = load_diabetes(return_X_y=True)
    cancer_X, cancer_y = load_breast_cancer(return_X_y=True)
    cancer = (cancer_X[:, :10], cancer_y)  # the ten "mean ..." features

    def workload(name, model, data, method):
        X, y = data
        model.fit(X, y)
        rows = slice(n_background, n_background + n_rows)
        return Workload(name, getattr(model, method), X[:n_background], X[rows])

    mlp = MLPRegressor(
        hidden_layer_sizes=(32,), learning_rate_init=0.01, max_iter=1000, random_state=0
    )
    return [
        workload(
            "(a) MLPRegressor(32) on diabetes, predict",
            make_pipeline(StandardScaler(), mlp),
            diabetes,
            "predict",
        ),
        workload(
            "(b) LogisticRegression on breast cancer, predict_proba",
            make_pipeline(StandardScaler(), LogisticRegression()),
            cancer,
            "predict_proba",
        ),
        workload(
            "(c) HistGradientBoostingRegressor on diabetes, predict",
            HistGradientBoostingRegressor(max_iter=100, random_state=0),
            diabetes,
            "predict",
        ),
    ]


def as_values(phi, n_rows, n_features):
    """Any of the libraries' values as an array (rows, outputs, features)."""
    values = getattr(phi, "values", phi)
    values = np.asarray(values, dtype=float)
    if values.ndim == 3:  # shap: (rows, features, outputs)
        return values.transpose(0, 2, 1)
    # skshapley: (rows, features) or (rows, outputs * features), output-major
    return values.reshape(n_rows, -1, n_features)


@dataclass
class Result:
    label: str
    seconds: float
    rows_per_row: float
    values: list  # one array (rows, outputs, features) per run
    error: float | None = None


def run(label, explain, workload, runs):
    """Time ``explain(f, workload, **kwargs)`` once per ``kwargs`` in ``runs``."""
    n_rows, n_features = workload.X.shape
    times, values, counts = [], [], []
    for kwargs in runs:
        counter = CountingModel(workload.method)
        start = time.perf_counter()
        phi = explain(counter, workload, **kwargs)
        times.append(time.perf_counter() - start)
        values.append(as_values(phi, n_rows, n_features))
        counts.append(counter.rows / n_rows)
    return Result(label, min(times), max(counts), values)


def ours_exact(f, workload):
    explainer = skshapley.ExactExplainer(f).fit(workload.background)
    return explainer.explain(workload.X)


def shap_masker(workload):
    background = workload.background
    return shap.maskers.Independent(background, max_samples=len(background))


def shap_exact(f, workload):
    return shap.ExactExplainer(f, shap_masker(workload))(workload.X, silent=True)


def ours_permutation(f, workload, budget, seed):
    explainer = skshapley.PermutationExplainer(
        f, n_permutations=budget, random_state=seed
    )
    return explainer.fit(workload.background).explain(workload.X)


def shap_permutation(f, workload, budget, seed):
    explainer = shap.PermutationExplainer(f, shap_masker(workload), seed=seed)
    return explainer(workload.X, max_evals=budget, silent=True)


def rms_error(result, reference):
    squares = [np.mean((values - reference) ** 2) for values in result.values]
    return float(np.sqrt(np.mean(squares)))


def matched_budgets(n_features, multiples):
    """(skshapley's pairs K, shap's max_evals) with equal model evaluations."""
    ours, theirs = 2 * (n_features - 1), 2 * n_features + 1
    per_row = math.lcm(ours, theirs)
    return [(t * per_row // ours, t * per_row) for t in multiples]


def warm_up(workload):
    """Run every method once on one row, outside the timings.

    shap compiles its exact solver with numba on first use (seconds, for each
    number of outputs), and the first model calls of a process are slower.
    """
    tiny = Workload(
        workload.name, workload.method, workload.background[:2], workload.X[:1]
    )
    budgets = matched_budgets(tiny.n_features, (1,))[0]
    for explain in (ours_exact, shap_exact):
        explain(tiny.method, tiny)
    for explain, budget in zip(
        (ours_permutation, shap_permutation), budgets, strict=True
    ):
        explain(tiny.method, tiny, budget, 0)


def run_workload(workload, args):
    """The exact and permutation results of both libraries on one workload."""
    warm_up(workload)
    repeat = [{}] * args.repeat
    exact = run("skshapley ExactExplainer", ours_exact, workload, repeat)
    reference = exact.values[0]
    pairs = [(exact, run("shap ExactExplainer", shap_exact, workload, repeat))]
    for budgets in matched_budgets(workload.n_features, args.multiples):
        pair = []
        for explain, budget, label in zip(
            (ours_permutation, shap_permutation),
            budgets,
            ("skshapley Permutation n_permutations", "shap Permutation max_evals"),
            strict=True,
        ):
            runs = [{"budget": budget, "seed": seed} for seed in range(args.seeds)]
            pair.append(run(f"{label}={budget}", explain, workload, runs))
        pairs.append(tuple(pair))
    for ours, theirs in pairs:
        theirs.error = rms_error(theirs, reference)
        if ours is not exact:
            ours.error = rms_error(ours, reference)
        # The budgets are equal; each library skips rows it knows repeat, and
        # skshapley more of them: it never evaluates more than 15% above shap
        # unless the budgets are wrong.
        evaluations = theirs.rows_per_row / ours.rows_per_row
        assert evaluations > 0.85, (ours.label, theirs.label, evaluations)
    spread = np.abs(pairs[0][1].values[0] - reference).max() / np.abs(reference).max()
    # Two exact computations of one value function agree to rounding.
    assert spread < 1e-12, spread
    return pairs, spread


def ratio(numerator, denominator):
    if numerator is None or not denominator:
        return "—"
    return f"{numerator / denominator:.3g}×"


def print_workload(workload, pairs, spread):
    n_rows, n_features = workload.X.shape
    print(
        f"{workload.name}: {n_features} features, background "
        f"{len(workload.background)} rows, {n_rows} rows explained"
    )
    header = (
        f"  {'method':<44} {'time':>9} {'ms/row':>9} {'model rows/row':>15} "
        f"{'RMS error':>10} {'time shap/ours':>15} {'error shap/ours':>16}"
    )
    print(header)
    for ours, theirs in pairs:
        for result, time_ratio, error_ratio in (
            (ours, "", ""),
            (
                theirs,
                ratio(theirs.seconds, ours.seconds),
                ratio(theirs.error, ours.error),
            ),
        ):
            error = "reference" if result.error is None else f"{result.error:.2e}"
            print(
                f"  {result.label:<44} {result.seconds:>8.3f}s "
                f"{1e3 * result.seconds / n_rows:>9.2f} {result.rows_per_row:>15,.0f} "
                f"{error:>10} {time_ratio:>15} {error_ratio:>16}"
            )
    print(f"  shap's exact values vs skshapley's: max |Δ| / max |φ| = {spread:.1e}")
    print()


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="small, for a smoke run")
    parser.add_argument(
        "--repeat", type=int, default=3, help="timed runs of the exact explainers"
    )
    parser.add_argument(
        "--seeds", type=int, default=None, help="runs of the permutation explainers"
    )
    parser.add_argument(
        "--threads", type=int, default=1, help="BLAS/OpenMP threads of every run"
    )
    args = parser.parse_args()
    args.seeds = args.seeds or (2 if args.quick else 10)
    # Multiples of the smallest matched budget (see the module docstring).
    args.multiples = (1,) if args.quick else (1, 5)

    print(
        f"skshapley {skshapley.__version__} | shap {shap.__version__} | "
        f"scikit-learn {sklearn.__version__} | numpy {np.__version__} | "
        f"Python {platform.python_version()} | {os.cpu_count()} CPUs, "
        f"{args.threads} thread(s) | load {os.getloadavg()[0]:.2f} | "
        f"{datetime.datetime.now().isoformat(timespec='seconds')}"
        f"{' | quick' if args.quick else ''}"
    )
    print()
    workloads = make_workloads(args.quick)
    with threadpool_limits(args.threads):
        for workload in workloads:
            print_workload(workload, *run_workload(workload, args))
    print(
        "model rows/row: rows passed to the model per explained row (fit included); "
        "RMS error against skshapley's exact values; ratios > 1 favour skshapley."
    )


if __name__ == "__main__":
    main()
