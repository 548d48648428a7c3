"""Path-dependent TreeSHAP: skshapley against shap, FastTreeSHAP, QuadraSHAP and
XGBoost's and LightGBM's own.

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
  ``pip install --no-deps --target DIR`` of that repository).

shap, FastTreeSHAP, QuadraSHAP, xgboost and lightgbm are optional: they are
imported lazily, and a method that is missing or does not support a model is
skipped with a note (XGBoost's and LightGBM's own explain only their models).

Threads: first every method with one thread (``n_jobs=1``, inside
``threadpoolctl.threadpool_limits(1)`` so that no BLAS or OpenMP pool grows),
then all CPUs (``n_jobs=-1``) for skshapley, FastTreeSHAP and XGBoost's and
LightGBM's own (their ``nthread`` / ``num_threads``). shap's and
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
(``predict`` for the regressors, ``decision_function`` for the classifier,
``predict(X, output_margin=True)`` for XGBoost, ``predict(X, raw_score=True)``
for LightGBM). XGBoost's margin and its ``pred_contribs`` are float32, so
every residual on (d) and (e) is ~1e-7 or more; a note gives each method's
residual against the margin summed in float64 instead (the float32 leaf
values of the leaves ``pred_leaf`` reaches, plus ``base_score``).
Every method first explains a few rows to warm up, then 1 and ``PILOT_ROWS``
rows, which estimate its time per row and its fixed time per call (FastTreeSHAP
v2 precomputes per call). A method whose full run would take more than
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

Interaction values (``--interactions``): workloads (a) and (d) above,
explaining 200 rows (20 with ``--quick``), by
``TreeExplainer(model).fit().explain_interactions(X)``, shap's
``shap_interaction_values`` (its C++ on scikit-learn models; XGBoost's
``pred_interactions`` with one thread on XGBoost's), FastTreeSHAP's ``v1``
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
only 100 rows of it by default) and FastTreeSHAP's when importable, with the
same ``--repeat``, scaling and peak-memory notes as the interaction runs.
"""

import argparse
import dataclasses
import datetime
import importlib
import json
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
    # the raw output summed in float64 from the leaves, when the model's own is
    # coarser (XGBoost's margin is float32); None: `raw` is float64 already
    raw64: np.ndarray | None = None


# The scikit-learn workloads, and the boosting-library ones: key -> library.
SKLEARN_WORKLOADS = ("a", "b", "c")
BOOSTER_WORKLOADS = {"d": "xgboost", "e": "xgboost", "f": "lightgbm"}
WORKLOADS = SKLEARN_WORKLOADS + tuple(BOOSTER_WORKLOADS)


def float32_rounded(X):
    return X.astype(np.float32).astype(np.float64)


def tree_structure(model) -> str:
    """Trees, leaves and largest depth of a fitted ensemble."""
    try:
        if hasattr(model, "get_booster"):  # XGBoost: a text dump, tabs = depth
            dump = model.get_booster().get_dump()
            leaves = [
                line.count("\t")
                for tree in dump
                for line in tree.splitlines()
                if "leaf=" in line
            ]
            return f"{len(dump)} trees, {len(leaves)} leaves, max depth {max(leaves)}"
        if hasattr(model, "booster_"):  # LightGBM
            trees = model.booster_.dump_model()["tree_info"]
            leaves = sum(tree["num_leaves"] for tree in trees)
            depth = 0
            for tree in trees:
                stack = [(tree["tree_structure"], 0)]
                while stack:
                    node, level = stack.pop()
                    if "left_child" in node:
                        stack.append((node["left_child"], level + 1))
                        stack.append((node["right_child"], level + 1))
                    else:
                        depth = max(depth, level)
            return f"{len(trees)} trees, {leaves} leaves, max depth {depth}"
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


def xgboost_margin64(xgboost, model, X):
    """XGBoost's margin summed in float64: its intercept plus the leaf values
    of the leaves ``pred_leaf`` reaches (their float32 values, as stored).

    xgboost's own margin is a float32 sum, off by ~1e-7 relative; this one is
    what exact Shapley values add up to. None unless the model is a single
    output identity-link ``gbtree`` (the intercept is then ``base_score``).
    """
    booster = model.get_booster()
    learner = json.loads(booster.save_raw(raw_format="json"))["learner"]
    if (
        learner["objective"]["name"] != "reg:squarederror"
        or learner["gradient_booster"]["name"] != "gbtree"
    ):
        return None
    trees = learner["gradient_booster"]["model"]["trees"]
    base = np.float32(learner["learner_model_param"]["base_score"].strip("[]"))
    leaves = booster.predict(xgboost.DMatrix(X), pred_leaf=True).astype(np.intp)
    raw = np.full(len(X), float(base))
    for i, tree in enumerate(trees):  # a leaf's value is its split_condition
        values = np.asarray(tree["split_conditions"], dtype=np.float32)
        raw += values[leaves[:, i]].astype(np.float64)
    return raw.reshape(len(X), 1)


