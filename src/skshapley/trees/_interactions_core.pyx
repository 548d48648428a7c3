"""Compiled loop of TreeExplainer's path-dependent interaction values.

Every root-to-leaf path is a product game on its ``D`` distinct players
(see _tree_core.pyx): ``A_j`` in {0, 1} says whether the row follows all the
path's splits on ``j``, ``B_j`` is the product of their cover ratios, and
``f_j(t) = (1 - t) B_j + t A_j``. The Shapley interaction index of ``j !=
k`` is

    value * (A_j - B_j) (A_k - B_k) * Integral_0^1 prod_{l != j, k} f_l(t) dt,

a polynomial of degree ``D - 2``: the tree's rule of ``ceil(D / 2)`` points
(the one its Shapley values use) is exact. The products without two
factors are taken as prefix * middle * suffix products, never by dividing:
every factor lies in [0, 1] (zero where a zero cover meets ``A = 0``), so
nothing overflows and a zero factor needs no special case. Per (row, leaf)
that is O(D**2 * m) work for ``m`` points, and the same prefix and suffix
products give the leaf's Shapley values in O(D * m).

Each row walks each tree once, depth first with an explicit stack, keeping
the current path's ``(A_j, B_j)`` per player; rows (or, for fewer rows than
threads, rows and chunks of trees) are spread over OpenMP threads, and
every value is summed in the same order whatever the threads.
"""

from cython.parallel cimport parallel, prange
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memset

from ..games._rules cimport Rule, Rules, rule_of, rules_view
from ._chunks cimport MAX_PARTIAL_VALUES, add_chunk_sums, item_values, lanes_add
from ._routing cimport Routing, goes_left

import numpy as np

from ._table import ZERO_AS_MISSING


cdef struct _Trees:
    # The TreeEnsemble's node arrays (see _table.py), read-only.
    const Py_ssize_t *roots
    const Py_ssize_t *tree_output
    const Py_ssize_t *tree_width
    Py_ssize_t n_trees
    const Py_ssize_t *feature
    const Py_ssize_t *player        # the player credited for each split
    const Py_ssize_t *left
    const Py_ssize_t *right
    Routing routing                 # split conditions
    const double *cover_ratio       # cover[node] / cover[parent], 1 at roots
    const double *value             # (n_nodes, value_stride)
    Py_ssize_t value_stride


cdef struct _Frame:
    # One internal node of the current path.
    Py_ssize_t node
    Py_ssize_t side                 # the child being walked: 0 left, 1 right
    bint went_left                  # where the row goes at the node
    bint first                      # the node is its player's first on the path
    double a, b                     # the player's (A, B) above the node


cdef struct _Scratch:
    # One thread's buffers.
    double *a                       # A per player, (n_players,)
    double *b                       # B per player, (n_players,)
    Py_ssize_t *count               # the path's nodes on each player
    Py_ssize_t *path                # the path's distinct players, (levels,)
    _Frame *frames                  # (levels,)
    double *factor                  # f_l(t_q), (levels, m)
    double *suffix                  # prod_{i >= l} f_i(t_q), (levels + 1, m)
    double *prefix                  # w_q prod_{i < l} f_i(t_q), (m,)
    double *partial                 # the prefix times the middle, (m,)


