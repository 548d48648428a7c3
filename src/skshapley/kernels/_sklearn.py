"""scikit-learn's product-kernel models, parsed into :class:`KernelGame`.

Supported: ``KernelRidge`` (``rbf``, ``laplacian``, ``chi2`` or a Gaussian
process kernel), ``SVR`` / ``NuSVR`` / ``SVC`` / ``NuSVC`` / ``OneClassSVM``
(``rbf``), ``GaussianProcessRegressor`` and ``GaussianProcessClassifier``
(binary, or one-vs-rest for several classes) whose kernels are sums of
products of ``RBF`` and ``ConstantKernel`` (plus ``WhiteKernel``, which is
zero between distinct points and so adds nothing at prediction).

Models may come from files (skops), so every number read is checked
(finite, in range, of the right shape) and a bad one is a ``ValueError``
naming the attribute.
"""

from itertools import product
from numbers import Real

import numpy as np
import scipy.sparse as sp
from sklearn.gaussian_process import GaussianProcessClassifier, GaussianProcessRegressor
from sklearn.gaussian_process import kernels as gp_kernels
from sklearn.kernel_ridge import KernelRidge
from sklearn.svm import SVC, SVR, NuSVC, NuSVR, OneClassSVM
from sklearn.utils.validation import check_is_fitted

from .._errors import UnsupportedModelError
from .._limits import MAX_FEATURES
from .._malformed import checked_classes, checked_numbers, malformed_model_errors
from .._outputs import regression_output_names
from ._game import KernelComponent, KernelGame

SUPPORTED_MODELS = (
    "KernelRidge",
    "SVR",
    "NuSVR",
    "SVC",
    "NuSVC",
    "OneClassSVM",
    "GaussianProcessRegressor",
    "GaussianProcessClassifier (binary or one-vs-rest)",
)
_STRING_KERNELS = ("rbf", "laplacian", "chi2")
_GP_KERNELS = (
    "RBF, Matern(nu=inf), ConstantKernel, WhiteKernel and their sums and products"
)


@malformed_model_errors
def parse_kernel_model(model) -> KernelGame:
    """The kernel game of a fitted scikit-learn product-kernel model.

    Raises ``UnsupportedModelError`` (a ``TypeError``) for other models and
    kernels, naming what is supported, ``NotFittedError`` for unfitted
    models and ``ValueError`` for malformed ones (a tampered file).
    """
    for model_type, fitted_attribute, parse in _PARSERS:
        if isinstance(model, model_type):
            # By attribute: an unfitted Gaussian process predicts from its
            # prior, so scikit-learn does not call it unfitted.
            check_is_fitted(model, fitted_attribute)
            return parse(model)
    raise UnsupportedModelError(
        f"ProductKernelExplainer does not support {type(model).__name__}; "
        f"supported models: {', '.join(SUPPORTED_MODELS)}."
    )


def _kernel_ridge(model: KernelRidge) -> KernelGame:
    reference = _reference(model.X_fit_, "X_fit_")
    n_features = reference.shape[1]
    if isinstance(model.kernel, gp_kernels.Kernel):
        terms = _gp_terms(model.kernel, n_features)
    elif isinstance(model.kernel, str) and model.kernel in _STRING_KERNELS:
        default = 1.0 if model.kernel == "chi2" else 1.0 / n_features
        gamma = default if model.gamma is None else _number(model.gamma, "gamma")
        distance = {"rbf": "squared", "laplacian": "absolute"}.get(model.kernel, "chi2")
        terms = [(1.0, {distance: np.full(n_features, gamma)})]
    else:
        raise UnsupportedModelError(
            f"KernelRidge with kernel={_kernel_name(model.kernel)} is not a product "
            f"kernel; supported: {', '.join(map(repr, _STRING_KERNELS))} or a "
            f"Gaussian process kernel of {_GP_KERNELS}."
        )
    dual = checked_numbers(model.dual_coef_, "dual_coef_", ndim=(1, 2))
    return _game(
        model, [(reference, dual, terms)], np.zeros(_n_columns(dual)),
        _target_names(dual), "value",
    )  # fmt: skip


