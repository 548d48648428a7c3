"""Interventional values of tree ensembles: the background, ready for rows.

The value function of ``feature_perturbation="interventional"`` averages
the model over a background population: ``v(S) = mean_z f(x_S, z_rest)``.
For one leaf and one background row it is a product game with 0/1 factors;
``_interventional_core`` sums its closed-form values over the background
through each leaf's counts of failure masks (see its docstring). Here the
counts become tables: built at ``fit`` and kept when they fit
``_TABLE_BUDGET_BYTES``, so that explaining costs rows only; otherwise
rebuilt at each call, a batch of trees at a time, from the kept background,
unless the call has few rows: each then walks each tree with the background
rows that reach each node with it (``Paths.explain_pairs``), which gives the
same bits.
Interaction values have tables of their own, built at the first call and
kept the same way (and left out of pickles, which rebuild them).
"""

import functools
from dataclasses import dataclass

import numpy as np
from scipy.special import beta as beta_function

from .._runtime.limits import MAX_SCRATCH_BYTES_PER_THREAD
from .._runtime.threads import threads_for
from ..games._indices_core import RuleView
from . import _index_core, _interventional_core, _tree_core
from ._index_patterns import check_routing_bytes, leaf_patterns
from ._table_plan import Layout, Plan, planned

# Bytes of tables and masks held at once: kept from fit to explain when the
# whole ensemble's fit, else built one batch of trees at a time (XGBoost's
# 200 trees of depth 6 need ~20 MB).
_TABLE_BUDGET_BYTES = 2**28

# Leaves with at most this many distinct players on their path keep tables
# of their D gains for each of the 2**D masks a row may have (D * 2**D
# doubles, built in O(2**D D**2)), if 2**(D - 1) is at most the background's
# size too (see _table_bits); other
# paths keep the background's distinct failure masks and their counts.
# For interactions, tables hold the counts of the 2**D masks (2**D doubles):
# a row visits the subsets of its mask. Sorting the masks of the many leaves
# of a deep forest instead would cost more than it saves.
_MAX_TABLE_BITS = 14

# A tree's leaves' counts come from its cover (_cover.pxd) where that saves
# the background walk's increments at least _COVER_GAIN times the work of
# reading the cover's histograms into the leaves (negative: never).
_COVER_GAIN = 4.0

# Trees a cover takes, whose leaves all keep tables, serve rows' Shapley
# values from row covers (_cover.pxd): count nodes with keys of at most
# _ROW_COVER_BITS sides (negative: none), whose tables of every key's summed
# gains are kept with the leaves' (at most as large for full trees: depth
# 6 makes 16 count nodes with 7-side keys, 14,000 doubles against the
# leaves' 24,500). A row then takes one lookup and a few additions per
# count node instead of a walk to every leaf.
_ROW_COVER_BITS = 8

# When tables are rebuilt at each call, a few rows walk each tree with the
# background rows instead (Background._pairs_pay): if rows * trees * depth *
# _PAIR_NODES is at most the nodes, and at most _MAX_PAIR_ROWS rows. Measured
# (one thread, 200 and 1,000 background rows), pair walks stay cheaper up
# to about 70 rows on 100 trees of depth 12, 96 on 50 extra trees of depth
# 14, 150-170 on 10 trees of depth 34 and 17-22 on XGBoost's 1,000 of
# depth 8; the rule picks them up to 64, 64, 64 and 6 rows.
_PAIR_NODES = 4
_MAX_PAIR_ROWS = 64

# Pair walks read each background row's side at each node from bitsets
# (n_nodes * n_background / 8 bytes), routed at fit (after a pickle, at the
# first call) and kept, if they take at most this.
_DIRECTIONS_BUDGET_BYTES = 2**27

# A row's time at one thread per node of the trees, for the threads a call
# is worth (measured, in batches of rows: 3 to 4.6 ns on 100 boosted trees
# of depth 5 and 30 trees of depth 10, against 100 and 1,000 background rows).
_NS_PER_NODE = 4.0

