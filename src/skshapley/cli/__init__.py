"""The ``skshapley`` command: reports and attribution tables from a shell.

``skshapley report`` writes an HTML report, ``skshapley explain`` a CSV or
Parquet table of Shapley values; ``skshapley --help`` tells the options.
The console script and ``python -m skshapley.cli`` both call :func:`main`.
"""

from ._main import main

__all__ = ["main"]