def make_workloads(quick: bool, keys, libraries, n_rows: int | None = None):
    """Fit the models (not timed against the methods) and pick the rows.

    Yields a Workload, or a string saying why a workload is skipped.
    ``n_rows`` overrides the number of rows to explain (the first rows of the
    training data).
    """
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
        "d": (
            (1000, 10, 100, {"n_estimators": 10, "max_depth": 3})
            if quick
            else (10_000, 50, 1000, {"n_estimators": 200, "max_depth": 6})
        ),
        "e": (
            (1000, 10, 100, {"n_estimators": 10, "max_depth": 4})
            if quick
            else (20_000, 50, 1000, {"n_estimators": 500, "max_depth": 8})
        ),
        "f": (
            (1000, 10, 100, {"n_estimators": 10, "num_leaves": 15})
            if quick
            else (10_000, 50, 1000, {"n_estimators": 300, "num_leaves": 63})
        ),
    }
    for key in keys:
        n_samples, n_features, n_explain, params = specs[key]
        n_explain = n_explain if n_rows is None else n_rows
        library = BOOSTER_WORKLOADS.get(key)
        if library is not None and library not in libraries:
            yield f"({key}) skipped: {library} is not importable"
            continue
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
            data = "make_regression"
            if key == "c":
                model = HistGradientBoostingRegressor(**params, random_state=SEED)
            elif library == "xgboost":
                params = {**params, "tree_method": "hist"}
                model = libraries["xgboost"].XGBRegressor(**params, random_state=SEED)
            else:
                params = {**params, "verbose": -1}
                model = libraries["lightgbm"].LGBMRegressor(**params, random_state=SEED)
        X = float32_rounded(X)
        start = time.perf_counter()
        model.fit(X, y)
        fit_seconds = time.perf_counter() - start
        X_explain = X[:n_explain]
        raw64 = None
        if library == "xgboost":
            raw = model.predict(X_explain, output_margin=True)
            output = "margin, output_margin=True"
            raw64 = xgboost_margin64(libraries["xgboost"], model, X_explain)
        elif library == "lightgbm":
            raw = model.predict(X_explain, raw_score=True)
            output = "raw_score=True"
        elif hasattr(model, "decision_function"):
            raw = model.decision_function(X_explain)
            output = "log-odds margin"
        else:
            raw = model.predict(X_explain)
            output = "prediction"
        args = ", ".join(f"{k}={v!r}" for k, v in params.items())
        title = (
            f"({key}) {type(model).__name__}({args}) | {n_samples}x{n_features} "
            f"{data} | explain {n_explain} rows ({output})"
        )
        raw = np.asarray(raw, dtype=float).reshape(n_explain, -1)
        yield Workload(
            key, title, model, X_explain, raw, fit_seconds, tree_structure(model),
            raw64,
        )  # fmt: skip


def booster_libraries(keys):
    """The boosting libraries the workloads need: ({name: module}, notes)."""
    libraries, notes = {}, []
    for name in sorted({BOOSTER_WORKLOADS[k] for k in keys if k in BOOSTER_WORKLOADS}):
        try:
            libraries[name] = importlib.import_module(name)
        except ImportError as error:
            notes.append(f"{name} not importable ({error})")
    return libraries, notes


def skshapley_rejects(model):
    """Why skshapley's TreeExplainer rejects the model (its TypeError for an
    unsupported model), or None: any other error is left to the timed run,
    which reports it as a failure."""
    from skshapley import TreeExplainer

    try:
        TreeExplainer(model).fit()
    except TypeError as error:
        if "does not support" in str(error):
            return str(error).split(". ")[0]  # not the list of supported models
    except Exception:
        pass
    return None


# -- methods -----------------------------------------------------------------
#
# A method's `prepare(model, n_jobs)` builds its explainer and returns a
# function `explain(X) -> (phi, base)`: `phi` of shape (n_rows, n_features) or
# (n_rows, n_outputs, n_features), `base` a scalar or (n_outputs,), or
# (n_rows, n_outputs) for a base per row (the boosting libraries' own
# contributions, whose last column is the base).


