"""scikit-learn's product-kernel models, parsed into :class:`KernelGame`.

Supported: ``KernelRidge`` (``rbf``, ``laplacian``, ``chi2`` or a Gaussian
process kernel), ``SVR`` / ``NuSVR`` / ``SVC`` / ``NuSVC`` (``rbf``),
``GaussianProcessRegressor`` and binary ``GaussianProcessClassifier`` whose
kernels are sums of products of ``RBF`` and ``ConstantKernel`` (plus
``WhiteKernel``, which is zero between distinct points and so adds nothing at
prediction).
"""

from itertools import product

import numpy as np
import scipy.sparse as sp
from sklearn.gaussian_process import GaussianProcessClassifier, GaussianProcessRegressor
from sklearn.gaussian_process import kernels as gp_kernels
from sklearn.kernel_ridge import KernelRidge
from sklearn.svm import SVC, SVR, NuSVC, NuSVR
from sklearn.utils.validation import check_is_fitted

from .._errors import UnsupportedModelError
from ._game import KernelComponent, KernelGame

SUPPORTED_MODELS = (
    "KernelRidge",
    "SVR",
    "NuSVR",
    "SVC",
    "NuSVC",
    "GaussianProcessRegressor",
    "GaussianProcessClassifier (binary)",
)
_STRING_KERNELS = ("rbf", "laplacian", "chi2")
_GP_KERNELS = (
    "RBF, Matern(nu=inf), ConstantKernel, WhiteKernel and their sums and products"
)


