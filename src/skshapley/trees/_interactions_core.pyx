"""Compiled loop of TreeExplainer's path-dependent interaction values.

Every root-to-leaf path is a product game on its distinct players (see
_tree_core.pyx): ``A_j`` in {0, 1} says whether the row follows all the
path's splits on ``j``, ``B_j`` is the product of their cover ratios,
``f_j(t) = (1 - t) B_j + t A_j``, ``G(t) = prod_j f_j(t)`` and ``g_j =
(A_j - B_j) / f_j``. The Shapley interaction index of ``j != k`` on a
leaf's path is

    value * Integral_0^1 g_j(t) g_k(t) G(t) dt
        = value * (A_j - B_j) (A_k - B_k) Integral prod_{l != j, k} f_l dt,

a polynomial of degree ``D - 2`` for ``D`` players: the tree's rule of
``ceil(D / 2)`` points (the one its Shapley values use) is exact.

The walk is _tree_core's one-row walk with one more sum. Each edge on a
player ``j`` changes ``g_j`` by ``dg``, and a leaf's ``g_j`` is the sum of
the changes on ``j``'s edges above it; so a leaf's ``g_j g_k`` is the sum,
over every pair of its path's edges on ``j`` and ``k``, of their changes'
product. Going back up an edge ``e`` with the sum ``H`` of its leaves'
``value * G`` below, ``Integral dg_e H`` is added to the Shapley value of
its player (as _tree_core does) and ``Integral dg_a dg_e H`` to the pair of
its player and the player of every edge ``a`` above it on another player.
The two edges of a split have the same edges above them, so their
``dg_e H`` are added point by point first and each pair is summed over the
points once per split, not once per edge. Per row and tree that is O(nodes * depth * m) work for ``m`` points,
instead of O(leaves * D**2 * m) leaf by leaf: every pair's sum over the
leaves below an edge is taken once. ``G`` and ``g`` are computed on each
edge as in _tree_core (the same helpers of _lanes.h): the only divisions
are by factors ``>= t`` and by ``1 - t``.

Each sum goes to the row's matrix at (player above, player below); the
caller adds the matrix's transpose. Rows (or, for fewer rows than threads,
rows and chunks of trees) are spread over OpenMP threads, and every value
is summed in the same order whatever the threads.
"""

from cython.parallel cimport parallel, prange
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memset

from ..games._index_games cimport IndexRule, window_column
from ..games._indices_core cimport RuleView
from ..games._rules cimport Rule, Rules, rule_of, rules_view
from ._chunks cimport MAX_PARTIAL_VALUES, add_chunk_sums, item_values, lanes_add
from ._routing cimport Routing
from ._row_nodes cimport RowNode, RowTrees, row_goes_left, row_trees

import numpy as np


cdef extern from "_lanes.h" nogil:
    void lanes_scale(double *out, const double *a, double c, Py_ssize_t n)
    void points_follow(
        double *factor, double *change, double *reciprocal, double *g,
        const double *old_reciprocal, const double *old_g, const double *t,
        const double *u, const double *w, double new_cover, Py_ssize_t m
    )
    void points_leave(
        double *factor, double *change, const double *old_reciprocal,
        const double *old_g, const double *leave_g, const double *u, const double *w,
        double new_cover, Py_ssize_t m
    )
    void points_product(double *out, const double *a, const double *b, Py_ssize_t m)
    void points_sum(double *out, const double *a, const double *b, Py_ssize_t m)
    double select_double(Py_ssize_t which, double if_true, double if_false)


cdef enum:
    # Rows of m values per level of _Scratch.edges: G's factor and g's
    # weighted change on the edge followed, the same on the edge left, the
    # new 1/f and g of the edge followed, then g's change (not weighted) on
    # the edge followed and on the edge left.
    _EDGE_ROWS = 8


cdef struct _Frame:
    # One split of the current path.
    const RowNode *record
    Py_ssize_t side                 # the child being walked: 0 left, 1 right
    bint present                    # its player's A before the split
    bint went_left                  # where the row goes, if A is 1
    double cover                    # its player's B before the split
    const double *reciprocal        # and its 1/f, then g (2m)
    Py_ssize_t above                # the splits above it with A = 1


