"""Compiled interaction indices of any order of TreeExplainer's
path-dependent value function.

Every root-to-leaf path is a product game on its distinct players (see
_tree_core.pyx): ``a_j`` in {0, 1} says whether the row follows all the
path's splits on ``j``, ``b_j`` is the product of their cover ratios, and
the leaf's value is the game's weight. A row's indices are the sum over all
leaves of all trees of their games' indices, which ``_index_games.pxd``
adds to the row's columns. Each tree is walked depth first with every
player's (a, b) updated on the way down and restored on the way up; at a
leaf, the path's players are put in increasing order. Rows are spread over
OpenMP threads; each row's sums are in tree and leaf order, whatever the
threads.
"""

from cython.parallel cimport parallel, prange
from libc.stdlib cimport calloc, free

from ..games._index_games cimport (
    GameScratch,
    IndexRule,
    add_game_indices,
    allocate_scratch,
    free_scratch,
)
from ..games._indices_core cimport RuleView
from ._row_nodes cimport RowNode, RowTrees, row_goes_left, row_trees

import numpy as np


cdef struct _Walk:
    # One thread's buffers.
    double *present                 # a per player, (n_players,)
    double *cover                   # b per player, (n_players,)
    int *count                      # splits on the player on the path
    Py_ssize_t *path                # the path's distinct players, (levels,)
    Py_ssize_t n_path
    Py_ssize_t *players             # a leaf's players in increasing order
    double *a                       # and their factors, (levels,)
    double *b
    double *weights                 # a game's weight per output, (width,)
    GameScratch game


cdef void _add_leaf(
    const RowTrees *trees, _Walk *walk, const IndexRule *rule, Py_ssize_t tree,
    const RowNode *leaf, double *out,
) noexcept nogil:
    """Add the leaf's game to the row's columns ``out`` (n_outputs, n_columns)."""
    cdef Py_ssize_t n = walk.n_path, i, j, player
    for i in range(n):  # insertion sort: a path has few players
        player = walk.path[i]
        j = i
        while j > 0 and walk.players[j - 1] > player:
            walk.players[j] = walk.players[j - 1]
            j -= 1
        walk.players[j] = player
    for i in range(n):
        walk.a[i] = walk.present[walk.players[i]]
        walk.b[i] = walk.cover[walk.players[i]]
    add_game_indices(
        rule, &walk.game, n, walk.a, walk.b, walk.players,
        trees.value + (leaf - trees.nodes) * trees.value_stride,
        trees.tree_width[tree], out + trees.tree_output[tree] * rule.n_columns,
    )


cdef void _walk_node(
    const RowTrees *trees, _Walk *walk, const IndexRule *rule, Py_ssize_t tree,
    const RowNode *record, const double *x, double *out,
) noexcept nogil:
    """Add the games of the leaves below ``record`` for the row ``x``."""
    cdef Py_ssize_t player, side
    cdef double present, cover
    cdef bint left = False
    if record.children[0] < 0:
        _add_leaf(trees, walk, rule, tree, record, out)
        return
    player = record.player
    present, cover = walk.present[player], walk.cover[player]
    if walk.count[player] == 0:
        walk.path[walk.n_path] = player
        walk.n_path += 1
    walk.count[player] += 1
    if present == 1.0:
        left = row_goes_left(trees.nodes, record, &trees.routing, x[record.feature])
    for side in range(2):
        walk.cover[player] = cover * trees.nodes[record.children[side]].cover_ratio
        walk.present[player] = 1.0 if present == 1.0 and left == (side == 0) else 0.0
        _walk_node(
            trees, walk, rule, tree, trees.nodes + record.children[side], x, out
        )
    walk.present[player], walk.cover[player] = present, cover
    walk.count[player] -= 1
    if walk.count[player] == 0:
        walk.n_path -= 1