class Unavailable(Exception):
    """The method is not installed or does not support the model."""


@dataclass
class Method:
    name: str
    prepare: Callable
    threaded: bool  # whether it has a thread count (n_jobs)
    version: str = ""
    notes: list = field(default_factory=list)
    # which models it is for; the others skip it without a note
    supports: Callable = lambda model: True
    # whether a long run may be timed on the first rows and scaled linearly
    # (not when its time per call is not linear in the rows)
    scalable: bool = True


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


def booster_library(model):
    """ "xgboost" or "lightgbm" for those libraries' models, else None."""
    module = type(model).__module__.split(".")[0]
    return module if module in ("xgboost", "lightgbm") else None


def shap_method():
    try:
        shap = importlib.import_module("shap")
    except ImportError as error:
        return None, f"shap not importable ({error}); skipped"
    method = Method("shap path-dependent", None, False, shap.__version__)

    def prepare(model, n_jobs):
        explainer = shap.TreeExplainer(
            model, feature_perturbation="tree_path_dependent"
        )
        library = booster_library(model)
        if library is not None:
            # shap's tree_path_dependent path hands these models to the
            # library's own contributions; for XGBoost with the booster's threads
            if library == "xgboost":
                model.get_booster().set_param({"nthread": 1})
            own = "pred_contribs" if library == "xgboost" else "pred_contrib"
            note = (
                f"{method.name}: shap {shap.__version__} explains {library} models "
                f"by calling {library}'s own {own} (one thread here), not its C++ "
                "TreeSHAP"
            )
            if note not in method.notes:
                method.notes.append(note)

        def explain(X):
            phi = explainer.shap_values(X, check_additivity=False)
            if isinstance(phi, list):  # older shap: one array per output
                phi = np.stack(phi, axis=1)
            elif np.ndim(phi) == 3:  # (n_rows, n_features, n_outputs)
                phi = np.moveaxis(phi, 2, 1)
            return phi, explainer.expected_value

        return explain

    method.prepare = prepare
    return method, None


def import_fasttreeshap():
    """The FastTreeSHAP module (``fasttreeshap-fixed`` or the original), or None."""
    for name in ("fasttreeshap_fixed", "fasttreeshap"):
        try:
            with warnings.catch_warnings():  # "IPython could not be loaded!"
                warnings.simplefilter("ignore")
                return importlib.import_module(name)
        except ImportError:
            continue
    return None


def fasttreeshap_methods():
    module = import_fasttreeshap()
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


