"""Attributions as flat tables, as files hold them.

The command writes them (``skshapley explain``) and the report embeds the
same table as its download: one place says what the columns are.
"""

import numpy as np
import pandas as pd


def attributions_table(phi: pd.DataFrame, explainer, output=None) -> pd.DataFrame:
    """The attributions with the base value as a last column.

    Each row's values and ``base_value`` sum to the model's raw output. For
    several outputs the columns are ``<output>__<feature>`` and
    ``<output>__base_value``, unless ``output`` picks one. An unnamed index
    is called ``row``.
    """
    base = explainer.expected_value_
    if isinstance(phi.columns, pd.MultiIndex) and output is not None:
        phi, base = phi[output], base[output]
    if isinstance(phi.columns, pd.MultiIndex):
        parts = []
        for name in phi.columns.unique(level=0):
            part = phi[name].assign(**{_base_column(phi[name]): base[name]})
            parts.append(part.add_prefix(f"{name}__"))
        table = pd.concat(parts, axis=1)
    else:
        table = phi.assign(**{_base_column(phi): float(base)})
    if table.index.name is None and not isinstance(table.index, pd.MultiIndex):
        table.index.name = "row"
    return table


def interactions_table(interactions: pd.DataFrame) -> pd.DataFrame:
    """An ``explain_interactions`` frame as a long table, one line per value.

    Columns ``row`` (the frame's row labels), ``feature``, ``other`` and
    ``value``, with ``output`` first for ``(output, player)`` columns; lines
    by output, then row, feature and other, as in the frame.
    """
    rows = interactions.index.get_level_values(0)
    features = interactions.index.get_level_values(1)
    columns = interactions.columns
    players = columns.get_level_values(-1)[: len(features.unique())]
    n_players = len(players)
    values = interactions.to_numpy(dtype=np.float64)
    n_outputs = values.shape[1] // n_players
    # (row, feature) × (output, other) -> output, (row, feature), other.
    values = values.reshape(len(values), n_outputs, n_players).transpose(1, 0, 2)
    table = {
        "row": np.tile(np.repeat(rows, n_players), n_outputs),
        "feature": np.tile(np.repeat(features, n_players), n_outputs),
        "other": np.tile(players, len(values[0]) * n_outputs),
        "value": values.reshape(-1),
    }
    if isinstance(columns, pd.MultiIndex):
        outputs = columns.get_level_values(0).unique()
        table = {"output": np.repeat(outputs, values[0].size), **table}
    return pd.DataFrame(table)


def _base_column(phi: pd.DataFrame) -> str:
    """``base_value``, with leading underscores while a feature has that name."""
    name = "base_value"
    while name in phi.columns:
        name = f"_{name}"
    return name