cdef struct _Target:
    # Where a row's sums go: its matrices (n_outputs, n_players, n_players),
    # or with `columns`, its Shapley interaction index of every coalition of
    # at most columns.order players (n_outputs, columns.n_columns), by
    # colexicographic column (games/_index_games.pxd).
    Py_ssize_t n_players
    Py_ssize_t output_values        # a row's values per output
    const IndexRule *columns        # NULL for matrices


cdef struct _Scratch:
    # One thread's buffers; arrays with a `levels` axis hold one slice per
    # split of the current path.
    double *present                 # A per player, (n_players,)
    double *cover                   # B per player, (n_players,)
    const double **reciprocal       # per player: its 1/f and g (A = 1)
    _Frame *frames                  # (levels,)
    double *products                # G, (levels + 1, m)
    double *edges                   # the edges' terms, (levels, _EDGE_ROWS, m)
    double *sums                    # H of both children, (levels, 2, width, m)
    Py_ssize_t *above_player        # the splits with A = 1 on the path: their
    const double **above_change     # player, and g's change on the edge walked
    double *first                   # 1/f = 1 and g = 0 at B = 1, (2, m)
    double *leave_g                 # g = -1/(1 - t) for A = 0, (m,)
    double *complement              # 1 - t, (m,)
    double *weighted                # w * dg * H of an edge, (width, m)
    # Coalitions (a _Target with columns): the distinct players above a
    # split, sorted, the members of the coalition being recorded, and the
    # products of their g, (levels + 1, m).
    int *stamp                      # (n_players,): seen at this split
    int stamp_id
    Py_ssize_t *distinct            # (levels,)
    Py_ssize_t *members             # (levels,)
    double *products_g              # (levels + 1, m)


cdef inline double _split_terms(
    const _Scratch *scratch, const double *change_left, const double *change_right,
    const double *sums, Py_ssize_t o, Py_ssize_t width, Py_ssize_t m,
) noexcept nogil:
    """Output ``o``'s terms of a split's two edges, added point by point into
    ``weighted`` (``change * H`` of each edge, see :func:`_add_split`); return
    their sum over the points, the split's player's own term."""
    cdef double *y = scratch.weighted + o * m
    cdef double total = 0.0
    cdef Py_ssize_t k
    for k in range(m):
        y[k] = (
            change_left[k] * sums[o * m + k]
            + change_right[k] * sums[width * m + o * m + k]
        )
        total += y[k]
    return total


cdef inline const double *_g_of(
    const _Scratch *scratch, Py_ssize_t player, Py_ssize_t m
) noexcept nogil:
    """The player's g on the current path: its last edge's, or -1/(1 - t)
    once the row has left one of its splits."""
    if scratch.present[player] == 1.0:
        return scratch.reciprocal[player] + m
    return scratch.leave_g


cdef inline void _add_split(
    const _Scratch *scratch,
    const double *change_left,
    const double *change_right,
    const double *sums,
    Py_ssize_t player,
    Py_ssize_t above,
    double *block,
    Py_ssize_t n_players,
    Py_ssize_t width,
    Py_ssize_t m,
) noexcept nogil:
    """Add both edges' sums of a split: its player's Shapley value and pairs.

    ``change_left`` and ``change_right`` are g's weighted changes on the two
    edges, ``sums`` the sums of their leaves (2, width, m), ``above`` the
    number of splits above it with A = 1 and ``block`` the row's matrices
    of the tree's first output. Both edges have the same splits above them:
    their terms are added point by point first, and each pair takes one
    sum over the points for the two edges.
    """
    cdef Py_ssize_t o, k, a, other
    cdef double total
    cdef double *y
    cdef double *matrix
    cdef const double *change_above
    for o in range(width):
        y = scratch.weighted + o * m
        matrix = block + o * n_players * n_players
        matrix[player * n_players + player] += _split_terms(
            scratch, change_left, change_right, sums, o, width, m
        )
        for a in range(above):
            other = scratch.above_player[a]
            if other != player:
                change_above = scratch.above_change[a]
                total = 0.0
                for k in range(m):
                    total += change_above[k] * y[k]
                matrix[other * n_players + player] += total


