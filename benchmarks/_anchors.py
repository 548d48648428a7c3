"""The path-dependent TreeSHAP implementations that ``trees.py`` and
``latency.py`` time side by side: skshapley's, and the anchors it is compared
with (shap, FastTreeSHAP, the QuadraSHAP reference code, XGBoost's and
LightGBM's own contributions).

Every anchor is optional: imported lazily, and skipped with a note when it is
missing or does not support a model (README.md says how to install each).

A method's ``prepare(model, n_jobs)`` builds its explainer and returns a
function ``explain(X) -> (phi, base)``: ``phi`` of shape (n_rows, n_features)
or (n_rows, n_outputs, n_features), ``base`` a scalar or (n_outputs,), or
(n_rows, n_outputs) for a base per row (the boosting libraries' own
contributions, whose last column is the base). ``explain.call(X)`` is the
library's own call alone, returning what a user gets (skshapley's DataFrame,
the others' arrays), and ``explain.unpack`` turns its result into
``(phi, base)``: a latency measurement times ``call``, so that no method pays
for the conversion the comparison needs.
"""

import datetime
import importlib
import os
import platform
import sys
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
import sklearn

import skshapley
from skshapley._threads import effective_n_threads


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


def explain_function(call: Callable, unpack: Callable) -> Callable:
    """``explain(X) = unpack(call(X))``, with ``call`` and ``unpack`` kept on it."""

    def explain(X):
        return unpack(call(X))

    explain.call = call
    explain.unpack = unpack
    return explain


def skshapley_method():
    """skshapley's TreeExplainer, or None while it is not importable."""
    try:
        from skshapley import TreeExplainer
    except ImportError as error:
        return None, f"skshapley.TreeExplainer not importable ({error})"

    def prepare(model, n_jobs):
        explainer = TreeExplainer(model, n_jobs=n_jobs).fit()

        def unpack(phi):
            columns = phi.columns
            if columns.nlevels > 1:  # (output, feature)
                outputs = columns.get_level_values(0).unique()
                values = np.stack([phi[o].to_numpy() for o in outputs], axis=1)
            else:
                values = phi.to_numpy()
            return values, np.asarray(explainer.expected_value_, dtype=float)

        explain = explain_function(explainer.explain, unpack)
        explain.raw_predict = explainer.raw_predict
        return explain

    return Method("skshapley", prepare, threaded=True), None


def booster_library(model):
    """ "xgboost" or "lightgbm" for those libraries' models, else None."""
    module = type(model).__module__.split(".")[0]
    return module if module in ("xgboost", "lightgbm") else None


def outputs_first(phi):
    """shap's layouts as (n_rows, n_features) or (n_rows, n_outputs, n_features):
    a list of one array per output (older shap) or (n_rows, n_features,
    n_outputs)."""
    if isinstance(phi, list):
        return np.stack(phi, axis=1)
    if np.ndim(phi) == 3:
        return np.moveaxis(phi, 2, 1)
    return phi


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

        return explain_function(
            lambda X: explainer.shap_values(X, check_additivity=False),
            lambda phi: (outputs_first(phi), explainer.expected_value),
        )

    method.prepare = prepare
    return method, None


def import_shap():
    """The shap module, or None."""
    try:
        return importlib.import_module("shap")
    except ImportError:
        return None


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

            def call(X):
                with warnings.catch_warnings(record=True) as caught:
                    warnings.simplefilter("always")
                    phi = explainer.shap_values(X, check_additivity=False)
                for warning in caught:
                    if "Switched to algorithm v1" in str(warning.message):
                        explain.ran = "v1"
                    note = f"{method.name}: {warning.message}"
                    if note not in method.notes:
                        method.notes.append(note)
                return phi

            explain = explain_function(
                call, lambda phi: (outputs_first(phi), explainer.expected_value)
            )
            return explain

        method.prepare = prepare
        return method

    return [make("v1"), make("v2")], None


def split_contributions(n_features):
    """The boosting libraries' contributions as (phi, base): the last of each
    output's ``n_features + 1`` columns is its base."""

    def unpack(contribs):
        contribs = contribs.reshape(len(contribs), -1, n_features + 1)
        return contribs[..., :-1], contribs[..., -1]

    return unpack


def xgboost_predict(xgboost, model, n_jobs, **kind):
    """``X -> booster.predict(DMatrix(X), **kind)``, the booster and the matrix
    with the threads ``n_jobs`` gives."""
    booster = model.get_booster()
    threads = effective_n_threads(n_jobs)
    booster.set_param({"nthread": threads})

    def predict(X):
        return booster.predict(xgboost.DMatrix(X, nthread=threads), **kind)

    return predict


