"""What explanations return besides their frames: the quadrature they used,
interaction matrices in shap's convention, and their allocation."""

from dataclasses import dataclass

import numpy as np
import pandas as pd


@dataclass(frozen=True)
class QuadratureUse:
    """The quadrature behind some explained rows.

    Attributes
    ----------
    n_points : int
        The most Gauss–Legendre points any game used.
    error_bound : float or None
        A bound on the absolute quadrature error of every value (0.0 when
        every game used an exact rule); None where it is not computed.
    """

    n_points: int
    error_bound: float | None

    def merged(self, other: "QuadratureUse") -> "QuadratureUse":
        """The quadrature of both sets of rows: the larger points and bound."""
        bounds = (self.error_bound, other.error_bound)
        return QuadratureUse(
            max(self.n_points, other.n_points),
            None if None in bounds else max(bounds),
        )


def with_quadrature(frame: pd.DataFrame, quadrature: QuadratureUse | None):
    """``frame``, its ``attrs`` noting the quadrature if it depends on the rows."""
    if quadrature is not None:
        frame.attrs["n_quadrature_points"] = quadrature.n_points
        frame.attrs["quadrature_error_bound"] = quadrature.error_bound
    return frame


def allocated_interactions(
    n_samples: int, n_players: int, n_outputs: int
) -> np.ndarray:
    """The interaction result, (n_samples, n_players, n_outputs, n_players).

    Allocated before anything is computed; a MemoryError says its size.
    """
    shape = (n_samples, n_players, n_outputs, n_players)
    try:
        return np.empty(shape)
    except MemoryError as exc:
        size = 8 * n_samples * n_players**2 * n_outputs
        raise MemoryError(
            f"The interaction values of {n_samples} rows, {n_players} players "
            f"and {n_outputs} outputs need {size / 2**30:.1f} GiB, which could "
            "not be allocated: explain fewer rows at a time, or group features."
        ) from exc


def in_shap_convention(out: np.ndarray, phi: np.ndarray) -> None:
    """Make ``out`` shap's interaction values, in place.

    ``out`` (..., n_players, n_players) holds full Shapley interaction
    indices off the diagonal (its diagonal is overwritten); ``phi`` (...,
    n_players) the Shapley values. Off the diagonal, half the index; on it,
    the main effect ``phi_j`` minus the row's other entries, so that each
    row sums to ``phi_j``.
    """
    phi = np.array(phi)  # it may be a view of out's diagonal
    diagonal = np.einsum("...jj->...j", out)
    diagonal[...] = 0.0
    out /= 2.0
    diagonal[...] = phi - out.sum(axis=-1)
