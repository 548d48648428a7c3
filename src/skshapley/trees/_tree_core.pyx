"""Compiled loops of TreeExplainer: path-dependent Shapley values and prediction.

Every root-to-leaf path of a tree is a product game: for each distinct
feature ``j`` on the path, ``A_j`` in {0, 1} says whether the sample follows
all the path's splits on ``j`` and ``B_j`` is the product of their cover
ratios; with ``f_j(t) = (1 - t) B_j + t A_j`` and ``G(t) = prod_j f_j(t)``,

    phi_i = sum over leaves l of  value_l * Integral_0^1 g_i(t) G_l(t) dt,
    g_i(t) = (A_i - B_i) / f_i(t).

One depth-first walk per sample and tree evaluates all paths at once. Going
down an edge that splits on feature ``i`` changes ``(A_i, B_i)``; ``G`` is
updated by the ratio of the new and old factor, and the change ``dg`` of
``g_i`` is kept. Going back up, the leaves' ``value * G`` are summed (``H``),
and ``Integral dg * H`` is added to ``phi_i``: summed over the edges on ``i``
of each path, the ``dg`` telescope to that path's ``g_i``, so every path's
game is counted exactly, in O(nodes * m) work for m quadrature points.

Numerics: ``A`` is 0 or 1 and ``B`` in (0, 1]; nothing is divided by a
cover ratio. The divisions are by factors ``f = (1 - t) B + t A``: for
``A = 1`` they are at least ``t``; for ``A = 0``, ``g = -B / ((1 - t) B)``
is ``-1 / (1 - t)`` to rounding and the factor ratio is the edge's cover
ratio, whatever the size of ``B``. Leaf products ``G(t) >= prod B (1 - t)^k``
cannot underflow where the integrand matters.
"""

from cython.parallel cimport parallel, prange, threadid
from libc.math cimport isnan
from libc.stdlib cimport free, malloc


# Quadrature points are processed in lanes of this many; every tree's rule is
# padded to a multiple of it with points of weight 0.
cdef enum:
    _LANES = 8


cdef struct _Trees:
    # The TreeEnsemble's node arrays (see _table.py), read-only.
    const Py_ssize_t *feature
    const Py_ssize_t *left
    const Py_ssize_t *right
    const double *threshold
    const double *cover_ratio       # cover[node] / cover[parent], 1 at roots
    const double *value             # (n_nodes, value_stride)
    const unsigned char *missing_left
    const unsigned char *is_categorical
    const unsigned int *bitset      # (n_nodes, 8)
    Py_ssize_t value_stride


cdef struct _Walk:
    # One sample's walk through one tree; buffers belong to the thread.
    const double *x                 # the sample's features
    double *present                 # A_j per feature
    double *cover_product           # B_j per feature
    double *products                # G(t_k), one row of m per depth
    double *changes                 # dg(t_k), one row of m per depth
    double *old_g                   # g(t_k) before the node's split, per depth
    double *reciprocal              # 1 / f(t_k) before the node's split, per depth
    double *sums                    # H(t_k, output) as [output][k], m * width per depth
    double *phi                     # the sample's values, (n_features, n_outputs)
    const double *nodes             # the tree's quadrature rule
    const double *weights
    Py_ssize_t m
    Py_ssize_t width                # outputs of this tree
    Py_ssize_t output               # its first output
    Py_ssize_t n_outputs