def native_methods(libraries):
    """The boosting libraries' own path-dependent TreeSHAP (their C++),
    threaded by their own thread count."""
    methods = []
    xgboost = libraries.get("xgboost")
    if xgboost is not None:

        def prepare_xgboost(model, n_jobs):
            return explain_function(
                xgboost_predict(xgboost, model, n_jobs, pred_contribs=True),
                split_contributions(model.n_features_in_),
            )

        methods.append(Method(
            "xgboost pred_contribs", prepare_xgboost, True,
            f"xgboost {xgboost.__version__}",
            supports=lambda model: isinstance(model, xgboost.XGBModel),
        ))  # fmt: skip
    lightgbm = libraries.get("lightgbm")
    if lightgbm is not None:

        def prepare_lightgbm(model, n_jobs):
            threads = effective_n_threads(n_jobs)
            return explain_function(
                lambda X: model.predict(X, pred_contrib=True, num_threads=threads),
                split_contributions(model.n_features_in_),
            )

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
        return explain_function(
            lambda X: explainer.shap_values(X, check_additivity=False),
            lambda phi: (outputs_first(phi), explainer.expected_value),
        )

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


def add_quadrashap_path(parser) -> None:
    """The ``--quadrashap-path`` option, which ``quadrashap_method`` takes."""
    parser.add_argument(
        "--quadrashap-path", default=os.environ.get("QUADRASHAP_PATH"),
        help="directory holding the quadrashap package, appended to sys.path "
        "(default: $QUADRASHAP_PATH)",
    )  # fmt: skip


def all_methods(libraries, quadrashap_path):
    """skshapley's method (or None) and the anchors that are importable, in
    table order, the versions line, and why the others are skipped."""
    skipped = []
    sk, reason = skshapley_method()
    methods = [sk] if sk is not None else []
    if sk is None:
        skipped.append(reason)
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
    quadra, reason = quadrashap_method(quadrashap_path)
    if quadra is not None:
        methods.append(quadra)
    else:
        skipped.append(reason)

    versions = [f"skshapley {skshapley.__version__}"]
    versions += [
        f"{m.name.split()[0]} {m.version}" for m in (shap, quadra) if m is not None
    ]
    if fasttree:
        versions.append(fasttree[0].version)
    versions += [m.version for m in native]
    return sk, methods, " | ".join(versions), skipped


def machine() -> str:
    """Library versions, the machine, its threads and load, and the time."""
    return (
        f"numpy {np.__version__} | scikit-learn {sklearn.__version__} | "
        f"Python {platform.python_version()} | {platform.machine()} | "
        f"{os.cpu_count()} CPUs (n_jobs=-1: {effective_n_threads(-1)} threads) | "
        f"load {os.getloadavg()[0]:.2f} | "
        f"{datetime.datetime.now().isoformat(timespec='seconds')}"
    )


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


@dataclass
class WithBackground:
    """A model and the background data its interventional values average over."""

    model: object
    background: np.ndarray


def interventional_methods():
    """skshapley's, shap's and FastTreeSHAP's interventional values: their
    ``prepare(pair, n_jobs)`` take a :class:`WithBackground`."""
    from skshapley import TreeExplainer

    def prepare_skshapley(pair, n_jobs):
        explainer = TreeExplainer(
            pair.model, feature_perturbation="interventional", n_jobs=n_jobs
        ).fit(pair.background)
        explain = explain_function(
            explainer.explain,
            lambda phi: (phi.to_numpy(), explainer.expected_value_),
        )
        explain.raw_predict = explainer.raw_predict
        return explain

    # Its time is not linear in the rows: tables rebuilt at each call (beyond
    # the budget) serve blocks of up to 512 rows. Always timed on all rows.
    methods = [
        Method("skshapley interventional", prepare_skshapley, True, scalable=False)
    ]
    shap = import_shap()
    if shap is not None:

        def prepare_shap(pair, n_jobs):
            # The whole background: shap's masker keeps 100 rows by default.
            masker = shap.maskers.Independent(
                pair.background, max_samples=len(pair.background)
            )
            explainer = shap.TreeExplainer(
                pair.model, masker, feature_perturbation="interventional"
            )
            return explain_function(
                lambda X: explainer.shap_values(X, check_additivity=False),
                lambda phi: (phi, explainer.expected_value),
            )

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
            return explain_function(
                lambda X: explainer.shap_values(X, check_additivity=False),
                lambda phi: (phi, explainer.expected_value),
            )

        methods.append(
            Method(
                "fasttreeshap interventional",
                prepare_fasttreeshap,
                True,
                fasttreeshap.__name__,
            )
        )
    return methods