def native_methods(libraries):
    """The boosting libraries' own path-dependent TreeSHAP (their C++),
    threaded by their own thread count."""
    methods = []
    xgboost = libraries.get("xgboost")
    if xgboost is not None:

        def prepare_xgboost(model, n_jobs):
            booster = model.get_booster()
            threads = effective_n_threads(n_jobs)
            booster.set_param({"nthread": threads})

            def explain(X):
                matrix = xgboost.DMatrix(X, nthread=threads)
                contribs = booster.predict(matrix, pred_contribs=True)
                contribs = contribs.reshape(len(X), -1, X.shape[1] + 1)
                return contribs[..., :-1], contribs[..., -1]

            return explain

        methods.append(Method(
            "xgboost pred_contribs", prepare_xgboost, True,
            f"xgboost {xgboost.__version__}",
            supports=lambda model: isinstance(model, xgboost.XGBModel),
        ))  # fmt: skip
    lightgbm = libraries.get("lightgbm")
    if lightgbm is not None:

        def prepare_lightgbm(model, n_jobs):
            threads = effective_n_threads(n_jobs)

            def explain(X):
                contribs = model.predict(X, pred_contrib=True, num_threads=threads)
                contribs = contribs.reshape(len(X), -1, X.shape[1] + 1)
                return contribs[..., :-1], contribs[..., -1]

            return explain

        methods.append(Method(
            "lightgbm pred_contrib", prepare_lightgbm, True,
            f"lightgbm {lightgbm.__version__}",
            supports=lambda model: isinstance(model, lightgbm.LGBMModel),
        ))  # fmt: skip
    return methods


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
    residual64: float | None = None  # against Workload.raw64
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
    base = np.asarray(base, dtype=float)
    per_row = base.ndim == 2  # (n_rows, n_outputs)
    base = base.reshape(n_rows, -1) if per_row else base.reshape(-1)
    if phi.shape[1] != n_outputs or base.shape[-1] not in (1, n_outputs):
        raise ValueError(
            f"{phi.shape[1]} outputs explained, base of shape {base.shape}, "
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
    if method.scalable and fixed + per_row * n_rows > SUBSET_BUDGET and per_row > 0:
        n_timed = int((SUBSET_BUDGET - fixed) / per_row)
        n_timed = min(n_rows, max(pilot, n_timed))
    seconds, row.runs, (phi, base) = best_time(lambda: explain(X[:n_timed]), repeat)
    row.timed_rows = n_timed
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


# -- interaction values (--interactions) -----------------------------------
#
# The same measurement, of interaction values: a method's explain(X) returns
# the (n_rows, n_outputs, n_features**2) interaction matrices, flattened, and
# the base, so that the efficiency residual sums every entry.

INTERACTION_WORKLOADS = ("a", "d")

# Rows explained by the interaction runs (fewer with --quick).
INTERACTION_ROWS = 200


def interaction_methods(libraries):
    """skshapley's, shap's, FastTreeSHAP's and XGBoost's interaction values."""
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

    methods = [Method("skshapley interactions", prepare_skshapley, threaded=True)]
    try:
        shap = importlib.import_module("shap")
    except ImportError:
        shap = None
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
            Method("shap interactions", prepare_shap, False, shap.__version__)
        )
    fasttreeshap = import_fasttreeshap()
    if fasttreeshap is not None:

        def prepare_fasttreeshap(model, n_jobs, module=fasttreeshap):
            explainer = module.TreeExplainer(model, algorithm="v1", n_jobs=n_jobs)

            def explain(X):
                values = explainer.shap_interaction_values(X)
                return values.reshape(len(X), 1, -1), explainer.expected_value

            return explain

        methods.append(
            Method(
                "fasttreeshap v1 interactions",
                prepare_fasttreeshap,
                True,
                fasttreeshap.__name__,
            )
        )
    xgboost = libraries.get("xgboost")
    if xgboost is not None:

        def prepare_xgboost(model, n_jobs):
            booster = model.get_booster()
            threads = effective_n_threads(n_jobs)
            booster.set_param({"nthread": threads})

            def explain(X):
                matrix = xgboost.DMatrix(X, nthread=threads)
                values = booster.predict(matrix, pred_interactions=True)
                # The last row and column hold the bias (at their corner).
                base = values[:, -1, -1].reshape(len(X), 1)
                return values[:, :-1, :-1].reshape(len(X), 1, -1), base

            return explain

        methods.append(Method(
            "xgboost pred_interactions", prepare_xgboost, True,
            f"xgboost {xgboost.__version__}",
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
    methods = interaction_methods(libraries) + interventional_methods()
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


def print_side_run_header(args, methods, skipped) -> None:
    """The header of the --interactions and --interventional runs: versions,
    machine, how ratios read, and skipped methods."""
    print(" | ".join(m.version or m.name for m in methods))
    print(
        f"numpy {np.__version__} | scikit-learn {sklearn.__version__} | "
        f"{effective_n_threads(-1)} threads | load {os.getloadavg()[0]:.2f} | "
        f"best of {args.repeat} runs{' | quick' if args.quick else ''}"
    )
    print("ratio = time / skshapley's time with the same threads (> 1: slower)")
    for reason in skipped:
        print(f"note: {reason}")
    print()


def run_interactions(args):
    """The interaction runs: both workloads, both thread blocks, peak memory."""
    libraries, skipped = booster_libraries(INTERACTION_WORKLOADS)
    methods = interaction_methods(libraries)
    print_side_run_header(args, methods, skipped)
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
    print("residual = max |Σ_jk Φ_jk + base - f(x)| / max |f(x)|")
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


@dataclass
class WithBackground:
    """A model and the background data its interventional values average over."""

    model: object
    background: np.ndarray


def interventional_methods():
    """skshapley's, shap's and FastTreeSHAP's interventional values."""
    from skshapley import TreeExplainer

    def prepare_skshapley(pair, n_jobs):
        explainer = TreeExplainer(
            pair.model, feature_perturbation="interventional", n_jobs=n_jobs
        ).fit(pair.background)

        def explain(X):
            return explainer.explain(X).to_numpy(), explainer.expected_value_

        explain.raw_predict = explainer.raw_predict
        return explain

    # Its time is not linear in the rows: tables rebuilt at each call (beyond
    # the budget) serve blocks of up to 512 rows. Always timed on all rows.
    methods = [
        Method("skshapley interventional", prepare_skshapley, True, scalable=False)
    ]
    try:
        shap = importlib.import_module("shap")
    except ImportError:
        shap = None
    if shap is not None:

        def prepare_shap(pair, n_jobs):
            # The whole background: shap's masker keeps 100 rows by default.
            masker = shap.maskers.Independent(
                pair.background, max_samples=len(pair.background)
            )
            explainer = shap.TreeExplainer(
                pair.model, masker, feature_perturbation="interventional"
            )

            def explain(X):
                phi = explainer.shap_values(X, check_additivity=False)
                return phi, explainer.expected_value

            return explain

        methods.append(
            Method("shap interventional", prepare_shap, False, shap.__version__)
        )
    fasttreeshap = import_fasttreeshap()
    if fasttreeshap is not None:

        def prepare_fasttreeshap(pair, n_jobs, module=fasttreeshap):
            explainer = module.TreeExplainer(
                pair.model, data=pair.background,
                feature_perturbation="interventional", n_jobs=n_jobs,
            )  # fmt: skip

            def explain(X):
                phi = explainer.shap_values(X, check_additivity=False)
                return phi, explainer.expected_value

            return explain

        methods.append(
            Method(
                "fasttreeshap interventional",
                prepare_fasttreeshap,
                True,
                fasttreeshap.__name__,
            )
        )
    return methods


def run_interventional(args):
    """The interventional runs: both workloads, both thread blocks, peak memory."""
    libraries, skipped = booster_libraries(INTERVENTIONAL_WORKLOADS)
    methods = interventional_methods()
    print_side_run_header(args, methods, skipped)
    errors = []
    n_rows = 100 if args.quick else INTERVENTIONAL_ROWS
    for workload in make_workloads(
        args.quick, INTERVENTIONAL_WORKLOADS, libraries, 2 * n_rows
    ):
        if isinstance(workload, str):
            print(f"{workload}\n")
            continue
        background = workload.X[:n_rows]
        workload = dataclasses.replace(
            workload,
            title=workload.title.replace(
                f"explain {2 * n_rows} rows", f"explain {n_rows} rows"
            )
            + f", background {n_rows} rows",
            model=WithBackground(workload.model, background),
            X=workload.X[n_rows:],
            raw=workload.raw[n_rows:],
            raw64=None if workload.raw64 is None else workload.raw64[n_rows:],
        )
        blocks, notes = run_workload(
            workload, methods, "skshapley interventional", args.repeat, errors
        )
        notes += peak_memory_notes(workload, blocks)
        print_workload(workload, blocks, notes)
    print(
        "setup = building the explainer (skshapley: fit, its background's "
        "tables); * timed on the first rows and scaled linearly"
    )
    if errors:
        print("skshapley failed:", *errors, sep="\n  ", file=sys.stderr)
        sys.exit(1)


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
        "--workload", action="append", choices=WORKLOADS,
        help="run only these workloads (repeatable; default: all)",
    )  # fmt: skip
    parser.add_argument(
        "--quadrashap-path", default=os.environ.get("QUADRASHAP_PATH"),
        help="directory holding the quadrashap package, appended to sys.path "
        "(default: $QUADRASHAP_PATH)",
    )  # fmt: skip
    parser.add_argument(
        "--interactions", action="store_true",
        help="time interaction values instead (workloads a and d, 200 rows)",
    )  # fmt: skip
    parser.add_argument(
        "--interventional", action="store_true",
        help="time interventional values instead (workloads a and d, background "
        "1000 rows, 1000 rows)",
    )  # fmt: skip
    args = parser.parse_args()
    if args.interactions:
        return run_interactions(args)
    if args.interventional:
        return run_interventional(args)
    keys = [k for k in WORKLOADS if k in (args.workload or WORKLOADS)]

    methods, skipped = [], []
    sk, reason = skshapley_method()
    if sk is not None:
        methods.append(sk)
    else:
        skipped.append(reason)
    libraries, reasons = booster_libraries(keys)
    skipped += reasons
    native = native_methods(libraries)
    methods += native
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
    versions += [m.version for m in native]
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
        "1† single-threaded method, its one-thread time repeated; residual = "
        "max |Σφ + base - f(x)| / max |f(x)|"
    )
    print(f"load at the end {os.getloadavg()[0]:.2f}")
    if errors:
        print("skshapley failed:", *errors, sep="\n  ", file=sys.stderr)
        sys.exit(1)


if __name__ == "__main__":
    main()
