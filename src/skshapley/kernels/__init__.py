"""Exact Shapley values of product-kernel models."""

from ._explainer import ProductKernelExplainer

__all__ = ["ProductKernelExplainer"]
