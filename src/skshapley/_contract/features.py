"""The features an explainer reads, and the players they form.

Without preprocessing, the input is the model's features. With it (a
pipeline), the input is the pipeline's raw columns, and the final model's
features are named by the preprocessing's ``get_feature_names_out()``.
Players are the features, the groups of ``groups={name: [features]}``, or,
with ``groups="input"``, the raw input columns the features come from.
"""

from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np
from sklearn.pipeline import Pipeline

from .groups import feature_players
from .input_groups import input_groups


@dataclass(frozen=True)
class Features:
    """What an explainer's input is, and what its final model reads.

    Attributes
    ----------
    input_names : ndarray of str
        The input's columns (``feature_names_in_``).
    input_by_name : bool
        Whether DataFrame columns are matched to them by name
        (``columns_by_name_``), else by position.
    model : tuple of (ndarray of str, bool)
        The final model's features as rows are matched to them: their
        names, and whether by name.
    names : ndarray of str
        The names of the final model's features, from which the players
        are formed (a pipeline's preprocessed names).
    """

    input_names: np.ndarray
    input_by_name: bool
    model: tuple[np.ndarray, bool]
    names: np.ndarray


def feature_names(names, n_features: int) -> tuple[np.ndarray, bool]:
    """The model's feature names, or ``x0, x1, ...`` if it has none.

    Also says whether the names are the model's own, so that DataFrame
    columns are matched by name (else by position, as scikit-learn does).
    """
    if names is None:
        return np.asarray([f"x{j}" for j in range(n_features)], dtype=object), False
    return np.asarray([str(name) for name in names], dtype=object), True


def fitted_features(
    preprocess: Pipeline | None, names: np.ndarray, by_name: bool
) -> Features:
    """The features of an explainer whose final model reads ``names``.

    ``by_name``: whether they are the model's own names. ``preprocess`` is
    a pipeline's preprocessing steps, or None.
    """
    if preprocess is None:
        return Features(names, by_name, (names, by_name), names)
    input_names, input_by_name = feature_names(
        getattr(preprocess, "feature_names_in_", None), preprocess.n_features_in_
    )
    named = _names_out(preprocess, names)
    # A model that knows its names is matched by them (as its library spells
    # them); errors on one that does not name the features as the
    # preprocessing does.
    return Features(
        input_names, input_by_name, (names if by_name else named, by_name), named
    )


def fitted_players(
    groups: Mapping[str, list] | str | None,
    preprocess: Pipeline | None,
    features: Features,
) -> tuple[np.ndarray | None, np.ndarray]:
    """Each feature's player (None: each its own), and the players' names."""
    if not isinstance(groups, str):
        return feature_players(groups, features.names)
    if groups != "input":
        raise ValueError(
            'groups must be a mapping {group_name: [columns]}, "input" '
            f"or None; got {groups!r}."
        )
    if preprocess is None:
        return None, features.names
    return _input_players(preprocess, features.input_names, features.names)


def _input_players(
    preprocess: Pipeline, input_names: np.ndarray, names: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """Players of ``groups="input"``: the raw input columns, in input order.

    Each preprocessed feature belongs to the input column it comes from;
    an input column the preprocessing drops is a player with no
    features (a dummy, valued 0).
    """
    groups = input_groups(preprocess, list(input_names))
    position = {str(name): j for j, name in enumerate(names)}
    traced = [str(member) for members in groups.values() for member in members]
    if not set(traced) <= set(position):
        raise ValueError(
            "groups='input': the pipeline's preprocessing traces features "
            f"it does not output ({sorted(set(traced) - set(position))[:5]}); "
            "the model is malformed (its file may be corrupt)."
        )
    players = np.full(len(names), -1, dtype=np.intp)
    for player, members in enumerate(groups.values()):
        players[[position[str(member)] for member in members]] = player
    if (players < 0).any():
        raise ValueError(
            "groups='input': the preprocessed features "
            f"{list(names[players < 0])} come from no input column."
        )
    return players, np.asarray(list(groups), dtype=object)


def _names_out(preprocess: Pipeline, default: np.ndarray) -> np.ndarray:
    """The names of the preprocessed features, as the final model reads them.

    ``default`` (the final model's own) where the preprocessing cannot name
    them, or names a different number of them.
    """
    try:
        names = preprocess.get_feature_names_out()
    except (AttributeError, TypeError, ValueError):
        return default
    if names is None or len(names) != len(default):
        return default
    return np.asarray(names, dtype=object)