cdef bint _allocate(
    _Walk *walk, Py_ssize_t n_players, Py_ssize_t levels, Py_ssize_t width,
    const IndexRule *rule,
) noexcept nogil:
    """Allocate one thread's buffers; False if any allocation failed."""
    cdef Py_ssize_t j
    walk.present = <double *> calloc(n_players, sizeof(double))
    walk.cover = <double *> calloc(n_players, sizeof(double))
    walk.count = <int *> calloc(n_players, sizeof(int))
    walk.path = <Py_ssize_t *> calloc(levels, sizeof(Py_ssize_t))
    walk.players = <Py_ssize_t *> calloc(levels, sizeof(Py_ssize_t))
    walk.a = <double *> calloc(levels, sizeof(double))
    walk.b = <double *> calloc(levels, sizeof(double))
    walk.weights = <double *> calloc(width, sizeof(double))
    walk.n_path = 0
    if not allocate_scratch(&walk.game, levels, rule.order, rule.n_points) or (
        walk.present == NULL or walk.cover == NULL or walk.count == NULL
        or walk.path == NULL or walk.players == NULL or walk.a == NULL
        or walk.b == NULL or walk.weights == NULL
    ):
        return False
    for j in range(n_players):
        walk.present[j] = 1.0
        walk.cover[j] = 1.0
    return True


cdef void _release(_Walk *walk) noexcept nogil:
    """Free one thread's buffers (any of them NULL)."""
    free(walk.present)
    free(walk.cover)
    free(walk.count)
    free(walk.path)
    free(walk.players)
    free(walk.a)
    free(walk.b)
    free(walk.weights)
    free_scratch(&walk.game)


def path_dependent_indices(
    ensemble,
    const unsigned char[::1] row_nodes,
    RuleView view,
    Py_ssize_t n_players,
    Py_ssize_t max_depth,
    const double[:, ::1] X,
    double[:, :, ::1] out,
    int n_threads,
):
    """Add each row's interaction indices to ``out`` (by colexicographic column).

    ``out`` has shape (n_samples, n_outputs, n_columns) and ``view`` is the
    index's plan for ``n_players`` players and games of ``max_depth``
    players at most (the trees' largest number of distinct players on a
    path). Raises MemoryError if a thread's scratch cannot be allocated.
    """
    cdef Py_ssize_t n_samples = X.shape[0], n_trees = ensemble.n_trees
    cdef Py_ssize_t levels = max_depth + 1, row, tree
    cdef RowTrees trees = row_trees(ensemble, row_nodes)
    cdef const IndexRule *rule = &view.rule
    cdef _Walk *walk = NULL
    cdef bint ready = False  # (copied into each thread: initialized)
    cdef int[::1] failed = np.zeros(1, dtype=np.intc)
    if n_samples == 0:
        return
    with nogil, parallel(num_threads=min(n_threads, n_samples)):
        walk = <_Walk *> calloc(1, sizeof(_Walk))
        ready = walk != NULL and _allocate(walk, n_players, levels, 1, rule)
        for row in prange(n_samples, schedule="dynamic"):
            if not ready:
                failed[0] = 1
                continue
            for tree in range(n_trees):
                _walk_node(
                    &trees, walk, rule, tree, trees.nodes + trees.roots[tree],
                    &X[row, 0], &out[row, 0, 0],
                )
        if walk != NULL:
            _release(walk)
            free(walk)
    if failed[0]:
        raise MemoryError("Could not allocate the interaction indices' scratch memory.")


cdef struct _Patterns:
    # LeafPatterns (_index_patterns.py) and the paths' numbering, read-only.
    const Py_ssize_t *bit           # the node's player's bit; at a leaf, D
    const Py_ssize_t *players_start
    const Py_ssize_t *sorted_bits
    const Py_ssize_t *sorted_players
    const Py_ssize_t *start
    const long long *masks
    const double *shares