def _svm(model) -> KernelGame:
    if model.kernel != "rbf":
        raise UnsupportedModelError(
            f"{type(model).__name__} with kernel={_kernel_name(model.kernel)} is "
            "not a product kernel; supported: 'rbf'."
        )
    reference = _reference(model.support_vectors_, "support_vectors_")
    gamma = _number(model._gamma, "gamma")
    terms = [(1.0, {"squared": np.full(reference.shape[1], gamma)})]
    # What predict uses: libsvm's own coefficients (dual_coef_ and
    # intercept_ are copies, negated for binary classifiers), as a file may
    # hold them.
    is_classifier = isinstance(model, SVC | NuSVC)
    if model._impl != _LIBSVM_IMPLEMENTATION[type(model).__name__]:
        raise ValueError(
            f"The model's libsvm implementation {model._impl!r} is not that of "
            f"{type(model).__name__}; the model file may be corrupt."
        )
    sign = -1.0 if is_classifier and len(checked_classes(model)) == 2 else 1.0
    intercept = sign * checked_numbers(model._intercept_, "intercept_", ndim=(1,))
    # sparse after fitting on sparse data
    dual = sign * checked_numbers(_dense(model._dual_coef_), "dual_coef_", ndim=(2,))
    if dual.shape[1] != len(reference):
        raise ValueError(
            f"The model's dual_coef_ has {dual.shape[1]} columns for "
            f"{len(reference)} support vectors; the model file may be corrupt."
        )
    if not is_classifier:
        # OneClassSVM: decision_function, positive for inliers.
        raw_output = "decision function" if model._impl == "one_class" else "value"
        return _game(model, [(reference, dual.T, terms)], intercept,
                     regression_output_names(1), raw_output)  # fmt: skip
    classes = checked_classes(model)
    n_pairs = len(classes) * (len(classes) - 1) // 2
    if dual.shape[0] != len(classes) - 1 or len(intercept) != n_pairs:
        raise ValueError(
            f"The model's dual_coef_ and intercept_ do not fit {len(classes)} "
            "classes; the model file may be corrupt."
        )
    if len(classes) == 2:
        weights, names = dual.T, (classes[1],)
    else:
        weights, names = _one_vs_one(model, dual)
    return _game(model, [(reference, weights, terms)], intercept, names,
                 "decision function")  # fmt: skip


_LIBSVM_IMPLEMENTATION = {
    "SVC": "c_svc", "NuSVC": "nu_svc", "SVR": "epsilon_svr", "NuSVR": "nu_svr",
    "OneClassSVM": "one_class",
}  # fmt: skip


def _one_vs_one(model, dual: np.ndarray) -> tuple[np.ndarray, tuple]:
    """Dual weights of each pairwise decision function, in libsvm's order.

    The function of classes ``i < j`` uses the support vectors of class ``i``
    with the coefficients of row ``j - 1`` of ``dual`` (``dual_coef_``), and
    those of class ``j`` with row ``i``.
    """
    classes = model.classes_
    n_support = np.asarray(model.n_support_)
    if (
        n_support.shape != (len(classes),)
        or n_support.dtype.kind not in "iu"
        or np.any(n_support < 0)
        or n_support.sum() != dual.shape[1]
    ):
        raise ValueError(
            "The model's n_support_ does not count its support vectors per "
            "class; the model file may be corrupt."
        )
    start = np.concatenate([[0], np.cumsum(n_support)])
    columns, names = [], []
    for i in range(len(classes)):
        for j in range(i + 1, len(classes)):
            weights = np.zeros(start[-1])
            of_i, of_j = slice(start[i], start[i + 1]), slice(start[j], start[j + 1])
            weights[of_i] = dual[j - 1, of_i]
            weights[of_j] = dual[i, of_j]
            columns.append(weights)
            names.append(f"{classes[i]} vs {classes[j]}")
    return np.stack(columns, axis=1), tuple(names)


def _gp_regressor(model: GaussianProcessRegressor) -> KernelGame:
    if np.ndim(model.X_train_) != 2:
        raise UnsupportedModelError(
            "GaussianProcessRegressor on non-vector inputs is not supported."
        )
    reference = _reference(model.X_train_, "X_train_")
    terms = _gp_terms(model.kernel_, reference.shape[1])
    # predict: y_std * (K @ alpha_) + y_mean, with a 2-D single target squeezed.
    dual = checked_numbers(model.alpha_, "alpha_", ndim=(1, 2))
    std = checked_numbers(model._y_train_std, "_y_train_std", ndim=(0, 1))
    mean = checked_numbers(model._y_train_mean, "_y_train_mean", ndim=(0, 1))
    if std.size not in (1, _n_columns(dual)) or mean.size not in (1, _n_columns(dual)):
        raise ValueError(
            "The model's target mean and scale do not fit its targets; the "
            "model file may be corrupt."
        )
    if dual.ndim == 2 and dual.shape[1] == 1:
        dual, std, mean = dual[:, 0], std.reshape(-1)[0], mean.reshape(-1)[0]
    intercept = np.broadcast_to(mean, (_n_columns(dual),)).astype(np.float64)
    return _game(model, [(reference, dual * std, terms)], intercept,
                 _target_names(dual), "value")  # fmt: skip


