"""Model-agnostic cooperative game theory: the core of skshapley.

Product games ``v(S) = w * prod_{j in S} a_j * prod_{j not in S} b_j`` have
exact Shapley values computed by Gauss–Legendre quadrature
(:func:`product_shapley`, :func:`product_interactions`,
:func:`product_banzhaf`). Any other game, given as a function of coalitions or
as a table of its ``2**n`` values, has exact values by enumeration
(:func:`shapley_values` with three independent methods) and exact Banzhaf
values (:func:`banzhaf_values`), sampled values
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
from ._product import product_banzhaf, product_interactions, product_shapley
from ._quadrature import exact_n_points, gauss_legendre

__all__ = [
    "AxiomReport",
    "banzhaf_values",
    "check_axioms",
    "exact_n_points",
    "game_table",
    "gauss_legendre",
    "harsanyi_dividends",
    "leave_one_out",
    "linearity_residual",
    "product_banzhaf",
    "product_interactions",
    "product_shapley",
    "sample_shapley",
    "shapley_values",
]