cdef inline Py_ssize_t _colex_rank(
    const IndexRule *columns, const Py_ssize_t *members, Py_ssize_t size,
    Py_ssize_t player,
) noexcept nogil:
    """The colexicographic rank of ``members`` (sorted) with ``player``."""
    cdef Py_ssize_t rank = 0, i, position = 0, stride = columns.order + 1
    cdef bint placed = False
    for i in range(size):
        if not placed and player < members[i]:
            rank += columns.binomial[player * stride + position + 1]
            position += 1
            placed = True
        rank += columns.binomial[members[i] * stride + position + 1]
        position += 1
    if not placed:
        rank += columns.binomial[player * stride + position + 1]
    return rank


cdef inline void _extend_coalitions(
    _Scratch *scratch, const IndexRule *columns, Py_ssize_t player,
    Py_ssize_t n_distinct, Py_ssize_t size, Py_ssize_t start,
    const double *product_g, double *block, Py_ssize_t width, Py_ssize_t m,
) noexcept nogil:
    """Record ``player`` with ``members[:size]`` and one more distinct player
    from ``start`` on (the sums ``weighted`` times the members' g, whose
    product for ``members[:size]`` is ``product_g``), and so on up to the
    order."""
    cdef Py_ssize_t o, k, i, other, column
    cdef double total
    cdef double *product = scratch.products_g + (size + 1) * m
    cdef const double *g
    for i in range(start, n_distinct):
        other = scratch.distinct[i]
        g = _g_of(scratch, other, m)
        for k in range(m):
            product[k] = product_g[k] * g[k]
        scratch.members[size] = other
        column = window_column(
            columns,
            columns.offset[size + 2]
            + _colex_rank(columns, scratch.members, size + 1, player),
        )
        for o in range(width if column >= 0 else 0):
            total = 0.0
            for k in range(m):
                total += scratch.weighted[o * m + k] * product[k]
            block[o * columns.n_columns + column] += total
        if size + 2 < columns.order:
            _extend_coalitions(
                scratch, columns, player, n_distinct, size + 1, i + 1, product,
                block, width, m,
            )


