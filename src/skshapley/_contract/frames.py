"""The DataFrames explanations are returned in, laid out once per fit.

A fitted explainer's frames share their columns (one per player, or a
``(output, feature)`` MultiIndex for several outputs) and, for interaction
values, the player level of their rows. Building those indexes costs more
than explaining one row, so :class:`FrameLayout` builds them once; each
frame gets its own view of them, so that renaming one frame's axes changes
no other frame.

The values are wrapped, not copied, as one float64 block. With pandas 3,
through ``pandas.api.internals.create_dataframe_from_blocks``, the public
constructor for arrays laid out as pandas keeps them (pyarrow's
``to_pandas`` uses it): 2–5 µs less per call than ``pandas.DataFrame``,
which spends most of its time checking what kind of input it was given.
Older pandas take ``pandas.DataFrame``; both give equal frames.
"""

import functools

import numpy as np
import pandas as pd

try:  # pandas >= 3.0
    from pandas.api.internals import create_dataframe_from_blocks
except ImportError:
    create_dataframe_from_blocks = None


def default_index(n_rows: int) -> pd.RangeIndex:
    """The index of rows given without one: ``RangeIndex(n_rows)``.

    Built from a range, which takes a third of the constructor's time
    (about 0.8 against 2.4 µs, a tenth of a one-row call).
    """
    return pd.RangeIndex.from_range(range(n_rows))


class FrameLayout:
    """The indexes of the frames of one fitted explainer.

    Parameters
    ----------
    players : sequence
        The players' names (features, or groups), in order.
    outputs : sequence
        The outputs' names, in order.
    """

    def __init__(self, players, outputs):
        # The explainer's own objects: a refit explainer has new ones.
        self._of = (players, outputs)
        self._players = pd.Index(list(players))
        self._outputs = list(outputs)
        self._by_output = None
        # The block's placement: its rows are the frame's columns, in order.
        self._placement = {}
        # The player level of interaction rows, as MultiIndex.from_product
        # factorizes it (sorted where the names sort), and each player's code.
        level = pd.MultiIndex.from_product([list(players)])
        self._player_level, self._player_codes = level.levels[0], level.codes[0]

    def describes(self, players, outputs) -> bool:
        """Whether the layout was built from these very names (not equal ones)."""
        return self._of[0] is players and self._of[1] is outputs

    def columns(self, n_outputs: int) -> pd.Index:
        """The columns of values of ``n_outputs`` outputs (1: players only)."""
        if n_outputs == 1:
            return self._players.view()
        if self._by_output is None:
            self._by_output = pd.MultiIndex.from_product(
                [self._outputs, list(self._players)], names=["output", "feature"]
            )
        return self._by_output.view()

    def frame(self, values: np.ndarray, index: pd.Index) -> pd.DataFrame:
        """A DataFrame of ``values`` (n_samples, n_outputs, n_players), not copied."""
        n_samples, n_outputs, n_players = values.shape
        flat = values.reshape(n_samples, n_outputs * n_players)
        columns = self.columns(n_outputs)
        if create_dataframe_from_blocks is None:
            return pd.DataFrame(flat, index=index, columns=columns, copy=False)
        placement = self._placement.get(n_outputs)
        if placement is None:
            placement = np.arange(flat.shape[1])
            placement.flags.writeable = False  # shared by the frames
            self._placement[n_outputs] = placement
        # A block holds its columns as rows: (columns, samples).
        return create_dataframe_from_blocks(
            [(flat.T, placement)], index=index, columns=columns
        )

    def interaction_rows(self, index: pd.Index) -> pd.MultiIndex:
        """The rows ``(row, feature)`` of interaction values of rows ``index``.

        Equal, levels and codes included, to
        ``MultiIndex.from_product([index, players])``.
        """
        if isinstance(index, pd.RangeIndex) and index.step > 0:
            # Sorted and distinct already: its own factorization.
            row_level, row_codes = index, np.arange(len(index))
        else:
            rows = pd.MultiIndex.from_product([index])
            row_level, row_codes = rows.levels[0], rows.codes[0]
        n_players = len(self._player_codes)
        return pd.MultiIndex(
            levels=[row_level, self._player_level],
            codes=[
                np.repeat(row_codes, n_players),
                np.tile(self._player_codes, len(index)),
            ],
            names=[index.name or "row", "feature"],
            verify_integrity=False,
        )


@functools.lru_cache(maxsize=8)
def coalition_labels(coalitions: tuple, players: tuple) -> pd.Index:
    """The columns of coalitions: each the tuple of its players' names."""
    return pd.Index(
        [tuple(players[p] for p in coalition) for coalition in coalitions],
        dtype=object,
        tupleize_cols=False,
        name="coalition",
    )


def coalition_frame(
    values: np.ndarray, index: pd.Index, coalitions, players, outputs
) -> pd.DataFrame:
    """A DataFrame of interaction indices (n_samples, n_outputs, n_coalitions).

    One column per coalition, labelled by the tuple of its players' names
    (``()`` for the empty one), or columns ``(output, coalition)`` for
    several outputs.
    """
    n_samples, n_outputs, n_coalitions = values.shape
    labels = coalition_labels(coalitions, tuple(players)).view()
    columns = labels
    if n_outputs > 1:
        columns = pd.MultiIndex(
            levels=[pd.Index(list(outputs)), labels],
            codes=[
                np.repeat(np.arange(n_outputs), n_coalitions),
                np.tile(np.arange(n_coalitions), n_outputs),
            ],
            names=["output", "coalition"],
        )
    flat = values.reshape(n_samples, n_outputs * n_coalitions)
    return pd.DataFrame(flat, index=index, columns=columns, copy=False)
