"""Which explainer, the chosen output, the attributions table."""

import numpy as np
import pandas as pd
from sklearn.exceptions import NotFittedError

from .._entry import fitted_explainer
from .._errors import UnsupportedModelError
from .._outputs import chosen_output
from .._pipeline import final_estimator
from ._inputs import CommandError

# The groups of a pipeline explained without --groups: one attribution per
# column of the data file, exact for the game of input columns.
PIPELINE_GROUPS = "input"


def make_explainer(
    model,
    groups: dict | str | None,
    background=None,
    *,
    method: str = "auto",
    n_permutations: int | None = None,
    seed: int | None = None,
):
    """The explainer of ``model`` (``skshapley.Explainer``'s choice), fitted.

    Without ``groups``, a pipeline is explained with :data:`PIPELINE_GROUPS`.
    With ``background`` (a DataFrame), a tree model is explained
    interventionally, against those rows; a kernel model is refused. Any
    other model, or any model with ``method`` "exact" or "permutation",
    is explained model-agnostically against ``background``, which it then
    needs. The permutation explainer samples ``n_permutations`` (its
    default if None) orders per row, seeded by ``seed`` (default 0).

    An explainer's ``UnsupportedModelError`` moves on to the next explainer;
    its other errors are about this model (or a bug) and are raised as they
    are, a ``ValueError`` as a :class:`CommandError`. Each explainer parses
    the model once (its ``fit``), not also in ``supports``.
    """
    if groups is None and _has_preprocessing(model):
        groups = PIPELINE_GROUPS
    permutations = {"random_state": 0 if seed is None else seed}
    if n_permutations is not None:
        permutations["n_permutations"] = n_permutations
    try:
        return fitted_explainer(
            model,
            background,
            {"groups": groups},
            method=method,
            permutation_params=permutations,
            option="--background",
            agnostic="--method exact or --method permutation",
        )
    except (UnsupportedModelError, ValueError) as exc:  # a model not fitted, ...
        raise CommandError(str(exc)) from exc


def output_name(explainer, name: str | None):
    """The explainer's output called ``name`` (``--output``), or None."""
    if name is None:
        return None
    try:
        return chosen_output(explainer.output_names_, name, option="--output")
    except ValueError as exc:
        raise CommandError(str(exc)) from exc


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


def _has_preprocessing(model) -> bool:
    """Whether ``model`` is a pipeline with preprocessing steps.

    A wrapper or pipeline that cannot be explained is not one: the
    explainers' ``fit`` then reports why.
    """
    try:
        return final_estimator(model)[0] is not None
    except (UnsupportedModelError, NotFittedError, ValueError):
        return False
