"""Path-dependent values (shap's ``tree_path_dependent``): the compiled walk's
plan and calls.

Made at ``fit``: each tree's quadrature rule (its exact one for ``"auto"``),
the trees' depth in distinct players, the chunks of trees shared between
threads, the rows a block holds so that one thread's scratch fits its limit,
and each node's cover ratio. The walks are ``_tree_core.Forest.shapley``
(values) and ``_interactions_core`` (interaction values); the Forest, the
compiled kernels' view of the trees, also gives the raw output every value
function reads. It is built at the first call and left out of pickles.
"""

import numpy as np

from .._contract.results import in_shap_convention
from .._runtime.limits import MAX_SCRATCH_BYTES_PER_THREAD
from ..games._indices_core import RuleView
from ..games._quadrature import Rules, exact_n_points
from . import _index_core, _interactions_core, _tree_core
from ._schedule import tree_chunks
from ._table import TreeEnsemble

# A row's time at one thread per node and quadrature point of its trees,
# for the threads a call is worth (measured, in batches of rows: 3 to 4 ns
# on 100 to 300 trees of depth 5 to 12).
_NS_PER_NODE_POINT = 3.5

# Rows the tree kernel walks together, at most: enough for the compiler's
# vectorized loops over a block; fewer when one thread's scratch would exceed
# MAX_SCRATCH_BYTES_PER_THREAD (deep trees, many points or outputs).
_BLOCK_ROWS = 32

# The pairwise walk's matrices for indices of order 2 are made for blocks of
# rows of at most this size.
_MATRIX_BLOCK_BYTES = 2**24