def _gp_classifier(model: GaussianProcessClassifier) -> KernelGame:
    """The latent mean of each binary Laplace model: one output for a binary
    classifier (``classes_[1]``), one per class (that class against the
    rest) for a one-vs-rest multiclass one.
    """
    classes = checked_classes(model)
    if len(classes) == 2:
        parts = [_latent_mean(model.base_estimator_, "base_estimator_")]
        return _game(model, parts, np.zeros(1), (classes[1],), "latent mean")
    if model.multi_class != "one_vs_rest":
        raise UnsupportedModelError(
            "ProductKernelExplainer supports GaussianProcessClassifier with "
            f"multi_class='one_vs_rest' for {len(classes)} classes; got "
            f"multi_class={model.multi_class!r}."
        )
    estimators = model.base_estimator_.estimators_
    if not isinstance(estimators, list) or len(estimators) != len(classes):
        raise ValueError(
            f"The model's base_estimator_.estimators_ must be a list of "
            f"{len(classes)} binary classifiers, one per class; the model file "
            "may be corrupt."
        )
    parts = []
    for k, laplace in enumerate(estimators):
        reference, dual, terms = _latent_mean(
            laplace, f"base_estimator_.estimators_[{k}]"
        )
        weights = np.zeros((len(reference), len(classes)))
        weights[:, k] = dual
        parts.append((reference, weights, terms))
    return _game(model, _merged(parts), np.zeros(len(classes)), classes,
                 "latent mean")  # fmt: skip


def _latent_mean(laplace, name: str) -> tuple[np.ndarray, np.ndarray, list]:
    """The latent mean ``k(x, X_train) @ (y_train - pi)`` of a binary Laplace
    model, as reference points, dual weights and kernel terms.
    """
    reference = _reference(laplace.X_train_, f"{name}.X_train_")
    terms = _gp_terms(laplace.kernel_, reference.shape[1])
    y_train = checked_numbers(laplace.y_train_, f"{name}.y_train_", ndim=(1,))
    pi = checked_numbers(laplace.pi_, f"{name}.pi_", ndim=(1,))
    if not y_train.shape == pi.shape == (len(reference),):
        raise ValueError(
            f"The model's {name}.y_train_ and pi_ do not fit its training "
            "points; the model file may be corrupt."
        )
    return reference, y_train - pi, terms


def _merged(parts: list) -> list:
    """``parts`` with the weights of equal reference points and kernels added.

    The one-vs-rest classifiers share their training points; those whose
    fitted kernels are equal too (always with ``optimizer=None``) become one
    set of games with one output each, evaluated once.
    """
    merged = []
    for reference, weights, terms in parts:
        for index, (other, other_weights, other_terms) in enumerate(merged):
            if _same_terms(terms, other_terms) and np.array_equal(reference, other):
                merged[index] = (other, other_weights + weights, other_terms)
                break
        else:
            merged.append((reference, weights, terms))
    return merged


def _same_terms(first: list, second: list) -> bool:
    """Whether two kernels' terms (see :func:`_gp_terms`) are the same."""
    return len(first) == len(second) and all(
        c1 == c2
        and d1.keys() == d2.keys()
        and all(np.array_equal(d1[key], d2[key]) for key in d1)
        for (c1, d1), (c2, d2) in zip(first, second, strict=True)
    )


_PARSERS = (
    (KernelRidge, "dual_coef_", _kernel_ridge),
    (SVR | NuSVR | SVC | NuSVC | OneClassSVM, "support_vectors_", _svm),
    (GaussianProcessRegressor, "X_train_", _gp_regressor),
    (GaussianProcessClassifier, "base_estimator_", _gp_classifier),
)


def _gp_terms(kernel, n_features: int) -> list[tuple[float, dict]]:
    """A Gaussian process kernel as a sum of ``constant * product kernel`` terms.

    Each term is ``(constant, {"squared": gamma})``; an empty dict is the
    constant kernel. Sums concatenate terms, products multiply them out.
    """
    if isinstance(kernel, gp_kernels.Sum):
        return _gp_terms(kernel.k1, n_features) + _gp_terms(kernel.k2, n_features)
    if isinstance(kernel, gp_kernels.Product):
        return [
            (c1 * c2, _add_coefficients(d1, d2))
            for (c1, d1), (c2, d2) in product(
                _gp_terms(kernel.k1, n_features), _gp_terms(kernel.k2, n_features)
            )
        ]
    if isinstance(kernel, gp_kernels.ConstantKernel):
        return [(_number(kernel.constant_value, "ConstantKernel's constant_value"), {})]
    if isinstance(kernel, gp_kernels.WhiteKernel):
        return []
    is_rbf = type(kernel) is gp_kernels.RBF or (
        isinstance(kernel, gp_kernels.Matern) and np.isinf(kernel.nu)
    )
    if is_rbf:
        length_scale = checked_numbers(kernel.length_scale, "length_scale", ndim=(0, 1))
        if length_scale.ndim == 1 and len(length_scale) != n_features:
            raise ValueError(
                f"The RBF kernel has {len(length_scale)} length scales for "
                f"{n_features} features."
            )
        if np.any(length_scale <= 0):
            raise ValueError(
                f"The RBF kernel's length_scale must be positive; got {length_scale}."
            )
        gamma = np.broadcast_to(0.5 / length_scale**2, (n_features,))
        return [(1.0, {"squared": gamma.copy()})]
    raise UnsupportedModelError(
        f"The kernel {kernel!r} ({type(kernel).__name__}) is not a product "
        f"kernel; supported: {_GP_KERNELS}."
    )


