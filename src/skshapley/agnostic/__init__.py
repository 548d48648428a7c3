"""Explainers of any model: exact enumeration and permutation sampling.

They evaluate the model itself on hybrid rows (the explained row's values on
a coalition of features, background rows elsewhere) and solve the resulting
game with :mod:`skshapley.games`: no parser, so any estimator, pipeline or
callable is explained, at the cost of model evaluations.
"""

from ._exact import ExactExplainer
from ._permutation import PermutationExplainer

__all__ = ["ExactExplainer", "PermutationExplainer"]
