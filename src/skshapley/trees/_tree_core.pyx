"""Compiled loops of TreeExplainer: path-dependent Shapley values and prediction.

Every root-to-leaf path of a tree is a product game: for each distinct
feature ``j`` on the path, ``A_j`` in {0, 1} says whether the sample follows
all the path's splits on ``j`` and ``B_j`` is the product of their cover
ratios; with ``f_j(t) = (1 - t) B_j + t A_j`` and ``G(t) = prod_j f_j(t)``,

    phi_i = sum over leaves l of  value_l * Integral_0^1 g_i(t) G_l(t) dt,
    g_i(t) = (A_i - B_i) / f_i(t).

One depth-first walk per tree and block of samples evaluates all paths at
once. Going down an edge that splits on feature ``i`` changes ``(A_i,
B_i)``; ``G`` is updated by the ratio of the new and old factor, and the
change ``dg`` of ``g_i`` is kept. Going back up, the leaves' ``value * G``
are summed (``H``), and ``Integral dg * H`` is added to ``phi_i``: summed
over the edges on ``i`` of each path, the ``dg`` telescope to that path's
``g_i``, so every path's game is counted exactly, in O(nodes * m) work for m
quadrature points. ``B`` depends on the path only, so everything that
involves a division is computed once per edge for the whole block; each
sample then only picks one of three cases (``A`` was already 0; ``A`` is 1
and the sample follows the edge; or it leaves it) and multiplies.

Divisions: ``1 / f_i`` and ``g_i`` for ``A_i = 1`` are kept per player, as
computed on the edge that last set its ``B_i`` (``1`` and ``0`` before its
first split), so an edge divides only for its own new ``1 / f_i``, and
``-1 / (1 - t)`` once per tree. A sample alone (a block of one) divides only
on the edges it follows.

Numerics: ``A`` is 0 or 1 and ``B`` in [0, 1] (up to the rounding of the
model's covers, see _table.py); nothing is divided by a cover ratio. The
only divisions are by factors ``(1 - t) B + t >= t`` (for ``A = 1``) and by
``1 - t``: for ``A = 0``, ``g = -1 / (1 - t)`` in closed form and the
factor changes by the edge's cover ratio, whatever the size of ``B``. Leaf
products ``G(t) >= prod B (1 - t)^k`` cannot underflow where the integrand
matters, and ``B = 0`` (zero covers, or ratios that underflow) is exact.

The walk is iterative (an explicit stack of frames, one per level), so the
depth of a tree is bounded by the scratch memory only, which the caller
sizes with :func:`scratch_doubles` before anything is allocated.
"""

from cython.parallel cimport parallel, prange, threadid
from libc.limits cimport INT_MAX
from libc.math cimport NAN, isinf, isnan
from libc.stdint cimport uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcpy

from ..games._rules cimport Rule, Rules, rule_of, rules_view
from ._chunks cimport MAX_PARTIAL_VALUES, add_chunk_sums, item_values
from ._routing cimport Routing, goes_left
from ._row_nodes cimport RowNode, row_goes_left

import numpy as np

from ._table import ZERO_AS_MISSING


cdef enum:
    # Up to this many blocks per thread, blocks are made equal (row_blocks).
    _BLOCKS_PER_THREAD = 4
    # Rows of m values per level of walk.shared (see _Walk).
    _EDGE_ROWS = 6

# LightGBM's kZeroThreshold, defined once in _table.py.
cdef double _ZERO_AS_MISSING = ZERO_AS_MISSING


cdef extern from "_shares.h" nogil:
    void shares_init(uint64_t *shares, Py_ssize_t n_team, Py_ssize_t n_items)
    Py_ssize_t shares_next(
        uint64_t *shares, Py_ssize_t n_team, Py_ssize_t thread, Py_ssize_t *k
    )


cdef extern from "_lanes.h" nogil:
    void lanes_scale(double *out, const double *a, double c, Py_ssize_t n)
    void lanes_add(double *out, const double *a, Py_ssize_t n)
    void lanes_select_scale(
        double *out, const double *a, const double *gone, const double *follows,
        const double *leaves, double ratio, double follow, double leave, Py_ssize_t n
    )
    void lanes_select_accumulate(
        double *acc, const double *follows, const double *leaves, double follow,
        double leave, const double *h, Py_ssize_t n
    )
    void lanes_route(
        double *went_left, const double *x, double threshold, double missing_left,
        double zero_limit, Py_ssize_t n
    )
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
    double select_double(Py_ssize_t which, double if_true, double if_false)
    void points_sum(double *out, const double *a, const double *b, Py_ssize_t m)


cdef struct _Trees:
    # The TreeEnsemble's node arrays (see _table.py), read-only.
    const Py_ssize_t *roots         # (n_trees,)
    const Py_ssize_t *tree_output   # each tree's first output, (n_trees,)
    const Py_ssize_t *tree_width    # and its number of outputs, (n_trees,)
    Py_ssize_t n_trees
    Py_ssize_t n_outputs            # of the ensemble
    const Py_ssize_t *feature
    const Py_ssize_t *player        # who is credited for a split: its feature's
                                    # group, or the feature itself
    const Py_ssize_t *left
    const Py_ssize_t *right
    Routing routing                 # split conditions
    const double *cover_ratio       # cover[node] / cover[parent], 1 at roots
    const double *value             # (n_nodes, value_stride)
    Py_ssize_t value_stride
    const RowNode *row_nodes        # the nodes again, packed (_walk_row);
                                    # NULL until a block of one row


cdef struct _Frame:
    # One level of the walk's explicit stack: an internal node being visited.
    Py_ssize_t node
    Py_ssize_t side                 # the child being walked: 0 left, 1 right
    double cover_product            # its player's B before the node's split
    const double *reciprocal        # and its 1/f, then g, before the split (2m)
    bint present                    # one sample (_walk_row): its A before the
    bint went_left                  # split, and its side if A is 1
    const RowNode *record           # and the node's record


cdef struct _Sizes:
    # What one call's scratch layout depends on: exact sizes, and the largest
    # of any tree where they vary.
    Py_ssize_t block                # rows per block (a last block has fewer)
    Py_ssize_t n_features
    Py_ssize_t n_players
    Py_ssize_t max_depth            # the deepest tree's depth
    Py_ssize_t m                    # the most quadrature points of any tree
    Py_ssize_t width                # the most outputs of any tree
    Py_ssize_t partial              # doubles per row of a chunk's sums: the
                                    # ensemble's outputs * players, 0 for one
                                    # chunk


