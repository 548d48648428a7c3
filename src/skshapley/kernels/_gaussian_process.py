"""Gaussian process models and kernels, parsed into :class:`KernelGame`.

A fitted kernel built from ``RBF`` (and ``Matern(nu=inf)``),
``ConstantKernel`` and ``WhiteKernel`` by sums and products is a sum of
``constant * product kernel`` terms; ``GaussianProcessRegressor`` predicts
a kernel expansion of its training points, and ``GaussianProcessClassifier``
has one latent mean per binary Laplace model (one, or one per class
against the rest).
"""

from itertools import product

import numpy as np
from sklearn.gaussian_process import GaussianProcessClassifier, GaussianProcessRegressor
from sklearn.gaussian_process import kernels as gp_kernels

from .._contract.malformed import checked_classes, checked_numbers
from .._errors import UnsupportedModelError
from ._expansion import (
    kernel_game,
    n_columns,
    nonnegative_number,
    reference_points,
    target_names,
)
from ._game import KernelGame

GP_KERNELS = (
    "RBF, Matern(nu=inf), ConstantKernel, WhiteKernel and their sums and products"
)


def parse_gp_regressor(model: GaussianProcessRegressor) -> KernelGame:
    """The predictive mean: the expansion of the training points in
    ``kernel_`` with weights ``alpha_``, undoing ``normalize_y``.
    """
    if np.ndim(model.X_train_) != 2:
        raise UnsupportedModelError(
            "GaussianProcessRegressor on non-vector inputs is not supported."
        )
    reference = reference_points(model.X_train_, "X_train_")
    terms = gp_terms(model.kernel_, reference.shape[1])
    # predict: y_std * (K @ alpha_) + y_mean, with a 2-D single target squeezed.
    dual = checked_numbers(model.alpha_, "alpha_", ndim=(1, 2))
    std = checked_numbers(model._y_train_std, "_y_train_std", ndim=(0, 1))
    mean = checked_numbers(model._y_train_mean, "_y_train_mean", ndim=(0, 1))
    if std.size not in (1, n_columns(dual)) or mean.size not in (1, n_columns(dual)):
        raise ValueError(
            "The model's target mean and scale do not fit its targets; the "
            "model file may be corrupt."
        )
    if dual.ndim == 2 and dual.shape[1] == 1:
        dual, std, mean = dual[:, 0], std.reshape(-1)[0], mean.reshape(-1)[0]
    intercept = np.broadcast_to(mean, (n_columns(dual),)).astype(np.float64)
    return kernel_game(model, [(reference, dual * std, terms)], intercept,
                 target_names(dual), "value")  # fmt: skip


def parse_gp_classifier(model: GaussianProcessClassifier) -> KernelGame:
    """The latent mean of each binary Laplace model: one output for a binary
    classifier (``classes_[1]``), one per class (that class against the
    rest) for a one-vs-rest multiclass one.
    """
    classes = checked_classes(model)
    if len(classes) == 2:
        parts = [_latent_mean(model.base_estimator_, "base_estimator_")]
        return kernel_game(model, parts, np.zeros(1), (classes[1],), "latent mean")
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
    return kernel_game(model, _merged(parts), np.zeros(len(classes)), classes,
                 "latent mean")  # fmt: skip


def _latent_mean(laplace, name: str) -> tuple[np.ndarray, np.ndarray, list]:
    """The latent mean ``k(x, X_train) @ (y_train - pi)`` of a binary Laplace
    model, as reference points, dual weights and kernel terms.
    """
    reference = reference_points(laplace.X_train_, f"{name}.X_train_")
    terms = gp_terms(laplace.kernel_, reference.shape[1])
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
    """Whether two kernels' terms (see :func:`gp_terms`) are the same."""
    return len(first) == len(second) and all(
        c1 == c2
        and d1.keys() == d2.keys()
        and all(np.array_equal(d1[key], d2[key]) for key in d1)
        for (c1, d1), (c2, d2) in zip(first, second, strict=True)
    )


def gp_terms(kernel, n_features: int) -> list[tuple[float, dict]]:
    """A Gaussian process kernel as a sum of ``constant * product kernel`` terms.

    Each term is ``(constant, {"squared": gamma})``; an empty dict is the
    constant kernel. Sums concatenate terms, products multiply them out.
    """
    if isinstance(kernel, gp_kernels.Sum):
        return gp_terms(kernel.k1, n_features) + gp_terms(kernel.k2, n_features)
    if isinstance(kernel, gp_kernels.Product):
        return [
            (c1 * c2, _add_coefficients(d1, d2))
            for (c1, d1), (c2, d2) in product(
                gp_terms(kernel.k1, n_features), gp_terms(kernel.k2, n_features)
            )
        ]
    if isinstance(kernel, gp_kernels.ConstantKernel):
        return [
            (
                nonnegative_number(
                    kernel.constant_value, "ConstantKernel's constant_value"
                ),
                {},
            )
        ]
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
        f"kernel; supported: {GP_KERNELS}."
    )


def _add_coefficients(first: dict, second: dict) -> dict:
    """The coefficients of the product of two product kernels."""
    return {
        name: first.get(name, 0.0) + second.get(name, 0.0)
        for name in first.keys() | second.keys()
    }
