"""Figures of Shapley values, in scikit-learn's Display style.

Each display is built from an explainer (``from_explainer``) or from
Shapley values already computed (``from_values``), draws on a given
matplotlib ``ax`` or on a figure of its own, and keeps what it drew
(``ax_``, ``figure_`` and its artists). matplotlib is an optional
dependency (``pip install "skshapley[plot]"``), imported only when a
display is built.
"""

from ._bar import ImportanceDisplay
from ._beeswarm import BeeswarmDisplay
from ._decision import DecisionDisplay
from ._dependence import DependenceDisplay
from ._heatmap import InteractionDisplay
from ._outputs_bar import OutputImportanceDisplay
from ._rows_heatmap import HeatmapDisplay
from ._waterfall import WaterfallDisplay

__all__ = [
    "BeeswarmDisplay",
    "DecisionDisplay",
    "DependenceDisplay",
    "HeatmapDisplay",
    "ImportanceDisplay",
    "InteractionDisplay",
    "OutputImportanceDisplay",
    "WaterfallDisplay",
]
