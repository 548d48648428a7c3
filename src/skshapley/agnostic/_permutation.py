"""PermutationExplainer: Shapley values of any model, from sampled orderings."""

import copy
from numbers import Integral
from typing import ClassVar

import numpy as np
import pandas as pd
from sklearn.utils import check_random_state

from .._runtime.dask import is_dask_collection, lazy_explanation
from .._runtime.limits import MAX_PERMUTATIONS
from .._runtime.memory import DEFAULT_MAX_MEMORY, parse_memory
from .._runtime.progress import progress_callback
from ._explainer import AgnosticExplainer, Rows


class PermutationExplainer(AgnosticExplainer):
    """Shapley values of any model, estimated from random orderings of the players.

    For each explained row, ``n_permutations`` orderings of the players are
    drawn uniformly at random; along each, players join one at a time and
    each is credited its marginal contribution ``v(S ∪ {i}) - v(S)``, with
    the interventional value function of :class:`ExactExplainer`. The
    estimates are unbiased, their standard error falls like ``1 /
    sqrt(n_permutations)``, and efficiency is exact for any number of
    orderings: one ordering's contributions telescope to ``f(x) - v(∅)``.
    Each ordering costs at most ``(n_players - 1) * n_background`` model
    rows (twice that with ``antithetic``; a background row's hybrid is
    evaluated again only when an arriving player changes it), so any number
    of players works.

    Parameters
    ----------
    model : estimator or callable
        A fitted model (a ``Pipeline`` is one model: its input columns are
        the features), or any callable ``f(X)``.
    response_method : {"auto", "predict", "predict_proba", "decision_function"} \
            or list of them, default="auto"
        The method explained, as for :class:`ExactExplainer`.
    n_permutations : int, default=10
        Orderings drawn per row.
    antithetic : bool, default=True
        Also evaluate each ordering reversed, and average the pair: a player
        early in one is late in the other, which cancels much of the
        sampling error for the same model calls as independent orderings.
    random_state : int, RandomState instance, Generator or None, default=None
        Seeds the orderings. With an int, row ``r`` of an ``explain`` call
        uses orderings seeded by ``(random_state, r)``: the values do not
        depend on how rows are chunked.
    groups : dict of str to list, "input" or None, default=None
        Players made of several features, as for :class:`ExactExplainer`.
    max_memory : int or str, default="1GB"
        The working memory of an explanation beyond its result, in bytes
        or as text (``"512MB"``, ``"2GiB"``): rows are explained in chunks
        that fit it, and each row's orderings are drawn in chunks too (any
        ``n_permutations`` fits), with the same values as in one piece.
        One row needs at least one ordering's arrays, which grow with the
        players times the background rows; a smaller budget is refused
        saying how much one row needs.

    Attributes
    ----------
    expected_value_ : float or pandas.Series
        ``v(∅)``: the model's output averaged over the background.
    n_background_ : int
        Number of background rows.
    n_evaluations_per_row_ : int
        Model evaluations per explained row, at most: what a run costs.
    feature_names_in_ : ndarray of str
        The model's input columns.
    n_features_in_ : int
        Number of input columns.
    player_names_ : ndarray of str
        The players.
    columns_by_name_ : bool
        Whether DataFrame columns are matched by name.
    output_names_ : tuple
        The outputs explained, as for :class:`ExactExplainer`.
    raw_output_ : str
        The method explained.
    method_ : str
        ``"permutation"``.

    See Also
    --------
    ExactExplainer : Exact values for up to about 16 players.

    Examples
    --------
    >>> from sklearn.datasets import load_breast_cancer
    >>> from sklearn.linear_model import LogisticRegression
    >>> from sklearn.pipeline import make_pipeline
    >>> from sklearn.preprocessing import StandardScaler
    >>> from skshapley import PermutationExplainer
    >>> X, y = load_breast_cancer(return_X_y=True, as_frame=True)
    >>> model = make_pipeline(StandardScaler(), LogisticRegression()).fit(X, y)
    >>> explainer = PermutationExplainer(
    ...     model, response_method="decision_function", random_state=0
    ... ).fit(X.iloc[:10])
    >>> phi, std = explainer.explain(X.iloc[:2], return_std=True)
    >>> phi.shape, std.shape
    ((2, 30), (2, 30))
    >>> total = phi.sum(axis=1) + explainer.expected_value_
    >>> bool(abs(total - model.decision_function(X.iloc[:2])).max() < 1e-9)
    True
    """

    method_: ClassVar[str] = "permutation"

    def __init__(
        self,
        model,
        *,
        response_method="auto",
        n_permutations: int = 10,
        antithetic: bool = True,
        random_state=None,
        groups=None,
        max_memory: int | str = DEFAULT_MAX_MEMORY,
    ):
        self.model = model
        self.response_method = response_method
        self.n_permutations = n_permutations
        self.antithetic = antithetic
        self.random_state = random_state
        self.groups = groups
        self.max_memory = max_memory

    def explain(
        self, X, *, output=None, progress=None, return_std: bool = False
    ) -> pd.DataFrame | tuple[pd.DataFrame, pd.DataFrame]:
        """Estimated Shapley values of the model's output for each row of ``X``.

        Parameters
        ----------
        X : array-like or pandas.DataFrame of shape (n_samples, n_features)
            The rows to explain. DataFrame columns are matched by name.
        output : object, default=None
            One of ``output_names_``: that output's values only.
        progress : bool or callable, default=None
            True shows a progress bar on stderr; a callable is called as
            ``progress(n_done, n_total)`` after each chunk of rows (as in
            every explainer's ``explain``).
        return_std : bool, default=False
            Also return the standard error of each value: the standard
            deviation of the per-ordering estimates (per pair, with
            ``antithetic``) over ``sqrt(n_permutations)``. Needs
            ``n_permutations >= 2``.

        Returns
        -------
        phi : pandas.DataFrame
            In the layout of every explainer's ``explain``; each row sums,
            with ``expected_value_``, to the model's output.
        std : pandas.DataFrame
            Only with ``return_std``: the standard errors, same layout.
        """
        if is_dask_collection(X):  # a lazy result, computed by Dask
            if return_std:
                raise ValueError(
                    "return_std=True is not available for a Dask collection: "
                    "explain its partitions (map_partitions) to get both."
                )
            return lazy_explanation(self, X, output=output, progress=progress)
        if return_std and self.n_permutations < 2:
            raise ValueError(
                "return_std=True needs n_permutations >= 2 (a standard error "
                f"from one ordering is undefined); got {self.n_permutations}."
            )
        entropy = self._entropy()
        # The standard errors' buffer only when asked for: the result frame
        # keeps its whole buffer alive.
        frames = self._explained(
            X,
            output,
            progress_callback(progress),
            lambda X, out, _: self._sampled_rows(X, out, entropy),
            2 if return_std else 1,
        )
        return tuple(frames) if return_std else frames[0]

    def for_partition(self, number: int) -> "PermutationExplainer":
        """A copy drawing the orderings of partition ``number`` of a collection.

        Row ``r`` of a call draws from ``(seed, r)``; partitions are separate
        calls, so each gets its own seed, derived from ``random_state`` and
        its number (reproducible with an int ``random_state``, fresh with
        None).

        Parameters
        ----------
        number : int
            The partition's position in its collection (from 0).

        Returns
        -------
        explainer : PermutationExplainer
            A shallow copy with the partition's own ``random_state``.
        """
        explainer = copy.copy(self)
        if self.random_state is not None:
            seeds = np.random.SeedSequence([self._entropy(), number])
            explainer.random_state = int(seeds.generate_state(1, np.uint64)[0] >> 1)
        return explainer

    def _check_params(self) -> None:
        count = self.n_permutations
        if (
            not isinstance(count, Integral)
            or isinstance(count, bool)
            or not 1 <= count <= MAX_PERMUTATIONS
        ):
            raise ValueError(
                f"n_permutations must be an integer from 1 to {MAX_PERMUTATIONS:,} "
                f"(the time grows with it: 1,000 orderings estimate values to "
                f"about 3% of their spread); got {count!r:.40}."
            )
        seed = self.random_state
        valid_seed = (
            seed is None
            or isinstance(seed, np.random.Generator | np.random.RandomState)
            or (
                isinstance(seed, Integral)
                and not isinstance(seed, bool)
                and 0 <= seed < 2**63
            )
        )
        if not valid_seed:
            raise ValueError(
                "random_state must be None, an integer from 0 to 2**63 - 1, or a "
                f"NumPy Generator or RandomState; got {seed!r:.40}."
            )
        if not isinstance(self.antithetic, bool | np.bool_):
            raise ValueError(
                f"antithetic must be True or False; got {self.antithetic!r}."
            )

    def _entropy(self) -> int:
        """The seed of this call's orderings: ``random_state`` itself if an int."""
        if isinstance(self.random_state, Integral) and not isinstance(
            self.random_state, bool
        ):
            return int(self.random_state)
        if isinstance(self.random_state, np.random.Generator):
            return int(self.random_state.integers(2**63))
        return int(check_random_state(self.random_state).randint(2**31))

    def _sampled_rows(self, X: Rows, out: np.ndarray, entropy: int) -> None:
        """Fill ``out[0]`` with rows ``X``'s estimates, ``out[1]`` (if any) with
        their standard errors.

        Row ``r`` of the call draws its orderings from ``(entropy, r)``.
        """
        hybrids = self._hybrids(X)
        per_chunk = self._draws_per_chunk()
        for row, label in enumerate(X.frame.index):
            rng = np.random.default_rng([entropy, X.start + row])
            total = np.zeros(out.shape[2:])  # the draws' sum, in draw order
            squares = np.zeros(out.shape[2:])  # their squared deviations' sum
            for start in range(0, self.n_permutations, per_chunk):
                count = min(per_chunk, self.n_permutations - start)
                draws = self._draw_estimates(
                    hybrids, row, self._orderings(rng, count), label
                )
                # Chan et al.'s update of the deviations by a chunk's.
                mean = draws.mean(axis=0)
                squares += ((draws - mean) ** 2).sum(axis=0)
                if start:
                    delta = mean - total / start
                    squares += delta**2 * start * count / (start + count)
                # Added one draw after another, whatever the chunks: the
                # same bits for any max_memory.
                total = np.cumsum(np.concatenate([total[None], draws]), axis=0)[-1]
            n = self.n_permutations
            out[0, row] = total / n
            if len(out) > 1 and n > 1:  # the standard errors, if asked for
                out[1, row] = np.sqrt(squares / (n - 1)) / np.sqrt(n)

    def _draws_per_chunk(self) -> int:
        """Draws computed at once: as many as a quarter of ``max_memory`` holds.

        A draw's working arrays grow with the players and background rows
        (:meth:`_draw_bytes`); the draws of one row are taken in chunks of
        this many, so that any ``n_permutations`` runs in bounded memory
        (a row needs at least one draw: :meth:`_row_bytes`). The orderings
        come from the row's generator in the same order whatever the chunks,
        so the values do not depend on ``max_memory`` (but for the rounding
        of their sums).
        """
        return max(1, parse_memory(self.max_memory) // 4 // self._draw_bytes())

    def _draw_bytes(self) -> int:
        """Working bytes of one draw (an ordering, and its reverse if antithetic).

        Per (coalition, background row): 4 masks of one byte, 6 arrays of 8
        (arrival counts, last hybrids, their values) and the outputs.
        """
        n_players = len(self.player_names_)
        n_outputs = len(self.output_names_)
        per_ordering = n_players * (
            self.n_background_ * (52 + 8 * n_outputs) + n_players + 24 * n_outputs
        )
        return per_ordering * (2 if self.antithetic else 1)

    def _row_bytes(self) -> int:
        # A row is explained with at least one draw in memory.
        return super()._row_bytes() + self._draw_bytes()

    def _orderings(self, rng: np.random.Generator, count: int) -> np.ndarray:
        """``count`` orderings drawn from ``rng``, then their reverses."""
        n_players = len(self.player_names_)
        drawn = np.argsort(rng.random((count, n_players)), axis=1)
        return np.vstack([drawn, drawn[:, ::-1]]) if self.antithetic else drawn

    def _draw_estimates(
        self, hybrids, row: int, orderings: np.ndarray, label
    ) -> np.ndarray:
        """Each draw's estimate, shape (n_permutations, n_outputs, n_players).

        Along an ordering the coalitions grow one player at a time; the
        empty one is worth ``expected_value_`` and the full one ``f(x)``,
        the same two numbers for every ordering, so that each ordering's
        contributions sum to ``f(x) - v(∅)``.
        """
        n_orderings, n_players = orderings.shape
        path = np.empty((n_orderings, n_players + 1, len(self.output_names_)))
        path[:, 0] = self._expected
        path[:, 1:-1], path[:, -1] = self._path_values(hybrids, row, orderings, label)
        contributions = np.diff(path, axis=1)  # (ordering, k, output)
        estimates = np.empty((n_orderings, path.shape[2], n_players))
        np.put_along_axis(
            estimates, orderings[:, None, :], contributions.transpose(0, 2, 1), axis=2
        )
        if self.antithetic:  # each draw is the pair: the ordering and its reverse
            count = n_orderings // 2
            estimates = (estimates[:count] + estimates[count:]) / 2
        return estimates

    def _path_values(
        self, hybrids, row: int, orderings: np.ndarray, label
    ) -> tuple[np.ndarray, np.ndarray]:
        """``v`` of the coalitions of the first 1, 2, ..., n_players - 1, and ``f(x)``.

        In background row ``z``, the hybrid changes along an ordering only
        when a player arrives on whom ``z`` differs from the row, and it is
        the row itself once all of those have arrived: only the hybrids
        between are evaluated, the others repeat the last one (or ``z``'s
        own output, or ``f(x)``). Shapes (n_orderings, n_players - 1,
        n_outputs) and (n_outputs,).
        """
        n_orderings, n_players = orderings.shape
        differs = self._differing_players(hybrids, row)  # (z, player)
        # changed[o, k - 1, z]: the k-th arrival of ordering o changes z's hybrid.
        changed = differs.T[orderings[:, :-1]]
        arrived = np.cumsum(changed, axis=1)
        complete = arrived == differs.sum(axis=1)
        evaluated = changed & ~complete
        arrival = np.argsort(orderings, axis=1)
        coalitions = arrival[:, None, :] < np.arange(1, n_players)[None, :, None]
        flat = evaluated.reshape(-1, len(differs))
        outputs, full = self._hybrid_outputs(
            hybrids, row, coalitions.reshape(-1, n_players), np.nonzero(flat), label
        )
        # Each (ordering, k, z): the position of the last evaluated hybrid.
        last = np.full(flat.shape, -1)
        last[flat] = np.arange(len(outputs))
        last = np.maximum.accumulate(last.reshape(evaluated.shape), axis=1)
        values = np.empty((n_orderings, n_players - 1, len(full)))
        for k, (column, own) in enumerate(
            zip(outputs.T, self._background_output.T, strict=True)
        ):
            # No hybrid evaluated (the row differs from every background
            # row in at most one player): each is the row or z itself.
            hybrid = np.where(last >= 0, column[last], own) if len(column) else own
            values[:, :, k] = np.where(complete, full[k], hybrid).mean(axis=2)
        return values, full

    def _index_words(self) -> str:
        pairs = " (antithetic)" if self.antithetic else ""
        return f"Shapley, estimated from {self.n_permutations} permutations{pairs}"

    def _evaluations_per_row(self) -> int:
        chains = self.n_permutations * (2 if self.antithetic else 1)
        return chains * (len(self.player_names_) - 1) * self.n_background_ + 1
