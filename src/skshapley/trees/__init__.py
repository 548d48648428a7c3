"""Tree ensembles: model -> reader -> tree table -> value function -> values.

``_readers/`` turns each library's fitted model into the tree table
(``_table.py``); ``_rows.py`` and ``_categories.py`` read rows as the model
does; the value functions sit beside their compiled cores:
``_path_dependent.py`` (``_tree_core.pyx``, ``_interactions_core.pyx``) and
``_interventional.py`` (``_interventional_core.pyx``), scheduled by
``_schedule.py``; ``TreeExplainer`` (``_explainer.py``) ties them together.
"""

from ._explainer import TreeExplainer

__all__ = ["TreeExplainer"]