cdef struct _Walk:
    # One walk of one tree for a block of samples; buffers belong to the thread.
    # Per-sample arrays are sample-major: one contiguous row of `block` values.
    # Arrays with a `levels` axis hold one slice per depth of the walk.
    const double *X                 # the block's features, (n_features, block)
    double *phi                     # its values, (block, n_outputs, n_players)
    Py_ssize_t block
    Py_ssize_t n_players
    Py_ssize_t n_outputs
    double *present                 # A_j, (n_players, block)
    double *cover_product           # B_j, (n_players,): the same for all samples
    double *products                # G(t_k), (levels, m, block)
    double *sums                    # H(t_k, output), (levels, width, m, block)
    double *shared                  # per level: g's weighted changes on each
                                    # side, 1/f and g on the edge, and G's
                                    # factors on each side, (_EDGE_ROWS, m)
    const double **reciprocal       # per player: its 1/f and g (A = 1), where
                                    # they were computed, (n_players,)
    double *first                   # 1/f = 1 and g = 0 at B = 1, (2, m)
    double *leave_g                 # g = -1/(1 - t) for A = 0, (m,)
    double *complement              # 1 - t, (m,)
    double *was_present             # A before the node's split, (levels, block)
    double *went_left               # 1.0 if the sample goes left, (levels, block)
    double *gone                    # per level: A was already 0, (levels, block)
    double *follows                 # A stays 1 on this side, (levels, block)
    double *leaves                  # A becomes 0 on this side, (levels, block)
    double *total                   # a row of block sums
    _Frame *frames                  # the stack, (levels,)
    double *partial                 # a chunk's sums, (block, partial)
    Rule rule                       # the tree's quadrature rule
    Py_ssize_t width                # outputs of this tree
    Py_ssize_t output               # its first output


cdef inline double *_part(double *state, Py_ssize_t *used, Py_ssize_t size) noexcept nogil:
    """The next ``size`` doubles of ``state`` (NULL when only sizing)."""
    cdef double *part = NULL if state == NULL else state + used[0]
    used[0] += size
    return part


