"""The kernel game: what a product-kernel model is, for the explainer.

A product-kernel model predicts ``f(x) = sum_i alpha_i prod_j k_j(x_j, r_ij)
+ c`` from reference points ``r_i`` (training points or support vectors) and
dual weights ``alpha_i``. Its value function ``v(S) = sum_i alpha_i prod_{j in
S} k_j(x_j, r_ij) + c`` is a sum of pure product games, one per reference
point, with factors ``a_j = k_j(x_j, r_ij)`` in (0, 1].

Every supported kernel is ``exp`` of minus a per-feature distance:

* ``squared``:  ``gamma_j (x - y)**2`` (RBF, anisotropic RBF);
* ``absolute``: ``gamma_j |x - y|`` (Laplacian);
* ``chi2``:     ``gamma_j (x - y)**2 / (x + y)``, 0 where ``x + y = 0``
  (scikit-learn's exponential chi-squared kernel).

A model whose kernel is a sum of such products (a Gaussian process's
``C1 * RBF1 + C2 * RBF2``) has one :class:`KernelComponent` per term.
"""

from dataclasses import dataclass

import numpy as np

from ._factors_core import kernel_log_factors


@dataclass(frozen=True)
class KernelComponent:
    """One product kernel and the reference points it is evaluated at.

    Attributes
    ----------
    reference : ndarray of shape (n_references, n_features)
        The points ``r_i``.
    weights : ndarray of shape (n_references, n_outputs)
        The dual weights ``alpha_i`` of each output (times the term's constant).
    squared, absolute, chi2 : ndarray of shape (n_features,)
        The coefficients ``gamma_j`` of each distance (0 where unused).
    """

    reference: np.ndarray
    weights: np.ndarray
    squared: np.ndarray
    absolute: np.ndarray
    chi2: np.ndarray

    def log_factors(
        self,
        X: np.ndarray,
        references: slice,
        players: np.ndarray,
        n_players: int,
        n_threads: int,
    ) -> np.ndarray:
        """Each player's ``log`` kernel factor for the rows ``X`` and ``references``.

        Of shape (n_samples * n_references, n_players): row ``s *
        n_references + i`` sums ``log k_j(x_sj, r_ij)`` over the features
        ``j`` of each player (``players[j]``); compiled, parallel, and in
        logs, so that no factor underflows before it is needed.
        """
        reference = self.reference[references]
        out = np.empty((len(X) * len(reference), n_players))
        kernel_log_factors(
            np.ascontiguousarray(X), reference, self.squared, self.absolute,
            self.chi2, players, out, n_threads,
        )  # fmt: skip
        return out


@dataclass(frozen=True)
class KernelGame:
    """A parsed product-kernel model: components, intercept and outputs.

    Attributes
    ----------
    components : tuple of KernelComponent
        The product kernels whose games are summed.
    intercept : ndarray of shape (n_outputs,)
        The constant ``c`` of each output (with constant kernel terms folded
        in).
    output_names : tuple
        One name per output.
    raw_output : str
        What the outputs are: ``"value"``, ``"decision function"`` or
        ``"latent mean"``.
    feature_names : ndarray of str or None
        The model's feature names, if it was fitted on a DataFrame.
    n_features : int
        The number of features.
    """

    components: tuple[KernelComponent, ...]
    intercept: np.ndarray
    output_names: tuple
    raw_output: str
    feature_names: np.ndarray | None
    n_features: int

    @property
    def n_outputs(self) -> int:
        """The number of outputs."""
        return len(self.intercept)

    @property
    def nonnegative_inputs(self) -> bool:
        """Whether the kernel is defined only for ``X >= 0`` (chi-squared)."""
        return any(component.chi2.any() for component in self.components)

    @property
    def expected_value(self) -> np.ndarray:
        """``v(∅) = sum_i alpha_i + c`` per output: every factor is 1."""
        return self.intercept + sum(c.weights.sum(axis=0) for c in self.components)
