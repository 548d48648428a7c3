"""Kernel expansions read from a model, checked and assembled into a game.

A parser reads ``f(x) = sum_i alpha_i k(x, r_i) + c`` off a model as one or
more expansions ``(reference points, dual weights, kernel terms)``; the
helpers here check what it read (models may come from files) and build the
:class:`KernelGame`.
"""

from numbers import Real

import numpy as np
import scipy.sparse as sp

from .._contract.malformed import checked_numbers
from .._contract.outputs import regression_output_names
from .._runtime.limits import MAX_FEATURES
from ._game import KernelComponent, KernelGame


def kernel_game(model, parts, intercept, output_names, raw_output) -> KernelGame:
    """Assemble the game of a sum of kernel expansions.

    ``parts`` lists ``(reference, dual, terms)``: reference points, their
    dual weights (one column per output) and the kernel's terms (see
    ``_gaussian_process.gp_terms``). Constant terms go to the intercept.
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


def nonnegative_number(value, name: str) -> float:
    """``value`` if it is a finite nonnegative number (as scikit-learn requires)."""
    if isinstance(value, bool) or not isinstance(value, Real | np.ndarray):
        raise ValueError(f"The model's {name} must be a number; got {value!r}.")
    if np.ndim(value) != 0 or not (np.isfinite(value) and value >= 0):
        raise ValueError(
            f"The model's {name} must be a finite number >= 0; got {value!r}."
        )
    return float(value)


def reference_points(X, name: str) -> np.ndarray:
    """Reference points: a non-empty finite C-contiguous float64 matrix."""
    reference = np.ascontiguousarray(checked_numbers(dense(X), name, ndim=(2,)))
    n_points, n_features = reference.shape
    if n_points == 0 or not 1 <= n_features <= MAX_FEATURES:
        raise ValueError(
            f"The model's {name} must hold at least one point of 1 to "
            f"{MAX_FEATURES:,} features; got shape {reference.shape}."
        )
    return reference


def dense(X) -> np.ndarray:
    """``X``, densified if sparse."""
    return X.toarray() if sp.issparse(X) else X


def n_columns(dual: np.ndarray) -> int:
    """The number of outputs of dual weights (1 for a 1-D array)."""
    return 1 if dual.ndim == 1 else dual.shape[1]


def target_names(dual: np.ndarray) -> tuple[str, ...]:
    """One name per column of ``dual`` (a 2-D ``predict``), else "target"."""
    return regression_output_names(n_columns(dual), as_columns=dual.ndim == 2)
