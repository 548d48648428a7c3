"""skshapley: exact, stable Shapley-value feature attributions.

The model-agnostic core lives in :mod:`skshapley.games`.
"""

from importlib.metadata import version

from . import games

__version__ = version("skshapley")

__all__ = ["__version__", "games"]
