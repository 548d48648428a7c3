"""Tree ensembles: parsers into the library's tree table, and TreeExplainer."""

from ._explainer import TreeExplainer

__all__ = ["TreeExplainer"]