cdef inline void _add_split_columns(
    _Scratch *scratch,
    const double *change_left,
    const double *change_right,
    const double *sums,
    Py_ssize_t player,
    Py_ssize_t above,
    double *block,
    const IndexRule *columns,
    Py_ssize_t width,
    Py_ssize_t m,
) noexcept nogil:
    """:func:`_add_split` for the coalitions of at most ``columns.order``
    players: ``Integral dg H prod_{t in T} g_t`` to the coalition of the
    split's player and each set ``T`` of distinct other players above it
    (their g: the sums of their edges' changes above the split)."""
    cdef Py_ssize_t o, k, a, other, j, i, low, high, column
    cdef Py_ssize_t n_distinct = 0
    cdef double total
    cdef const double *g
    scratch.stamp_id += 1
    for a in range(above):
        other = scratch.above_player[a]
        if other != player and scratch.stamp[other] != scratch.stamp_id:
            scratch.stamp[other] = scratch.stamp_id
            j = n_distinct
            while j > 0 and scratch.distinct[j - 1] > other:
                scratch.distinct[j] = scratch.distinct[j - 1]
                j -= 1
            scratch.distinct[j] = other
            n_distinct += 1
    column = window_column(columns, columns.offset[1] + player)
    for o in range(width):  # the player alone (its terms are needed anyway)
        total = _split_terms(scratch, change_left, change_right, sums, o, width, m)
        if column >= 0:
            block[o * columns.n_columns + column] += total
    if columns.order == 1:
        return
    for i in range(n_distinct):  # the pairs, in this loop of constant m
        other = scratch.distinct[i]
        g = _g_of(scratch, other, m)
        low, high = (other, player) if other < player else (player, other)
        column = window_column(columns, columns.offset[2] + low + high * (high - 1) // 2)
        for o in range(width if column >= 0 else 0):
            total = 0.0
            for k in range(m):
                total += scratch.weighted[o * m + k] * g[k]
            block[o * columns.n_columns + column] += total
        if columns.order > 2:
            scratch.members[0] = other
            _extend_coalitions(
                scratch, columns, player, n_distinct, 1, i + 1, g, block, width, m
            )


cdef inline void _walk_tree_points(
    const RowTrees *trees,
    _Scratch *scratch,
    Py_ssize_t tree,
    const Rule *rule,
    const double *x,
    double *out,
    const _Target *target,
    Py_ssize_t m,
    Py_ssize_t width,
) noexcept nogil:
    """Add one tree's sums, for the row ``x``, to the row's values ``out``.

    ``m`` is the rule's number of points and ``width`` the tree's outputs
    per leaf, passed as constants by :func:`_walk_tree`.
    """
    cdef const RowNode *nodes = trees.nodes
    cdef const RowNode *record = nodes + trees.roots[tree]
    cdef const RowNode *child
    cdef Py_ssize_t wm = width * m
    cdef double *block = out + trees.tree_output[tree] * target.output_values
    cdef const double *t = rule.nodes
    cdef const double *w = rule.weights
    cdef const double *u = scratch.complement
    cdef const double *old_g
    cdef const double *value
    cdef _Frame *frame = scratch.frames
    cdef double *products = scratch.products
    cdef double *edge = scratch.edges
    cdef double *sums = scratch.sums
    cdef double *h
    cdef Py_ssize_t player, side, k, o, n_above = 0
    cdef bint follows
    cdef double ratio_left, ratio_right
    if record.children[0] < 0:  # a tree without splits: no player is credited
        return
    for k in range(m):
        scratch.complement[k] = 1.0 - t[k]
        scratch.leave_g[k] = -1.0 / scratch.complement[k]
        scratch.first[k] = 1.0
        scratch.first[m + k] = 0.0
        products[k] = 1.0
    while True:
        # Enter the split: save its player's state; where A is 1, route the
        # row and compute both edges' terms.
        player = record.player
        frame.record = record
        frame.cover = scratch.cover[player]
        frame.reciprocal = scratch.reciprocal[player]
        frame.present = scratch.present[player] == 1.0
        frame.above = n_above
        if frame.present:
            frame.went_left = row_goes_left(
                nodes, record, &trees.routing, x[record.feature]
            )
            ratio_left = nodes[record.children[0]].cover_ratio
            ratio_right = nodes[record.children[1]].cover_ratio
            old_g = frame.reciprocal + m
            points_follow(
                edge, edge + m, edge + 4 * m, edge + 5 * m, frame.reciprocal, old_g,
                t, u, w,
                frame.cover * select_double(frame.went_left, ratio_left, ratio_right),
                m,
            )
            points_leave(
                edge + 2 * m, edge + 3 * m, frame.reciprocal, old_g, scratch.leave_g,
                u, w,
                frame.cover * select_double(frame.went_left, ratio_right, ratio_left),
                m,
            )
            for k in range(m):
                edge[6 * m + k] = edge[5 * m + k] - old_g[k]
                edge[7 * m + k] = scratch.leave_g[k] - old_g[k]
            scratch.above_player[n_above] = player
            n_above += 1
        side = 0
        while True:
            # The edge on `side`: the child's G, and g's change on it.
            child = nodes + record.children[side]
            follows = frame.present and frame.went_left == (side == 0)
            if frame.present:
                points_product(products + m, edge + (not follows) * 2 * m, products, m)
                scratch.above_change[frame.above] = edge + (6 + (not follows)) * m
            else:
                lanes_scale(products + m, products, child.cover_ratio, m)
            if child.children[0] >= 0:
                # Down to a split: the player's (A, B) below the edge.
                frame.side = side
                scratch.cover[player] = frame.cover * child.cover_ratio
                if frame.present:
                    scratch.present[player] = follows
                    scratch.reciprocal[player] = edge + 4 * m
                record = child
                frame += 1
                products += m
                edge += _EDGE_ROWS * m
                sums += 2 * wm
                break
            # A leaf: its sums, then the edges whose leaves are all done.
            h = sums + side * wm
            value = trees.value + (child - nodes) * trees.value_stride
            for o in range(width):
                lanes_scale(h + o * m, products + m, value[o], m)
            while True:
                if side == 0:
                    break
                if frame.present and target.columns == NULL:
                    _add_split(
                        scratch, edge + (1 + 2 * (not frame.went_left)) * m,
                        edge + (1 + 2 * frame.went_left) * m, sums, player,
                        frame.above, block, target.n_players, width, m,
                    )
                elif frame.present:
                    _add_split_columns(
                        scratch, edge + (1 + 2 * (not frame.went_left)) * m,
                        edge + (1 + 2 * frame.went_left) * m, sums, player,
                        frame.above, block, target.columns, width, m,
                    )
                # Both sides done: the player's state back, the split's sums
                # into its parent's, and up.
                scratch.present[player] = 1.0 if frame.present else 0.0
                scratch.cover[player] = frame.cover
                scratch.reciprocal[player] = frame.reciprocal
                n_above = frame.above
                if frame == scratch.frames:
                    return
                frame -= 1
                products -= m
                edge -= _EDGE_ROWS * m
                h = sums - 2 * wm + frame.side * wm
                points_sum(h, sums, sums + wm, wm)
                sums -= 2 * wm
                record = frame.record
                player = record.player
                side = frame.side
            side = 1


cdef void _walk_tree(
    const RowTrees *trees,
    _Scratch *scratch,
    Py_ssize_t tree,
    const Rule *rule,
    const double *x,
    double *out,
    const _Target *target,
) noexcept nogil:
    """:func:`_walk_tree_points` with the rule's number of points, a constant
    up to 8, and one output per leaf, the most common, as a constant (the
    compiler unrolls the loops over the points and drops the outputs')."""
    cdef Py_ssize_t m = rule.n_points, width = trees.tree_width[tree]
    if width != 1:
        _walk_tree_points(trees, scratch, tree, rule, x, out, target, m, width)
    elif m == 1:
        _walk_tree_points(trees, scratch, tree, rule, x, out, target, 1, 1)
    elif m == 2:
        _walk_tree_points(trees, scratch, tree, rule, x, out, target, 2, 1)
    elif m == 3:
        _walk_tree_points(trees, scratch, tree, rule, x, out, target, 3, 1)
    elif m == 4:
        _walk_tree_points(trees, scratch, tree, rule, x, out, target, 4, 1)
    elif m == 5:
        _walk_tree_points(trees, scratch, tree, rule, x, out, target, 5, 1)
    elif m == 6:
        _walk_tree_points(trees, scratch, tree, rule, x, out, target, 6, 1)
    elif m == 7:
        _walk_tree_points(trees, scratch, tree, rule, x, out, target, 7, 1)
    elif m == 8:
        _walk_tree_points(trees, scratch, tree, rule, x, out, target, 8, 1)
    else:
        _walk_tree_points(trees, scratch, tree, rule, x, out, target, m, 1)


cdef bint _allocate(
    _Scratch *scratch, Py_ssize_t n_players, Py_ssize_t levels, Py_ssize_t m,
    Py_ssize_t width,
) noexcept nogil:
    """Allocate one thread's buffers; False if any allocation failed."""
    cdef Py_ssize_t j
    scratch.present = <double *> malloc(n_players * sizeof(double))
    scratch.cover = <double *> malloc(n_players * sizeof(double))
    scratch.reciprocal = <const double **> malloc(n_players * sizeof(double *))
    scratch.frames = <_Frame *> malloc(levels * sizeof(_Frame))
    scratch.products = <double *> malloc((levels + 1) * m * sizeof(double))
    scratch.edges = <double *> malloc(levels * _EDGE_ROWS * m * sizeof(double))
    scratch.sums = <double *> malloc(levels * 2 * width * m * sizeof(double))
    scratch.above_player = <Py_ssize_t *> malloc(levels * sizeof(Py_ssize_t))
    scratch.above_change = <const double **> malloc(levels * sizeof(double *))
    scratch.first = <double *> malloc(2 * m * sizeof(double))
    scratch.leave_g = <double *> malloc(m * sizeof(double))
    scratch.complement = <double *> malloc(m * sizeof(double))
    scratch.weighted = <double *> malloc(width * m * sizeof(double))
    scratch.stamp = <int *> calloc(n_players, sizeof(int))
    scratch.stamp_id = 0
    scratch.distinct = <Py_ssize_t *> malloc(levels * sizeof(Py_ssize_t))
    scratch.members = <Py_ssize_t *> malloc(levels * sizeof(Py_ssize_t))
    scratch.products_g = <double *> malloc((levels + 1) * m * sizeof(double))
    if (
        scratch.present == NULL or scratch.cover == NULL
        or scratch.reciprocal == NULL or scratch.frames == NULL
        or scratch.products == NULL or scratch.edges == NULL or scratch.sums == NULL
        or scratch.above_player == NULL or scratch.above_change == NULL
        or scratch.first == NULL or scratch.leave_g == NULL
        or scratch.complement == NULL or scratch.weighted == NULL
        or scratch.stamp == NULL or scratch.distinct == NULL
        or scratch.members == NULL or scratch.products_g == NULL
    ):
        return False
    for j in range(n_players):
        scratch.present[j] = 1.0
        scratch.cover[j] = 1.0
        scratch.reciprocal[j] = scratch.first
    return True


cdef void _release(_Scratch *scratch) noexcept nogil:
    """Free one thread's buffers (any of them NULL)."""
    free(scratch.present)
    free(scratch.cover)
    free(scratch.reciprocal)
    free(scratch.frames)
    free(scratch.products)
    free(scratch.edges)
    free(scratch.sums)
    free(scratch.above_player)
    free(scratch.above_change)
    free(scratch.first)
    free(scratch.leave_g)
    free(scratch.complement)
    free(scratch.weighted)
    free(scratch.stamp)
    free(scratch.distinct)
    free(scratch.members)
    free(scratch.products_g)


cdef void _walk_trees(
    const RowTrees *trees,
    _Scratch *scratch,
    const Rules *rules,
    Py_ssize_t tree_begin,
    Py_ssize_t tree_end,
    const double *x,
    double *out,
    const _Target *target,
) noexcept nogil:
    """Add the games of trees ``tree_begin`` to ``tree_end`` for ``x`` to ``out``."""
    cdef Py_ssize_t tree
    cdef Rule rule
    for tree in range(tree_begin, tree_end):
        rule = rule_of(rules, tree)
        _walk_tree(trees, scratch, tree, &rule, x, out, target)


cdef _Target _target_of(out, RuleView columns):
    """The matrices of ``out`` (n_samples, n_outputs, n_players, n_players),
    or with ``columns`` its coalitions' columns."""
    cdef _Target target
    if columns is None:
        target.n_players = out.shape[2]
        target.output_values = target.n_players * target.n_players
        target.columns = NULL
    else:
        target.n_players = columns.rule.n_players
        target.output_values = columns.rule.n_columns
        target.columns = &columns.rule
    return target


def path_dependent_interactions(
    ensemble,
    const unsigned char[::1] row_nodes,
    rules,
    Py_ssize_t max_depth,
    const Py_ssize_t[::1] chunk_start,
    const double[:, ::1] X,
    out,
    int n_threads,
    RuleView columns=None,
):
    """Add each row's interaction indices and Shapley values to ``out``.

    ``out`` has shape (n_samples, n_outputs, n_players, n_players), zeroed
    by the caller: off the diagonal it receives the full Shapley interaction
    index of the path-dependent game, on it the Shapley values. With
    ``columns`` (an ``IndexPlan``'s view for SII), ``out`` has shape
    (n_samples, n_outputs, n_columns) and receives the Shapley interaction
    index of every coalition of at most ``columns.order`` players, by
    colexicographic column (the path's g of each distinct player above a
    split multiplied in, see :func:`_add_split_columns`).
    ``row_nodes`` are the nodes' packed records (``_tree_core.Forest.
    row_nodes``: children, credited player, feature, threshold and cover
    ratio); tree ``t`` uses rule ``t`` of ``rules``
    (exact with ``ceil(D / 2)`` points), and ``max_depth`` bounds every
    tree's depth. Raises MemoryError if a thread's scratch (O(n_players +
    max_depth * points * outputs per leaf), and a row's matrices with
    several chunks) cannot be allocated.

    A row's matrices are summed chunk of trees by chunk of trees
    (``chunk_start``, as in ``_tree_core.Forest``), the chunks' sums in
    order: with fewer rows than threads, each (row, chunk) runs on any
    thread, and the values are the same whatever the threads.
    """
    cdef const Py_ssize_t[::1] tree_width = ensemble.tree_width
    cdef Rules rule_table = rules_view(rules)
    cdef Py_ssize_t n_samples = X.shape[0], n_outputs = out.shape[1]
    cdef Py_ssize_t levels = max_depth + 1
    cdef Py_ssize_t n_chunks = chunk_start.shape[0] - 1
    cdef double[::1] flat = out.reshape(-1)  # a view: out is C-contiguous
    cdef _Target target = _target_of(out, columns)
    cdef Py_ssize_t n_players = target.n_players
    cdef Py_ssize_t row_values = n_outputs * target.output_values
    cdef Py_ssize_t m_max = 1, width_max = 1, row, tree, item, c
    cdef RowTrees trees
    cdef _Scratch *scratch = NULL
    cdef double *partials = NULL
    cdef double *partial = NULL
    cdef double *values
    cdef bint ready = False  # (copied into each thread: initialized)
    cdef int[::1] failed = np.zeros(1, dtype=np.intc)

    for tree in range(rule_table.n_games):
        m_max = max(m_max, rule_table.n_points[tree])
    for tree in range(tree_width.shape[0]):
        width_max = max(width_max, tree_width[tree])
    trees = row_trees(ensemble, row_nodes)
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
            ready = scratch != NULL and _allocate(
                scratch, n_players, levels, m_max, width_max
            )
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
                    item_values(row, c, n_samples, row_values, &flat[0], partials),
                    &target,
                )
            if scratch != NULL:
                _release(scratch)
                free(scratch)
        add_chunk_sums(&flat[0], partials, n_samples, n_chunks, row_values)
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
                and _allocate(scratch, n_players, levels, m_max, width_max)
            )
            for row in prange(n_samples, schedule="dynamic"):
                if not ready:
                    failed[0] = 1
                    continue
                values = &flat[row * row_values]
                _walk_trees(
                    &trees, scratch, &rule_table, chunk_start[0], chunk_start[1],
                    &X[row, 0], values, &target,
                )
                for c in range(1, n_chunks):
                    memset(partial, 0, row_values * sizeof(double))
                    _walk_trees(
                        &trees, scratch, &rule_table, chunk_start[c],
                        chunk_start[c + 1], &X[row, 0], partial, &target,
                    )
                    lanes_add(values, partial, row_values)
            free(partial)
            if scratch != NULL:
                _release(scratch)
                free(scratch)
    if failed[0]:
        raise MemoryError("Could not allocate the interaction kernel's scratch memory.")
    if columns is not None:
        return
    # Each pair's sums went to (player above, player below): add the
    # transpose (the diagonal, added to itself, is halved: exact).
    matrices = np.asarray(out)
    matrices += matrices.swapaxes(2, 3)
    diagonal = np.arange(n_players)
    matrices[:, :, diagonal, diagonal] *= 0.5
