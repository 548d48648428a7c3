"""Input checks shared across skshapley: each raises an error naming the input."""

from numbers import Integral

import numpy as np
from numpy.typing import ArrayLike

from .input import real_values


def check_count(value, name: str) -> int:
    """Return ``value`` as an int, or raise unless it is an integer >= 1."""
    if not isinstance(value, Integral) or isinstance(value, bool):
        raise TypeError(f"{name} must be an int, got {type(value).__name__}.")
    if value < 1:
        raise ValueError(f"{name} must be >= 1, got {value}.")
    return int(value)


def check_finite_array(
    x: ArrayLike,
    name: str,
    *,
    ndim: tuple[int, ...] | None = None,
    shape: tuple[int, ...] | None = None,
    shape_name: str | None = None,
) -> np.ndarray:
    """Return ``x`` as a C-contiguous float64 array of finite values.

    ``ndim`` lists the allowed numbers of dimensions; ``shape`` is the one
    allowed shape, described to the user as ``shape_name``. The result is a
    copy whenever a conversion is needed, so the caller's data is never
    modified through it.
    """
    try:
        array = np.asarray(x)
    except (TypeError, ValueError) as exc:  # ragged lists
        raise TypeError(
            f"{name} must be an array-like of real numbers, got {type(x).__name__}."
        ) from exc
    try:
        array = np.ascontiguousarray(real_values(array, name), dtype=np.float64)
    # Complex numbers, strings and dates: refused, never truncated or parsed.
    except ValueError as exc:
        raise TypeError(f"{name} must be an array-like of real numbers: {exc}") from exc
    if ndim is not None and array.ndim not in ndim:
        allowed = " or ".join(f"{n}-D" for n in ndim)
        raise ValueError(f"{name} must be {allowed}, got shape {array.shape}.")
    if shape is not None and array.shape != shape:
        raise ValueError(
            f"{name} must have shape {shape_name or ''} = {shape}, "
            f"got shape {array.shape}."
        )
    if not np.isfinite(array).all():
        raise ValueError(f"{name} contains NaN or infinity; values must be finite.")
    return array


def check_games(a, b, weights) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate a batch of product games.

    Returns ``a`` and ``b`` of shape (n_games, n_players) and ``weights`` of
    shape (n_games,); a 1-D ``a`` is one game, ``b=None`` means ones and
    ``weights=None`` means ones.
    """
    a = check_finite_array(a, "a", ndim=(1, 2))
    a = a.reshape(1, -1) if a.ndim == 1 else a
    n_games, n_players = a.shape
    if n_players == 0:
        raise ValueError("a must have at least one player (column), got 0.")
    if b is None:
        b = np.ones_like(a)
    else:
        b = check_finite_array(b, "b", ndim=(1, 2))
        b = b.reshape(1, -1) if b.ndim == 1 else b
        if b.shape != a.shape:
            raise ValueError(
                f"a and b must have the same shape, got {a.shape} and {b.shape}."
            )
    if weights is None:
        weights = np.ones(n_games)
    else:
        weights = check_finite_array(
            weights, "weights", shape=(n_games,), shape_name="(n_games,)"
        )
    return a, b, weights
