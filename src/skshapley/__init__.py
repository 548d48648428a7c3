"""skshapley: exact, stable Shapley-value feature attributions.

The model-agnostic core lives in :mod:`skshapley.games`; explainers of
fitted models are top-level names.
"""

from importlib.metadata import version

from . import games
from ._importance import importance
from .kernels import ProductKernelExplainer
from .trees import TreeExplainer

__version__ = version("skshapley")

__all__ = [
    "ProductKernelExplainer",
    "TreeExplainer",
    "__version__",
    "games",
    "importance",
]