def parse_kernel_model(model) -> KernelGame:
    """The kernel game of a fitted scikit-learn product-kernel model.

    Raises ``TypeError`` for other models and kernels, naming what is
    supported, and ``NotFittedError`` for unfitted models.
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
    reference = _dense(model.X_fit_)
    n_features = reference.shape[1]
    if isinstance(model.kernel, gp_kernels.Kernel):
        terms = _gp_terms(model.kernel, n_features)
    elif isinstance(model.kernel, str) and model.kernel in _STRING_KERNELS:
        default = 1.0 if model.kernel == "chi2" else 1.0 / n_features
        gamma = default if model.gamma is None else float(model.gamma)
        distance = {"rbf": "squared", "laplacian": "absolute"}.get(model.kernel, "chi2")
        terms = [(1.0, {distance: np.full(n_features, gamma)})]
    else:
        raise TypeError(
            f"KernelRidge with kernel={_kernel_name(model.kernel)} is not a product "
            f"kernel; supported: {', '.join(map(repr, _STRING_KERNELS))} or a "
            f"Gaussian process kernel of {_GP_KERNELS}."
        )
    dual = np.asarray(model.dual_coef_, dtype=np.float64)
    return _game(
        model, reference, dual, terms, np.zeros(_n_columns(dual)),
        _target_names(dual), "value",
    )  # fmt: skip


def _svm(model) -> KernelGame:
    if model.kernel != "rbf":
        raise TypeError(
            f"{type(model).__name__} with kernel={_kernel_name(model.kernel)} is "
            "not a product kernel; supported: 'rbf'."
        )
    reference = _dense(model.support_vectors_)
    terms = [(1.0, {"squared": np.full(reference.shape[1], float(model._gamma))})]
    intercept = np.asarray(model.intercept_, dtype=np.float64)
    dual = _dense(model.dual_coef_)  # sparse after fitting on sparse data
    if not isinstance(model, SVC | NuSVC):
        return _game(model, reference, dual.T, terms, intercept,
                     ("target",), "value")  # fmt: skip
    classes = model.classes_
    if len(classes) == 2:
        weights, names = dual.T, (classes[1],)
    else:
        weights, names = _one_vs_one(model, dual)
    return _game(model, reference, weights, terms, intercept, names,
                 "decision function")  # fmt: skip


def _one_vs_one(model, dual: np.ndarray) -> tuple[np.ndarray, tuple]:
    """Dual weights of each pairwise decision function, in libsvm's order.

    The function of classes ``i < j`` uses the support vectors of class ``i``
    with the coefficients of row ``j - 1`` of ``dual`` (``dual_coef_``), and
    those of class ``j`` with row ``i``.
    """
    classes = model.classes_
    start = np.concatenate([[0], np.cumsum(model.n_support_)])
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
    reference = np.asarray(model.X_train_, dtype=np.float64)
    if reference.ndim != 2:
        raise TypeError(
            "GaussianProcessRegressor on non-vector inputs is not supported."
        )
    terms = _gp_terms(model.kernel_, reference.shape[1])
    # predict: y_std * (K @ alpha_) + y_mean, with a 2-D single target squeezed.
    dual = np.asarray(model.alpha_, dtype=np.float64)
    std = np.asarray(model._y_train_std, dtype=np.float64)
    mean = np.asarray(model._y_train_mean, dtype=np.float64)
    if dual.ndim == 2 and dual.shape[1] == 1:
        dual, std, mean = dual[:, 0], std.reshape(-1)[0], mean.reshape(-1)[0]
    intercept = np.broadcast_to(mean, (_n_columns(dual),)).astype(np.float64)
    return _game(model, reference, dual * std, terms, intercept,
                 _target_names(dual), "value")  # fmt: skip


def _gp_classifier(model: GaussianProcessClassifier) -> KernelGame:
    if len(model.classes_) != 2:
        raise TypeError(
            "ProductKernelExplainer supports binary GaussianProcessClassifier "
            f"only; this one has {len(model.classes_)} classes."
        )
    laplace = model.base_estimator_
    reference = np.asarray(laplace.X_train_, dtype=np.float64)
    terms = _gp_terms(laplace.kernel_, reference.shape[1])
    # The latent mean at x is k(x, X_train) @ (y_train - pi).
    dual = np.asarray(laplace.y_train_ - laplace.pi_, dtype=np.float64)
    return _game(model, reference, dual, terms, np.zeros(1),
                 (model.classes_[1],), "latent mean")  # fmt: skip


_PARSERS = (
    (KernelRidge, "dual_coef_", _kernel_ridge),
    (SVR | NuSVR | SVC | NuSVC, "support_vectors_", _svm),
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
        return [(float(kernel.constant_value), {})]
    if isinstance(kernel, gp_kernels.WhiteKernel):
        return []
    is_rbf = type(kernel) is gp_kernels.RBF or (
        isinstance(kernel, gp_kernels.Matern) and np.isinf(kernel.nu)
    )
    if is_rbf:
        length_scale = np.asarray(kernel.length_scale, dtype=np.float64)
        if length_scale.ndim == 1 and len(length_scale) != n_features:
            raise ValueError(
                f"The RBF kernel has {len(length_scale)} length scales for "
                f"{n_features} features."
            )
        gamma = np.broadcast_to(0.5 / length_scale**2, (n_features,))
        return [(1.0, {"squared": gamma.copy()})]
    raise TypeError(
        f"The kernel {kernel!r} ({type(kernel).__name__}) is not a product "
        f"kernel; supported: {_GP_KERNELS}."
    )


def _add_coefficients(first: dict, second: dict) -> dict:
    """The coefficients of the product of two product kernels."""
    return {
        name: first.get(name, 0.0) + second.get(name, 0.0)
        for name in first.keys() | second.keys()
    }


def _game(model, reference, dual, terms, intercept, output_names, raw_output):
    """Assemble the game: constant terms go to the intercept."""
    weights = np.asarray(dual, dtype=np.float64).reshape(len(reference), -1)
    zeros = np.zeros(reference.shape[1])
    intercept = np.array(intercept, dtype=np.float64)
    components = []
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
        n_features=reference.shape[1],
    )


def _dense(X) -> np.ndarray:
    """Reference points as a C-contiguous float64 array (sparse densified)."""
    if sp.issparse(X):
        X = X.toarray()
    return np.ascontiguousarray(X, dtype=np.float64)


def _n_columns(dual: np.ndarray) -> int:
    return 1 if dual.ndim == 1 else dual.shape[1]


def _target_names(dual: np.ndarray) -> tuple[str, ...]:
    """``("target",)`` for one target, else ``("target 0", "target 1", ...)``."""
    if dual.ndim == 1:
        return ("target",)
    return tuple(f"target {k}" for k in range(dual.shape[1]))


def _kernel_name(kernel) -> str:
    if isinstance(kernel, str):
        return repr(kernel)
    return getattr(kernel, "__name__", type(kernel).__name__)