def _add_coefficients(first: dict, second: dict) -> dict:
    """The coefficients of the product of two product kernels."""
    return {
        name: first.get(name, 0.0) + second.get(name, 0.0)
        for name in first.keys() | second.keys()
    }


def _game(model, parts, intercept, output_names, raw_output) -> KernelGame:
    """Assemble the game of a sum of kernel expansions.

    ``parts`` lists ``(reference, dual, terms)``: reference points, their
    dual weights (one column per output) and the kernel's terms (see
    :func:`_gp_terms`). Constant terms go to the intercept.
    """
    intercept = np.array(intercept, dtype=np.float64)
    n_outputs = len(output_names)
    if intercept.shape != (n_outputs,):
        raise ValueError(
            f"The model's intercept has shape {intercept.shape} for {n_outputs} "
            "outputs; the model file may be corrupt."
        )
    n_features = parts[0][0].shape[1]
    components = []
    for reference, dual, terms in parts:
        dual = np.asarray(dual, dtype=np.float64)
        if len(dual) != len(reference) or dual.size != len(reference) * n_outputs:
            raise ValueError(
                f"The model has dual coefficients of shape {dual.shape} for "
                f"{len(reference)} reference points and {n_outputs} outputs; the "
                "model file may be corrupt."
            )
        if reference.shape[1] != n_features:
            raise ValueError(
                f"The model's training points have {reference.shape[1]} and "
                f"{n_features} features; the model file may be corrupt."
            )
        weights = dual.reshape(len(reference), n_outputs)
        zeros = np.zeros(n_features)
        for constant, coefficients in terms:
            if not any(np.any(gamma != 0.0) for gamma in coefficients.values()):
                intercept += constant * weights.sum(axis=0)
                continue
            components.append(
                KernelComponent(
                    reference=reference,
                    weights=constant * weights,
                    squared=coefficients.get("squared", zeros),
                    absolute=coefficients.get("absolute", zeros),
                    chi2=coefficients.get("chi2", zeros),
                )
            )
    names = getattr(model, "feature_names_in_", None)
    return KernelGame(
        components=tuple(components),
        intercept=intercept,
        output_names=tuple(np.asarray(output_names).tolist()),
        raw_output=raw_output,
        feature_names=None if names is None else np.asarray(names, dtype=object),
        n_features=n_features,
    )


def _number(value, name: str) -> float:
    """``value`` if it is a finite nonnegative number (as scikit-learn requires)."""
    if isinstance(value, bool) or not isinstance(value, Real | np.ndarray):
        raise ValueError(f"The model's {name} must be a number; got {value!r}.")
    if np.ndim(value) != 0 or not (np.isfinite(value) and value >= 0):
        raise ValueError(
            f"The model's {name} must be a finite number >= 0; got {value!r}."
        )
    return float(value)


def _reference(X, name: str) -> np.ndarray:
    """Reference points: a non-empty finite C-contiguous float64 matrix."""
    reference = np.ascontiguousarray(checked_numbers(_dense(X), name, ndim=(2,)))
    n_points, n_features = reference.shape
    if n_points == 0 or not 1 <= n_features <= MAX_FEATURES:
        raise ValueError(
            f"The model's {name} must hold at least one point of 1 to "
            f"{MAX_FEATURES:,} features; got shape {reference.shape}."
        )
    return reference


def _dense(X) -> np.ndarray:
    """``X``, densified if sparse."""
    return X.toarray() if sp.issparse(X) else X


def _n_columns(dual: np.ndarray) -> int:
    return 1 if dual.ndim == 1 else dual.shape[1]


def _target_names(dual: np.ndarray) -> tuple[str, ...]:
    """One name per column of ``dual`` (a 2-D ``predict``), else "target"."""
    return regression_output_names(_n_columns(dual), as_columns=dual.ndim == 2)


def _kernel_name(kernel) -> str:
    if isinstance(kernel, str):
        return repr(kernel)
    return getattr(kernel, "__name__", type(kernel).__name__)
