"""Input checks shared by the product-game functions."""

import numpy as np


def check_finite(x, name: str, *, ndim: tuple[int, ...]) -> np.ndarray:
    """Return ``x`` as a C-contiguous float64 array, or raise ``ValueError``.

    The array is a copy whenever a conversion is needed, so the caller's data
    is never modified.
    """
    try:
        array = np.ascontiguousarray(x, dtype=np.float64)
    except (TypeError, ValueError) as exc:
        raise ValueError(f"{name} must be an array of real numbers.") from exc
    if array.ndim not in ndim:
        allowed = " or ".join(f"{n}-D" for n in ndim)
        raise ValueError(f"{name} must be {allowed}, got shape {array.shape}.")
    if not np.isfinite(array).all():
        raise ValueError(f"{name} contains NaN or infinity.")
    return array


def check_games(a, b, weights) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Validate a batch of product games.

    Returns ``a`` and ``b`` of shape (n_games, n_players) and ``weights`` of
    shape (n_games,); a 1-D ``a`` is one game, ``b=None`` means ones and
    ``weights=None`` means ones.
    """
    a = check_finite(a, "a", ndim=(1, 2))
    a = a.reshape(-1, a.shape[-1]) if a.ndim == 1 else a
    n_games, n_players = a.shape
    if n_players == 0:
        raise ValueError("a must have at least one player (column), got 0.")
    if b is None:
        b = np.ones_like(a)
    else:
        b = check_finite(b, "b", ndim=(1, 2))
        b = b.reshape(-1, b.shape[-1]) if b.ndim == 1 else b
        if b.shape != a.shape:
            raise ValueError(
                f"a and b must have the same shape, got {a.shape} and {b.shape}."
            )
    if weights is None:
        weights = np.ones(n_games)
    else:
        weights = check_finite(weights, "weights", ndim=(0, 1)).reshape(-1)
        if weights.shape != (n_games,):
            raise ValueError(
                f"weights must have shape ({n_games},), one per game in a, "
                f"got {weights.shape}."
            )
    return a, b, weights
