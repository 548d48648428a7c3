"""What every explainer accepts and returns.

The models (pipelines and searches split, names, files checked), the rows
(DataFrames, Series, polars and pyarrow frames, arrays, sparse matrices:
their columns matched and their values read as float64), feature groups and
per-input groups, outputs, and the result frames and tables. Plain
functions and small classes, called alike by the explainers and the lazy
path; nothing here knows a value function.
"""
