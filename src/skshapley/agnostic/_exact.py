"""ExactExplainer: exact attributions of any model, from all coalitions."""

from typing import ClassVar

import numpy as np

from .._runtime.memory import DEFAULT_MAX_MEMORY
from ..games._exact import MAX_TABLE_PLAYERS, _masks_to_bool, table_indices
from ..games._indices import interaction_indices
from ._explainer import AgnosticExplainer, Rows

_INDEX_WORDS = {"shapley": "Shapley", "banzhaf": "Banzhaf", "loo": "leave-one-out"}


class ExactExplainer(AgnosticExplainer):
    """Exact Shapley values of any model, by evaluating every coalition.

    The value of a coalition ``S`` of features is the model's output
    averaged over the background rows with the features of ``S`` set to the
    explained row's values (the interventional value function). Every
    coalition is evaluated, at most ``(2**n_players - 2) * n_background``
    model rows per explained row (a hybrid row shared by several coalitions,
    where a background row equals the explained row on some features, is
    evaluated once), and the values are solved exactly from the table
    (:func:`skshapley.games.shapley_values`'s factorial formula). That is
    affordable for up to about 16 players: features, or groups of them.

    Parameters
    ----------
    model : estimator or callable
        A fitted model (a ``Pipeline`` is one model: its input columns are
        the features), or any callable ``f(X)`` returning one value, or one
        row of values, per row of ``X``.
    response_method : {"auto", "predict", "predict_proba", "decision_function"} \
            or list of them, default="auto"
        The method explained, or methods tried in order (scikit-learn's
        convention). ``"auto"``: ``predict_proba`` then
        ``decision_function`` for classifiers, ``predict`` otherwise; a
        callable is called itself. A binary classifier has one output, its
        positive class ``classes_[1]`` (its probability, or its decision
        function), as for every explainer.
    groups : dict of str to list, "input" or None, default=None
        Players made of several features, ``{name: [columns]}``: one value
        per group (and fewer coalitions). None or ``"input"``: each input
        column is a player.
    max_players : int, default=16
        Most players explained exactly (at most 20); more raise an error
        that points to :class:`PermutationExplainer` and to ``groups``.
    index : {"shapley", "banzhaf", "loo"}, default="shapley"
        The attribution computed from the coalitions' values: Shapley
        values (efficient: each row sums to its output minus the base
        value), Banzhaf values (every coalition weighs the same), or
        leave-one-out ``v(N) - v(N minus {i})`` (``n_players *
        n_background + 1`` evaluations per row, for any number of players).
    max_memory : int or str, default="1GB"
        The working memory of an explanation beyond its result, in bytes
        or as text (``"512MB"``, ``"2GiB"``): rows are explained in chunks
        that fit it, with the same values as in one piece. One row
        evaluates up to ``2**n_players - 2`` hybrids per background row at
        once (about ``40 + 8 * n_outputs`` bytes each: 2.6 GB for 16
        players against 1,000 background rows); a smaller budget is
        refused, saying what one row needs.

    Attributes
    ----------
    expected_value_ : float or pandas.Series
        ``v(∅)``: the model's output averaged over the background, per
        output.
    n_background_ : int
        Number of background rows.
    n_evaluations_per_row_ : int
        Model evaluations per explained row, at most: what a run costs.
    feature_names_in_ : ndarray of str
        The model's input columns.
    n_features_in_ : int
        Number of input columns.
    player_names_ : ndarray of str
        The players: the columns, or the groups then ungrouped columns.
    columns_by_name_ : bool
        Whether DataFrame columns are matched by name.
    output_names_ : tuple
        The outputs explained: class labels (Python scalars, or the labels
        as the model has them), ``(classes_[1],)`` for a binary classifier,
        or targets.
    raw_output_ : str
        The method explained.
    method_ : str
        ``"exact"``.

    See Also
    --------
    PermutationExplainer : Sampled Shapley values for any number of players.
    TreeExplainer : Exact and fast for tree ensembles.

    Examples
    --------
    >>> from sklearn.datasets import load_diabetes
    >>> from sklearn.neighbors import KNeighborsRegressor
    >>> from skshapley import ExactExplainer
    >>> X, y = load_diabetes(return_X_y=True, as_frame=True)
    >>> X = X[["age", "bmi", "bp", "s5"]]
    >>> model = KNeighborsRegressor().fit(X, y)
    >>> explainer = ExactExplainer(model).fit(X.iloc[:20])
    >>> phi = explainer.explain(X.iloc[:3])
    >>> phi.shape
    (3, 4)
    >>> total = phi.sum(axis=1) + explainer.expected_value_
    >>> bool(abs(total - model.predict(X.iloc[:3])).max() < 1e-9)
    True
    """

    method_: ClassVar[str] = "exact"
    supports_indices: ClassVar[bool] = True

    def __init__(
        self,
        model,
        *,
        response_method="auto",
        groups=None,
        max_players: int = 16,
        index: str = "shapley",
        max_memory: int | str = DEFAULT_MAX_MEMORY,
    ):
        self.model = model
        self.response_method = response_method
        self.groups = groups
        self.max_players = max_players
        self.index = index
        self.max_memory = max_memory

    def _check_params(self) -> None:
        if self.index not in _INDEX_WORDS:
            raise ValueError(
                f"index must be one of {', '.join(map(repr, _INDEX_WORDS))}; "
                f"got {self.index!r}."
            )
        limit = self.max_players
        if (
            not isinstance(limit, int | np.integer)
            or not 1 <= limit <= MAX_TABLE_PLAYERS
        ):
            raise ValueError(
                f"max_players must be an integer from 1 to {MAX_TABLE_PLAYERS} "
                f"(2**max_players coalitions per row); got {limit!r}."
            )

    def fit(self, X=None, y=None):
        super().fit(X, y)
        n_players = len(self.player_names_)
        if self.index != "loo" and n_players > self.max_players:
            raise ValueError(
                f"{n_players} players are too many to explain exactly "
                f"(max_players={self.max_players}: 2**{n_players} coalitions "
                "per row). Use PermutationExplainer, which samples coalitions, "
                "or fewer players with groups={name: [columns]}."
            )
        return self

    fit.__doc__ = AgnosticExplainer.fit.__doc__

    def _explain_rows(self, X: Rows, values: np.ndarray, n_threads: int) -> None:
        if self.index == "loo":
            self._leave_one_out_rows(X, values[None], n_threads)
            return
        n_players = len(self.player_names_)
        hybrids = self._hybrids(X)
        tables = np.empty((len(X), len(self.output_names_), 2**n_players))
        for row, label in enumerate(X.frame.index):
            tables[row] = self._coalition_table(hybrids, row, label).T
        values[:] = table_indices(tables, n_players, self.index)

    def _index_rows(self, X: Rows, plan, out: np.ndarray, n_threads: int) -> None:
        """Interaction indices of each row's game, from its table (at most
        16 players)."""
        hybrids = self._hybrids(X)
        for row, label in enumerate(X.frame.index):
            table = self._coalition_table(hybrids, row, label)
            for o in range(table.shape[1]):
                out[row, o] = plan.from_listed(
                    interaction_indices(
                        table[:, o], plan.n_players, index=plan.index, order=plan.order
                    ).values
                )

    def _index_game_players(self) -> int:
        """The one game of a row has every player."""
        return len(self.player_names_)

    def _coalition_table(self, hybrids, row: int, label) -> np.ndarray:
        """``v(S)`` of every coalition ``S`` (by bitmask) of explained ``row``.

        Background rows are grouped by the players ``D`` on which they
        differ from the row: for those, the hybrid of ``S`` is that of ``S ∩
        D``, so only the subsets of ``D`` are evaluated, and neither the
        empty one (the background row itself) nor ``D`` (the row itself).
        With continuous features ``D`` is every player and each coalition
        is evaluated once per background row. Shape (2**n_players,
        n_outputs).
        """
        n_players = len(self.player_names_)
        masks = np.arange(2**n_players)
        differs = self._differing_players(hybrids, row)
        patterns, group = np.unique(
            differs @ (1 << np.arange(n_players)), return_inverse=True
        )
        blocks = []  # per pattern: its subsets evaluated, its background rows
        for k, pattern in enumerate(patterns):
            inside = ((masks & ~pattern) == 0) & (masks != 0) & (masks != pattern)
            blocks.append((masks[inside], np.flatnonzero(group == k)))
        pairs = [np.broadcast_arrays(sub[:, None], rows) for sub, rows in blocks]
        outputs, full = self._hybrid_outputs(
            hybrids,
            row,
            _masks_to_bool(masks, n_players),
            tuple(np.concatenate([np.ravel(a[i]) for a in pairs]) for i in (0, 1)),
            label,
        )
        sums = np.zeros((2**n_players, len(full)))
        start = 0
        for pattern, (subsets, rows) in zip(patterns, blocks, strict=True):
            # Summed over the pattern's background rows, by the subset of the
            # pattern that a coalition keeps.
            by_subset = np.empty((2**n_players, len(full)))
            by_subset[0] = self._background_output[rows].sum(axis=0)
            by_subset[pattern] = len(rows) * full
            stop = start + len(subsets) * len(rows)
            block = outputs[start:stop].reshape(len(subsets), len(rows), len(full))
            by_subset[subsets] = block.sum(axis=1)
            sums += by_subset[masks & pattern]
            start = stop
        table = sums / self.n_background_
        table[0], table[-1] = self._expected, full
        return table

    def _row_bytes(self) -> int:
        # Each row of a chunk keeps its table of 2**n_players values per
        # output; a row's coalitions are evaluated against each background
        # row at once: at most (2**n_players - 2) * n_background hybrids, each
        # with its coalition and background positions (32 bytes at the
        # peak of their concatenation) and its outputs.
        n_outputs = len(self.output_names_)
        if self.index == "loo":
            # Leave-one-out: a hybrid per player and background row, each
            # with its positions (16 bytes) and outputs, and the comparison;
            # the coalitions without one player (players**2 booleans).
            n_players = len(self.player_names_)
            pairs = n_players * self.n_background_ * (24 + 8 * n_outputs)
            return super()._row_bytes() + pairs + n_players**2
        n_coalitions = 2 ** len(self.player_names_)
        hybrids = (n_coalitions - 2) * self.n_background_ * (32 + 8 * n_outputs)
        return super()._row_bytes() + 8 * n_outputs * n_coalitions + hybrids

    def _index_words(self) -> str:
        return _INDEX_WORDS[self.index]

    def _evaluations_per_row(self) -> int:
        n_players = len(self.player_names_)
        if self.index == "loo":
            return n_players * self.n_background_ + 1
        return (2**n_players - 2) * self.n_background_ + 1
