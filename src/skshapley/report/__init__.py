"""A self-contained HTML report of a model's Shapley values.

:func:`report` explains a data set and writes one HTML file: summary,
importance table, global figures, dependence plots, waterfalls of single
predictions and a plain-words explanation. matplotlib (the ``plot`` extra)
is imported only when a report is written.
"""

from ._report import report

__all__ = ["report"]