cdef void _add_leaf(
    const _Trees *trees,
    _Scratch *scratch,
    Py_ssize_t n_distinct,
    Py_ssize_t leaf,
    Py_ssize_t tree,
    const Rule *rule,
    double *out,
    Py_ssize_t n_outputs,
    Py_ssize_t n_players,
) noexcept nogil:
    """Add one leaf's game to the row's ``out`` (n_outputs, n_players, n_players).

    Off the diagonal the full interaction index, on it the Shapley value.
    """
    cdef Py_ssize_t m = rule.n_points, j, k, q, o, pj, pk
    cdef Py_ssize_t width = trees.tree_width[tree], first = trees.tree_output[tree]
    cdef const double *t = rule.nodes
    cdef const double *w = rule.weights
    cdef const double *value = trees.value + leaf * trees.value_stride
    cdef double *factor = scratch.factor
    cdef double *suffix = scratch.suffix
    cdef double *prefix = scratch.prefix
    cdef double *partial = scratch.partial
    cdef double delta_j, delta_k, total
    cdef double *block

    for j in range(n_distinct):
        pj = scratch.path[j]
        for q in range(m):
            factor[j * m + q] = (1.0 - t[q]) * scratch.b[pj] + t[q] * scratch.a[pj]
    for q in range(m):
        suffix[n_distinct * m + q] = 1.0
        prefix[q] = w[q]
    for j in range(n_distinct - 1, -1, -1):
        for q in range(m):
            suffix[j * m + q] = suffix[(j + 1) * m + q] * factor[j * m + q]
    for j in range(n_distinct):
        pj = scratch.path[j]
        delta_j = scratch.a[pj] - scratch.b[pj]
        if delta_j != 0.0:  # else a dummy: no value, no interaction
            total = 0.0
            for q in range(m):
                total += prefix[q] * suffix[(j + 1) * m + q]
                partial[q] = prefix[q]
            for o in range(width):
                block = out + (first + o) * n_players * n_players
                block[pj * n_players + pj] += value[o] * delta_j * total
            for k in range(j + 1, n_distinct):
                pk = scratch.path[k]
                delta_k = scratch.a[pk] - scratch.b[pk]
                if delta_k != 0.0:
                    total = 0.0
                    for q in range(m):
                        total += partial[q] * suffix[(k + 1) * m + q]
                    total *= delta_j * delta_k
                    for o in range(width):
                        block = out + (first + o) * n_players * n_players
                        block[pj * n_players + pk] += value[o] * total
                        block[pk * n_players + pj] += value[o] * total
                for q in range(m):
                    partial[q] *= factor[k * m + q]
        for q in range(m):
            prefix[q] *= factor[j * m + q]


cdef void _walk_tree(
    const _Trees *trees,
    _Scratch *scratch,
    Py_ssize_t tree,
    const Rule *rule,
    const double *x,
    double *out,
    Py_ssize_t n_outputs,
    Py_ssize_t n_players,
) noexcept nogil:
    """Add every leaf's game of one tree, for the row ``x``, to ``out``."""
    cdef Py_ssize_t depth = 0, n_distinct = 0, node = trees.roots[tree], p
    cdef _Frame *frame
    while True:
        # Down the left edges to a leaf.
        while trees.left[node] >= 0:
            frame = &scratch.frames[depth]
            p = trees.player[node]
            frame.node = node
            frame.side = 0
            frame.a = scratch.a[p]
            frame.b = scratch.b[p]
            frame.first = scratch.count[p] == 0
            frame.went_left = goes_left(&trees.routing, node, x[trees.feature[node]])
            if frame.first:
                scratch.path[n_distinct] = p
                n_distinct += 1
            scratch.count[p] += 1
            scratch.a[p] = frame.a if frame.went_left else 0.0
            scratch.b[p] = frame.b * trees.cover_ratio[trees.left[node]]
            node = trees.left[node]
            depth += 1
        if n_distinct > 0:
            _add_leaf(trees, scratch, n_distinct, node, tree, rule, out, n_outputs, n_players)
        # Up past the nodes whose right edge is done; then down a right edge.
        while True:
            if depth == 0:
                return
            depth -= 1
            frame = &scratch.frames[depth]
            p = trees.player[frame.node]
            if frame.side == 0:
                frame.side = 1
                scratch.a[p] = 0.0 if frame.went_left else frame.a
                scratch.b[p] = frame.b * trees.cover_ratio[trees.right[frame.node]]
                node = trees.right[frame.node]
                depth += 1
                break
            scratch.a[p] = frame.a
            scratch.b[p] = frame.b
            scratch.count[p] -= 1
            if frame.first:
                n_distinct -= 1


