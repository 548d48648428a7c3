"""The TreeSHAP implementations that ``trees.py`` and ``latency.py`` time side
by side: skshapley's, and the anchors it is compared with (shap, shapiq,
FastTreeSHAP, the QuadraSHAP reference code, XGBoost's and LightGBM's own
contributions; for interventional values also woodelf).

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

A method's ``version`` names its library and that library's version
(``"shap 0.51.0"``): the tables' headers print them.
"""

import contextlib
import datetime
import importlib
import importlib.metadata
import inspect
import os
import platform
import sys
import textwrap
import warnings
from collections.abc import Callable
from dataclasses import dataclass, field, replace

import numpy as np
import pandas as pd
import sklearn

import skshapley
from skshapley._runtime.threads import effective_n_threads


class Unavailable(Exception):
    """The method is not installed or does not support the model."""


@dataclass
class Method:
    name: str
    prepare: Callable
    threaded: bool  # whether it has a thread count (n_jobs)
    version: str = ""  # "library version"
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

    return Method("skshapley", prepare, True, skshapley_version()), None


def skshapley_version() -> str:
    """ "skshapley version", the first entry of a versions line."""
    return module_version(skshapley)


def module_version(module) -> str:
    """ "name version" of an imported module (its top-level package's name)."""
    return f"{module.__name__} {getattr(module, '__version__', '?')}"


def distribution_version(name) -> str:
    """An installed distribution's version, "?" if unknown (shapiq 1.4's
    ``__version__`` is None)."""
    try:
        return importlib.metadata.version(name)
    except importlib.metadata.PackageNotFoundError:
        return "?"


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
    method = Method("shap path-dependent", None, False, module_version(shap))

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


def import_shapiq():
    """The shapiq module and its version ("shapiq 1.8.0"), or None and why not."""
    try:
        shapiq = importlib.import_module("shapiq")
    except ImportError as error:
        return None, f"shapiq not importable ({error}); skipped"
    return shapiq, f"shapiq {distribution_version('shapiq')}"


def shapiq_explainer(shapiq, version, model, index="SV", max_order=1, **options):
    """``shapiq.TreeExplainer(model, index=index, max_order=max_order,
    min_order=1, **options)``: plain Shapley values, order 1 only, unless
    told. Unavailable when shapiq rejects the model (its TypeError or
    ValueError)."""
    try:
        return shapiq.TreeExplainer(
            model, index=index, max_order=max_order, min_order=1, **options
        )
    except (TypeError, ValueError) as error:
        # its first sentence (shapiq 1.4 then lists every model it supports)
        message = str(error).split(".Supported models")[0]
        message = textwrap.shorten(message, 100, placeholder=" ...")
        raise Unavailable(
            f"{version} rejects {type(model).__name__} ({message})"
        ) from None


def shapiq_values(explanations):
    """shapiq's explanations of rows as an (n_rows, n_features) array: an
    ``InteractionValuesBatch`` (shapiq >= 1.7), whose ``values`` map ``(j,)``
    to feature j's values on every row, or a list of ``InteractionValues``."""
    batch = getattr(explanations, "values", None)
    if isinstance(batch, dict):
        phi = np.zeros((len(explanations), explanations.n_players))
        for (j,), column in batch.items():
            phi[:, j] = column
        return phi
    return np.stack([values.get_n_order_values(1) for values in explanations])


def shapiq_interaction_matrices(explanations):
    """shapiq's order-2 SII of rows as shap's (n_rows, n_features,
    n_features) interaction matrices: half of each pair's SII off the
    diagonal, and on it the singleton's (its Shapley value) less its row's
    other entries. An ``InteractionValuesBatch`` (shapiq >= 1.7) or a list of
    ``InteractionValues``."""
    batch = getattr(explanations, "values", None)
    if isinstance(batch, dict):
        n_features = explanations.n_players
    else:
        n_features = explanations[0].n_players
        batch = {
            players: np.array([values[players] for values in explanations])
            for players in explanations[0].interaction_lookup
        }
    rows = len(next(iter(batch.values())))
    matrices = np.zeros((rows, n_features, n_features))
    singletons = np.zeros((rows, n_features))
    for players, column in batch.items():
        if len(players) == 1:
            singletons[:, players[0]] = column
        elif len(players) == 2:
            j, k = players
            matrices[:, j, k] = matrices[:, k, j] = column / 2
    diagonal = np.arange(n_features)
    matrices[:, diagonal, diagonal] = singletons - matrices.sum(axis=2)
    return matrices