cdef Py_ssize_t _layout(_Walk *walk, double *state, const _Sizes *sizes) noexcept nogil:
    """Point ``walk``'s buffers into one thread's ``state``; return its size.

    The one place the scratch layout is written: :meth:`Forest.shapley`
    sizes ``state`` with it (``state`` NULL) before anything is allocated
    (and :func:`scratch_doubles` for the caller's choice of the block), and
    each block carves ``state`` with it. Sizes are in doubles.
    """
    cdef Py_ssize_t used = 0
    cdef Py_ssize_t block = sizes.block, n_players = sizes.n_players
    # The walk's depths 0..max_depth, and a spare level.
    cdef Py_ssize_t levels = sizes.max_depth + 2, m = sizes.m, width = sizes.width
    walk.X = _part(state, &used, sizes.n_features * block)
    walk.present = _part(state, &used, n_players * block)
    walk.cover_product = _part(state, &used, n_players)
    walk.products = _part(state, &used, levels * m * block)
    # A row more: one sample keeps two children's sums per level (_walk_row).
    walk.sums = _part(state, &used, levels * width * m * (block + 1))
    walk.shared = _part(state, &used, levels * _EDGE_ROWS * m)
    walk.reciprocal = <const double **> _part(
        state, &used, (n_players * sizeof(double *) + 7) // sizeof(double)
    )
    walk.first = _part(state, &used, 2 * m)
    walk.leave_g = _part(state, &used, m)
    walk.complement = _part(state, &used, m)
    walk.was_present = _part(state, &used, levels * block)
    walk.went_left = _part(state, &used, levels * block)
    walk.gone = _part(state, &used, levels * block)
    walk.follows = _part(state, &used, levels * block)
    walk.leaves = _part(state, &used, levels * block)
    walk.total = _part(state, &used, block)
    # Frames take the room of whole doubles and stay aligned.
    walk.frames = <_Frame *> _part(
        state, &used, levels * ((sizeof(_Frame) + 7) // sizeof(double))
    )
    walk.partial = _part(state, &used, block * sizes.partial)
    return used


cdef inline void _enter_split(
    const _Trees *trees, _Walk *walk, Py_ssize_t node, Py_ssize_t depth
) noexcept nogil:
    """Push ``node``'s frame and route the samples.

    The frame keeps the player's ``B``, ``1/f`` and ``g`` from before the
    split (path-only, the same for the whole block); per sample, a case is
    selected later (``A`` was already 0, stays 1, or becomes 0) by
    multiplying with 0/1 indicators, in loops over the block that the
    compiler vectorizes (``_lanes.h``).
    """
    cdef Py_ssize_t n = walk.block, s
    cdef Py_ssize_t player = trees.player[node]
    cdef double *was_present = walk.was_present + depth * n
    cdef double *went_left = walk.went_left + depth * n
    cdef double *gone = walk.gone + depth * n
    cdef double *present = walk.present + player * n
    cdef const double *x = walk.X + trees.feature[node] * n
    cdef _Frame *frame = &walk.frames[depth]

    frame.node = node
    frame.cover_product = walk.cover_product[player]
    frame.reciprocal = walk.reciprocal[player]
    for s in range(n):
        was_present[s] = present[s]
    if trees.routing.is_categorical[node]:
        for s in range(n):
            went_left[s] = goes_left(&trees.routing, node, x[s])
    else:
        lanes_route(
            went_left, x, trees.routing.threshold[node],
            trees.routing.missing_left[node] & 1,
            _ZERO_AS_MISSING if trees.routing.missing_left[node] & 2 else -1.0, n,
        )
    for s in range(n):
        gone[s] = 1.0 - was_present[s]


cdef inline Py_ssize_t _descend(
    const _Trees *trees, _Walk *walk, Py_ssize_t depth, Py_ssize_t side
) noexcept nogil:
    """Go down the edge on ``side`` (0 left, 1 right) of the level's node.

    Returns the child. Sets the child level's products ``G`` and the
    player's ``(A, B)``, its new ``1/f`` and ``g``, and keeps the weighted
    changes of ``g`` for :func:`_ascend`. A zero cover ratio is walked like
    any other: ``B`` becomes 0, but a sample that follows the edge keeps the
    factor ``t`` (its leaves count when the player is present); only the
    samples that had left or leave the player's path get a zero product.
    """
    cdef Py_ssize_t m = walk.rule.n_points, n = walk.block, k, s
    cdef _Frame *frame = &walk.frames[depth]
    cdef Py_ssize_t node = frame.node
    cdef Py_ssize_t player = trees.player[node]
    cdef Py_ssize_t child = trees.left[node] if side == 0 else trees.right[node]
    cdef double *products = walk.products + depth * m * n
    cdef double *child_products = products + m * n
    cdef double *follow_change = walk.shared + depth * _EDGE_ROWS * m
    cdef double *leave_change = follow_change + m
    cdef double *reciprocal = follow_change + 2 * m
    cdef double *g = follow_change + 3 * m
    cdef double *follow_factor = follow_change + 4 * m
    cdef double *leave_factor = follow_change + 5 * m
    cdef const double *old_reciprocal = frame.reciprocal
    cdef const double *old_g = old_reciprocal + m
    cdef double *was_present = walk.was_present + depth * n
    cdef double *went_left = walk.went_left + depth * n
    cdef double *gone = walk.gone + depth * n
    cdef double *follows = walk.follows + depth * n
    cdef double *leaves = walk.leaves + depth * n
    cdef double *present = walk.present + player * n
    cdef double ratio = trees.cover_ratio[child]
    cdef double new_cover = frame.cover_product * ratio
    cdef double follow

    frame.side = side
    walk.cover_product[player] = new_cover
    walk.reciprocal[player] = reciprocal
    for s in range(n):
        follow = went_left[s] if side == 0 else 1.0 - went_left[s]
        follows[s] = was_present[s] * follow
        leaves[s] = was_present[s] * (1.0 - follow)
        present[s] = follows[s]
    # The edge's terms when A stays 1, and when it becomes 0.
    points_follow(
        follow_factor, follow_change, reciprocal, g, old_reciprocal, old_g,
        walk.rule.nodes, walk.complement, walk.rule.weights, new_cover, m,
    )
    points_leave(
        leave_factor, leave_change, old_reciprocal, old_g, walk.leave_g,
        walk.complement, walk.rule.weights, new_cover, m,
    )
    for k in range(m):
        lanes_select_scale(
            child_products + k * n, products + k * n, gone, follows, leaves,
            ratio, follow_factor[k], leave_factor[k], n,
        )
    return child


cdef inline void _ascend(const _Trees *trees, _Walk *walk, Py_ssize_t depth) noexcept nogil:
    """Come back up the frame's edge: add its ``Integral dg * H`` to ``phi``.

    The child's sums ``H`` are added to the node's, and once both sides
    are done the player's ``(A, B)``, ``1/f`` and ``g`` are restored.
    """
    cdef Py_ssize_t m = walk.rule.n_points, width = walk.width, n = walk.block
    cdef Py_ssize_t k, o, s
    cdef _Frame *frame = &walk.frames[depth]
    cdef Py_ssize_t player = trees.player[frame.node]
    cdef double *sums = walk.sums + depth * width * m * n
    cdef double *child_sums = sums + width * m * n
    cdef double *follow_change = walk.shared + depth * _EDGE_ROWS * m
    cdef double *leave_change = follow_change + m
    cdef double *follows = walk.follows + depth * n
    cdef double *leaves = walk.leaves + depth * n
    cdef double *was_present = walk.was_present + depth * n
    cdef double *present = walk.present + player * n

    for o in range(width):
        for s in range(n):
            walk.total[s] = 0.0
        for k in range(m):
            lanes_select_accumulate(
                walk.total, follows, leaves, follow_change[k], leave_change[k],
                child_sums + (o * m + k) * n, n,
            )
        for s in range(n):
            walk.phi[
                (s * walk.n_outputs + walk.output + o) * walk.n_players + player
            ] += walk.total[s]
    if frame.side == 0:
        memcpy(sums, child_sums, width * m * n * sizeof(double))
    else:
        lanes_add(sums, child_sums, width * m * n)
        for s in range(n):
            present[s] = was_present[s]
        walk.cover_product[player] = frame.cover_product
        walk.reciprocal[player] = frame.reciprocal


cdef void _walk_tree(const _Trees *trees, _Walk *walk, Py_ssize_t root) noexcept nogil:
    """Add the tree's values for the block to ``phi``.

    Depth first, with an explicit stack (``walk.frames``, one frame per
    level) rather than recursion, so that the C stack does not limit the
    depth: a tree's depth is bounded only by the scratch memory, which is
    sized before the walk.
    """
    cdef Py_ssize_t m = walk.rule.n_points, n = walk.block, o
    cdef Py_ssize_t depth = 0, node = root
    while True:
        # Down to a leaf, entering splits and taking their left edges.
        while trees.left[node] >= 0:
            _enter_split(trees, walk, node, depth)
            # (Constant sides let the compiler specialize the inlined loops.)
            node = _descend(trees, walk, depth, 0)
            depth += 1
        for o in range(walk.width):
            lanes_scale(
                walk.sums + (depth * walk.width + o) * m * n,
                walk.products + depth * m * n,
                trees.value[node * trees.value_stride + o], m * n,
            )
        # Up past the splits whose right edge is done, then down the right
        # edge of the first split whose left edge was just done.
        while True:
            if depth == 0:
                return
            depth -= 1
            _ascend(trees, walk, depth)
            if walk.frames[depth].side == 0:
                break
        node = _descend(trees, walk, depth, 1)
        depth += 1


cdef inline void _walk_row_points(
    const _Trees *trees, _Walk *walk, Py_ssize_t root, Py_ssize_t m, Py_ssize_t width
) noexcept nogil:
    """:func:`_walk_tree` for a block of one sample: the same values, less work.

    The sample's case at each split is known when it is entered, so only
    its cases' terms are computed (the block's selection with its 0/1
    indicators, and the other cases' finite terms, gives exactly these
    products and sums), and a split on a player whose path the sample has
    left is not routed. Where the player is present, the sample follows one
    edge and leaves the other: both edges' terms are computed on entering
    the split, and the side is used as a number (a select, an index), not
    as a branch. A sample's side is as unpredictable as its features, and a
    mispredicted branch per split cost more than the arithmetic (one row of
    a 100-tree forest: 7% slower; GradientBoosting, one row after another:
    9%).

    The nodes are the packed records of :attr:`_Trees.row_nodes`. A split
    is a level of the walk: its frame, its G (``walk.products``, (levels,
    m)), its edges' terms (``walk.shared``, (levels, _EDGE_ROWS, m): G's
    factor and g's change on the edge followed, the same on the edge left,
    then the new ``1/f`` and ``g`` of the edge followed, the only case that
    reads them below) and both children's sums ``H`` (``walk.sums``,
    (levels, 2, width, m)). A leaf child takes no level: its sums are
    written in its parent's and its player's state is not changed. A
    split's sums are its children's added, as the block's copy then add
    does, without the copy.

    Everything the loop reads is in local variables: the stores to the
    walk's arrays cannot change them, so the compiler keeps them in
    registers.
    """
    cdef const RowNode *nodes = trees.row_nodes
    cdef const RowNode *record = nodes + root
    cdef const RowNode *child
    cdef const double *values = trees.value
    cdef Py_ssize_t value_stride = trees.value_stride
    cdef const double *t = walk.rule.nodes
    cdef const double *u = walk.complement
    cdef const double *w = walk.rule.weights
    cdef const double *leave_g = walk.leave_g
    cdef const double *x = walk.X
    cdef double *present = walk.present
    cdef double *cover_product = walk.cover_product
    cdef const double **reciprocal_of = walk.reciprocal
    cdef double *phi = walk.phi + walk.output * walk.n_players
    cdef Py_ssize_t n_players = walk.n_players, wm = width * m
    # The current split's level.
    cdef _Frame *frame = walk.frames
    cdef double *products = walk.products       # its G; its child's next
    cdef double *edge = walk.shared             # its edges' terms
    cdef double *sums = walk.sums               # its children's H
    cdef double *h
    cdef const double *value
    cdef const double *change
    cdef double ratio_left, ratio_right
    cdef Py_ssize_t player, k, o, side, went_left
    cdef double total, ratio, new_cover, xv
    if record.children[0] < 0:  # a tree without splits: no player is credited
        return
    while True:
        # Enter the split: save its player's state, route the sample.
        player = record.player
        frame.record = record
        frame.cover_product = cover_product[player]
        frame.reciprocal = reciprocal_of[player]
        frame.present = present[player] == 1.0
        if frame.present:
            xv = x[record.feature]
            # The side is a number from here on, not a branch (see above).
            went_left = row_goes_left(nodes, record, &trees.routing, xv)
            frame.went_left = went_left
            # Both edges' terms: the edge followed's, then the edge left's.
            ratio_left = nodes[record.children[0]].cover_ratio
            ratio_right = nodes[record.children[1]].cover_ratio
            points_follow(
                edge, edge + m, edge + 4 * m, edge + 5 * m,
                frame.reciprocal, frame.reciprocal + m, t, u, w,
                frame.cover_product * select_double(went_left, ratio_left, ratio_right),
                m,
            )
            points_leave(
                edge + 2 * m, edge + 3 * m, frame.reciprocal, frame.reciprocal + m,
                leave_g, u, w,
                frame.cover_product * select_double(went_left, ratio_right, ratio_left),
                m,
            )
        side = 0
        while True:
            # The edge on `side`: the child's G.
            child = nodes + record.children[side]
            ratio = child.cover_ratio
            new_cover = frame.cover_product * ratio
            if frame.present:
                points_product(
                    products + m, edge + (frame.went_left == side) * 2 * m, products, m
                )
            else:
                lanes_scale(products + m, products, ratio, m)
            if child.children[0] >= 0:
                # Down to a split: the player's (A, B) below the edge.
                frame.side = side
                cover_product[player] = new_cover
                if frame.present:
                    present[player] = frame.went_left != side
                    reciprocal_of[player] = edge + 4 * m
                record = child
                frame += 1
                products += m
                edge += _EDGE_ROWS * m
                sums += 2 * wm
                break
            # A leaf: its sums, and its share of the player's value.
            h = sums + side * wm
            value = values + (child - nodes) * value_stride
            for o in range(width):
                lanes_scale(h + o * m, products + m, value[o], m)
            while True:
                if frame.present:
                    change = edge + (frame.went_left == side) * 2 * m + m
                    for o in range(width):
                        total = 0.0
                        for k in range(m):
                            total += change[k] * h[o * m + k]
                        phi[o * n_players + player] += total
                if side == 0:
                    break
                # Both sides done: the player's state back, the split's sums
                # into its parent's (the root's are not read), and up.
                present[player] = 1.0 if frame.present else 0.0
                cover_product[player] = frame.cover_product
                reciprocal_of[player] = frame.reciprocal
                if frame == walk.frames:
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


cdef inline void _walk_row_width(
    const _Trees *trees, _Walk *walk, Py_ssize_t root, Py_ssize_t width
) noexcept nogil:
    """:func:`_walk_row_points` with the tree's number of points, a constant
    up to 8 (the compiler unrolls the loops over the points)."""
    cdef Py_ssize_t m = walk.rule.n_points
    if m == 1:
        _walk_row_points(trees, walk, root, 1, width)
    elif m == 2:
        _walk_row_points(trees, walk, root, 2, width)
    elif m == 3:
        _walk_row_points(trees, walk, root, 3, width)
    elif m == 4:
        _walk_row_points(trees, walk, root, 4, width)
    elif m == 5:
        _walk_row_points(trees, walk, root, 5, width)
    elif m == 6:
        _walk_row_points(trees, walk, root, 6, width)
    elif m == 7:
        _walk_row_points(trees, walk, root, 7, width)
    elif m == 8:
        _walk_row_points(trees, walk, root, 8, width)
    else:
        _walk_row_points(trees, walk, root, m, width)


cdef void _walk_row(const _Trees *trees, _Walk *walk, Py_ssize_t root) noexcept nogil:
    """:func:`_walk_row_width` with one output per leaf, the most common, as
    a constant (no loops over the outputs)."""
    if walk.width == 1:
        _walk_row_width(trees, walk, root, 1)
    else:
        _walk_row_width(trees, walk, root, walk.width)


ctypedef void (*_TreeWalk)(const _Trees *, _Walk *, Py_ssize_t) noexcept nogil

# The walks are called through these pointers, set at import, so that the C
# compiler cannot inline them into the OpenMP region: there, register
# pressure spills the inner loops' pointers to the stack (measured: 22% more
# instructions on a random forest). A separate function keeps them in
# registers.
cdef _TreeWalk _walk_tree_apart = _walk_tree
cdef _TreeWalk _walk_row_apart = _walk_row


cdef void _start_block(
    const _Trees *trees,
    const _Sizes *sizes,
    _Walk *walk,
    double *state,
    const double *X,
    Py_ssize_t block,
) noexcept nogil:
    """Lay ``walk`` out in ``state`` for a block of ``block`` samples from ``X``.

    ``X`` points to the block's first row; ``state`` is the thread's
    scratch, of ``_layout(sizes)`` doubles. The block's features are
    transposed and every player's state set as before any split: the walks
    leave it so, so any number of trees can then be walked.
    """
    cdef Py_ssize_t j, s
    cdef Py_ssize_t n_features = sizes.n_features, n_players = sizes.n_players
    cdef double *transposed
    _layout(walk, state, sizes)
    transposed = <double *> walk.X
    walk.block = block
    walk.n_players = n_players
    walk.n_outputs = trees.n_outputs
    for s in range(block):
        for j in range(n_features):
            transposed[j * block + s] = X[s * n_features + j]
    for j in range(block * n_players):
        walk.present[j] = 1.0
    for j in range(n_players):
        walk.cover_product[j] = 1.0
        walk.reciprocal[j] = walk.first


cdef void _walk_trees(
    const _Trees *trees,
    const Rules *rules,
    _Walk *walk,
    double *phi,
    Py_ssize_t tree_begin,
    Py_ssize_t tree_end,
) noexcept nogil:
    """Add the values of a started block (:func:`_start_block`) over trees
    ``tree_begin`` to ``tree_end`` (excluded) to ``phi``, tree ``t`` with the
    rule ``t`` of ``rules``. ``phi`` points to the block's first row."""
    cdef Py_ssize_t j, k, tree
    cdef _TreeWalk walk_tree = _walk_row_apart if walk.block == 1 else _walk_tree_apart
    walk.phi = phi
    for tree in range(tree_begin, tree_end):
        walk.rule = rule_of(rules, tree)
        walk.width = trees.tree_width[tree]
        walk.output = trees.tree_output[tree]
        for k in range(walk.rule.n_points):
            walk.first[k] = 1.0
            walk.first[walk.rule.n_points + k] = 0.0
            walk.complement[k] = 1.0 - walk.rule.nodes[k]
            walk.leave_g[k] = -1.0 / walk.complement[k]
        for j in range(walk.block * walk.rule.n_points):
            walk.products[j] = 1.0
        walk_tree(trees, walk, trees.roots[tree])


cdef void _explain_block(
    const _Trees *trees,
    const Rules *rules,
    const _Sizes *sizes,
    double *state,
    const double *X,
    double *phi,
    Py_ssize_t block,
    Py_ssize_t tree_begin,
    Py_ssize_t tree_end,
) noexcept nogil:
    """Add the values of a block of ``block`` samples over trees ``tree_begin``
    to ``tree_end`` (excluded) to ``phi``: :func:`_start_block` then
    :func:`_walk_trees`, with a walk of its own (on the calling thread's
    stack)."""
    cdef _Walk walk
    _start_block(trees, sizes, &walk, state, X, block)
    _walk_trees(trees, rules, &walk, phi, tree_begin, tree_end)


cdef void _explain_chunks(
    const _Trees *trees,
    const Rules *rules,
    const _Sizes *sizes,
    const Py_ssize_t *chunk_start,
    Py_ssize_t n_chunks,
    double *state,
    const double *X,
    double *phi,
    Py_ssize_t block,
) noexcept nogil:
    """Add a block's values over all trees to ``phi``, chunk after chunk.

    The trees of chunk ``c`` are ``chunk_start[c]`` to ``chunk_start[c +
    1]``. The first chunk's values are added to ``phi`` (zero) directly;
    each other chunk's are summed in the scratch's ``partial`` and then
    added: the same sums, in the same order, as when chunks run on
    different threads (:func:`_explain_by_chunks`).
    """
    cdef _Walk walk
    cdef Py_ssize_t c, j, size = block * sizes.partial
    _start_block(trees, sizes, &walk, state, X, block)
    _walk_trees(trees, rules, &walk, phi, chunk_start[0], chunk_start[1])
    for c in range(1, n_chunks):
        for j in range(size):
            walk.partial[j] = 0.0
        _walk_trees(trees, rules, &walk, walk.partial, chunk_start[c], chunk_start[c + 1])
        lanes_add(phi, walk.partial, size)


cdef void _explain_by_chunks(
    const _Trees *trees,
    const Rules *rules,
    const _Sizes *sizes,
    const Py_ssize_t[::1] chunk_start,
    const double[:, ::1] X,
    double[:, :, ::1] out,
    int n_threads,
    Py_ssize_t n_blocks,
    Py_ssize_t scratch,
    double *partials,
    int *out_of_memory,
) noexcept:
    """:meth:`Forest.shapley` for fewer blocks than threads: (block, chunk) items.

    Each thread owns an equal share of the (block, chunk) items and walks it
    first, so that on idle cores it walks the same chunks of trees at every
    call and finds their nodes in its core's cache (dynamic scheduling,
    which moved them between cores, made one row of a 100-tree forest on 2
    threads 1.4 times slower); then it takes what is left of the other
    shares (``_shares.h``), so that a thread scheduled late beside other
    work does not make the call wait for its share. Chunk ``c > 0``'s values
    go to ``partials`` (zero, of shape (n_chunks - 1, n_samples, n_outputs *
    n_players)) and are added to ``out`` in chunk order once all are done:
    the sums of :func:`_explain_chunks`, whoever walked them.
    """
    cdef Py_ssize_t n_samples = X.shape[0]
    cdef Py_ssize_t n_chunks = chunk_start.shape[0] - 1
    cdef Py_ssize_t row_values = out.shape[1] * out.shape[2]
    cdef Py_ssize_t n_items = n_blocks * n_chunks
    cdef Py_ssize_t n_team = min(n_threads, n_items)
    cdef double *state = NULL
    # Each thread's share of the items: its first and its end.
    cdef uint64_t *shares = <uint64_t *> malloc(n_team * sizeof(uint64_t))
    if shares == NULL:
        out_of_memory[0] = 1
        return
    shares_init(shares, n_team, n_items)
    with nogil, parallel(num_threads=n_team):
        state = <double *> malloc(scratch * sizeof(double))
        _walk_shares(
            trees, rules, sizes, &chunk_start[0], n_chunks, X, out, partials,
            shares, n_team, threadid(), state, out_of_memory,
        )
        free(state)
    free(shares)
    add_chunk_sums(&out[0, 0, 0], partials, n_samples, n_chunks, row_values)


cdef void _walk_shares(
    const _Trees *trees,
    const Rules *rules,
    const _Sizes *sizes,
    const Py_ssize_t *chunk_start,
    Py_ssize_t n_chunks,
    const double[:, ::1] X,
    double[:, :, ::1] out,
    double *partials,
    uint64_t *shares,
    Py_ssize_t n_team,
    Py_ssize_t thread,
    double *state,
    int *out_of_memory,
) noexcept nogil:
    """Thread ``thread``'s walk of (block, chunk) items: its share from the
    front, then the others' from their back (a smaller team than asked for
    leaves some)."""
    cdef Py_ssize_t n_samples = X.shape[0], block = sizes.block
    cdef Py_ssize_t row_values = out.shape[1] * out.shape[2]
    cdef Py_ssize_t k = 0, b, c, first
    cdef Py_ssize_t item = shares_next(shares, n_team, thread, &k)
    while item >= 0:
        if state == NULL:
            out_of_memory[0] = 1
        else:
            b = item // n_chunks
            c = item % n_chunks
            first = b * block
            _explain_block(
                trees, rules, sizes, state, &X[first, 0],
                item_values(
                    first, c, n_samples, row_values, &out[0, 0, 0], partials
                ),
                min(block, n_samples - first), chunk_start[c], chunk_start[c + 1],
            )
        item = shares_next(shares, n_team, thread, &k)


cdef void _check_chunks(const Py_ssize_t[::1] chunk_start, Py_ssize_t n_trees) except *:
    """Raise ValueError unless ``chunk_start`` splits the trees into chunks."""
    cdef Py_ssize_t c
    if chunk_start.shape[0] < 2 or chunk_start[0] != 0:
        raise ValueError("chunk_start must start at 0 with at least one chunk.")
    for c in range(chunk_start.shape[0] - 1):
        if chunk_start[c + 1] <= chunk_start[c]:
            raise ValueError("chunk_start must increase: every chunk has trees.")
    if chunk_start[chunk_start.shape[0] - 1] != n_trees:
        raise ValueError("chunk_start must end at the number of trees.")


def row_blocks(Py_ssize_t n_samples, Py_ssize_t block_rows, int n_threads):
    """The block size and count for ``n_samples`` rows: ``(block, n_blocks)``.

    Blocks have at most ``block_rows`` rows. Up to a few blocks per thread,
    their number is rounded up to a multiple of the threads and the rows
    shared out evenly (100 rows on 2 threads: 4 blocks of 25, not 32, 32,
    32 and 4); beyond, dynamic scheduling balances them. The values do not
    depend on the blocks.
    """
    cdef Py_ssize_t n_blocks = (n_samples + block_rows - 1) // block_rows
    cdef Py_ssize_t block
    if n_blocks < _BLOCKS_PER_THREAD * n_threads:
        n_blocks = min(n_samples, (n_blocks + n_threads - 1) // n_threads * n_threads)
    block = (n_samples + n_blocks - 1) // n_blocks
    return block, (n_samples + block - 1) // block


cdef class Forest:
    """A TreeEnsemble's node arrays (see _table.py), ready for the kernels.

    The arrays are not copied; the one-row walk's packed records
    (:class:`RowNode`, 32 bytes per node) are built once, by the first
    call that walks a block of one row.

    Parameters
    ----------
    ensemble : TreeEnsemble
        The parsed model.
    cover_ratio : ndarray of shape (n_nodes,)
        ``cover[node] / cover[parent]``, 1 at the roots.
    player : ndarray of shape (n_nodes,)
        The player each internal node's split is credited to: its feature,
        or the feature's group (any value at leaves).
    chunk_start : ndarray of shape (n_chunks + 1,)
        The trees in chunks of consecutive trees: chunk ``c`` is trees
        ``chunk_start[c]`` to ``chunk_start[c + 1]`` (``0`` and ``n_trees``
        at the ends). A row's values are summed per chunk, and the chunks'
        sums in order, whatever the threads: chunks depend on the model only
        (see :func:`tree_chunks`).
    """

    cdef const Py_ssize_t[::1] feature, player, left, right, roots, chunk_start
    cdef const Py_ssize_t[::1] tree_output, tree_width
    cdef const double[::1] threshold, cover_ratio
    cdef const double[:, ::1] value
    cdef const unsigned char[::1] missing_left, is_categorical
    cdef const unsigned int[:, ::1] bitset
    cdef unsigned char[::1] row_node_bytes
    cdef _Trees trees
    # The struct view of the last call's quadrature rules, kept with them.
    cdef object rules
    cdef Rules rule_table

    def __init__(self, ensemble, cover_ratio, player, chunk_start):
        self.chunk_start = chunk_start
        _check_chunks(self.chunk_start, ensemble.roots.shape[0])
        self.feature = ensemble.feature
        self.player = player
        self.left = ensemble.left
        self.right = ensemble.right
        self.roots = ensemble.roots
        self.tree_output = ensemble.tree_output
        self.tree_width = ensemble.tree_width
        self.threshold = ensemble.threshold
        self.cover_ratio = cover_ratio
        self.value = ensemble.value
        self.missing_left = ensemble.missing_left
        self.is_categorical = ensemble.is_categorical
        self.bitset = ensemble.category_bitset
        self.trees.roots = &self.roots[0]
        self.trees.tree_output = &self.tree_output[0]
        self.trees.tree_width = &self.tree_width[0]
        self.trees.n_trees = self.roots.shape[0]
        self.trees.n_outputs = ensemble.n_outputs
        self.trees.feature = &self.feature[0]
        self.trees.player = &self.player[0]
        self.trees.left = &self.left[0]
        self.trees.right = &self.right[0]
        self.trees.routing.threshold = &self.threshold[0]
        self.trees.routing.zero_as_missing = _ZERO_AS_MISSING
        self.trees.cover_ratio = &self.cover_ratio[0]
        self.trees.value = &self.value[0, 0]
        self.trees.value_stride = self.value.shape[1]
        self.trees.routing.missing_left = &self.missing_left[0]
        self.trees.routing.is_categorical = &self.is_categorical[0]
        self.trees.routing.bitset = &self.bitset[0, 0]
        self.trees.row_nodes = NULL  # packed by the first call that needs them

    @property
    def has_row_nodes(self):
        """Whether the one-row walk's packed records are built."""
        return self.trees.row_nodes != NULL

    def row_nodes(self):
        """The one-row walk's packed records (:class:`RowNode`), as bytes.

        Built by the first call that needs them (this one, or a block of
        one row), then kept; the interaction kernel walks them too.
        """
        self._pack_row_nodes()
        return self.row_node_bytes

    cdef int _pack_row_nodes(self) except -1:
        """Pack the nodes as :func:`_walk_row` reads them, one record each.

        Done once, by the first call with a block of one row or of
        interaction values: 32 bytes per node that batches of values never
        need.
        """
        cdef Py_ssize_t n_nodes = self.left.shape[0], node
        cdef RowNode *records
        if self.trees.row_nodes != NULL:
            return 0
        if n_nodes > INT_MAX:
            raise ValueError(f"{n_nodes:,} nodes are too many: at most {INT_MAX:,}.")
        self.row_node_bytes = np.empty(n_nodes * sizeof(RowNode), dtype=np.uint8)
        records = <RowNode *> &self.row_node_bytes[0]
        for node in range(n_nodes):
            records[node].children[0] = <int> self.left[node]
            records[node].children[1] = <int> self.right[node]
            records[node].player = <int> self.player[node]
            records[node].feature = <int> self.feature[node]
            records[node].cover_ratio = self.cover_ratio[node]
            if self.is_categorical[node] or self.missing_left[node] & 2:
                records[node].threshold = NAN
            else:
                records[node].threshold = self.threshold[node]
        self.trees.row_nodes = records
        return 0

    def shapley(
        self,
        const double[:, ::1] X,
        rules,
        Py_ssize_t max_depth,
        double[:, :, ::1] out,
        int n_threads,
        Py_ssize_t block_rows,
    ):
        """Add each sample's path-dependent Shapley values to ``out``.

        ``out`` has shape (n_samples, n_outputs, n_players) and is zeroed by
        the caller. Tree ``t`` uses its rule of ``rules`` (a
        ``_quadrature.Rules``; exact when it has ceil(D / 2) points for the
        tree's largest number D of distinct players on a path); ``max_depth``
        bounds every tree's depth. Each walk takes a block of at most
        ``block_rows`` samples, in a scratch buffer of :func:`scratch_doubles`
        doubles (the caller chooses ``block_rows`` so that it fits).
        Raises MemoryError if a thread could not allocate it.

        The schedule fits the work: many rows are split into blocks, about
        equal and at least a few per thread (:func:`row_blocks`), each walked
        through every tree by one thread; fewer full blocks than threads (a
        few rows) are walked chunk of trees by chunk of trees, each thread
        taking the same (block, chunk) items at every call.
        Either way, each value is the same sum in the same order (chunk by
        chunk, see :func:`_explain_chunks`), so the values do not depend on
        the threads, the block size or the other rows.
        """
        cdef Py_ssize_t n_samples = X.shape[0]
        cdef Py_ssize_t n_chunks = self.chunk_start.shape[0] - 1
        cdef Py_ssize_t row_values = out.shape[1] * out.shape[2]
        cdef Py_ssize_t n_blocks, block, b, first, tree, scratch, m_max = 1
        cdef bint few
        cdef double *state = NULL
        cdef double *partials = NULL
        cdef _Walk sizing
        cdef _Sizes sizes
        cdef const _Trees *trees = &self.trees
        cdef const Py_ssize_t *chunk_start = &self.chunk_start[0]
        cdef const Rules *rule_table
        cdef int failed = 0
        cdef int *out_of_memory = &failed  # (set through it by the threads)

        if block_rows < 1:
            raise ValueError(f"block_rows must be >= 1, got {block_rows}.")
        if n_samples == 0:
            return
        if rules is not self.rules:  # (its view costs a microsecond a call)
            self.rule_table = rules_view(rules)
            self.rules = rules
        rule_table = &self.rule_table
        # Fewer full blocks than threads: chunks of trees on every thread
        # (splitting the rows further would walk smaller, costlier blocks).
        n_blocks = (n_samples + block_rows - 1) // block_rows
        few = n_chunks > 1 and n_blocks < n_threads
        if few:
            block = (n_samples + n_blocks - 1) // n_blocks
        else:
            block, n_blocks = row_blocks(n_samples, block_rows, n_threads)
        # Blocks have `block` rows and the last the rest, so the last has one
        # row if any has: it takes the one-row walk, which reads the packed
        # nodes.
        if n_samples - (n_blocks - 1) * block == 1:
            self._pack_row_nodes()
        for tree in range(rule_table.n_games):
            m_max = max(m_max, rule_table.n_points[tree])
        sizes = _Sizes(
            block, X.shape[1], out.shape[2], max_depth, m_max, self.value.shape[1],
            row_values if n_chunks > 1 else 0,
        )
        scratch = _layout(&sizing, NULL, &sizes)
        if few and (n_chunks - 1) * n_samples * row_values <= max(
            n_threads * scratch, MAX_PARTIAL_VALUES
        ):
            partials = <double *> calloc(
                (n_chunks - 1) * n_samples * row_values, sizeof(double)
            )
        if partials != NULL:
            _explain_by_chunks(
                trees, rule_table, &sizes, self.chunk_start, X, out, n_threads,
                n_blocks, scratch, partials, out_of_memory,
            )
            free(partials)
        else:
            # No more threads than blocks: an idle thread would still allocate
            # its scratch, and waking a team costs more than a small call.
            with nogil, parallel(num_threads=max(1, min(n_threads, n_blocks))):
                state = <double *> malloc(scratch * sizeof(double))
                for b in prange(n_blocks, schedule="dynamic"):
                    if state == NULL:
                        out_of_memory[0] = 1
                        continue
                    first = b * block
                    _explain_chunks(
                        trees, rule_table, &sizes, chunk_start, n_chunks, state,
                        &X[first, 0], &out[first, 0, 0],
                        min(block, n_samples - first),
                    )
                free(state)
        if failed:
            raise MemoryError("Could not allocate the tree kernel's scratch memory.")

    def predict(self, const double[:, ::1] X, double[:, ::1] out, int n_threads):
        """Add each sample's leaf values to ``out`` (n_samples, n_outputs)."""
        cdef const _Trees *trees = &self.trees
        cdef const Py_ssize_t[::1] roots = self.roots
        cdef const Py_ssize_t[::1] left = self.left
        cdef const Py_ssize_t[::1] right = self.right
        cdef const Py_ssize_t[::1] feature = self.feature
        cdef const Py_ssize_t[::1] tree_output = self.tree_output
        cdef const Py_ssize_t[::1] tree_width = self.tree_width
        cdef const double[:, ::1] value = self.value
        cdef Py_ssize_t i, tree, node, o

        for i in prange(
            X.shape[0],
            nogil=True,
            num_threads=max(1, min(n_threads, X.shape[0])),
            schedule="static",
        ):
            for tree in range(roots.shape[0]):
                node = roots[tree]
                while left[node] >= 0:
                    if goes_left(&trees.routing, node, X[i, feature[node]]):
                        node = left[node]
                    else:
                        node = right[node]
                for o in range(tree_width[tree]):
                    out[i, tree_output[tree] + o] += value[node, o]


def round_to_float32(double[:, ::1] X):
    """Round ``X``'s values to float32 ones in place, as ``X.astype(np.float32)``.

    For models that compare their inputs in float32 (scikit-learn's trees,
    XGBoost): one pass, with no temporary array and no warning where a
    value is too large for float32 (it becomes infinite, as in NumPy).

    Returns
    -------
    has_nan, has_inf : bool
        Whether the rounded values hold NaN, and infinity.
    """
    cdef Py_ssize_t i, n = X.shape[0] * X.shape[1]
    cdef double *values
    cdef double rounded
    cdef bint has_nan = False, has_inf = False
    if n == 0:
        return False, False
    values = &X[0, 0]
    with nogil:
        for i in range(n):
            rounded = <double> (<float> values[i])
            values[i] = rounded
            has_nan |= isnan(rounded)
            has_inf |= isinf(rounded)
    return has_nan, has_inf


def scratch_doubles(
    Py_ssize_t block_rows,
    Py_ssize_t n_features,
    Py_ssize_t n_players,
    Py_ssize_t max_depth,
    Py_ssize_t n_points,
    Py_ssize_t width,
    Py_ssize_t partial,
):
    """Doubles of scratch one thread of :meth:`Forest.shapley` allocates.

    For blocks of ``block_rows`` samples, trees of depth at most
    ``max_depth``, rules of at most ``n_points`` points, leaves of
    ``width`` values, and ``partial`` doubles per row of a chunk's sums
    (outputs * players with several chunks of trees, else 0). Sizes that
    would not fit in a Py_ssize_t are the caller's to refuse first (see
    ``TreeExplainer``).

    No product overflows: the largest, ``levels * width * n_points *
    block_rows``, is at most the ensemble's value array (``n_nodes * width``
    doubles, in memory) times ``MAX_QUADRATURE_POINTS * 32``.
    """
    cdef _Walk walk
    cdef _Sizes sizes = _Sizes(
        block_rows, n_features, n_players, max_depth, n_points, width, partial
    )
    return _layout(&walk, NULL, &sizes)


def path_bits(
    const Py_ssize_t[::1] node_player,
    const Py_ssize_t[::1] left,
    const Py_ssize_t[::1] right,
    const Py_ssize_t[::1] roots,
    Py_ssize_t n_players,
    Py_ssize_t[::1] bit,
    const Py_ssize_t[::1] players_start,
    Py_ssize_t[::1] players,
):
    """Number each path's players by first appearance; return the deepest depth.

    Fills ``bit``: at an internal node, the bit of its player on the path
    to it (fixed by the path's prefix); at a leaf, the number D of distinct
    players on its path. If ``players`` is not empty, also writes each
    leaf's players, by bit, from ``players_start[leaf]`` on.
    """
    cdef Py_ssize_t tree, node, depth, distinct = 0, top, player, deepest = 0
    cdef Py_ssize_t n_nodes = node_player.shape[0]
    cdef bint fill = players.shape[0] > 0
    cdef Py_ssize_t *seen = <Py_ssize_t *> malloc((3 * n_players + 1) * sizeof(Py_ssize_t))
    cdef Py_ssize_t *bit_of = seen + n_players
    cdef Py_ssize_t *on_path = bit_of + n_players
    # The stack holds (node, depth, phase); phase 1 means "leaving the node".
    cdef Py_ssize_t *stack = <Py_ssize_t *> malloc(3 * (n_nodes + 1) * sizeof(Py_ssize_t))
    if seen == NULL or stack == NULL:
        free(seen)
        free(stack)
        raise MemoryError()
    with nogil:
        for player in range(n_players):
            seen[player] = 0
        for tree in range(roots.shape[0]):
            stack[0] = roots[tree]
            stack[1] = 0
            stack[2] = 0
            top = 1
            while top > 0:
                top -= 1
                node = stack[3 * top]
                depth = stack[3 * top + 1]
                if stack[3 * top + 2] == 1:
                    player = node_player[node]
                    seen[player] -= 1
                    if seen[player] == 0:
                        distinct -= 1
                    continue
                deepest = max(deepest, depth)
                if left[node] < 0:
                    bit[node] = distinct
                    if fill:
                        for player in range(distinct):
                            players[players_start[node] + player] = on_path[player]
                    continue
                player = node_player[node]
                if seen[player] == 0:
                    bit_of[player] = distinct
                    on_path[distinct] = player
                    distinct += 1
                seen[player] += 1
                bit[node] = bit_of[player]
                stack[3 * top + 2] = 1
                stack[3 * top + 3] = left[node]
                stack[3 * top + 4] = depth + 1
                stack[3 * top + 5] = 0
                stack[3 * top + 6] = right[node]
                stack[3 * top + 7] = depth + 1
                stack[3 * top + 8] = 0
                top += 3
    free(seen)
    free(stack)
    return deepest