cdef inline bint _goes_left(const _Trees *trees, Py_ssize_t node, double x) noexcept nogil:
    """The model's routing rule at an internal node (see _table.py)."""
    cdef int category
    if isnan(x):
        return trees.missing_left[node]
    if trees.is_categorical[node]:
        if not (0.0 <= x < 256.0) or x != <int> x:
            return False
        category = <int> x
        return (trees.bitset[node * 8 + category // 32] >> (category % 32)) & 1
    return x <= trees.threshold[node]


cdef void _visit(
    const _Trees *trees, _Walk *walk, Py_ssize_t node, Py_ssize_t depth
) noexcept nogil:
    """Fill the depth's ``sums`` for the subtree of ``node``; add to ``phi``.

    The arithmetic is the same whichever way the sample goes (``A`` enters as
    0.0 or 1.0), so the branch predictor has nothing to guess. Quadrature
    points come in lanes of ``_LANES`` (rules are padded with weight-0
    points), so the inner loops have a fixed length the compiler unrolls.
    """
    cdef Py_ssize_t m = walk.m, width = walk.width
    cdef Py_ssize_t k, lane, o, side, child, feature
    cdef double *products = walk.products + depth * m
    cdef double *changes = walk.changes + depth * m
    cdef double *old_g = walk.old_g + depth * m
    cdef double *reciprocal = walk.reciprocal + depth * m
    cdef double *sums = walk.sums + depth * m * width
    cdef double *child_sums = sums + m * width
    cdef const double *t = walk.nodes
    cdef const double *w = walk.weights
    cdef double present, cover_product, new_present, new_cover, factor, total, v
    cdef bint left_taken

    if trees.left[node] < 0:
        for o in range(width):
            v = trees.value[node * trees.value_stride + o]
            for lane in range(0, m // _LANES):
                for k in range(lane * _LANES, lane * _LANES + _LANES):
                    sums[o * m + k] = products[k] * v
        return

    feature = trees.feature[node]
    present = walk.present[feature]
    cover_product = walk.cover_product[feature]
    left_taken = _goes_left(trees, node, walk.x[feature])
    for lane in range(0, m // _LANES):
        for k in range(lane * _LANES, lane * _LANES + _LANES):
            reciprocal[k] = 1.0 / ((1.0 - t[k]) * cover_product + t[k] * present)
            old_g[k] = (present - cover_product) * reciprocal[k]
    for side in range(2):
        child = trees.left[node] if side == 0 else trees.right[node]
        new_cover = cover_product * trees.cover_ratio[child]
        if new_cover == 0.0:  # a subtree without training mass weighs nothing
            if side == 0:
                for k in range(m * width):
                    sums[k] = 0.0
            continue
        new_present = present * ((side == 0) == left_taken)
        for lane in range(0, m // _LANES):
            for k in range(lane * _LANES, lane * _LANES + _LANES):
                factor = (1.0 - t[k]) * new_cover + t[k] * new_present
                changes[k] = w[k] * ((new_present - new_cover) / factor - old_g[k])
                products[m + k] = products[k] * factor * reciprocal[k]
        walk.present[feature] = new_present
        walk.cover_product[feature] = new_cover
        _visit(trees, walk, child, depth + 1)
        for o in range(width):
            total = 0.0
            for lane in range(0, m // _LANES):
                for k in range(lane * _LANES, lane * _LANES + _LANES):
                    total = total + changes[k] * child_sums[o * m + k]
            walk.phi[feature * walk.n_outputs + walk.output + o] += total
        if side == 0:
            for k in range(m * width):
                sums[k] = child_sums[k]
        else:
            for k in range(m * width):
                sums[k] += child_sums[k]
    walk.present[feature] = present
    walk.cover_product[feature] = cover_product


cdef _Trees _trees(
    const Py_ssize_t[::1] feature,
    const Py_ssize_t[::1] left,
    const Py_ssize_t[::1] right,
    const double[::1] threshold,
    const double[::1] cover_ratio,
    const double[:, ::1] value,
    const unsigned char[::1] missing_left,
    const unsigned char[::1] is_categorical,
    const unsigned int[:, ::1] bitset,
):
    cdef _Trees trees
    trees.feature = &feature[0]
    trees.left = &left[0]
    trees.right = &right[0]
    trees.threshold = &threshold[0]
    trees.cover_ratio = &cover_ratio[0]
    trees.value = &value[0, 0]
    trees.value_stride = value.shape[1]
    trees.missing_left = &missing_left[0]
    trees.is_categorical = &is_categorical[0]
    trees.bitset = &bitset[0, 0]
    return trees


cdef void _explain_row(
    const _Trees *trees,
    double *state,
    const double *x,
    double *phi,
    Py_ssize_t n_features,
    Py_ssize_t n_outputs,
    Py_ssize_t levels,
    Py_ssize_t m_max,
    const Py_ssize_t[::1] roots,
    const Py_ssize_t[::1] tree_output,
    const Py_ssize_t[::1] tree_width,
    const double[::1] rule_nodes,
    const double[::1] rule_weights,
    const Py_ssize_t[::1] rule_start,
    const Py_ssize_t[::1] rule_size,
) noexcept nogil:
    """Add one sample's values over all trees to ``phi``; ``state`` is scratch."""
    cdef _Walk walk
    cdef Py_ssize_t j, tree
    walk.x = x
    walk.phi = phi
    walk.n_outputs = n_outputs
    walk.present = state
    walk.cover_product = state + n_features
    walk.products = state + 2 * n_features
    walk.changes = walk.products + levels * m_max
    walk.old_g = walk.changes + levels * m_max
    walk.reciprocal = walk.old_g + levels * m_max
    walk.sums = walk.reciprocal + levels * m_max
    for j in range(n_features):
        walk.present[j] = 1.0
        walk.cover_product[j] = 1.0
    for tree in range(roots.shape[0]):
        walk.m = rule_size[tree]
        walk.nodes = &rule_nodes[rule_start[tree]]
        walk.weights = &rule_weights[rule_start[tree]]
        walk.width = tree_width[tree]
        walk.output = tree_output[tree]
        for j in range(walk.m):
            walk.products[j] = 1.0
        _visit(trees, &walk, roots[tree], 0)


def tree_shapley(
    const double[:, ::1] X,
    const Py_ssize_t[::1] feature,
    const Py_ssize_t[::1] left,
    const Py_ssize_t[::1] right,
    const double[::1] threshold,
    const double[::1] cover_ratio,
    const double[:, ::1] value,
    const unsigned char[::1] missing_left,
    const unsigned char[::1] is_categorical,
    const unsigned int[:, ::1] bitset,
    const Py_ssize_t[::1] roots,
    const Py_ssize_t[::1] tree_output,
    const Py_ssize_t[::1] tree_width,
    const double[::1] rule_nodes,
    const double[::1] rule_weights,
    const Py_ssize_t[::1] rule_start,
    const Py_ssize_t[::1] rule_size,
    Py_ssize_t max_depth,
    double[:, :, ::1] out,
    int n_threads,
    int[::1] out_of_memory,
):
    """Add each sample's path-dependent Shapley values to ``out``.

    ``out`` has shape (n_samples, n_features, n_outputs) and is zeroed by the
    caller. Tree ``t`` uses the rule ``rule_nodes[rule_start[t]:][:rule_size[t]]``
    (exact when it has ceil(D / 2) points for the tree's largest number D of
    distinct features on a path), padded to a multiple of ``_LANES`` points
    with weight 0; ``max_depth`` bounds every tree's depth.
    """
    cdef _Trees trees = _trees(
        feature, left, right, threshold, cover_ratio, value, missing_left,
        is_categorical, bitset,
    )
    cdef Py_ssize_t n_samples = X.shape[0], n_features = X.shape[1]
    cdef Py_ssize_t n_outputs = out.shape[2], width = value.shape[1]
    cdef Py_ssize_t m_max = 1, levels = max_depth + 2
    cdef Py_ssize_t i, tree
    cdef double *state = NULL

    for tree in range(rule_size.shape[0]):
        m_max = max(m_max, rule_size[tree])
    with nogil, parallel(num_threads=n_threads):
        state = <double *> malloc(
            (2 * n_features + levels * m_max * (4 + width))
            * sizeof(double)
        )
        for i in prange(n_samples, schedule="dynamic"):
            if state == NULL:
                out_of_memory[0] = 1
                continue
            _explain_row(
                &trees, state, &X[i, 0], &out[i, 0, 0], n_features, n_outputs,
                levels, m_max, roots, tree_output, tree_width,
                rule_nodes, rule_weights, rule_start, rule_size,
            )
        free(state)


def predict(
    const double[:, ::1] X,
    const Py_ssize_t[::1] feature,
    const Py_ssize_t[::1] left,
    const Py_ssize_t[::1] right,
    const double[::1] threshold,
    const double[::1] cover_ratio,
    const double[:, ::1] value,
    const unsigned char[::1] missing_left,
    const unsigned char[::1] is_categorical,
    const unsigned int[:, ::1] bitset,
    const Py_ssize_t[::1] roots,
    const Py_ssize_t[::1] tree_output,
    const Py_ssize_t[::1] tree_width,
    double[:, ::1] out,
    int n_threads,
):
    """Add each sample's leaf values to ``out`` (n_samples, n_outputs)."""
    cdef _Trees trees = _trees(
        feature, left, right, threshold, cover_ratio, value, missing_left,
        is_categorical, bitset,
    )
    cdef Py_ssize_t i, tree, node, o

    for i in prange(X.shape[0], nogil=True, num_threads=n_threads, schedule="static"):
        for tree in range(roots.shape[0]):
            node = roots[tree]
            while left[node] >= 0:
                if _goes_left(&trees, node, X[i, feature[node]]):
                    node = left[node]
                else:
                    node = right[node]
            for o in range(tree_width[tree]):
                out[i, tree_output[tree] + o] += value[node, o]


def path_statistics(
    const Py_ssize_t[::1] feature,
    const Py_ssize_t[::1] left,
    const Py_ssize_t[::1] right,
    const Py_ssize_t[::1] roots,
    Py_ssize_t n_features,
    Py_ssize_t[::1] max_distinct,
    Py_ssize_t[::1] max_depth,
):
    """Per tree: the most distinct features on a path, and the depth."""
    cdef Py_ssize_t tree, node, depth, distinct, top, f
    cdef Py_ssize_t n_nodes = feature.shape[0]
    cdef Py_ssize_t *seen = <Py_ssize_t *> malloc(n_features * sizeof(Py_ssize_t))
    # The stack holds (node, depth, phase); phase 1 means "leaving the node".
    cdef Py_ssize_t *stack = <Py_ssize_t *> malloc(3 * (n_nodes + 1) * sizeof(Py_ssize_t))
    if seen == NULL or stack == NULL:
        free(seen)
        free(stack)
        raise MemoryError()
    with nogil:
        for f in range(n_features):
            seen[f] = 0
        for tree in range(roots.shape[0]):
            max_distinct[tree] = 0
            max_depth[tree] = 0
            distinct = 0
            top = 0
            stack[0] = roots[tree]
            stack[1] = 0
            stack[2] = 0
            top = 1
            while top > 0:
                top -= 1
                node = stack[3 * top]
                depth = stack[3 * top + 1]
                if stack[3 * top + 2] == 1:
                    f = feature[node]
                    seen[f] -= 1
                    if seen[f] == 0:
                        distinct -= 1
                    continue
                if depth > max_depth[tree]:
                    max_depth[tree] = depth
                if left[node] < 0:
                    if distinct > max_distinct[tree]:
                        max_distinct[tree] = distinct
                    continue
                f = feature[node]
                if seen[f] == 0:
                    distinct += 1
                seen[f] += 1
                stack[3 * top] = node
                stack[3 * top + 1] = depth
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


LANES = _LANES
