"""skshapley: exact, stable Shapley-value feature attributions.

The model-agnostic core lives in :mod:`skshapley.games`; explainers of
fitted models, the importance table and the HTML report are top-level names;
plots are in :mod:`skshapley.plotting` (matplotlib, imported on demand).
"""

from importlib.metadata import version

from . import games
from ._errors import UnsupportedModelError
from ._importance import importance
from .kernels import ProductKernelExplainer
from .report import report
from .trees import TreeExplainer

__version__ = version("skshapley")

__all__ = [
    "ProductKernelExplainer",
    "TreeExplainer",
    "UnsupportedModelError",
    "__version__",
    "games",
    "importance",
    "report",
]