cdef bint _allocate(_Scratch *scratch, Py_ssize_t n_players, Py_ssize_t levels, Py_ssize_t m) noexcept nogil:
    """Allocate one thread's buffers; False if any allocation failed."""
    cdef Py_ssize_t j
    scratch.a = <double *> malloc(n_players * sizeof(double))
    scratch.b = <double *> malloc(n_players * sizeof(double))
    scratch.count = <Py_ssize_t *> malloc(n_players * sizeof(Py_ssize_t))
    scratch.path = <Py_ssize_t *> malloc(levels * sizeof(Py_ssize_t))
    scratch.frames = <_Frame *> malloc(levels * sizeof(_Frame))
    scratch.factor = <double *> malloc(levels * m * sizeof(double))
    scratch.suffix = <double *> malloc((levels + 1) * m * sizeof(double))
    scratch.prefix = <double *> malloc(m * sizeof(double))
    scratch.partial = <double *> malloc(m * sizeof(double))
    if (
        scratch.a == NULL or scratch.b == NULL or scratch.count == NULL
        or scratch.path == NULL or scratch.frames == NULL or scratch.factor == NULL
        or scratch.suffix == NULL or scratch.prefix == NULL or scratch.partial == NULL
    ):
        return False
    for j in range(n_players):
        scratch.a[j] = 1.0
        scratch.b[j] = 1.0
        scratch.count[j] = 0
    return True


cdef void _release(_Scratch *scratch) noexcept nogil:
    """Free one thread's buffers (any of them NULL)."""
    free(scratch.a)
    free(scratch.b)
    free(scratch.count)
    free(scratch.path)
    free(scratch.frames)
    free(scratch.factor)
    free(scratch.suffix)
    free(scratch.prefix)
    free(scratch.partial)


cdef void _walk_trees(
    const _Trees *trees,
    _Scratch *scratch,
    const Rules *rules,
    Py_ssize_t tree_begin,
    Py_ssize_t tree_end,
    const double *x,
    double *out,
    Py_ssize_t n_outputs,
    Py_ssize_t n_players,
) noexcept nogil:
    """Add the games of trees ``tree_begin`` to ``tree_end`` for ``x`` to ``out``."""
    cdef Py_ssize_t tree
    cdef Rule rule
    for tree in range(tree_begin, tree_end):
        rule = rule_of(rules, tree)
        _walk_tree(trees, scratch, tree, &rule, x, out, n_outputs, n_players)


