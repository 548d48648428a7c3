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
    _Walk *walk, Py_ssize_t n_players, Py_ssize_t levels, const IndexRule *rule
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
    walk.n_path = 0
    if not allocate_scratch(&walk.game, levels, rule.order, rule.n_points) or (
        walk.present == NULL or walk.cover == NULL or walk.count == NULL
        or walk.path == NULL or walk.players == NULL or walk.a == NULL
        or walk.b == NULL
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
        ready = walk != NULL and _allocate(walk, n_players, levels, rule)
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