# A row's time per node of the trees with row covers, and a background
# row's at fit per node counted (measured, one thread, XGBoost 100 trees of
# depth 6: 12 us a row explained, 2.4 us a background row; walks cost more).
_NS_PER_COVERED_NODE = 1.0
_NS_PER_BUILD_NODE = 0.5

# With several threads, rows go in at least _SHARES_PER_THREAD blocks a
# thread (of at least _MIN_SHARE_ROWS rows), taken as threads come free: a
# thread slowed by a busy core takes fewer. In two halves, 800 rows of
# XGBoost (200 trees of depth 6) took 1.26 times as long at two threads as
# at one beside a busy process.
_SHARES_PER_THREAD = 8
_MIN_SHARE_ROWS = 32

# Rows walked together: a leaf's table serves the whole block while it is in
# cache. Fewer when one thread's scratch would exceed
# MAX_SCRATCH_BYTES_PER_THREAD (very deep trees), or to share a few rows
# evenly between the threads.
_BLOCK_ROWS = 512


@dataclass
class _Batch:
    """A batch of trees with their leaves' tables and masks filled.

    ``reach`` holds, per node, the background rows reaching each of the
    batch's leaves; ``covered`` is the number of its trees counted by their
    covers (the others by a walk of the background); ``row_tables`` its
    row covers' tables, from the plan's offset ``row_table_base``.
    """

    table_base: int
    mask_base: int
    tables: np.ndarray
    masks: np.ndarray
    reach: np.ndarray
    row_table_base: int
    row_tables: np.ndarray
    covered: int = 0