class PathDependent:
    """The path-dependent value function of a parsed tree ensemble.

    Parameters
    ----------
    ensemble : TreeEnsemble
        The parsed model.
    node_player : ndarray of shape (n_nodes,)
        The player each internal node's split is credited to.
    n_players : int
        The number of players.
    n_quadrature_points : int or "auto"
        Points per tree: each tree's exact rule for ``"auto"``.

    Raises
    ------
    ValueError
        If one row's scratch for the deepest tree exceeds the limit of a
        thread, before the rules (``O(points**2)``) are computed.
    """

    def __init__(
        self,
        ensemble: TreeEnsemble,
        node_player: np.ndarray,
        n_players: int,
        n_quadrature_points: int | str,
    ):
        self.ensemble = ensemble
        self.node_player = node_player
        bit = np.empty(len(ensemble.feature), dtype=np.intp)
        none = np.empty(0, dtype=np.intp)
        # At a leaf, bit is the number of distinct players on its path.
        self.max_depth = _tree_core.path_bits(
            node_player, ensemble.left, ensemble.right, ensemble.roots,
            n_players, bit, none, none,
        )  # fmt: skip
        leaves = np.flatnonzero(ensemble.left < 0)
        distinct = np.zeros(ensemble.n_trees, dtype=np.intp)
        np.maximum.at(distinct, _tree_of_node(ensemble)[leaves], bit[leaves])
        exact = np.array([exact_n_points(d) for d in distinct], dtype=np.intp)
        if n_quadrature_points == "auto":
            n_points = exact
        else:
            n_points = np.full(ensemble.n_trees, n_quadrature_points, dtype=np.intp)
        #: Each tree's points, and whether every tree's rule is exact.
        self.n_points, self.exact = n_points, bool((n_points >= exact).all())
        #: Each tree's exact rule's points.
        self.exact_points = exact
        nodes = np.diff(np.append(ensemble.roots, len(ensemble.feature)))
        #: A row's estimated time at one thread, in nanoseconds.
        self.row_cost_ns = _NS_PER_NODE_POINT * float(np.dot(nodes, n_points))
        # Chunks for a row of values, and for a row of interaction matrices,
        # whose walk does about as much more per node as its paths have
        # players (measured: 4.3x on depth-5 trees, 6.5x on depth 6).
        n_values = ensemble.n_outputs * n_players
        self.chunk_start = tree_chunks(ensemble, n_points, n_values)
        self.interaction_chunk_start = tree_chunks(
            ensemble, n_points * np.maximum(distinct, 1), n_values * n_players
        )
        # Before the rules are computed: they cost O(points**2).
        self.block_rows, self.scratch_row_bytes = _block_rows(
            ensemble, n_players, self.max_depth, int(n_points.max()),
            len(self.chunk_start) > 2,
        )  # fmt: skip
        self.rules = Rules.stack(n_points)
        self.cover_ratio = _cover_ratios(ensemble)
        self._forest = None

    def __getstate__(self) -> dict:
        # The compiled view is the first call's to build, not the pickle's.
        return {**self.__dict__, "_forest": None}

    def shapley(self, X: np.ndarray, values: np.ndarray, n_threads: int) -> None:
        """Add the values of the validated rows ``X`` to ``values``.

        ``values`` has shape (n_samples, n_outputs, n_players) and is zero.
        """
        self.forest().shapley(
            X, self.rules, self.max_depth, values, n_threads, self.block_rows
        )

    def interactions(self, X: np.ndarray, out: np.ndarray, n_threads: int) -> None:
        """Add the rows' interaction matrices, in shap's convention, to ``out``.

        ``out`` has shape (n_samples, n_outputs, n_players, n_players) and
        is zero.
        """
        _interactions_core.path_dependent_interactions(
            self.ensemble, self.forest().row_nodes(), self.rules, self.max_depth,
            self.interaction_chunk_start, X, out, n_threads,
        )  # fmt: skip
        in_shap_convention(out, np.einsum("...jj->...j", out))

    def indices(self, X: np.ndarray, plan, out: np.ndarray, n_threads: int) -> None:
        """Add the rows' interaction indices of ``plan`` to ``out``.

        ``out`` has shape (n_samples, n_outputs, plan.n_columns) and is
        zero; its columns are colexicographic (see ``games._index_plan``).
        """
        if plan.index in ("SII", "k-SII", "BII"):
            # Integrals at the tree's exact nodes (BII: the value at 1/2),
            # where every factor with A = 1 is at least t: the pairwise
            # walk; beyond pairs, its sums at each split multiplied by the g
            # of every set of distinct players above. For k-SII the empty
            # coalition's v(∅) (less the constant, which the caller adds).
            if plan.index == "BII":
                rules = Rules.midpoint(self.ensemble.n_trees)
            else:
                rules = self.rules if self.exact else Rules.stack(self.exact_points)
            if plan.order <= 2 and not plan.is_window:
                self._pairs_to_columns(X, rules, plan, out, n_threads)
            else:
                _interactions_core.path_dependent_interactions(
                    self.ensemble, self.forest().row_nodes(), rules, self.max_depth,
                    self.interaction_chunk_start, X, out, n_threads, RuleView(plan),
                )  # fmt: skip
            if plan.index == "k-SII":  # (never a window)
                out[:, :, 0] += self.expected_value() - self.ensemble.base_offset
            return
        _index_core.path_dependent_indices(
            self.ensemble, self.forest().row_nodes(), RuleView(plan),
            plan.n_players, self.max_depth, X, out, n_threads,
        )  # fmt: skip

    def _pairs_to_columns(self, X, rules, plan, out, n_threads: int) -> None:
        """Coalitions of one player (the walk of values) and of two (the
        pairwise walk's matrices, which skip the coalitions' bookkeeping, a
        block of rows at a time, at most _MATRIX_BLOCK_BYTES)."""
        n_players = plan.n_players
        singles = plan.offset[1] + np.arange(n_players)
        if plan.order == 1:
            values = np.zeros((len(X), out.shape[1], n_players))
            block_rows, _ = _block_rows(
                self.ensemble, n_players, self.max_depth, int(rules.n_points.max()),
                len(self.chunk_start) > 2,
            )  # fmt: skip
            forest = self.forest()
            forest.shapley(X, rules, self.max_depth, values, n_threads, block_rows)
            out[:, :, singles] += values
            return
        low, high = np.triu_indices(n_players, 1)
        pairs = plan.offset[2] + low + high * (high - 1) // 2
        block = max(1, _MATRIX_BLOCK_BYTES // (8 * out.shape[1] * n_players**2))
        for start in range(0, len(X), block):
            rows = slice(start, start + block)
            matrices = np.zeros((len(X[rows]), out.shape[1], n_players, n_players))
            _interactions_core.path_dependent_interactions(
                self.ensemble, self.forest().row_nodes(), rules, self.max_depth,
                self.interaction_chunk_start, X[rows], matrices, n_threads,
            )  # fmt: skip
            out[rows, :, singles] += np.einsum("...jj->...j", matrices)
            out[rows, :, pairs] += matrices[:, :, low, high]

    def expected_value(self) -> np.ndarray:
        """v(∅), per output: each tree's leaves weighted by training cover."""
        return _expected_value(self.ensemble)

    def forest(self) -> _tree_core.Forest:
        """The node arrays in the compiled kernels' form (no copies), kept."""
        if self._forest is None:
            self._forest = _tree_core.Forest(
                self.ensemble, self.cover_ratio, self.node_player, self.chunk_start
            )
        return self._forest


def _block_rows(
    ensemble, n_players: int, max_depth: int, n_points: int, chunked: bool
) -> tuple[int, int]:
    """Rows per block so that one thread's kernel scratch fits the limit.

    The scratch grows linearly with the rows of a block (mostly
    ``(depth + 2) * points * (1 + outputs)`` doubles per row, and a row of
    values when the trees are ``chunked``); raises ``ValueError`` before
    anything is allocated if a single row does not fit
    ``MAX_SCRATCH_BYTES_PER_THREAD``. Returns the rows and the bytes each
    row adds.
    """
    width = ensemble.value.shape[1]
    partial = ensemble.n_outputs * n_players if chunked else 0

    def scratch_bytes(rows):
        doubles = _tree_core.scratch_doubles(
            rows, ensemble.n_features, n_players, max_depth, n_points, width, partial
        )
        return 8 * doubles

    fixed = scratch_bytes(0)
    per_row = scratch_bytes(1) - fixed
    rows = (MAX_SCRATCH_BYTES_PER_THREAD - fixed) // per_row
    if rows < 1:
        raise ValueError(
            f"The trees are too deep for {n_points} quadrature points: depth "
            f"{max_depth} with {n_points} points and {width} outputs per leaf "
            f"needs {scratch_bytes(1) / 2**20:.0f} MiB of scratch memory per "
            f"thread for a single row, more than the limit of "
            f"{MAX_SCRATCH_BYTES_PER_THREAD / 2**20:.0f} MiB. Use fewer "
            "n_quadrature_points (an integer: approximate, not exact)."
        )
    return int(min(_BLOCK_ROWS, rows)), int(per_row)


def _cover_ratios(ensemble) -> np.ndarray:
    """``cover[node] / cover[parent]``; 1 at the roots.

    Below a parent of zero cover (a node no training sample of positive
    weight reached) the ratio is 0: the path-dependent value function gives
    such subtrees no weight unless the sample's own path leads there.
    """
    ratio = np.ones(len(ensemble.feature))
    internal = np.flatnonzero(ensemble.left >= 0)
    parent_cover = ensemble.cover[internal]
    for children in (ensemble.left[internal], ensemble.right[internal]):
        ratio[children] = np.divide(
            ensemble.cover[children],
            parent_cover,
            out=np.zeros(len(children)),
            where=parent_cover > 0,
        )
    return ratio


def _expected_value(ensemble) -> np.ndarray:
    """v(∅): each tree's leaves weighted by cover over the root's cover.

    The cover ratios along a path telescope to that quotient (a leaf below a
    node of zero cover has zero cover: covers do not grow down a tree, see
    ``_table.py``); a tree that is a single leaf weighs it by 1.
    """
    leaves = np.flatnonzero(ensemble.left < 0)
    trees = _tree_of_node(ensemble)[leaves]
    root_cover = ensemble.cover[ensemble.roots[trees]]
    share = np.divide(
        ensemble.cover[leaves],
        root_cover,
        out=np.ones(len(leaves)),
        where=leaves != ensemble.roots[trees],
    )
    expected = ensemble.base_offset.copy()
    for k in range(ensemble.value.shape[1]):
        contributing = k < ensemble.tree_width[trees]
        np.add.at(
            expected,
            ensemble.tree_output[trees[contributing]] + k,
            share[contributing] * ensemble.value[leaves[contributing], k],
        )
    return expected


def _tree_of_node(ensemble) -> np.ndarray:
    """Each node's tree (a tree's nodes follow its root, see _table.py)."""
    n_nodes = len(ensemble.feature)
    return np.repeat(
        np.arange(ensemble.n_trees), np.diff(np.append(ensemble.roots, n_nodes))
    )