def path_dependent_interactions(
    ensemble,
    const double[::1] cover_ratio,
    const Py_ssize_t[::1] player,
    rules,
    Py_ssize_t max_depth,
    const Py_ssize_t[::1] chunk_start,
    const double[:, ::1] X,
    double[:, :, :, ::1] out,
    int n_threads,
):
    """Add each row's interaction indices and Shapley values to ``out``.

    ``out`` has shape (n_samples, n_outputs, n_players, n_players), zeroed
    by the caller: off the diagonal it receives the full Shapley interaction
    index of the path-dependent game, on it the Shapley values. ``player``
    is the player credited for each node's split, ``cover_ratio`` each
    node's ``cover / parent cover``; tree ``t`` uses rule ``t`` of ``rules``
    (exact with ``ceil(D / 2)`` points), and ``max_depth`` bounds every
    tree's depth. Raises MemoryError if a thread's scratch (O(n_players +
    max_depth * points), and a row's matrices with several chunks) cannot
    be allocated.

    A row's matrices are summed chunk of trees by chunk of trees
    (``chunk_start``, as in ``_tree_core.Forest``), the chunks' sums in
    order: with fewer rows than threads, each (row, chunk) runs on any
    thread, and the values are the same whatever the threads.
    """
    cdef const Py_ssize_t[::1] feature = ensemble.feature
    cdef const Py_ssize_t[::1] left = ensemble.left
    cdef const Py_ssize_t[::1] right = ensemble.right
    cdef const Py_ssize_t[::1] roots = ensemble.roots
    cdef const Py_ssize_t[::1] tree_output = ensemble.tree_output
    cdef const Py_ssize_t[::1] tree_width = ensemble.tree_width
    cdef const double[::1] threshold = ensemble.threshold
    cdef const double[:, ::1] value = ensemble.value
    cdef const unsigned char[::1] missing_left = ensemble.missing_left
    cdef const unsigned char[::1] is_categorical = ensemble.is_categorical
    cdef const unsigned int[:, ::1] bitset = ensemble.category_bitset
    cdef Rules rule_table = rules_view(rules)
    cdef Py_ssize_t n_samples = X.shape[0], n_outputs = out.shape[1]
    cdef Py_ssize_t n_players = out.shape[2], levels = max_depth + 1
    cdef Py_ssize_t n_chunks = chunk_start.shape[0] - 1
    cdef Py_ssize_t row_values = n_outputs * n_players * n_players
    cdef Py_ssize_t m_max = 1, row, tree, item, c
    cdef _Trees trees
    cdef _Scratch *scratch = NULL
    cdef double *partials = NULL
    cdef double *partial = NULL
    cdef double *target
    cdef bint ready = False  # (copied into each thread: initialized)
    cdef int[::1] failed = np.zeros(1, dtype=np.intc)

    for tree in range(rule_table.n_games):
        m_max = max(m_max, rule_table.n_points[tree])
    trees.roots = &roots[0]
    trees.tree_output = &tree_output[0]
    trees.tree_width = &tree_width[0]
    trees.n_trees = roots.shape[0]
    trees.feature = &feature[0]
    trees.player = &player[0]
    trees.left = &left[0]
    trees.right = &right[0]
    trees.routing.threshold = &threshold[0]
    trees.routing.missing_left = &missing_left[0]
    trees.routing.is_categorical = &is_categorical[0]
    trees.routing.bitset = &bitset[0, 0]
    trees.routing.zero_as_missing = ZERO_AS_MISSING
    trees.cover_ratio = &cover_ratio[0]
    trees.value = &value[0, 0]
    trees.value_stride = value.shape[1]
    if n_samples == 0:
        return
    # Fewer rows than threads: (row, chunk) items, if their sums are small,
    # shared out statically (a thread finds its chunks' nodes in its cache
    # at the next call).
    if (
        n_chunks > 1
        and n_samples < n_threads
        and (n_chunks - 1) * n_samples * row_values <= MAX_PARTIAL_VALUES
    ):
        partials = <double *> calloc(
            (n_chunks - 1) * n_samples * row_values, sizeof(double)
        )
    if partials != NULL:
        with nogil, parallel(num_threads=min(n_threads, n_samples * n_chunks)):
            scratch = <_Scratch *> calloc(1, sizeof(_Scratch))
            ready = scratch != NULL and _allocate(scratch, n_players, levels, m_max)
            for item in prange(n_samples * n_chunks, schedule="static"):
                if not ready:
                    failed[0] = 1
                    continue
                # Assigned in the loop: private to the thread.
                row = item // n_chunks
                c = item % n_chunks
                _walk_trees(
                    &trees, scratch, &rule_table, chunk_start[c], chunk_start[c + 1],
                    &X[row, 0],
                    item_values(row, c, n_samples, row_values, &out[0, 0, 0, 0], partials),
                    n_outputs, n_players,
                )
            if scratch != NULL:
                _release(scratch)
                free(scratch)
        add_chunk_sums(&out[0, 0, 0, 0], partials, n_samples, n_chunks, row_values)
        free(partials)
    else:
        # No more threads than rows (see _tree_core.Forest.shapley).
        with nogil, parallel(num_threads=min(n_threads, n_samples)):
            # Assigned in the parallel block: private to each thread.
            scratch = <_Scratch *> calloc(1, sizeof(_Scratch))
            partial = <double *> malloc(((n_chunks > 1) * row_values + 1) * sizeof(double))
            ready = (
                scratch != NULL
                and partial != NULL
                and _allocate(scratch, n_players, levels, m_max)
            )
            for row in prange(n_samples, schedule="dynamic"):
                if not ready:
                    failed[0] = 1
                    continue
                target = &out[row, 0, 0, 0]
                _walk_trees(
                    &trees, scratch, &rule_table, chunk_start[0], chunk_start[1],
                    &X[row, 0], target, n_outputs, n_players,
                )
                for c in range(1, n_chunks):
                    memset(partial, 0, row_values * sizeof(double))
                    _walk_trees(
                        &trees, scratch, &rule_table, chunk_start[c],
                        chunk_start[c + 1], &X[row, 0], partial, n_outputs, n_players,
                    )
                    lanes_add(target, partial, row_values)
            free(partial)
            if scratch != NULL:
                _release(scratch)
                free(scratch)
    if failed[0]:
        raise MemoryError("Could not allocate the interaction kernel's scratch memory.")