class Background:
    """A tree ensemble's paths and a background population (plain arrays).

    Parameters
    ----------
    ensemble : TreeEnsemble
        The parsed model.
    node_player : ndarray of shape (n_nodes,)
        The player each internal node's split is credited to.
    n_players : int
        The number of players.
    background : ndarray of shape (n_background, n_features)
        The validated background rows (cast as the model casts them).
    n_threads : int
        Threads for building the tables.
    max_bytes : int
        The explainer's ``max_memory``: a tree whose leaves' tables and
        masks need more than half of it is refused, saying what it needs.
    """

    def __init__(
        self, ensemble, node_player, n_players, background, n_threads, max_bytes
    ):
        self._ensemble = ensemble
        # Tables and masks held at once: half of max_memory, at most
        # _TABLE_BUDGET_BYTES (the rest is the rows' and the kernels').
        self._table_budget = min(_TABLE_BUDGET_BYTES, max_bytes // 2)
        self._max_bytes = max_bytes
        # The background's routes and a few rows' pair-walk sums: a quarter.
        self._pairs_budget = min(_DIRECTIONS_BUDGET_BYTES, max_bytes // 4)
        self._node_player = node_player
        self._n_players = n_players
        # The kernels read features by column: one row of each per block.
        self._background = np.ascontiguousarray(background.T)
        n_nodes = len(ensemble.feature)
        self._roots = np.append(ensemble.roots, n_nodes).astype(np.intp)
        self._bit = np.empty(n_nodes, dtype=np.intp)
        none = np.empty(0, dtype=np.intp)
        self._max_depth = self._path_bits(none, none)
        self._leaves = np.flatnonzero(ensemble.left < 0)
        n_bits = self._bit[self._leaves]
        self._players_start = np.zeros(n_nodes, dtype=np.intp)
        self._players_start[self._leaves] = np.cumsum(n_bits) - n_bits
        self._players = np.zeros(max(1, int(n_bits.sum())), dtype=np.intp)
        self._path_bits(self._players_start, self._players)
        self._max_bits = int(n_bits.max())
        self._words = max(1, -(-self._max_bits // 64))
        sizes = np.arange(self._max_bits + 2, dtype=float)
        with np.errstate(divide="ignore"):  # B(0, b) is never read
            beta = beta_function(sizes[:, None], sizes[None, :])
        # Exactly symmetric, as B is: every kernel reads one of B(a, b), B(b, a).
        self._beta = np.triu(beta) + np.triu(beta, 1).T
        self._plan = self._planned(_table_bits(self.n_background), gains=True)
        self._kept = None
        if len(self._plan.batches) == 1:
            self._kept = self._built(self._plan, self._plan.batches[0], n_threads)
        # The interactions' plan, and its one batch if it fits: at first use.
        self._interaction_plan = None
        self._interaction_kept = None
        # Where each background row goes at each node, for pair walks.
        self._directions = None
        # Each leaf's background patterns, for interaction indices: at first use.
        self._index_patterns = None
        if self._pairs_possible():
            self._directions = self._routed(self._paths(), n_threads)

    def __getstate__(self) -> dict:
        # The interaction tables and the background's directions are the
        # first call's to build, not the pickle's.
        return {
            **self.__dict__,
            "_interaction_kept": None,
            "_directions": None,
            "_index_patterns": None,
        }

    @property
    def row_cost_ns(self) -> float:
        """A row's estimated time at one thread, in nanoseconds.

        Trees with row covers cost a row about a quarter of a walk.
        """
        covers = self._plan.row_covers
        covered = 0
        if covers:
            has = np.diff(covers[1]) > 0
            covered = int(np.diff(self._roots)[has].sum())
        return (
            _NS_PER_NODE * (len(self._bit) - covered) + _NS_PER_COVERED_NODE * covered
        )

    @property
    def n_background(self) -> int:
        """The number of background rows."""
        return self._background.shape[1]

    def mean_output(self) -> np.ndarray | None:
        """The model's mean raw output over the background, or None.

        From the rows that reach each leaf, counted with the tables at fit
        (None if these are built at each call instead): the mean of the
        leaf values the background reaches, plus the ensemble's base offset.
        """
        if self._kept is None:
            return None
        ensemble = self._ensemble
        tree = np.repeat(np.arange(len(self._roots) - 1), np.diff(self._roots))
        tree = tree[self._leaves]
        total = np.zeros(ensemble.n_outputs)
        for k in range(ensemble.value.shape[1]):
            has = ensemble.tree_width[tree] > k
            leaves = self._leaves[has]
            np.add.at(
                total, ensemble.tree_output[tree[has]] + k,
                ensemble.value[leaves, k] * self._kept.reach[leaves],
            )  # fmt: skip
        return ensemble.base_offset + total / self.n_background

    def shapley(self, X: np.ndarray, values: np.ndarray, n_threads: int) -> None:
        """Add the interventional Shapley values of the rows ``X`` to ``values``.

        ``values`` has shape (n_samples, n_outputs, n_players) and is zero.
        """
        self._explain(self._plan, X, values, n_threads)

    def interactions(self, X: np.ndarray, out: np.ndarray, n_threads: int) -> None:
        """Add the rows' interaction matrices, in shap's convention, to ``out``.

        ``out`` has shape (n_samples, n_outputs, n_players, n_players) and
        is zero. Every leaf's pairs are summed over its background rows'
        distinct failure masks, weighted by their counts.
        """
        if self._interaction_plan is None:
            self._interaction_plan = self._planned(_MAX_TABLE_BITS, gains=False)
        self._explain(self._interaction_plan, X, out, n_threads)

    max_bits = property(lambda self: self._max_bits, doc="The most players on a path.")

    def indices(self, X, row_nodes, plan, out: np.ndarray, n_threads: int) -> None:
        """Add the rows' interaction indices of ``plan`` to ``out`` (n_samples,
        n_outputs, plan.n_columns; colexicographic columns), ``row_nodes``
        the trees' packed records (``Forest.row_nodes``)."""
        if self._index_patterns is None:
            check_routing_bytes(len(self._bit), self.n_background, self._max_bytes)
            directions = self._directions
            if directions is None:
                directions = self._routed(self._paths(), n_threads)
            self._index_patterns = leaf_patterns(
                self._ensemble, self._bit, self._players_start, self._players,
                directions, self.n_background,
            )  # fmt: skip
        _index_core.interventional_indices(
            self._ensemble, row_nodes, RuleView(plan), self._bit,
            self._players_start, self._index_patterns, self._max_bits, X, out,
            n_threads,
        )  # fmt: skip

    def _explain(self, plan: Plan, X: np.ndarray, out: np.ndarray, n_threads: int):
        """Add the rows' values (or, for 4-d ``out``, interactions) to ``out``.

        Blocks of rows as large as the scratch allows, shared evenly between
        the threads. Fewer blocks than threads (a few rows): the chunks of
        trees spread over the threads too, if their sums take no more memory
        than the threads' scratch for full blocks; else, and for more rows,
        each thread walks its blocks through every chunk. A few rows whose
        tables would be rebuilt take pair walks instead (:meth:`_pairs_pay`).
        """
        if len(X) == 0:
            return
        paths = self._paths()
        if self._pairs_pay(plan, len(X), out[0].size):
            self._explain_pairs(paths, plan, X, out, n_threads)
            return
        XT = np.ascontiguousarray(X.T)
        row_values = out[0].size
        # Each thread sums a chunk of its block's rows apart, if there are chunks.
        sums = row_values if max(map(len, plan.chunks)) > 2 else 0
        block_rows = _fitting_block(paths, sums, MAX_SCRATCH_BYTES_PER_THREAD)
        if n_threads > 1:  # shares small enough to balance a slowed thread
            share = -(-len(X) // (_SHARES_PER_THREAD * n_threads))
            block_rows = min(block_rows, max(_MIN_SHARE_ROWS, share))
        block, n_blocks = _tree_core.row_blocks(len(X), block_rows, n_threads)
        scratch = n_threads * paths.scratch_bytes(block_rows, sums)
        out_of_memory = np.zeros(1, dtype=np.intc)
        for batch, chunk_start in zip(
            self._batches(plan, n_threads), plan.chunks, strict=True
        ):
            partials = None
            shape = (len(chunk_start) - 2, len(X), row_values)
            if n_blocks < n_threads and 8 * np.prod(shape) <= scratch:
                partials = np.zeros(shape)
            paths.explain(
                XT, chunk_start, plan.offset, plan.tabulated, batch.tables,
                batch.masks, batch.table_base, batch.mask_base,
                self.n_background, out, out.ndim == 4, block, partials,
                plan.row_covers, batch.row_tables, batch.row_table_base,
                n_threads, out_of_memory,
            )  # fmt: skip
            _check_memory(out_of_memory)
        out /= self.n_background

    def _explain_pairs(self, paths, plan: Plan, X, out, n_threads: int) -> None:
        """Add the rows' values to ``out`` by pair walks (``Paths.explain_pairs``).

        Batch after batch, as the tables would be built: the same chunks'
        sums, added in the same order.
        """
        if self._directions is None:  # left out of pickles
            self._directions = self._routed(paths, n_threads)
        X = np.ascontiguousarray(X)  # a pair walk reads a row's features together
        row_values = out[0].size
        out_of_memory = np.zeros(1, dtype=np.intc)
        for chunk_start in plan.chunks:
            paths.explain_pairs(
                X, self._directions, self.n_background, chunk_start, out,
                np.zeros((len(chunk_start) - 2, len(X), row_values)),
                n_threads, out_of_memory,
            )  # fmt: skip
            _check_memory(out_of_memory)
        out /= self.n_background

    def _pairs_pay(self, plan: Plan, n_rows: int, row_values: int) -> bool:
        """Whether pair walks cost the rows less than building the tables.

        Only for Shapley values whose tables are rebuilt at each call (they
        exceed ``_TABLE_BUDGET_BYTES``; see :meth:`_pairs_possible`), and if
        the rows' sums of ``row_values`` doubles per chunk of trees fit a
        quarter of ``max_memory``. A row's
        walk reaches the nodes where some background row goes with it, a
        small part of each tree; a build walks the whole background through
        every node, then fills each leaf's table.
        """
        if plan is not self._plan or not self._pairs_possible():
            return False
        n_trees = len(self._roots) - 1
        n_chunks = max(len(chunk_start) - 2 for chunk_start in plan.chunks)
        return (
            n_rows <= _MAX_PAIR_ROWS
            and n_rows * n_trees * self._max_depth * _PAIR_NODES <= len(self._bit)
            and 8 * n_chunks * n_rows * row_values <= self._pairs_budget
        )

    def _pairs_possible(self) -> bool:
        """Whether a few rows may take pair walks instead of rebuilt tables.

        The tables are not kept, the paths' masks take one word, and the
        background's directions at every node fit their budget (a quarter
        of ``max_memory``, at most ``_DIRECTIONS_BUDGET_BYTES``).
        """
        words = -(-self.n_background // 64)
        return (
            self._kept is None
            and self._max_bits <= 64
            and 8 * words * len(self._bit) <= self._pairs_budget
        )

    def _routed(self, paths, n_threads: int) -> np.ndarray:
        """The background rows going left at each node, as bitsets."""
        words = -(-self.n_background // 64)
        directions = np.empty((len(self._bit), words), dtype=np.uint64)
        n_threads = threads_for(
            n_threads, self.n_background, _NS_PER_BUILD_NODE * len(self._bit)
        )
        paths.route_background(self._background, directions, n_threads)
        return directions

    def scratch_row_bytes(self, row_values: int) -> int:
        """Bytes of a thread's walk scratch per row of a block.

        With ``row_values`` doubles per row for a chunk's sums (0: none).
        """
        paths = self._paths()
        return paths.scratch_bytes(1, row_values) - paths.scratch_bytes(0, row_values)

    def _batches(self, plan: Plan, n_threads: int):
        """The plan's batches, built (one at a time) unless kept.

        A plan of one batch keeps it: the values' from fit, the
        interactions' from their first call.
        """
        if plan is self._plan and self._kept is not None:
            yield self._kept
            return
        if plan is self._interaction_plan and len(plan.batches) == 1:
            if self._interaction_kept is None:
                self._interaction_kept = self._built(plan, plan.batches[0], n_threads)
            yield self._interaction_kept
            return
        # One buffer of each kind for all batches, and one float32 copy of the
        # background, made at the first build that reads it.
        buffers = self._buffers(plan, plan.batches)
        background32 = functools.cache(self._float32_background)
        for batch in plan.batches:
            yield self._built(plan, batch, n_threads, buffers, background32)

    def _buffers(self, plan: Plan, batches: list) -> tuple:
        """Tables, masks and row tables for building ``batches`` one at a time.

        Each as large as the largest batch's: fresh memory for each batch
        would cost the system's zeroing of its pages.
        """
        return (
            np.empty(max(b[3] - b[2] for b in batches)),
            np.empty(max(b[5] - b[4] for b in batches), dtype=np.uint64),
            np.empty(max(plan.row_at[b[1]] - plan.row_at[b[0]] for b in batches)),
        )

    def _built(
        self, plan: Plan, batch: tuple, n_threads: int, buffers=None, background32=None
    ) -> _Batch:
        """One batch of trees, its leaves' tables and masks filled.

        In ``buffers`` (:meth:`_buffers`) if given, else in new arrays;
        ``background32`` gives the background as float32 for the covers
        (default :meth:`_float32_background`).
        """
        first_tree, end_tree, first_table, end_table, first_mask, end_mask = batch
        first_row, end_row = plan.row_at[first_tree], plan.row_at[end_tree]
        tables, masks, rows = buffers or self._buffers(plan, [batch])
        background32 = background32 or self._float32_background
        built = _Batch(
            first_table,
            first_mask,
            tables[: end_table - first_table],
            masks[: end_mask - first_mask],
            np.zeros(len(self._bit)),
            int(first_row),
            rows[: end_row - first_row],
        )
        out_of_memory = np.zeros(1, dtype=np.intc)
        paths = self._paths()
        # Threads worth starting for the batch's nodes times the background.
        n_nodes = int(self._roots[end_tree] - self._roots[first_tree])
        n_threads = threads_for(
            n_threads, self.n_background, _NS_PER_BUILD_NODE * n_nodes
        )
        scratch = self._build_scratch(n_threads)
        cover_gain = _COVER_GAIN
        if 2 * paths.cover_scratch_bytes() <= scratch:
            scratch -= paths.cover_scratch_bytes()
        else:
            cover_gain = -1.0
        built.covered = paths.build(
            first_tree, end_tree, self._background, plan.offset, plan.tabulated,
            built.tables, built.masks, first_table, first_mask, plan.table_bits,
            plan.gains, _fitting_block(paths, 0, scratch), cover_gain,
            background32() if cover_gain >= 0 else None, built.reach,
            plan.row_covers, built.row_tables, built.row_table_base, n_threads,
            out_of_memory,
        )  # fmt: skip
        _check_memory(out_of_memory)
        return built

    def _float32_background(self):
        """The background as float32 for the covers, or None.

        Only if its values are float32's (models that compare in float32)
        and the copy (half the background's) fits a quarter of
        ``max_memory`` beside the builds' scratch.
        """
        if self._background.nbytes // 2 > self._max_bytes // 4:
            return None
        return _interventional_core.float32_copy(self._background)

    def _build_scratch(self, n_threads: int) -> int:
        """A building thread's scratch limit: a quarter of ``max_memory`` shared.

        A build runs at fit, or between the walks of a call's rows, whose
        own scratch is counted in the rows' half (:meth:`scratch_row_bytes`).
        """
        return min(MAX_SCRATCH_BYTES_PER_THREAD, self._max_bytes // (4 * n_threads))

    def _planned(self, table_bits: int, gains: bool) -> Plan:
        """Tables for the leaves with at most ``table_bits`` players, in batches.

        The tables hold gains if ``gains``, else counts (see ``planned``).
        """
        layout = Layout(
            self._ensemble, self._bit, self._leaves, self._roots, self._words,
            self.n_background, self._n_players, self._table_budget,
            self._max_bytes,
        )  # fmt: skip
        return planned(layout, self._paths(), table_bits, gains, _ROW_COVER_BITS)

    def _path_bits(self, players_start: np.ndarray, players: np.ndarray) -> int:
        """Number the paths' players (see ``path_bits``); the deepest depth."""
        ensemble = self._ensemble
        return _tree_core.path_bits(
            self._node_player, ensemble.left, ensemble.right, ensemble.roots,
            self._n_players, self._bit, players_start, players,
        )  # fmt: skip

    def _paths(self) -> _interventional_core.Paths:
        """The arrays in the compiled kernels' form (cheap: no copies)."""
        return _interventional_core.Paths(
            self._ensemble, self._roots, self._bit, self._players_start,
            self._players, self._beta, self._n_players, self._words,
            self._max_depth, self._max_bits,
        )  # fmt: skip


def _fitting_block(paths, row_values: int, limit: int) -> int:
    """Rows per block (at most ``_BLOCK_ROWS``, at least 1) whose scratch fits.

    ``limit`` bytes for one thread, with ``row_values`` doubles per row for
    a chunk's sums (0: none).
    """
    base, one, two = (paths.scratch_bytes(n, row_values) for n in range(3))
    fitting = (limit - base) // (two - one)
    return int(max(1, min(_BLOCK_ROWS, fitting)))


def _table_bits(n_background: int) -> int:
    """The most players of a leaf whose Shapley gains are tabulated.

    A table costs O(2**D D**2) to build; without one, each row visits the
    leaf's distinct background masks, at most ``min(2**D, n_background)``.
    Tables pay where 2**D is about the background's size or less. Measured
    (one thread, background 1,000 rows): on a forest of 10 unbounded trees
    (depth 31), 20 rows take 1.5 s with tables up to 10 players, 5.7 s up to
    14, whose tables exceed the memory kept from ``fit`` and are rebuilt at
    each call; on 100 trees of depth 12 the two are within noise.
    """
    return min(_MAX_TABLE_BITS, max(1, n_background.bit_length()))


def _check_memory(out_of_memory: np.ndarray) -> None:
    """Raise if a thread could not allocate its scratch memory."""
    if out_of_memory[0]:
        raise MemoryError(
            "Could not allocate the interventional tree kernel's scratch memory."
        )