def shapiq_call(explainer):
    """``X -> explainer.explain_X(X)``, X as an array (shapiq indexes
    ``X[i, :]``: no DataFrame). Its ``n_jobs`` is not used: it spreads the rows
    over joblib worker processes, each sent the whole explainer."""
    return lambda X: explainer.explain_X(np.asarray(X, dtype=float))


def shapiq_method():
    """shapiq's path-dependent TreeExplainer (Shapley values, order 1; a
    single-threaded kernel), or None; and a note on its algorithm, or why it
    is skipped."""
    shapiq, version = import_shapiq()
    if shapiq is None:
        return None, version
    note = None
    if "backend" not in inspect.signature(shapiq.TreeExplainer).parameters:
        note = (
            f"{version} predates the compiled QuadratureTreeSHAP of shapiq >= 1.7 "
            "(Python >= 3.12): its path-dependent values are TreeSHAP-IQ or "
            "LinearTreeSHAP, far slower"
        )

    def prepare(model, n_jobs):
        explainer = shapiq_explainer(shapiq, version, model)
        base = explainer.baseline_value  # the trees' cover-weighted mean
        return explain_function(
            shapiq_call(explainer),
            lambda explanations: (shapiq_values(explanations), base),
        )

    return Method("shapiq path-dependent", prepare, False, version), note


def shapiq_interactions_method():
    """shapiq's path-dependent TreeExplainer of order-2 Shapley interaction
    indices (SII) in shap's convention, or None; and why it is skipped."""
    shapiq, version = import_shapiq()
    if shapiq is None:
        return None, version

    def prepare(model, n_jobs):
        explainer = shapiq_explainer(shapiq, version, model, index="SII", max_order=2)
        base = explainer.baseline_value

        def unpack(explanations):
            matrices = shapiq_interaction_matrices(explanations)
            return matrices.reshape(len(matrices), 1, -1), base

        return explain_function(shapiq_call(explainer), unpack)

    return Method("shapiq interactions", prepare, False, version), None


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
    version = module_version(module)

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
            module_version(xgboost),
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
            module_version(lightgbm),
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
    return Method(name, prepare, False, f"quadrashap {version} ({location})"), None


def add_quadrashap_path(parser) -> None:
    """The ``--quadrashap-path`` option, which ``quadrashap_method`` takes."""
    parser.add_argument(
        "--quadrashap-path", default=os.environ.get("QUADRASHAP_PATH"),
        help="directory holding the quadrashap package, appended to sys.path "
        "(default: $QUADRASHAP_PATH)",
    )  # fmt: skip


def all_methods(libraries, quadrashap_path):
    """skshapley's method (or None) and the anchors that are importable, in
    table order, the versions line, and the notes to print: why the others
    are skipped, and how an old release differs."""
    notes = []
    sk, reason = skshapley_method()
    methods = [sk] if sk is not None else []
    if sk is None:
        notes.append(reason)
    methods += native_methods(libraries)
    for method, note in (shap_method(), shapiq_method()):
        if method is not None:
            methods.append(method)
        if note:
            notes.append(note)
    fasttree, reason = fasttreeshap_methods()
    methods += fasttree
    if reason:
        notes.append(reason)
    quadra, reason = quadrashap_method(quadrashap_path)
    if quadra is not None:
        methods.append(quadra)
    else:
        notes.append(reason)
    return sk, methods, versions_line(methods, libraries), notes


def versions_line(methods, libraries) -> str:
    """skshapley's version, each method's library's and each boosting library's
    (the workloads' models), once each."""
    versions = [skshapley_version()] + [m.version for m in methods if m.version]
    versions += [module_version(module) for module in libraries.values()]
    return " | ".join(dict.fromkeys(versions))


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
    # the model's mean raw output on the background: the interventional base,
    # for a method that does not compute its own (woodelf)
    mean_raw: np.ndarray


def with_background(workload, n_background, start=None):
    """The workload whose model is a :class:`WithBackground` of its first
    ``n_background`` rows, explaining its rows from ``start`` on (default:
    those after the background)."""
    start = n_background if start is None else start
    raw = workload.raw if workload.raw64 is None else workload.raw64
    pair = WithBackground(
        workload.model, workload.X[:n_background], raw[:n_background].mean(axis=0)
    )
    return replace(
        workload, model=pair, X=workload.X[start:], raw=workload.raw[start:],
        raw64=None if workload.raw64 is None else workload.raw64[start:],
    )  # fmt: skip


