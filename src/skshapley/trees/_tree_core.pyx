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
involves a division is computed once per node for the whole block; each
sample then only picks one of three cases (``A`` was already 0; ``A`` is 1
and the sample follows the edge; or it leaves it) and multiplies.

Numerics: ``A`` is 0 or 1 and ``B`` in (0, 1]; nothing is divided by a
cover ratio. The divisions are by factors ``f = (1 - t) B + t A``: for
``A = 1`` they are at least ``t``; for ``A = 0``, ``g = -B / ((1 - t) B)``
is ``-1 / (1 - t)`` to rounding and the factor ratio is the edge's cover
ratio, whatever the size of ``B``. Leaf products ``G(t) >= prod B (1 - t)^k``
cannot underflow where the integrand matters.
"""

from cython.parallel cimport parallel, prange
from libc.math cimport isnan
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy


cdef extern from "_lanes.h" nogil:
    void lanes_multiply(double *out, const double *a, const double *b, Py_ssize_t n)
    void lanes_scale(double *out, const double *a, double c, Py_ssize_t n)
    void lanes_add(double *out, const double *a, Py_ssize_t n)
    double lanes_dot(const double *a, const double *b, Py_ssize_t n)


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


# Samples explained together in one walk of a tree.
cdef enum:
    _BLOCK_ROWS = 32


cdef struct _Walk:
    # One walk of one tree for a block of samples; buffers belong to the thread.
    const double *X                 # the block's rows, (block, n_features)
    double *phi                     # their values, (block, n_outputs, n_features)
    Py_ssize_t block
    Py_ssize_t n_features
    Py_ssize_t n_outputs
    double *present                 # A_j, (block, n_features)
    double *cover_product           # B_j, (n_features,): the same for all samples
    double *products                # G(t_k), (levels, block, m)
    double *sums                    # H(t_k, output), (levels, block, width, m)
    double *cases                   # per level: 1/f, g before, 3 ratios, 3 dg, (8, m)
    double *was_present             # A before the node's split, (levels, block)
    unsigned char *case_of          # the case of each sample, (levels, block)
    unsigned char *went_left        # the routing of each sample, (levels, block)
    const double *nodes             # the tree's quadrature rule
    const double *weights
    Py_ssize_t m
    Py_ssize_t width                # outputs of this tree
    Py_ssize_t output               # its first output


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
    """Fill the level's ``sums`` for the subtree of ``node``; add to ``phi``.

    Per sample, the work is a few vectorized multiplications per quadrature
    point (``_lanes.h``).
    """
    cdef Py_ssize_t m = walk.m, width = walk.width, block = walk.block
    cdef Py_ssize_t k, o, s, side, child, feature, case
    cdef double *products = walk.products + depth * block * m
    cdef double *child_products = products + block * m
    cdef double *sums = walk.sums + depth * block * width * m
    cdef double *child_sums = sums + block * width * m
    cdef double *cases = walk.cases + depth * 8 * m
    cdef double *reciprocal = cases
    cdef double *old_g = cases + m
    cdef double *ratios = cases + 2 * m      # case 0, 1, 2
    cdef double *changes = cases + 5 * m     # case 0, 1, 2
    cdef double *was_present = walk.was_present + depth * block
    cdef unsigned char *case_of = walk.case_of + depth * block
    cdef unsigned char *went_left = walk.went_left + depth * block
    cdef const double *t = walk.nodes
    cdef const double *w = walk.weights
    cdef double cover_product, new_cover, ratio, factor

    if trees.left[node] < 0:
        for s in range(block):
            for o in range(width):
                lanes_scale(
                    sums + (s * width + o) * m, products + s * m,
                    trees.value[node * trees.value_stride + o], m,
                )
        return

    feature = trees.feature[node]
    cover_product = walk.cover_product[feature]
    for s in range(block):
        was_present[s] = walk.present[s * walk.n_features + feature]
        went_left[s] = _goes_left(
            trees, node, walk.X[s * walk.n_features + feature]
        )
    for k in range(m):
        reciprocal[k] = 1.0 / ((1.0 - t[k]) * cover_product + t[k])
        old_g[k] = (1.0 - cover_product) * reciprocal[k]
    for side in range(2):
        child = trees.left[node] if side == 0 else trees.right[node]
        ratio = trees.cover_ratio[child]
        new_cover = cover_product * ratio
        if new_cover == 0.0:  # a subtree without training mass weighs nothing
            if side == 0:
                for k in range(block * width * m):
                    sums[k] = 0.0
            continue
        # Case 0: A was 0 (g stays -1 / (1 - t), the factor scales by the
        # ratio); case 1: A stays 1; case 2: A becomes 0.
        for k in range(m):
            factor = (1.0 - t[k]) * new_cover + t[k]
            ratios[k] = ratio
            ratios[m + k] = factor * reciprocal[k]
            ratios[2 * m + k] = (1.0 - t[k]) * new_cover * reciprocal[k]
            changes[k] = 0.0
            changes[m + k] = w[k] * ((1.0 - new_cover) / factor - old_g[k])
            changes[2 * m + k] = w[k] * (-1.0 / (1.0 - t[k]) - old_g[k])
        for s in range(block):
            case = 0 if was_present[s] == 0.0 else (
                1 if (side == 0) == went_left[s] else 2
            )
            case_of[s] = case
            walk.present[s * walk.n_features + feature] = 1.0 if case == 1 else 0.0
            lanes_multiply(
                child_products + s * m, products + s * m, ratios + case * m, m
            )
        walk.cover_product[feature] = new_cover
        _visit(trees, walk, child, depth + 1)
        for s in range(block):
            if case_of[s] == 0:
                continue  # g did not change: nothing to add
            for o in range(width):
                walk.phi[
                    (s * walk.n_outputs + walk.output + o) * walk.n_features + feature
                ] += lanes_dot(
                    changes + case_of[s] * m, child_sums + (s * width + o) * m, m
                )
        if side == 0:
            memcpy(sums, child_sums, block * width * m * sizeof(double))
        else:
            lanes_add(sums, child_sums, block * width * m)
    for s in range(block):
        walk.present[s * walk.n_features + feature] = was_present[s]
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


cdef void _explain_block(
    const _Trees *trees,
    double *state,
    const double *X,
    double *phi,
    Py_ssize_t block,
    Py_ssize_t n_features,
    Py_ssize_t n_outputs,
    Py_ssize_t levels,
    Py_ssize_t m_max,
    Py_ssize_t width_max,
    const Py_ssize_t[::1] roots,
    const Py_ssize_t[::1] tree_output,
    const Py_ssize_t[::1] tree_width,
    const double[::1] rule_nodes,
    const double[::1] rule_weights,
    const Py_ssize_t[::1] rule_start,
    const Py_ssize_t[::1] rule_size,
) noexcept nogil:
    """Add a block of samples' values over all trees to ``phi``."""
    cdef _Walk walk
    cdef Py_ssize_t j, tree
    walk.X = X
    walk.phi = phi
    walk.block = block
    walk.n_features = n_features
    walk.n_outputs = n_outputs
    walk.present = state
    walk.cover_product = walk.present + _BLOCK_ROWS * n_features
    walk.products = walk.cover_product + n_features
    walk.sums = walk.products + levels * _BLOCK_ROWS * m_max
    walk.cases = walk.sums + levels * _BLOCK_ROWS * width_max * m_max
    walk.was_present = walk.cases + levels * 8 * m_max
    walk.case_of = <unsigned char *> (walk.was_present + levels * _BLOCK_ROWS)
    walk.went_left = walk.case_of + levels * _BLOCK_ROWS
    for j in range(block * n_features):
        walk.present[j] = 1.0
    for j in range(n_features):
        walk.cover_product[j] = 1.0
    for tree in range(roots.shape[0]):
        walk.m = rule_size[tree]
        walk.nodes = &rule_nodes[rule_start[tree]]
        walk.weights = &rule_weights[rule_start[tree]]
        walk.width = tree_width[tree]
        walk.output = tree_output[tree]
        for j in range(block * walk.m):
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

    ``out`` has shape (n_samples, n_outputs, n_features) and is zeroed by the
    caller. Tree ``t`` uses the rule ``rule_nodes[rule_start[t]:][:rule_size[t]]``
    (exact when it has ceil(D / 2) points for the tree's largest number D of
    distinct features on a path); ``max_depth`` bounds every tree's depth.
    """
    cdef _Trees trees = _trees(
        feature, left, right, threshold, cover_ratio, value, missing_left,
        is_categorical, bitset,
    )
    cdef Py_ssize_t n_samples = X.shape[0], n_features = X.shape[1]
    cdef Py_ssize_t n_outputs = out.shape[1], width = value.shape[1]
    cdef Py_ssize_t m_max = 1, levels = max_depth + 2
    cdef Py_ssize_t n_blocks = (n_samples + _BLOCK_ROWS - 1) // _BLOCK_ROWS
    cdef Py_ssize_t b, first, tree
    cdef double *state = NULL

    for tree in range(rule_size.shape[0]):
        m_max = max(m_max, rule_size[tree])
    with nogil, parallel(num_threads=n_threads):
        state = <double *> malloc(
            (
                (_BLOCK_ROWS + 1) * n_features
                + levels * m_max * (_BLOCK_ROWS * (1 + width) + 8)
                + levels * _BLOCK_ROWS * 2
            ) * sizeof(double)
        )
        for b in prange(n_blocks, schedule="dynamic"):
            if state == NULL:
                out_of_memory[0] = 1
                continue
            first = b * _BLOCK_ROWS
            _explain_block(
                &trees, state, &X[first, 0], &out[first, 0, 0],
                min(<Py_ssize_t> _BLOCK_ROWS, n_samples - first),
                n_features, n_outputs, levels, m_max, width,
                roots, tree_output, tree_width,
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

