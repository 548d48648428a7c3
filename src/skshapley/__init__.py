"""skshapley: exact, stable Shapley-value feature attributions.

:func:`Explainer` picks the explainer of a fitted model (or pipeline) and
:func:`explain` fits and explains in one call; the explainers of fitted
models, the importance table and the HTML report are top-level names. The
model-agnostic core is :mod:`skshapley.games` and the plots are
:mod:`skshapley.plotting`: submodules imported on first use, as
scikit-learn's are (``import skshapley; skshapley.plotting`` works), and
matplotlib only when something is drawn.
"""

import importlib
from importlib.metadata import version

from ._contract.importance import importance
from ._contract.shapiq import to_shapiq
from ._entry import Explainer, explain
from ._errors import UnsupportedModelError
from .agnostic import ExactExplainer, PermutationExplainer
from .kernels import ProductKernelExplainer
from .report import report
from .trees import TreeExplainer

__version__ = version("skshapley")

# Imported by __getattr__ on first use. Not "report": that name is the
# function, and the package of the same name is reached as skshapley.report's
# module only by import statements.
_SUBMODULES = ("games", "plotting")

__all__ = [
    "ExactExplainer",
    "Explainer",
    "PermutationExplainer",
    "ProductKernelExplainer",
    "TreeExplainer",
    "UnsupportedModelError",
    "__version__",
    "explain",
    "games",
    "importance",
    "plotting",
    "report",
    "to_shapiq",
]


def __getattr__(name: str):
    """Import a submodule on first use (PEP 562)."""
    if name in _SUBMODULES:
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__() -> list[str]:
    return sorted(set(globals()) | set(_SUBMODULES))
