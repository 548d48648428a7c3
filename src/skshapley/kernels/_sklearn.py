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

import numpy as np
from sklearn.gaussian_process import GaussianProcessClassifier, GaussianProcessRegressor
from sklearn.gaussian_process import kernels as gp_kernels
from sklearn.kernel_ridge import KernelRidge
from sklearn.svm import SVC, SVR, NuSVC, NuSVR, OneClassSVM
from sklearn.utils.validation import check_is_fitted

from .._contract.malformed import (
    checked_classes,
    checked_numbers,
    malformed_model_errors,
)
from .._contract.outputs import regression_output_names
from .._errors import UnsupportedModelError, unsupported_model
from ._expansion import (
    dense,
    kernel_game,
    n_columns,
    nonnegative_number,
    reference_points,
    target_names,
)
from ._game import KernelGame
from ._gaussian_process import (
    GP_KERNELS,
    gp_terms,
    parse_gp_classifier,
    parse_gp_regressor,
)

# What the unsupported-model error names: the families, in one short line.
SUPPORTED_FAMILIES = (
    "kernel ridge, SVMs and Gaussian processes whose kernel is a product over "
    "features (RBF, Laplacian, chi2)"
)
_STRING_KERNELS = ("rbf", "laplacian", "chi2")


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
    raise unsupported_model("ProductKernelExplainer", model, SUPPORTED_FAMILIES)


def _kernel_ridge(model: KernelRidge) -> KernelGame:
    reference = reference_points(model.X_fit_, "X_fit_")
    n_features = reference.shape[1]
    if isinstance(model.kernel, gp_kernels.Kernel):
        terms = gp_terms(model.kernel, n_features)
    elif isinstance(model.kernel, str) and model.kernel in _STRING_KERNELS:
        default = 1.0 if model.kernel == "chi2" else 1.0 / n_features
        gamma = (
            default if model.gamma is None else nonnegative_number(model.gamma, "gamma")
        )
        distance = {"rbf": "squared", "laplacian": "absolute"}.get(model.kernel, "chi2")
        terms = [(1.0, {distance: np.full(n_features, gamma)})]
    else:
        raise UnsupportedModelError(
            f"KernelRidge with kernel={_kernel_name(model.kernel)} is not a product "
            f"kernel; supported: {', '.join(map(repr, _STRING_KERNELS))} or a "
            f"Gaussian process kernel of {GP_KERNELS}."
        )
    dual = checked_numbers(model.dual_coef_, "dual_coef_", ndim=(1, 2))
    return kernel_game(
        model, [(reference, dual, terms)], np.zeros(n_columns(dual)),
        target_names(dual), "value",
    )  # fmt: skip


def _svm(model) -> KernelGame:
    if model.kernel != "rbf":
        raise UnsupportedModelError(
            f"{type(model).__name__} with kernel={_kernel_name(model.kernel)} is "
            "not a product kernel; supported: 'rbf'."
        )
    reference = reference_points(model.support_vectors_, "support_vectors_")
    gamma = nonnegative_number(model._gamma, "gamma")
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
    dual = sign * checked_numbers(dense(model._dual_coef_), "dual_coef_", ndim=(2,))
    if dual.shape[1] != len(reference):
        raise ValueError(
            f"The model's dual_coef_ has {dual.shape[1]} columns for "
            f"{len(reference)} support vectors; the model file may be corrupt."
        )
    if not is_classifier:
        # OneClassSVM: decision_function, positive for inliers.
        raw_output = "decision function" if model._impl == "one_class" else "value"
        return kernel_game(model, [(reference, dual.T, terms)], intercept,
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
    return kernel_game(model, [(reference, weights, terms)], intercept, names,
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


_PARSERS = (
    (KernelRidge, "dual_coef_", _kernel_ridge),
    (SVR | NuSVR | SVC | NuSVC | OneClassSVM, "support_vectors_", _svm),
    (GaussianProcessRegressor, "X_train_", parse_gp_regressor),
    (GaussianProcessClassifier, "base_estimator_", parse_gp_classifier),
)


def _kernel_name(kernel) -> str:
    if isinstance(kernel, str):
        return repr(kernel)
    return getattr(kernel, "__name__", type(kernel).__name__)