cdef void _walk_patterns(
    const RowTrees *trees, const _Patterns *patterns, _Walk *walk,
    const IndexRule *rule, Py_ssize_t tree, const RowNode *record,
    long long failed, const double *x, double *out,
) noexcept nogil:
    """Add the games of the leaves below ``record``: at each, one per
    background pattern, for the row ``x`` that has ``failed`` the players of
    these bits so far."""
    cdef Py_ssize_t node = record - trees.nodes, n, i, j, p, o, width
    cdef long long passed, full, pattern, shift
    cdef const double *value
    cdef bint left
    if record.children[0] >= 0:
        shift = patterns.bit[node]
        left = row_goes_left(trees.nodes, record, &trees.routing, x[record.feature])
        _walk_patterns(
            trees, patterns, walk, rule, tree, trees.nodes + record.children[0],
            failed | ((<long long> (not left)) << shift), x, out,
        )
        _walk_patterns(
            trees, patterns, walk, rule, tree, trees.nodes + record.children[1],
            failed | ((<long long> left) << shift), x, out,
        )
        return
    n = patterns.bit[node]
    full = ((<long long> 1) << n) - 1
    passed = ~failed & full
    width = trees.tree_width[tree]
    value = trees.value + node * trees.value_stride
    for i in range(n):
        walk.players[i] = patterns.sorted_players[patterns.players_start[node] + i]
        walk.a[i] = <double> ((passed >> patterns.sorted_bits[patterns.players_start[node] + i]) & 1)
    for p in range(patterns.start[node], patterns.start[node + 1]):
        pattern = patterns.masks[p]
        if ~passed & ~pattern & full:
            continue  # a player neither passes: every coalition is worth 0
        for i in range(n):
            j = patterns.sorted_bits[patterns.players_start[node] + i]
            walk.b[i] = <double> ((pattern >> j) & 1)
        for o in range(width):
            walk.weights[o] = value[o] * patterns.shares[p]
        add_game_indices(
            rule, &walk.game, n, walk.a, walk.b, walk.players, walk.weights, width,
            out + trees.tree_output[tree] * rule.n_columns,
        )


def interventional_indices(
    ensemble,
    const unsigned char[::1] row_nodes,
    RuleView view,
    const Py_ssize_t[::1] bit,
    const Py_ssize_t[::1] players_start,
    patterns,
    Py_ssize_t max_bits,
    const double[:, ::1] X,
    double[:, :, ::1] out,
    int n_threads,
):
    """Add each row's interventional interaction indices to ``out`` (by
    colexicographic column): at every leaf, the games of the background's
    patterns there (``patterns``, a ``LeafPatterns``), weighted by their
    shares of the background. ``max_bits`` bounds the paths' distinct
    players. Raises MemoryError if a thread's scratch cannot be allocated.
    """
    cdef const Py_ssize_t[::1] start = patterns.start
    cdef const long long[::1] masks = patterns.masks
    cdef const double[::1] shares = patterns.shares
    cdef const Py_ssize_t[::1] sorted_bits = patterns.sorted_bits
    cdef const Py_ssize_t[::1] sorted_players = patterns.sorted_players
    cdef Py_ssize_t n_samples = X.shape[0], n_trees = ensemble.n_trees, row, tree
    cdef Py_ssize_t width = ensemble.value.shape[1]
    cdef RowTrees trees = row_trees(ensemble, row_nodes)
    cdef const IndexRule *rule = &view.rule
    cdef _Patterns leaves
    cdef _Walk *walk = NULL
    cdef bint ready = False  # (copied into each thread: initialized)
    cdef int[::1] failed = np.zeros(1, dtype=np.intc)
    leaves.bit = &bit[0]
    leaves.players_start = &players_start[0]
    leaves.sorted_bits = &sorted_bits[0]
    leaves.sorted_players = &sorted_players[0]
    leaves.start = &start[0]
    leaves.masks = &masks[0]
    leaves.shares = &shares[0]
    if n_samples == 0:
        return
    with nogil, parallel(num_threads=min(n_threads, n_samples)):
        walk = <_Walk *> calloc(1, sizeof(_Walk))
        ready = walk != NULL and _allocate(walk, 1, max_bits + 1, width, rule)
        for row in prange(n_samples, schedule="dynamic"):
            if not ready:
                failed[0] = 1
                continue
            for tree in range(n_trees):
                _walk_patterns(
                    &trees, &leaves, walk, rule, tree,
                    trees.nodes + trees.roots[tree], 0, &X[row, 0], &out[row, 0, 0],
                )
        if walk != NULL:
            _release(walk)
            free(walk)
    if failed[0]:
        raise MemoryError("Could not allocate the interaction indices' scratch memory.")
