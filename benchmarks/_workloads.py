"""The seeded tree-ensemble workloads that ``trees.py`` and ``latency.py`` time.

Each workload is a model fitted on synthetic data (sizes shrink with
``quick``), the rows to explain, rounded to float32 so that every method
routes them the way the model does, and the model's raw output on them. The
workloads themselves are described in ``trees.py``'s docstring and in
``README.md``.
"""

import importlib
import json
import time
from dataclasses import dataclass

import numpy as np
from sklearn.datasets import make_classification, make_friedman1, make_regression
from sklearn.ensemble import (
    GradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestRegressor,
)

SEED = 0


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

# The model of trees.py's --background-sweep, not one of WORKLOADS: XGBoost,
# 100 trees of depth 6 on 30 features, fitted on 60,000 rows of data that has
# as many rows as the sweep needs (backgrounds and rows explained).
SWEEP_WORKLOAD = "s"
LIBRARIES = {**BOOSTER_WORKLOADS, SWEEP_WORKLOAD: "xgboost"}


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
        "s": (
            (2000, 10, 100, {"n_estimators": 10, "max_depth": 3})
            if quick
            else (60_000, 30, 1000, {"n_estimators": 100, "max_depth": 6})
        ),
    }
    for key in keys:
        n_samples, n_features, n_explain, params = specs[key]
        n_explain = n_explain if n_rows is None else n_rows
        n_fit = n_samples  # the sweep's model: fitted on its first rows only
        if key == SWEEP_WORKLOAD:
            n_samples = max(n_samples, n_explain)
        library = LIBRARIES.get(key)
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
        model.fit(X[:n_fit], y[:n_fit])
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
            f"{data}{f' (fitted on {n_fit})' if n_fit < n_samples else ''} | "
            f"explain {n_explain} rows ({output})"
        )
        raw = np.asarray(raw, dtype=float).reshape(n_explain, -1)
        yield Workload(
            key, title, model, X_explain, raw, fit_seconds, tree_structure(model),
            raw64,
        )  # fmt: skip


def booster_libraries(keys):
    """The boosting libraries the workloads need: ({name: module}, notes)."""
    libraries, notes = {}, []
    for name in sorted({LIBRARIES[k] for k in keys if k in LIBRARIES}):
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
