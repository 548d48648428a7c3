"""Feature groups: several features acting as one player."""

from collections.abc import Mapping

import numpy as np
import pandas as pd


def feature_players(groups, names: np.ndarray) -> tuple[np.ndarray | None, np.ndarray]:
    """Each feature's player, and the players' names.

    ``groups`` maps a group name to its members, feature names or positions;
    every feature may be in at most one group, and features in none stay
    players of their own. The players are the groups in mapping order, then
    the ungrouped features in model order. Without groups: ``None`` and the
    feature names.
    """
    if groups is None:
        return None, names
    if not isinstance(groups, Mapping):
        raise TypeError(
            "groups must be a mapping {group_name: [columns]}, got "
            f"{type(groups).__name__}."
        )
    position = {name: j for j, name in enumerate(names)}
    players = np.full(len(names), -1, dtype=np.intp)
    player_names = []
    for group, members in groups.items():
        if isinstance(members, str | int | np.integer):
            members = [members]
        if members is None or not np.iterable(members):
            raise ValueError(
                f"Group {group!r} must list its features (names or positions), "
                f"e.g. {{{group!r}: ['age', 'income']}}; got {members!r:.60}."
            )
        indices = [_column_index(member, position, len(names)) for member in members]
        if not indices:
            raise ValueError(f"Group {group!r} has no features.")
        for j in indices:
            if players[j] == len(player_names):
                raise ValueError(f"Group {group!r} lists {names[j]!r} twice.")
            if players[j] >= 0:
                raise ValueError(
                    f"Feature {names[j]!r} is in two groups: "
                    f"{player_names[players[j]]!r} and {group!r}."
                )
            players[j] = len(player_names)
        player_names.append(str(group))
    for j in np.flatnonzero(players < 0):
        players[j] = len(player_names)
        player_names.append(names[j])
    duplicated = pd.Index(player_names)[pd.Index(player_names).duplicated()]
    if len(duplicated):
        raise ValueError(
            f"Player names must be unique; {list(duplicated)} name both a group "
            "and a feature (or two groups)."
        )
    return players, np.asarray(player_names, dtype=object)


def _column_index(member, position: dict, n_features: int) -> int:
    """A group member (feature name or position) as a column index."""
    if isinstance(member, int | np.integer) and not isinstance(member, bool):
        if 0 <= member < n_features:
            return int(member)
        raise ValueError(
            f"Group member {member} is not a column position (0..{n_features - 1})."
        )
    if member is not None and str(member) in position:
        return position[str(member)]
    raise ValueError(
        f"Group member {member!r} is not one of the model's features: {list(position)}."
    )