def interventional_methods():
    """skshapley's interventional values, and the anchors' that are importable
    (shap's, shapiq's, woodelf's, FastTreeSHAP's): their ``prepare(pair,
    n_jobs)`` take a :class:`WithBackground`; and why the others are skipped."""
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
    sk = Method(
        "skshapley interventional",
        prepare_skshapley,
        True,
        skshapley_version(),
        scalable=False,
    )
    methods, notes = [sk], []
    anchors = (
        shap_interventional_method(),
        shapiq_interventional_method(),
        woodelf_method(),
        fasttreeshap_interventional_method(),
    )
    for method, reason in anchors:
        if method is not None:
            methods.append(method)
        else:
            notes.append(reason)
    return methods, notes


def shap_interventional_method():
    """shap's interventional TreeExplainer over the whole background
    (single-threaded), or None and why not."""
    shap = import_shap()
    if shap is None:
        return None, "shap not importable; skipped"

    def prepare(pair, n_jobs):
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

    return Method("shap interventional", prepare, False, module_version(shap)), None


def shapiq_interventional_method():
    """shapiq's interventional TreeExplainer (Shapley values, order 1), with its
    own kernel, or None and why not."""
    shapiq, version = import_shapiq()
    if shapiq is None:
        return None, version
    parameters = inspect.signature(shapiq.TreeExplainer).parameters
    if "mode" not in parameters:  # other keywords are ignored: check
        return None, f"{version}'s TreeExplainer has no interventional mode; skipped"
    # shapiq >= 1.7 hands inputs of rows x background >= 1e5 to woodelf where
    # it is installed (backend="auto"): its own kernel is timed here
    options = {"backend": "shapiq"} if "backend" in parameters else {}
    # Its OpenMP kernel (and runtime), which shapiq loads on first use, loaded
    # now: threadpool_limits only limits the runtimes loaded when it is entered.
    with contextlib.suppress(ImportError):
        importlib.import_module("shapiq.tree.interventional.cext")

    def prepare(pair, n_jobs):
        explainer = shapiq_explainer(
            shapiq, version, pair.model, mode="interventional",
            reference_dataset=pair.background, **options,
        )  # fmt: skip
        base = explainer.baseline_value  # the mean prediction on the background
        return explain_function(
            shapiq_call(explainer),
            lambda explanations: (shapiq_values(explanations), base),
        )

    # Threaded by OpenMP over the trees (in shapiq 1.8; its threads are those
    # threadpool_limits leaves, all CPUs outside it), one row at a time.
    return Method("shapiq interventional", prepare, True, version), None


def woodelf_method():
    """woodelf's interventional Shapley values (the woodelf-explainer package;
    NumPy, single-threaded), or None and why not."""
    try:
        woodelf = importlib.import_module("woodelf")
    except ImportError as error:
        return None, f"woodelf not importable ({error}); skipped"
    if not hasattr(woodelf, "WoodelfExplainer"):
        return None, "the woodelf installed is not woodelf-explainer's; skipped"

    def prepare(pair, n_jobs):
        columns = [f"x{j}" for j in range(pair.background.shape[1])]
        explainer = woodelf.WoodelfExplainer(
            pair.model, pd.DataFrame(pair.background, columns=columns),
            feature_perturbation="interventional",
        )  # fmt: skip
        # Its expected_value runs shap's TreeExplainer on the background: the
        # model's mean raw output there is the same value, without shap.
        return explain_function(
            lambda X: explainer.shap_values(
                pd.DataFrame(X, columns=columns), verbose=False
            ),
            lambda phi: (phi, pair.mean_raw),
        )

    version = f"woodelf-explainer {distribution_version('woodelf-explainer')}"
    # Not linear in the rows: each call first processes the whole background,
    # then all rows at once. Always timed on all rows.
    method = Method("woodelf interventional", prepare, False, version, scalable=False)
    return method, None


def fasttreeshap_interventional_method():
    """FastTreeSHAP's interventional TreeExplainer, or None and why not."""
    fasttreeshap = import_fasttreeshap()
    if fasttreeshap is None:
        return None, "fasttreeshap(-fixed) not importable; skipped"

    def prepare(pair, n_jobs):
        explainer = fasttreeshap.TreeExplainer(
            pair.model, data=pair.background,
            feature_perturbation="interventional", n_jobs=n_jobs,
        )  # fmt: skip
        return explain_function(
            lambda X: explainer.shap_values(X, check_additivity=False),
            lambda phi: (phi, explainer.expected_value),
        )

    version = module_version(fasttreeshap)
    return Method("fasttreeshap interventional", prepare, True, version), None
