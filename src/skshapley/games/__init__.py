"""Model-agnostic cooperative game theory: the core of skshapley.

Product games ``v(S) = w * prod_{j in S} a_j * prod_{j not in S} b_j`` have
exact Shapley values computed by Gauss–Legendre quadrature
(:func:`product_shapley`, :func:`product_interactions`,
:func:`product_banzhaf`), and exact interaction indices of any order
(:func:`product_interaction_indices`: SII, k-SII, STII, FSII, FBII, BII and
the Möbius transform). Any other game, given as a function of coalitions or
as a table of its ``2**n`` values, has exact values by enumeration
(:func:`shapley_values` with three independent methods), exact Banzhaf
values (:func:`banzhaf_values`) and interaction indices
(:func:`interaction_indices`), sampled values
(:func:`sample_shapley`), leave-one-out attributions for comparison
(:func:`leave_one_out`), and checks of the Shapley axioms
(:func:`check_axioms`, :func:`linearity_residual`).
"""

from ._axioms import AxiomReport, check_axioms, linearity_residual
from ._exact import (
    banzhaf_values,
    game_table,
    harsanyi_dividends,
    leave_one_out,
    sample_shapley,
    shapley_values,
)
from ._indices import INDICES, InteractionIndices, interaction_indices
from ._product import product_banzhaf, product_interactions, product_shapley
from ._product_indices import product_interaction_indices
from ._quadrature import exact_n_points, gauss_legendre

__all__ = [
    "INDICES",
    "AxiomReport",
    "InteractionIndices",
    "banzhaf_values",
    "check_axioms",
    "exact_n_points",
    "game_table",
    "gauss_legendre",
    "harsanyi_dividends",
    "interaction_indices",
    "leave_one_out",
    "linearity_residual",
    "product_banzhaf",
    "product_interaction_indices",
    "product_interactions",
    "product_shapley",
    "sample_shapley",
    "shapley_values",
]
