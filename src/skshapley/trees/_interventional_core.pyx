"""Compiled loops of interventional TreeExplainer: values against a background.

For one leaf of value ``v`` whose path splits on ``D`` distinct players
(numbered by bits 0..D-1 in the order they first appear on the path), a row
``x`` has a success mask ``A`` (bit j set iff x follows all the path's splits
on player j) and a background row ``z`` a failure mask ``c`` (bit j set iff z
fails one of them). The game ``v(S) = v [x_S, z_rest reaches the leaf]`` is
a product game with 0/1 factors; it is zero unless ``c ⊆ A``, and then, with
``nb = D - |A|`` and ``na = |c|``, player j gets

    j ∉ A: -v B(na + 1, nb),    j ∈ c: v B(na, nb + 1),    else 0

(B the Beta function). Summed over the background, only the counts
``cnt(c)`` of the failure masks matter, through the ranked subset sums
``R(U, k)`` = the number of background rows with ``c ⊆ U`` and ``|c| = k``:

    j ∉ A:  -v Neg(A),      Neg(U) = sum_k R(U, k) B(k + 1, D - |U|)
    j ∈ A:   v (Pos(A) - P2(A \\ {j})),
             Pos(U) = sum_{k>=1} R(U, k) B(k, D - |U| + 1),
             P2(U)  = sum_{k>=1} R(U, k) B(k, D - |U|).

A leaf with few players keeps the three tables over all 2**D subsets
(built from the background once, by a ranked zeta transform), so that a row
costs O(D) per leaf; a leaf with more players keeps its background rows'
distinct failure masks (multi-word bitsets, any depth, sorted) with their
counts and counts ``R`` for each row. Both paths compute the sums above from
the same exact integer counts in the same order, so their values are
bit-identical. Values are summed over the background, not averaged: the
caller divides by its size once.

A few rows may skip the tables and masks (:func:`_pair_tree`): each walks
each tree once with the set of background rows that reach each node with
it, and counts them at each leaf: the same exact integers, summed in the
same order.

Interaction values sum closed-form terms over the masks ``c ⊆ A`` (see
:func:`_add_pair_terms`), each distinct mask once, weighted by its count:
from a leaf's count of each of its 2**D masks where it has tables (as for
Shapley values), else from its sorted distinct masks. Both visit the same
masks in increasing order, so their values are bit-identical too.

Rows are routed by the models' own rule (``_routing.pxd``). A depth-first
walk of a tree carries the masks of a block of rows (or background rows)
down every path at once, in loops over the block; at each leaf, the leaf's
table (or masks) serves the whole block while it is in cache.

A row's values are summed chunk of trees by chunk of trees (chunks fixed by
the model and the background alone, cut where a batch of trees ends): a
batch's first chunk's straight into the values, each other's from zero and
then added, in chunk order. So many rows can be split into blocks, each
walked through every chunk by one thread, and a few rows into (block,
chunk) items shared between the threads, with the same sums in the same order:
the values do not depend on the schedule.
"""

from cython.parallel cimport parallel, prange
from libc.stdint cimport uint32_t, uint64_t
from libc.stdlib cimport calloc, free, malloc
from libc.string cimport memcmp, memcpy, memmove, memset

from ._chunks cimport add_chunk_sums, item_values, lanes_add
from ._cover cimport (
    COVER_BITS,
    COVER_MAX_ENTRIES,
    COVER_MAX_NODES,
    Cover,
    block_keys,
    cover_bytes,
    cover_count,
    cover_layout,
    cover_plan,
    cover_players,
    fill_row_table,
)
from ._routing cimport Routing, goes_left, route_block


# A count node's most key bits, a covered tree's most nodes and its
# histograms' most entries (see _cover.pxd).
COVER_LIMITS = (COVER_BITS, COVER_MAX_NODES, COVER_MAX_ENTRIES)


cdef extern from "_sides.h" nogil:
    int float32_copy_exact "float32_copy" (const double *x, float *out, Py_ssize_t n)

import numpy as np

from ._table import ZERO_AS_MISSING


cdef extern from *:
    """
    #if defined(_MSC_VER)
    #include <intrin.h>
    static inline int sks_popcount(unsigned long long x) { return (int) __popcnt64(x); }
    static inline int sks_lowest_bit(unsigned long long x) {
        unsigned long i; _BitScanForward64(&i, x); return (int) i;
    }
    #else
    static inline int sks_popcount(unsigned long long x) {
    #if defined(__POPCNT__)
        return __builtin_popcountll(x);
    #else  /* without the instruction, GCC calls a library function: slower */
        x -= (x >> 1) & 0x5555555555555555ULL;
        x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
        x = (x + (x >> 4)) & 0x0F0F0F0F0F0F0F0FULL;
        return (int) ((x * 0x0101010101010101ULL) >> 56);
    #endif
    }
    static inline int sks_lowest_bit(unsigned long long x) { return __builtin_ctzll(x); }
    #endif
    """
    int sks_popcount(unsigned long long x) noexcept nogil
    int sks_lowest_bit(unsigned long long x) noexcept nogil


cdef struct _Paths:
    # The TreeEnsemble's node arrays (see _table.py) and each path's players.
    Routing routing
    const Py_ssize_t *feature
    const Py_ssize_t *left
    const Py_ssize_t *right
    const double *value             # (n_nodes, value_stride)
    Py_ssize_t value_stride
    const Py_ssize_t *roots         # (n_trees + 1,): the last is n_nodes
    const Py_ssize_t *tree_output
    const Py_ssize_t *tree_width
    Py_ssize_t n_outputs
    Py_ssize_t n_players
    const Py_ssize_t *bit           # per node: its player's bit on the path
                                    # (internal), or the path's D (leaf)
    const Py_ssize_t *players_start # per leaf: its players' offset in `players`
    const Py_ssize_t *players       # each leaf's players, by bit
    const double *beta              # B(a, b) at beta[a * beta_stride + b]
    Py_ssize_t beta_stride
    Py_ssize_t words                # 64-bit words of a mask
    Py_ssize_t levels               # levels of a walk: max depth + 1
    Py_ssize_t max_bits             # the largest D of any leaf


cdef struct _Store:
    # Where each leaf's background lives (one batch of trees).
    const Py_ssize_t *offset        # per leaf: into tables or masks
    const unsigned char *tabulated  # per leaf: 1 tables, 0 masks
    double *tables                  # per leaf: D gains for each of 2**D masks
                                    # (or, unless `gains`, the masks' counts)
    uint64_t *masks                 # per leaf: see _sort_and_count
    Py_ssize_t table_base           # offsets of the batch's first leaf
    Py_ssize_t mask_base
    Py_ssize_t n_background
    bint gains                      # tabulate the counts (Shapley values)
    double *reach                   # per node: the background rows reaching
                                    # it, set at leaves by the counts
    # Row covers (see _cover.pxd), or rc_tree_start NULL: per tree, its
    # count nodes (global numbers), each with its key's nodes (COVER_BITS
    # a count node), its players, and its table's offset in row_tables.
    Py_ssize_t rc_key_bits          # the most sides of a key
    const Py_ssize_t *rc_tree_start # (n_trees + 1,)
    const Py_ssize_t *rc_n_keys
    const Py_ssize_t *rc_keys
    const Py_ssize_t *rc_n_players
    const Py_ssize_t *rc_players
    const Py_ssize_t *rc_offset
    double *row_tables
    Py_ssize_t row_table_base


# What a walk does at the leaves.
cdef enum _Task:
    _COUNT          # background rows: count, or keep, their failure masks
    _SHAPLEY        # rows: add their values
    _INTERACTIONS   # rows: add their interaction matrices


cdef struct _Walk:
    # One walk of one tree for a block of rows; buffers belong to the thread.
    const double *X                 # features by column: X[f * stride + row]
    Py_ssize_t stride
    Py_ssize_t first                # the block's first row
    Py_ssize_t n                    # rows in the block
    _Task task
    double *out                     # the values of the block's first row
    double *partial                 # a chunk's sums, (block, row_values)
    uint64_t *masks                 # (levels, words, n)
    Py_ssize_t *nodes               # (levels,): the split being walked
    double *gain                    # scratch (max_bits + 1,)
    double *R                       # scratch of _mask_gains and _pair_terms
    uint64_t *row_mask              # scratch (words,)
    unsigned char *went_left        # (levels, n)
    unsigned char *side             # (levels,): the child being walked
    uint32_t *keys                  # (n,): the rows' keys at a row cover


cdef Py_ssize_t _layout(
    _Walk *walk, char *state, const _Paths *paths, Py_ssize_t block,
    Py_ssize_t row_values,
) noexcept nogil:
    """Point ``walk``'s buffers into one thread's ``state``; return its bytes.

    The one place the scratch layout is written: sized with ``state`` NULL
    before anything is allocated. Parts are rounded to 8 bytes. A chunk's
    sums take ``row_values`` doubles per row (0 if the walks need none).
    """
    cdef Py_ssize_t used = 0, D = paths.max_bits, levels = paths.levels
    walk.masks = <uint64_t *> (state + used)
    used += levels * paths.words * block * 8
    walk.nodes = <Py_ssize_t *> (state + used)
    used += levels * 8
    walk.gain = <double *> (state + used)
    used += (D + 1) * 8
    # _mask_gains needs (D + 2)(D + 1) doubles, _pair_terms D * D + 2 D + 2.
    walk.R = <double *> (state + used)
    used += ((D + 2) * (D + 1) + D * D) * 8
    walk.row_mask = <uint64_t *> (state + used)
    used += paths.words * 8
    walk.went_left = <unsigned char *> (state + used)
    used += (levels * block + 7) // 8 * 8
    walk.side = <unsigned char *> (state + used)
    used += (levels + 7) // 8 * 8
    walk.keys = <uint32_t *> (state + used)
    used += block * 8  # linear in the block, as _fitting_block assumes
    # Last: laid out without it, the other parts are where they are with it.
    walk.partial = <double *> (state + used)
    used += block * row_values * 8
    return used


cdef inline void _route(const _Paths *paths, _Walk *walk, Py_ssize_t depth) noexcept nogil:
    """Which rows of the block go left at the level's split."""
    cdef Py_ssize_t node = walk.nodes[depth]
    route_block(
        &paths.routing, node, walk.X + paths.feature[node] * walk.stride + walk.first,
        walk.n, walk.went_left + depth * walk.n,
    )


cdef inline void _enter(
    const _Paths *paths, _Walk *walk, Py_ssize_t depth, unsigned char side
) noexcept nogil:
    """The masks of level ``depth + 1``, for the child on ``side`` (0 left).

    The rows that do not take that child get the split's bit: set in a
    failure mask, cleared in a success mask.
    """
    cdef Py_ssize_t node = walk.nodes[depth], n = walk.n, words = paths.words, r
    cdef Py_ssize_t b = paths.bit[node]
    cdef uint64_t *child = walk.masks + (depth + 1) * words * n
    cdef uint64_t *word = child + (b >> 6) * n
    cdef const unsigned char *went_left = walk.went_left + depth * n
    cdef uint64_t one = (<uint64_t> 1) << (b & 63)
    memcpy(child, child - words * n, words * n * sizeof(uint64_t))
    walk.side[depth] = side
    # A row leaves the child's path if it goes to the other side.
    if walk.task == _COUNT:
        for r in range(n):
            word[r] |= one & ((<uint64_t> 0) - <uint64_t> (went_left[r] == side))
    else:
        for r in range(n):
            word[r] &= ~(one & ((<uint64_t> 0) - <uint64_t> (went_left[r] == side)))


cdef void _walk_tree(
    const _Paths *paths, const _Store *store, _Walk *walk, Py_ssize_t tree
) noexcept nogil:
    """Carry the block's masks down every path of ``tree``; serve each leaf.

    Depth first, with an explicit stack of levels (no recursion).
    """
    cdef Py_ssize_t depth = 0, node = paths.roots[tree], words = paths.words
    memset(
        walk.masks, 0 if walk.task == _COUNT else 0xFF,
        words * walk.n * sizeof(uint64_t),
    )
    while True:
        while paths.left[node] >= 0:
            walk.nodes[depth] = node
            _route(paths, walk, depth)
            _enter(paths, walk, depth, 0)
            node = paths.left[node]
            depth += 1
        _serve_leaf(paths, store, walk, tree, node, walk.masks + depth * words * walk.n)
        while True:
            if depth == 0:
                return
            depth -= 1
            if walk.side[depth] == 0:
                break
        _enter(paths, walk, depth, 1)
        node = paths.right[walk.nodes[depth]]
        depth += 1


cdef inline double _ranked_sum(
    const _Paths *paths, const double *R, Py_ssize_t first, Py_ssize_t n,
    Py_ssize_t shift, Py_ssize_t b,
) noexcept nogil:
    """``sum_{k=first}^{n} R[k] B(k + shift, b)``; 0 when ``b < 1``."""
    cdef Py_ssize_t k
    cdef double total = 0.0
    # B is symmetric: B(b, .) is a contiguous row of the table.
    cdef const double *weight = paths.beta + b * paths.beta_stride + shift
    if b < 1:
        return 0.0
    for k in range(first, n + 1):
        total += R[k] * weight[k]
    return total


cdef void _tabulate(const _Paths *paths, double *table, Py_ssize_t D, double *R) noexcept nogil:
    """Turn a leaf's counts ``cnt(c)`` (``table[c]``) into its gains.

    The gains of the rows with success mask ``U`` are ``table[U * D + j]``
    for the path's players j: ``-Neg(U)`` for j outside U, ``Pos(U) -
    P2(U \\ {j})`` inside. ``R`` is scratch of 2**D (D + 2) doubles: the
    ranked zeta transform ``R[U * (D + 1) + k]`` (exact integers), then P2.
    """
    cdef Py_ssize_t size = (<Py_ssize_t> 1) << D, width = D + 1, i, U, k, n, b
    cdef Py_ssize_t one
    cdef double *row
    cdef const double *below
    cdef double *without = R + width * size
    cdef double *gain
    cdef double negative, positive
    memset(R, 0, width * size * sizeof(double))
    for U in range(size):
        R[U * width + sks_popcount(U)] = table[U]
    for i in range(D):
        one = (<Py_ssize_t> 1) << i
        for U in range(size):
            if U & one:
                row = R + U * width
                below = R + (U ^ one) * width
                for k in range(sks_popcount(U)):
                    row[k] += below[k]
    for U in range(size):
        n = sks_popcount(U)
        without[U] = _ranked_sum(paths, R + U * width, 1, n, 0, D - n)
    for U in range(size):
        n = sks_popcount(U)
        row = R + U * width
        negative = _ranked_sum(paths, row, 0, n, 1, D - n)
        positive = _ranked_sum(paths, row, 1, n, 0, D - n + 1)
        gain = table + U * D
        for b in range(D):
            if (U >> b) & 1:
                gain[b] = positive - without[U ^ ((<Py_ssize_t> 1) << b)]
            else:
                gain[b] = -negative


cdef inline Py_ssize_t _count_bits(const uint64_t *mask, Py_ssize_t D) noexcept nogil:
    """The number of bits of ``mask`` below ``D``."""
    cdef Py_ssize_t w, total = 0
    for w in range(D >> 6):
        total += sks_popcount(mask[w])
    if D & 63:
        total += sks_popcount(mask[D >> 6] & (((<uint64_t> 1) << (D & 63)) - 1))
    return total


cdef inline bint _subset(const uint64_t *c, const uint64_t *A, Py_ssize_t words) noexcept nogil:
    cdef Py_ssize_t w
    for w in range(words):
        if c[w] & ~A[w]:
            return False
    return True


cdef inline bint _has(const uint64_t *mask, Py_ssize_t b) noexcept nogil:
    return (mask[b >> 6] >> (b & 63)) & 1


cdef void _mask_gains(
    const _Paths *paths, const uint64_t *kept, Py_ssize_t n_background,
    Py_ssize_t D, const uint64_t *A, double *gain, double *R,
) noexcept nogil:
    """A leaf's gains for one row (see :func:`_tabulate`), from its masks.

    ``kept`` is the leaf's distinct masks and counts (:func:`_sort_and_count`).
    ``R`` is scratch of (D + 2) * (D + 1) doubles: ``R(A, k)``, then per
    player j the counts of masks holding j, then ``R(A \\ {j}, k)``. The
    sums are those of the tables, from the same exact counts.
    """
    cdef Py_ssize_t words = paths.words, z, w, k
    cdef Py_ssize_t width = D + 1
    cdef double *with_player = R + width
    cdef const uint64_t *masks = kept + 1
    cdef const uint64_t *count = masks + n_background * words
    cdef const uint64_t *c
    cdef uint64_t bits
    cdef double weight
    memset(R, 0, (D + 1) * width * sizeof(double))
    for z in range(<Py_ssize_t> kept[0]):
        c = masks + z * words
        if not _subset(c, A, words):
            continue
        weight = <double> count[z]
        k = 0
        for w in range(words):
            k += sks_popcount(c[w])
        R[k] += weight
        for w in range(words):
            bits = c[w]
            while bits:
                with_player[(w * 64 + sks_lowest_bit(bits)) * width + k] += weight
                bits &= bits - 1
    _counted_gains(paths, D, A, gain, R)


cdef void _counted_gains(
    const _Paths *paths, Py_ssize_t D, const uint64_t *A, double *gain, double *R
) noexcept nogil:
    """A leaf's gains for one row from its counts, as :func:`_mask_gains` holds them.

    ``R`` is ``R(A, k)``, then per player j the counts of masks holding j,
    then (D + 1) doubles of scratch for ``R(A \\ {j}, k)``.
    """
    cdef Py_ssize_t width = D + 1, k, b
    cdef const double *with_player = R + width
    cdef double *without = R + (D + 1) * width
    cdef Py_ssize_t n = _count_bits(A, D)
    cdef double positive, negative
    negative = _ranked_sum(paths, R, 0, n, 1, D - n)
    positive = _ranked_sum(paths, R, 1, n, 0, D - n + 1)
    for b in range(D):
        if _has(A, b):
            for k in range(n):
                without[k] = R[k] - with_player[b * width + k]
            gain[b] = positive - _ranked_sum(paths, without, 1, n - 1, 0, D - n + 1)
        else:
            gain[b] = -negative


cdef inline void _add_gains(
    const _Paths *paths, Py_ssize_t tree, Py_ssize_t leaf, const double *gain,
    double *phi,
) noexcept nogil:
    """Add a leaf's gains times its values to one row's ``phi``."""
    cdef Py_ssize_t b, o, D = paths.bit[leaf], n_players = paths.n_players
    cdef const Py_ssize_t *players = paths.players + paths.players_start[leaf]
    cdef const double *value = paths.value + leaf * paths.value_stride
    cdef double v
    phi += paths.tree_output[tree] * n_players
    for o in range(paths.tree_width[tree]):
        v = value[o]
        for b in range(D):
            phi[o * n_players + players[b]] += v * gain[b]


cdef inline void _add_pairs(
    const _Paths *paths, Py_ssize_t tree, Py_ssize_t leaf, const double *gain,
    const double *pair, double *out,
) noexcept nogil:
    """Add a leaf's pairs times its values to one row's matrices, shap's way.

    ``out`` is (n_outputs, n_players, n_players): half the index off the
    diagonal, the main effect (value minus the halves) on it.
    """
    cdef Py_ssize_t j, k, o, pj, pk, D = paths.bit[leaf], n_players = paths.n_players
    cdef const Py_ssize_t *players = paths.players + paths.players_start[leaf]
    cdef const double *value = paths.value + leaf * paths.value_stride
    cdef double *block
    cdef double half, v
    for o in range(paths.tree_width[tree]):
        v = value[o]
        block = out + (paths.tree_output[tree] + o) * n_players * n_players
        for j in range(D):
            pj = players[j]
            block[pj * n_players + pj] += v * gain[j]
            for k in range(j + 1, D):
                pk = players[k]
                half = 0.5 * v * pair[j * D + k]
                block[pj * n_players + pk] += half
                block[pk * n_players + pj] += half
                block[pj * n_players + pj] -= half
                block[pk * n_players + pk] -= half


cdef void _serve_leaf(
    const _Paths *paths, const _Store *store, _Walk *walk, Py_ssize_t tree,
    Py_ssize_t leaf, const uint64_t *masks,
) noexcept nogil:
    """Count the block's failure masks at ``leaf``, or add its rows' values.

    ``masks`` is (words, n): the block's masks at the leaf.
    """
    cdef Py_ssize_t D = paths.bit[leaf], n = walk.n, words = paths.words, r, w
    cdef Py_ssize_t row_size = paths.n_outputs * paths.n_players
    cdef double *table = NULL
    cdef uint64_t *kept = NULL
    cdef uint64_t low = ((<uint64_t> 1) << D) - 1
    cdef double *phi
    if store.tabulated[leaf]:
        table = store.tables + store.offset[leaf] - store.table_base
    else:
        kept = store.masks + store.offset[leaf] - store.mask_base
    if walk.task == _COUNT:
        if table != NULL:
            for r in range(n):
                table[masks[r]] += 1.0
        else:
            kept += 1 + walk.first * words
            for r in range(n):
                for w in range(words):
                    kept[r * words + w] = masks[w * n + r]
        return
    if D == 0:
        return
    if walk.task == _INTERACTIONS:
        row_size *= paths.n_players
    phi = walk.out
    if table != NULL and walk.task == _SHAPLEY:
        for r in range(n):
            _add_gains(paths, tree, leaf, table + (masks[r] & low) * D, phi)
            phi += row_size
        return
    if table != NULL:
        for r in range(n):
            if _counted_pair_terms(paths, table, D, masks[r] & low, walk.gain, walk.R):
                _add_pairs(paths, tree, leaf, walk.gain, walk.R, phi)
            phi += row_size
        return
    for r in range(n):
        for w in range(words):
            walk.row_mask[w] = masks[w * n + r]
        if walk.task == _SHAPLEY:
            _mask_gains(
                paths, kept, store.n_background, D, walk.row_mask, walk.gain, walk.R
            )
            _add_gains(paths, tree, leaf, walk.gain, phi)
        elif _pair_terms(
            paths, kept, store.n_background, D, walk.row_mask, walk.gain, walk.R
        ):
            _add_pairs(paths, tree, leaf, walk.gain, walk.R, phi)
        phi += row_size


cdef inline void _add_pair_terms(
    const _Paths *paths, const uint64_t *c, Py_ssize_t words, double weight,
    Py_ssize_t nb, Py_ssize_t D, double *gain, double *pair,
) noexcept nogil:
    """Add ``weight`` background rows of failure mask ``c`` (⊆ A) to a leaf's terms.

    In closed form: for players j, k outside A, ``B(na + 1, nb - 1)``; j
    outside A and k in c, ``-B(na, nb)``; both in c, ``B(na - 1, nb + 1)``.
    ``pair`` is the scratch of :func:`_pair_terms`: (D, D) pairs above the
    diagonal; per player k the sum of ``B(na, nb)`` over masks holding k; the
    sums of ``B(na + 1, nb)`` and ``B(na + 1, nb - 1)``; c's members.
    """
    cdef Py_ssize_t s = paths.beta_stride, w, j, k, m, na = 0
    cdef const double *beta = paths.beta
    cdef double *with_player = pair + D * D
    cdef double *sums = with_player + D
    cdef Py_ssize_t *members = <Py_ssize_t *> (sums + 2)
    cdef uint64_t bits
    for w in range(words):
        bits = c[w]
        while bits:
            members[na] = w * 64 + sks_lowest_bit(bits)
            na += 1
            bits &= bits - 1
    if nb >= 1:
        sums[0] += weight * beta[(na + 1) * s + nb]
    if nb >= 2:
        sums[1] += weight * beta[(na + 1) * s + nb - 1]
    for m in range(na):
        j = members[m]
        gain[j] += weight * beta[na * s + nb + 1]
        if nb >= 1:
            with_player[j] += weight * beta[na * s + nb]
        for k in range(m + 1, na):
            pair[j * D + members[k]] += weight * beta[(na - 1) * s + nb + 1]


cdef inline void _start_pair_terms(Py_ssize_t D, double *gain, double *pair) noexcept nogil:
    """Zero a leaf's terms (see :func:`_add_pair_terms`)."""
    memset(gain, 0, D * sizeof(double))
    memset(pair, 0, (D * D + D + 2) * sizeof(double))


cdef void _finish_pair_terms(
    Py_ssize_t D, const uint64_t *A, double *gain, double *pair
) noexcept nogil:
    """The terms of the players outside A, from the sums over the masks."""
    cdef Py_ssize_t j, k
    cdef const double *with_player = pair + D * D
    cdef double negative = with_player[D], outside = with_player[D + 1]
    for j in range(D):
        if not _has(A, j):
            gain[j] = -negative
        for k in range(j + 1, D):
            if not _has(A, j) and not _has(A, k):
                pair[j * D + k] = outside
            elif not _has(A, j):
                pair[j * D + k] = -with_player[k]
            elif not _has(A, k):
                pair[j * D + k] = -with_player[j]


cdef bint _pair_terms(
    const _Paths *paths, const uint64_t *kept, Py_ssize_t n_background,
    Py_ssize_t D, const uint64_t *A, double *gain, double *pair,
) noexcept nogil:
    """A leaf's Shapley values and interaction indices per unit of leaf value.

    Summed over the leaf's distinct failure masks ``c ⊆ A`` (``kept``, see
    :func:`_sort_and_count`), in increasing order, each weighted by its
    count. ``pair`` is (D, D), filled above the diagonal, then scratch.
    False if no mask is a subset of A: then every term is zero (not filled).
    """
    cdef Py_ssize_t words = paths.words, z, nb = D - _count_bits(A, D)
    cdef const uint64_t *masks = kept + 1
    cdef const uint64_t *count = masks + n_background * words
    cdef bint found = False
    _start_pair_terms(D, gain, pair)
    for z in range(<Py_ssize_t> kept[0]):
        if _subset(masks + z * words, A, words):
            found = True
            _add_pair_terms(
                paths, masks + z * words, words, <double> count[z], nb, D, gain, pair
            )
    if found:
        _finish_pair_terms(D, A, gain, pair)
    return found


cdef bint _counted_pair_terms(
    const _Paths *paths, const double *counts, Py_ssize_t D, uint64_t A,
    double *gain, double *pair,
) noexcept nogil:
    """:func:`_pair_terms` from the leaf's counts of each of the 2**D masks.

    The subsets c of A in increasing order: the same masks, weights and
    order as the distinct masks give, so the same bits.
    """
    cdef uint64_t c = 0
    cdef Py_ssize_t nb = D - sks_popcount(A)
    cdef bint found = False
    _start_pair_terms(D, gain, pair)
    while True:
        if counts[c] != 0.0:
            found = True
            _add_pair_terms(paths, &c, 1, counts[c], nb, D, gain, pair)
        if c == A:
            break
        c = ((c | ~A) + 1) & A
    if found:
        _finish_pair_terms(D, &A, gain, pair)
    return found


cdef void _sort_and_count(
    uint64_t *kept, Py_ssize_t n, Py_ssize_t words, Py_ssize_t D, uint64_t *scratch
) noexcept nogil:
    """Sort a leaf's ``n`` failure masks; keep the distinct ones with counts.

    ``kept`` holds the number u of distinct masks, then ``n`` masks of
    ``words`` words (the background's, as walked), then ``n`` counts. After:
    the u distinct masks first, in increasing order, and their counts, so
    that a row's sums run over distinct masks, not the whole background.
    A radix sort, a byte of the masks' D bits at a time (lowest first),
    through ``scratch`` of ``n * words`` words: linear in ``n``.
    """
    cdef uint64_t *masks = kept + 1
    cdef uint64_t *count = masks + n * words
    cdef uint64_t *source = masks
    cdef uint64_t *target = scratch
    cdef uint64_t *swap
    cdef Py_ssize_t start[257]
    cdef Py_ssize_t z, p, b, w, shift, distinct = 0
    cdef size_t size = words * sizeof(uint64_t)
    for p in range((D + 7) // 8):
        w = (8 * p) >> 6
        shift = (8 * p) & 63
        memset(start, 0, sizeof(start))
        for z in range(n):
            start[((source[z * words + w] >> shift) & 255) + 1] += 1
        for b in range(256):
            start[b + 1] += start[b]
        for z in range(n):
            b = (source[z * words + w] >> shift) & 255
            memcpy(target + start[b] * words, source + z * words, size)
            start[b] += 1
        swap = source
        source = target
        target = swap
    if source != masks:
        memcpy(masks, source, n * size)
    for z in range(n):
        if distinct and memcmp(masks + z * words, masks + (distinct - 1) * words, size) == 0:
            count[distinct - 1] += 1
        else:
            memmove(masks + distinct * words, masks + z * words, size)
            count[distinct] = 1
            distinct += 1
    kept[0] = distinct


cdef bint _count_tree(
    const _Paths *paths, const _Store *store, char *state, Py_ssize_t block_rows,
    const double *ZT, const float *ZT32, Py_ssize_t tree, double *R, uint64_t *sort,
    Cover *cover, double cover_gain,
) noexcept nogil:
    """Count the background's failure masks at ``tree``'s leaves; tabulate them.

    ``ZT`` is the background by column, ``state`` the thread's scratch for
    blocks of ``block_rows`` rows, ``R`` the ranked zeta transform's and
    ``sort`` the sort's (:func:`_sort_and_count`). The tree's cover counts
    if it pays ``cover_gain`` (see ``_cover.pxd``; no ``cover``: never),
    reading ``ZT32`` (the background as floats, NULL unless exact) where it
    can, else a walk of the background. Returns whether the cover counted.
    """
    cdef _Walk walk
    cdef Py_ssize_t node, n_background = store.n_background
    cdef Py_ssize_t root = paths.roots[tree], end = paths.roots[tree + 1]
    cdef bint covered = cover != NULL and end - root <= COVER_MAX_NODES
    cdef double *counts
    cdef uint64_t *kept
    _layout(&walk, state, paths, block_rows, 0)
    for node in range(root, end):
        counts = NULL
        if paths.left[node] < 0 and store.tabulated[node]:
            counts = store.tables + store.offset[node] - store.table_base
            memset(counts, 0, sizeof(double) << paths.bit[node])
        if covered:
            cover.leaf_counts[node - root] = counts
    covered = covered and cover_count(
        cover, &paths.routing, paths.feature, paths.left, paths.right, paths.bit,
        root, end, ZT, ZT32, n_background, cover_gain,
    )
    if not covered:
        walk.X = ZT
        walk.stride = n_background
        walk.task = _COUNT
        walk.first = 0
        while walk.first < n_background:
            walk.n = min(block_rows, n_background - walk.first)
            _walk_tree(paths, store, &walk, tree)
            walk.first += block_rows
    for node in range(paths.roots[tree], paths.roots[tree + 1]):
        if paths.left[node] >= 0:
            continue
        if not store.tabulated[node]:
            kept = store.masks + store.offset[node] - store.mask_base
            _sort_and_count(kept, n_background, paths.words, paths.bit[node], sort)
            # The background rows that reach the leaf fail none of its splits:
            # the first distinct mask, if it is empty.
            store.reach[node] = 0
            if kept[0] and _count_bits(kept + 1, paths.bit[node]) == 0:
                store.reach[node] = kept[1 + n_background * paths.words]
            continue
        store.reach[node] = store.tables[store.offset[node] - store.table_base]
        if store.gains:
            _tabulate(
                paths, store.tables + store.offset[node] - store.table_base,
                paths.bit[node], R,
            )
    return covered


cdef void _serve_row_covers(
    const _Paths *paths, const _Store *store, _Walk *walk, Py_ssize_t tree
) noexcept nogil:
    """Add the block's values at ``tree`` from its row covers' tables."""
    cdef Py_ssize_t g, r, o, j, n_players, width = paths.tree_width[tree]
    cdef Py_ssize_t row_size = paths.n_outputs * paths.n_players
    cdef const Py_ssize_t *players
    cdef const double *table
    cdef const double *entry
    cdef double *phi
    for g in range(store.rc_tree_start[tree], store.rc_tree_start[tree + 1]):
        block_keys(
            walk.keys, walk.went_left, store.rc_keys + g * COVER_BITS,
            store.rc_n_keys[g], &paths.routing, paths.feature, walk.X, NULL,
            walk.stride, walk.first, walk.n,
        )
        n_players = store.rc_n_players[g]
        players = store.rc_players + g * COVER_BITS
        table = store.row_tables + store.rc_offset[g] - store.row_table_base
        phi = walk.out + paths.tree_output[tree] * paths.n_players
        for r in range(walk.n):
            entry = table + walk.keys[r] * width * n_players
            for o in range(width):
                for j in range(n_players):
                    phi[o * paths.n_players + players[j]] += entry[o * n_players + j]
            phi += row_size


cdef void _fill_row_tables(
    const _Paths *paths, const _Store *store, Cover *cover, Py_ssize_t tree
) noexcept nogil:
    """Fill ``tree``'s row covers' tables from its leaves' gains."""
    cdef Py_ssize_t root = paths.roots[tree], n_nodes = paths.roots[tree + 1] - root
    cdef Py_ssize_t first = store.rc_tree_start[tree], node, c, g, unused
    for node in range(root, root + n_nodes):
        if paths.left[node] < 0:
            cover.leaf_counts[node - root] = (
                store.tables + store.offset[node] - store.table_base
            )
    # The count nodes Paths.row_covers found: the same plan, the same order.
    cover_plan(
        cover, paths.left, paths.right, root, n_nodes, store.rc_key_bits, &unused
    )
    for c in range(store.rc_tree_start[tree + 1] - first):
        g = first + c
        fill_row_table(
            cover, c, n_nodes, root, paths.left, paths.bit, paths.players_start,
            paths.players, paths.value, paths.value_stride, paths.tree_width[tree],
            store.rc_players + g * COVER_BITS, store.rc_n_players[g],
            store.row_tables + store.rc_offset[g] - store.row_table_base,
        )


cdef void _explain_block(
    const _Paths *paths, const _Store *store, char *state, Py_ssize_t block_rows,
    const double *XT, Py_ssize_t n_samples, Py_ssize_t first, _Task task,
    double *out, Py_ssize_t tree_begin, Py_ssize_t tree_end,
) noexcept nogil:
    """Add the values of the block of rows from ``first`` over the trees to ``out``.

    ``out`` holds the block's rows' values (from its first row's);
    ``state`` is the thread's scratch for blocks of ``block_rows`` rows.
    """
    cdef _Walk walk
    cdef Py_ssize_t tree
    _layout(&walk, state, paths, block_rows, 0)
    walk.X = XT
    walk.stride = n_samples
    walk.task = task
    walk.out = out
    walk.first = first
    walk.n = min(block_rows, n_samples - first)
    for tree in range(tree_begin, tree_end):
        if (
            task == _SHAPLEY and store.rc_tree_start != NULL
            and store.rc_tree_start[tree + 1] > store.rc_tree_start[tree]
        ):
            _serve_row_covers(paths, store, &walk, tree)
        else:
            _walk_tree(paths, store, &walk, tree)


cdef void _explain_chunks(
    const _Paths *paths, const _Store *store, char *state, Py_ssize_t block_rows,
    Py_ssize_t row_values, const double *XT, Py_ssize_t n_samples,
    Py_ssize_t first, _Task task, double *out, const Py_ssize_t *chunk_start,
    Py_ssize_t n_chunks,
) noexcept nogil:
    """Add the values of the block of rows from ``first`` to ``out``, chunk after chunk.

    The trees of chunk ``c`` are ``chunk_start[c]`` to ``chunk_start[c +
    1]``. The first chunk's values are added to ``out`` directly; each
    other chunk's are summed in the scratch's ``partial`` (``row_values``
    per row) and then added: the same sums, in the same order, as when
    chunks run on different threads (:meth:`Paths.explain`).
    """
    cdef _Walk walk
    cdef Py_ssize_t c
    cdef Py_ssize_t size = min(block_rows, n_samples - first) * row_values
    _layout(&walk, state, paths, block_rows, row_values)
    _explain_block(
        paths, store, state, block_rows, XT, n_samples, first, task, out,
        chunk_start[0], chunk_start[1],
    )
    for c in range(1, n_chunks):
        memset(walk.partial, 0, size * sizeof(double))
        _explain_block(
            paths, store, state, block_rows, XT, n_samples, first, task,
            walk.partial, chunk_start[c], chunk_start[c + 1],
        )
        lanes_add(out, walk.partial, size)


cdef struct _Pairs:
    # One thread's scratch for the pair walk (_pair_tree) of one row. Sets of
    # background rows are bitsets of `words` 64-bit words; per level of the
    # walk, the split being walked and the set of background rows that
    # reach it.
    Py_ssize_t words                # words of a set of background rows
    const uint64_t *directions      # per node, the rows going left (words,)
    uint64_t *reach                 # (levels + 1, words): the rows reaching it
    uint64_t *left                  # (levels, words): those of them going left
    uint64_t *saved                 # (levels, words): its player's failures
                                    # before the side being walked
    uint64_t *failed                # (max_bits, words): per player of the
                                    # path, the rows that failed one of its
                                    # splits (their masks c, by player)
    uint64_t *missed                # (levels + 1,): the players whose splits
                                    # the row fails on the path (not in A)
    Py_ssize_t *nodes               # (levels,)
    unsigned char *side             # (levels,): the child being walked
    unsigned char *x_left           # (levels,): the row's side
    unsigned char *changed          # (levels,): the side changed `failed`
    double *R                       # _counted_gains's counts, (D + 2, D + 1)
    double *gain                    # (max_bits + 1,)


cdef Py_ssize_t _pairs_layout(
    _Pairs *pairs, char *state, const _Paths *paths, Py_ssize_t n_background
) noexcept nogil:
    """Point ``pairs``'s buffers into ``state``; return its bytes (see _layout)."""
    cdef Py_ssize_t used = 0, levels = paths.levels, D = paths.max_bits
    cdef Py_ssize_t words = (n_background + 63) // 64
    pairs.words = words
    pairs.reach = <uint64_t *> (state + used)
    used += (levels + 1) * words * 8
    pairs.left = <uint64_t *> (state + used)
    used += levels * words * 8
    pairs.saved = <uint64_t *> (state + used)
    used += levels * words * 8
    pairs.failed = <uint64_t *> (state + used)
    used += max(D, 1) * words * 8
    pairs.missed = <uint64_t *> (state + used)
    used += (levels + 1) * 8
    pairs.nodes = <Py_ssize_t *> (state + used)
    used += levels * 8
    pairs.side = <unsigned char *> (state + used)
    used += (levels + 7) // 8 * 8
    pairs.x_left = <unsigned char *> (state + used)
    used += (levels + 7) // 8 * 8
    pairs.changed = <unsigned char *> (state + used)
    used += (levels + 7) // 8 * 8
    pairs.R = <double *> (state + used)
    used += (D + 2) * (D + 1) * 8
    pairs.gain = <double *> (state + used)
    used += (D + 1) * 8
    return used


cdef inline void _pair_route(
    const _Paths *paths, _Pairs *pairs, Py_ssize_t depth, const double *x
) noexcept nogil:
    """Route the row and the background rows reaching the level's split."""
    cdef Py_ssize_t node = pairs.nodes[depth], words = pairs.words, w
    cdef const uint64_t *reach = pairs.reach + depth * words
    cdef const uint64_t *went_left = pairs.directions + node * words
    cdef uint64_t *left = pairs.left + depth * words
    pairs.x_left[depth] = goes_left(&paths.routing, node, x[paths.feature[node]])
    for w in range(words):
        left[w] = reach[w] & went_left[w]


cdef inline bint _pair_enter(
    const _Paths *paths, _Pairs *pairs, Py_ssize_t depth, unsigned char side
) noexcept nogil:
    """Set the next level for the child on ``side``; False if no row reaches it.

    Toward the row's side, the background rows going the other way fail the
    split's player j, unless the row already failed j (then they drop out);
    toward the other side the row fails j, and only the background rows
    going that way that have not failed j go on.
    """
    cdef Py_ssize_t node = pairs.nodes[depth], words = pairs.words, w
    cdef Py_ssize_t b = paths.bit[node]
    cdef uint64_t one = (<uint64_t> 1) << b, missed = pairs.missed[depth]
    cdef const uint64_t *reach = pairs.reach + depth * words
    cdef const uint64_t *left = pairs.left + depth * words
    cdef uint64_t *child = pairs.reach + (depth + 1) * words
    cdef uint64_t *failed = pairs.failed + b * words
    cdef uint64_t *saved = pairs.saved + depth * words
    cdef uint64_t flip = 0 if side == 0 else ~(<uint64_t> 0)  # this side's rows
    cdef uint64_t any_row = 0
    pairs.side[depth] = side
    pairs.changed[depth] = False
    if (side == 0) == pairs.x_left[depth]:
        pairs.missed[depth + 1] = missed
        if missed & one:
            for w in range(words):
                child[w] = reach[w] & (left[w] ^ flip)
                any_row |= child[w]
            return any_row != 0
        for w in range(words):
            child[w] = reach[w]
            saved[w] = failed[w]
            failed[w] |= reach[w] & ~(left[w] ^ flip)
        pairs.changed[depth] = True
        return True  # the level's rows, never none
    pairs.missed[depth + 1] = missed | one
    for w in range(words):
        child[w] = reach[w] & (left[w] ^ flip) & ~failed[w]
        any_row |= child[w]
    return any_row != 0


cdef inline void _pair_leave(
    const _Paths *paths, _Pairs *pairs, Py_ssize_t depth
) noexcept nogil:
    """Undo what entering the level's side did to the players' failures."""
    cdef Py_ssize_t words = pairs.words
    if pairs.changed[depth]:
        memcpy(
            pairs.failed + paths.bit[pairs.nodes[depth]] * words,
            pairs.saved + depth * words, words * sizeof(uint64_t),
        )
        pairs.changed[depth] = False


cdef void _pair_leaf(
    const _Paths *paths, _Pairs *pairs, Py_ssize_t depth, Py_ssize_t tree,
    Py_ssize_t leaf, double *phi,
) noexcept nogil:
    """Count the background rows reaching ``leaf`` by their masks; add its values.

    ``R(A, k)`` and the counts with each player, exact integers: those the
    tables and masks of :meth:`Paths.explain` hold for the row's mask ``A``,
    whose sums :func:`_counted_gains` makes in their order.
    """
    cdef Py_ssize_t D = paths.bit[leaf], width = D + 1, words = pairs.words
    cdef Py_ssize_t w, z, j, k
    cdef const uint64_t *reach = pairs.reach + depth * words
    cdef uint64_t bits, c, A = ~pairs.missed[depth]
    cdef double *R = pairs.R
    if D == 0:
        return
    memset(R, 0, (D + 1) * width * sizeof(double))
    for w in range(words):
        bits = reach[w]
        while bits:
            z = sks_lowest_bit(bits)
            c = 0
            for j in range(D):
                c |= ((pairs.failed[j * words + w] >> z) & 1) << j
            k = sks_popcount(c)
            R[k] += 1.0
            while c:
                R[(1 + sks_lowest_bit(c)) * width + k] += 1.0
                c &= c - 1
            bits &= bits - 1
    _counted_gains(paths, D, &A, pairs.gain, R)
    _add_gains(paths, tree, leaf, pairs.gain, phi)


cdef void _pair_tree(
    const _Paths *paths, _Pairs *pairs, const double *x, Py_ssize_t n_background,
    Py_ssize_t tree, double *phi,
) noexcept nogil:
    """Add one row's values over ``tree`` to ``phi``, with the whole background.

    A background row ``z`` reaches a leaf with the row ``x`` if, at each
    split on the path, ``x`` or ``z`` goes the path's way, and no player is
    failed by both: its failure mask ``c`` (the players whose splits ``z``
    fails) lies in ``x``'s success mask ``A``. Those are the background rows
    with a value at the leaf. The walk carries the set of them down the
    tree, depth first, left before right, as :func:`_walk_tree` serves the
    leaves, and at each leaf counts them by ``|c|``, with each player of
    ``c`` apart (:func:`_pair_leaf`): the values are those of the tables, to
    the last bit, with no tables to build. Subtrees that no background row
    reaches are skipped (their gains are zero and add nothing). One-word
    masks only (paths of at most 64 players).
    """
    cdef Py_ssize_t depth = 0, node = paths.roots[tree], words = pairs.words, w
    for w in range(words):
        pairs.reach[w] = ~(<uint64_t> 0)
    if n_background % 64:
        pairs.reach[words - 1] = ((<uint64_t> 1) << (n_background % 64)) - 1
    pairs.missed[0] = 0
    while True:
        if paths.left[node] >= 0:
            pairs.nodes[depth] = node
            _pair_route(paths, pairs, depth, x)
            if _pair_enter(paths, pairs, depth, 0):
                node = paths.left[node]
                depth += 1
                continue
            if _pair_enter(paths, pairs, depth, 1):
                node = paths.right[node]
                depth += 1
                continue
        else:
            _pair_leaf(paths, pairs, depth, tree, node, phi)
        # Up to the next side to walk.
        while True:
            if depth == 0:
                return
            depth -= 1
            _pair_leave(paths, pairs, depth)
            if pairs.side[depth] == 0 and _pair_enter(paths, pairs, depth, 1):
                node = paths.right[pairs.nodes[depth]]
                depth += 1
                break


cdef void _pair_trees(
    const _Paths *paths, char *state, const uint64_t *directions, const double *x,
    Py_ssize_t n_background, Py_ssize_t tree_begin, Py_ssize_t tree_end,
    double *phi,
) noexcept nogil:
    """Add one row's values over the trees to ``phi`` (:func:`_pair_tree`).

    ``state`` is the thread's scratch; the walks leave every player's
    failures empty, as they found them (zero when allocated).
    """
    cdef _Pairs pairs
    cdef Py_ssize_t tree
    _pairs_layout(&pairs, state, paths, n_background)
    pairs.directions = directions
    for tree in range(tree_begin, tree_end):
        _pair_tree(paths, &pairs, x, n_background, tree, phi)


cdef void _explain_pairs(
    const _Paths *paths, const double *X, Py_ssize_t n_samples,
    Py_ssize_t n_features, const uint64_t *directions, Py_ssize_t n_background,
    const Py_ssize_t[::1] chunk_start, double *values, double *partials,
    Py_ssize_t row_values, int n_threads, int[::1] out_of_memory,
) noexcept:
    """:meth:`Paths.explain_pairs`: (row, chunk) items, shared out statically.

    Chunk ``c > 0``'s sums go to ``partials`` and are added in chunk order
    once all are done, as :func:`_explain_items` adds them.
    """
    cdef _Pairs sizing
    cdef char *state = NULL
    cdef Py_ssize_t item, row, c, n_chunks = chunk_start.shape[0] - 1
    cdef Py_ssize_t n_items = n_samples * n_chunks
    cdef Py_ssize_t scratch = _pairs_layout(&sizing, NULL, paths, n_background)
    with nogil, parallel(num_threads=min(n_threads, n_items)):
        state = <char *> calloc(scratch, 1)
        for item in prange(n_items, schedule="static"):
            if state == NULL:
                out_of_memory[0] = 1
                continue
            # Assigned here: OpenMP keeps them private to the thread.
            row = item // n_chunks
            c = item % n_chunks
            _pair_trees(
                paths, state, directions, X + row * n_features, n_background,
                chunk_start[c], chunk_start[c + 1],
                item_values(row, c, n_samples, row_values, values, partials),
            )
        free(state)
    with nogil:
        add_chunk_sums(values, partials, n_samples, n_chunks, row_values)


cdef class Paths:
    """A TreeEnsemble's paths, ready for interventional values.

    Parameters
    ----------
    ensemble : TreeEnsemble
        The parsed model.
    roots : ndarray of intp
        The trees' roots, then the number of nodes.
    bit, players_start, players : ndarray of intp
        From ``_tree_core.path_bits`` (per node) and each leaf's players by bit.
    beta : ndarray of shape (max_bits + 2, max_bits + 2)
        ``B(a, b)`` for ``1 <= a, b <= max_bits + 1``.
    n_players, words, max_depth, max_bits : int
        The players; the 64-bit words of a mask; the depth of the deepest
        tree; the most distinct players on a path.
    """

    cdef const Py_ssize_t[::1] feature, left, right, roots, tree_output, tree_width
    cdef const Py_ssize_t[::1] bit, players_start, players
    cdef const double[::1] threshold
    cdef const double[:, ::1] value, beta
    cdef const unsigned char[::1] missing_left, is_categorical
    cdef const unsigned int[:, ::1] bitset
    cdef _Paths paths

    def __init__(
        self, ensemble, roots, bit, players_start, players, beta,
        Py_ssize_t n_players, Py_ssize_t words, Py_ssize_t max_depth,
        Py_ssize_t max_bits,
    ):
        self.feature = ensemble.feature
        self.left = ensemble.left
        self.right = ensemble.right
        self.roots = roots
        self.tree_output = ensemble.tree_output
        self.tree_width = ensemble.tree_width
        self.threshold = ensemble.threshold
        self.value = ensemble.value
        self.missing_left = ensemble.missing_left
        self.is_categorical = ensemble.is_categorical
        self.bitset = ensemble.category_bitset
        self.bit = bit
        self.players_start = players_start
        self.players = players
        self.beta = beta
        self.paths.routing.threshold = &self.threshold[0]
        self.paths.routing.missing_left = &self.missing_left[0]
        self.paths.routing.is_categorical = &self.is_categorical[0]
        self.paths.routing.bitset = &self.bitset[0, 0]
        self.paths.routing.zero_as_missing = ZERO_AS_MISSING
        self.paths.feature = &self.feature[0]
        self.paths.left = &self.left[0]
        self.paths.right = &self.right[0]
        self.paths.value = &self.value[0, 0]
        self.paths.value_stride = self.value.shape[1]
        self.paths.roots = &self.roots[0]
        self.paths.tree_output = &self.tree_output[0]
        self.paths.tree_width = &self.tree_width[0]
        self.paths.n_outputs = ensemble.n_outputs
        self.paths.n_players = n_players
        self.paths.bit = &self.bit[0]
        self.paths.players_start = &self.players_start[0]
        self.paths.players = &self.players[0]
        self.paths.beta = &self.beta[0, 0]
        self.paths.beta_stride = self.beta.shape[1]
        self.paths.words = words
        self.paths.levels = max_depth + 1
        self.paths.max_bits = max_bits

    def row_covers(self, Py_ssize_t key_bits, const unsigned char[::1] tabulated):
        """The trees' row covers (see ``_cover.pxd``), keys of ``key_bits`` sides at most.

        For each tree a cover takes whose leaves all keep tables. Returns
        ``(key_bits, tree_start, n_keys, keys, n_players, players, sizes)``:
        per tree, its first count node (then their number); per count node,
        its key's sides and nodes (``COVER_BITS`` a row), its players (as
        many) and its table's doubles.
        """
        cdef const _Paths *paths = &self.paths
        cdef Py_ssize_t n_trees = self.roots.shape[0] - 1, n_nodes_all = self.left.shape[0]
        cdef Py_ssize_t tree, root, n_nodes, node, c, k, found, unused, total = 0
        cdef unsigned char[::1] state = np.empty(
            sizeof(Cover) + cover_bytes(), dtype=np.uint8
        )
        cdef Cover *cover = <Cover *> &state[0]
        tree_start = np.zeros(n_trees + 1, dtype=np.intp)
        n_keys = np.zeros(n_nodes_all, dtype=np.intp)
        keys = np.zeros((n_nodes_all, COVER_BITS), dtype=np.intp)
        n_players = np.zeros(n_nodes_all, dtype=np.intp)
        players = np.zeros((n_nodes_all, COVER_BITS), dtype=np.intp)
        sizes = np.zeros(n_nodes_all, dtype=np.intp)
        cdef Py_ssize_t[::1] tree_start_view = tree_start, n_keys_view = n_keys
        cdef Py_ssize_t[::1] n_players_view = n_players, sizes_view = sizes
        cdef Py_ssize_t[:, ::1] keys_view = keys, players_view = players
        if tabulated.shape[0] != n_nodes_all:
            raise ValueError("tabulated must have one value per node.")
        cover_layout(cover, <char *> &state[0] + sizeof(Cover))
        key_bits = min(key_bits, <Py_ssize_t> COVER_BITS)
        for tree in range(n_trees):
            tree_start_view[tree] = total
            root = paths.roots[tree]
            n_nodes = paths.roots[tree + 1] - root
            if n_nodes > COVER_MAX_NODES or key_bits < 0:
                continue
            for node in range(root, root + n_nodes):
                if paths.left[node] < 0 and not tabulated[node]:
                    break
            else:
                found = cover_plan(
                    cover, paths.left, paths.right, root, n_nodes, key_bits, &unused
                )
                for c in range(max(found, 0)):
                    n_keys_view[total] = cover.n_keys[c]
                    for k in range(cover.n_keys[c]):
                        keys_view[total, k] = root + cover.key_nodes[c * COVER_BITS + k]
                    n_players_view[total] = cover_players(
                        cover, c, n_nodes, paths.left, paths.bit, paths.players_start,
                        paths.players, root, &players_view[total, 0],
                    )
                    sizes_view[total] = (
                        n_players_view[total] * paths.tree_width[tree]
                    ) << cover.n_keys[c]
                    total += 1
        tree_start_view[n_trees] = total
        return (
            key_bits, tree_start, n_keys[:total], keys[:total], n_players[:total],
            players[:total], sizes[:total],
        )

    @staticmethod
    def cover_scratch_bytes():
        """Bytes of the scratch one building thread counts covers in."""
        return sizeof(Cover) + cover_bytes()

    def scratch_bytes(self, Py_ssize_t block_rows, Py_ssize_t row_values):
        """Bytes of scratch one thread allocates for blocks of ``block_rows``.

        With ``row_values`` doubles per row for a chunk's sums (0: none).
        """
        cdef _Walk walk
        return _layout(&walk, NULL, &self.paths, block_rows, row_values)

    def build(
        self, Py_ssize_t tree_begin, Py_ssize_t tree_end, const double[:, ::1] ZT,
        const Py_ssize_t[::1] offset, const unsigned char[::1] tabulated,
        double[::1] tables, uint64_t[::1] masks, Py_ssize_t table_base,
        Py_ssize_t mask_base, Py_ssize_t table_bits, bint gains,
        Py_ssize_t block_rows, double cover_gain, const float[:, ::1] ZT32,
        double[::1] reach, tuple row_covers, double[::1] row_tables,
        Py_ssize_t row_table_base, int n_threads, int[::1] out_of_memory,
    ):
        """Fill the trees' leaves' tables or masks.

        ``ZT`` is the validated background, transposed (n_features,
        n_background); ``table_bits`` the largest D of a tabulated leaf,
        whose counts become its gains if ``gains`` (else they stay counts).
        A tree is counted by its cover where that saves ``cover_gain`` times
        its cost (negative: never; see ``_cover.pxd``), reading ``ZT32``
        (:func:`float32_copy`, or None), else by walking the background;
        returns the number of trees counted by their covers. One thread per
        tree: the values do not depend on the threads, nor on which counted.
        ``reach`` (per node) gets the background rows that reach each of
        the trees' leaves. With ``gains``,
        the ``row_covers`` (:meth:`row_covers`'s, with each count node's
        offset for its sizes; or empty) get their tables in ``row_tables``
        (from offset ``row_table_base``).
        """
        cdef _Store store = _store(
            offset, tabulated, tables, masks, table_base, mask_base, ZT.shape[1],
            gains,
        )
        cdef const _Paths *paths = &self.paths
        cdef _Walk walk
        cdef char *state = NULL
        cdef double *R = NULL
        cdef uint64_t *sort = NULL
        cdef char *cover_state = NULL
        cdef const float *ZT32_data = NULL
        cdef Py_ssize_t tree, n_background = ZT.shape[1], covered = 0
        cdef bint needs_cover
        cdef Py_ssize_t scratch = _layout(&walk, NULL, paths, block_rows, 0)
        cdef Py_ssize_t zeta = (table_bits + 2) << table_bits if table_bits >= 0 else 0
        if reach.shape[0] != self.left.shape[0]:
            raise ValueError("reach must have one value per node.")
        store.reach = &reach[0]
        _use_row_covers(&store, row_covers, row_tables, row_table_base)
        needs_cover = cover_gain >= 0 or store.rc_tree_start != NULL
        if n_background == 0:
            return 0
        if ZT32 is not None:
            if ZT32.shape[0] != ZT.shape[0] or ZT32.shape[1] != n_background:
                raise ValueError("ZT32 must have ZT's shape.")
            ZT32_data = &ZT32[0, 0]
        with nogil, parallel(num_threads=n_threads):
            state = <char *> malloc(scratch)
            R = <double *> malloc((zeta + 1) * sizeof(double))
            sort = <uint64_t *> malloc(n_background * paths.words * sizeof(uint64_t))
            if needs_cover:  # the Cover, then its buffers
                cover_state = <char *> malloc(sizeof(Cover) + cover_bytes())
                if cover_state != NULL:
                    cover_layout(<Cover *> cover_state, cover_state + sizeof(Cover))
            for tree in prange(tree_begin, tree_end, schedule="dynamic"):
                if state == NULL or R == NULL or sort == NULL or (
                    needs_cover and cover_state == NULL
                ):
                    out_of_memory[0] = 1
                    continue
                covered += _count_tree(
                    paths, &store, state, block_rows, &ZT[0, 0], ZT32_data, tree, R,
                    sort, <Cover *> cover_state if cover_gain >= 0 else NULL, cover_gain,
                )
                if (
                    gains and store.rc_tree_start != NULL
                    and store.rc_tree_start[tree + 1] > store.rc_tree_start[tree]
                ):
                    _fill_row_tables(paths, &store, <Cover *> cover_state, tree)
            free(cover_state)
            free(state)
            free(R)
            free(sort)
        return covered

    def route_background(
        self, const double[:, ::1] ZT, uint64_t[:, ::1] directions, int n_threads
    ):
        """Fill ``directions[node]`` with the background rows going left there.

        ``ZT`` is the validated background, transposed (n_features,
        n_background); ``directions`` has shape (n_nodes, (n_background +
        63) // 64), bit ``z % 64`` of word ``z // 64`` for row ``z``; a
        leaf's words are zero. Read by :meth:`explain_pairs`.
        """
        cdef const _Paths *paths = &self.paths
        cdef Py_ssize_t n_nodes = self.left.shape[0], n_background = ZT.shape[1]
        cdef Py_ssize_t node, z
        cdef const double *column
        if (
            directions.shape[0] != n_nodes
            or directions.shape[1] != (n_background + 63) // 64
        ):
            raise ValueError("directions must have shape (n_nodes, words).")
        if n_background == 0:
            return
        with nogil:
            for node in prange(n_nodes, num_threads=n_threads, schedule="static"):
                memset(&directions[node, 0], 0, directions.shape[1] * 8)
                if paths.left[node] < 0:
                    continue
                column = &ZT[0, 0] + paths.feature[node] * n_background
                for z in range(n_background):
                    if goes_left(&paths.routing, node, column[z]):
                        directions[node, z >> 6] |= (<uint64_t> 1) << (z & 63)

    def explain_pairs(
        self, const double[:, ::1] X, const uint64_t[:, ::1] directions,
        Py_ssize_t n_background, const Py_ssize_t[::1] chunk_start, out, partials,
        int n_threads, int[::1] out_of_memory,
    ):
        """Add each row's values, times ``n_background``, to ``out`` by pair walks.

        The values of :meth:`explain`, bit for bit, without its tables or
        masks: each row of ``X`` (n_samples, n_features) walks each tree
        with the set of background rows that reach each node with it (see
        :func:`_pair_tree`), routed by ``directions`` (from
        :meth:`route_background`). Paths of at most 64 players only.
        ``out`` has shape (n_samples, n_outputs, n_players); ``partials``
        (zero, (n_chunks - 1, n_samples, row_values)) takes the sums of
        chunk ``c > 0``.
        """
        cdef double[::1] flat = out.reshape(-1)
        cdef double[::1] sums = partials.reshape(-1)
        cdef Py_ssize_t n_samples = X.shape[0], n_chunks = chunk_start.shape[0] - 1
        cdef Py_ssize_t row_values = flat.shape[0] // n_samples if n_samples else 0
        if self.paths.max_bits > 64:
            raise ValueError("Pair walks take paths of at most 64 players.")
        if (
            directions.shape[0] != self.left.shape[0]
            or directions.shape[1] != (n_background + 63) // 64
        ):
            raise ValueError("directions must have shape (n_nodes, words).")
        if n_samples == 0 or n_background == 0:
            return
        if sums.shape[0] != (n_chunks - 1) * n_samples * row_values:
            raise ValueError("partials must hold the sums of every chunk but the first.")
        _explain_pairs(
            &self.paths, &X[0, 0], n_samples, X.shape[1], &directions[0, 0],
            n_background, chunk_start, &flat[0], &sums[0] if sums.shape[0] else NULL,
            row_values, n_threads, out_of_memory,
        )

    def explain(
        self, const double[:, ::1] XT, const Py_ssize_t[::1] chunk_start,
        const Py_ssize_t[::1] offset, const unsigned char[::1] tabulated,
        double[::1] tables, uint64_t[::1] masks, Py_ssize_t table_base,
        Py_ssize_t mask_base, Py_ssize_t n_background, out, bint interactions,
        Py_ssize_t block_rows, partials, tuple row_covers, double[::1] row_tables,
        Py_ssize_t row_table_base, int n_threads, int[::1] out_of_memory,
    ):
        """Add each row's values over the trees, times ``n_background``, to ``out``.

        ``XT`` is the validated rows, transposed (n_features, n_samples);
        the trees are in chunks, chunk ``c`` from ``chunk_start[c]`` to
        ``chunk_start[c + 1]`` (excluded). ``out`` has shape (n_samples,
        n_outputs, n_players) for Shapley values, or (n_samples, n_outputs,
        n_players, n_players) for ``interactions`` (tabulated leaves keeping
        counts). Rows are in blocks of ``block_rows``. A tree with row covers
        (see :meth:`build`; Shapley values only) serves the rows from their
        tables, the others walk it.

        Without ``partials`` (None), one thread per block walks every chunk
        (:func:`_explain_chunks`). With ``partials`` (zero, of shape
        (n_chunks - 1, n_samples, row_values)), for fewer blocks than
        threads, the threads share the (block, chunk) items: chunk ``c > 0``'s sums
        go to ``partials[c - 1]`` and are added to ``out`` in chunk order
        once all are done. Either way each value is the same sum in the same
        order: the values do not depend on the threads or the blocks.
        """
        cdef _Store store = _store(
            offset, tabulated, tables, masks, table_base, mask_base, n_background,
            not interactions,
        )
        cdef const _Paths *paths = &self.paths
        cdef double[::1] flat = out.reshape(-1)
        cdef double *values = &flat[0] if flat.shape[0] else NULL
        cdef double[::1] sums
        cdef _Walk walk
        cdef char *state = NULL
        cdef Py_ssize_t b, n_samples = XT.shape[1]
        cdef Py_ssize_t n_chunks = chunk_start.shape[0] - 1
        cdef Py_ssize_t n_blocks = (n_samples + block_rows - 1) // block_rows
        cdef Py_ssize_t row_values = flat.shape[0] // n_samples if n_samples else 0
        cdef Py_ssize_t scratch
        cdef _Task task = _INTERACTIONS if interactions else _SHAPLEY
        if not interactions:
            _use_row_covers(&store, row_covers, row_tables, row_table_base)
        if n_samples == 0:
            return
        if partials is None:
            scratch = _layout(
                &walk, NULL, paths, block_rows, row_values if n_chunks > 1 else 0
            )
            # No more threads than blocks (see _tree_core.Forest.shapley).
            with nogil, parallel(num_threads=min(n_threads, n_blocks)):
                state = <char *> malloc(scratch)
                for b in prange(n_blocks, schedule="dynamic"):
                    if state == NULL:
                        out_of_memory[0] = 1
                        continue
                    _explain_chunks(
                        paths, &store, state, block_rows, row_values, &XT[0, 0],
                        n_samples, b * block_rows, task,
                        values + b * block_rows * row_values, &chunk_start[0],
                        n_chunks,
                    )
                free(state)
            return
        sums = partials.reshape(-1)
        if sums.shape[0] != (n_chunks - 1) * n_samples * row_values:
            raise ValueError("partials must hold the sums of every chunk but the first.")
        _explain_items(
            paths, &store, &XT[0, 0], n_samples, chunk_start, block_rows, task,
            values, &sums[0] if sums.shape[0] else NULL, row_values, n_threads,
            out_of_memory,
        )


cdef void _explain_items(
    const _Paths *paths, const _Store *store, const double *XT,
    Py_ssize_t n_samples, const Py_ssize_t[::1] chunk_start, Py_ssize_t block_rows,
    _Task task, double *values, double *partials, Py_ssize_t row_values,
    int n_threads, int[::1] out_of_memory,
) noexcept:
    """:meth:`Paths.explain` for fewer blocks than threads: (block, chunk) items.

    The (block, chunk) items are shared out statically, so that a thread
    finds its chunks' tables in its cache at the next call (one row of a
    100-tree GradientBoosting on 2 threads: 0.089 -> 0.069 ms); chunk
    ``c > 0``'s sums go to ``partials`` (zero, (n_chunks - 1,
    n_samples, row_values)) and are added to ``values`` in chunk order once
    all are done: the sums of :func:`_explain_chunks`.
    """
    cdef _Walk walk
    cdef char *state = NULL
    cdef double *target
    cdef Py_ssize_t item, first, c, n_chunks = chunk_start.shape[0] - 1
    cdef Py_ssize_t n_items = (n_samples + block_rows - 1) // block_rows * n_chunks
    cdef Py_ssize_t scratch = _layout(&walk, NULL, paths, block_rows, 0)
    with nogil, parallel(num_threads=min(n_threads, n_items)):
        state = <char *> malloc(scratch)
        for item in prange(n_items, schedule="static"):
            if state == NULL:
                out_of_memory[0] = 1
                continue
            # Assigned here: OpenMP keeps them private to the thread.
            first = item // n_chunks * block_rows
            c = item % n_chunks
            target = item_values(first, c, n_samples, row_values, values, partials)
            _explain_block(
                paths, store, state, block_rows, XT, n_samples, first, task, target,
                chunk_start[c], chunk_start[c + 1],
            )
        free(state)
    with nogil:
        add_chunk_sums(values, partials, n_samples, n_chunks, row_values)


def float32_copy(const double[:, ::1] ZT):
    """``ZT`` as float32, if that is exact for every value (NaN too), else None.

    One pass; the background's cover counts read it (see ``Paths.build``).
    """
    cdef Py_ssize_t n = ZT.shape[0] * ZT.shape[1]
    cdef float[:, ::1] out
    cdef int exact = 1
    copy = np.empty((ZT.shape[0], ZT.shape[1]), dtype=np.float32)
    out = copy
    if n:
        with nogil:
            exact = float32_copy_exact(&ZT[0, 0], &out[0, 0], n)
    return copy if exact else None


cdef _Store _store(
    const Py_ssize_t[::1] offset, const unsigned char[::1] tabulated,
    double[::1] tables, uint64_t[::1] masks, Py_ssize_t table_base,
    Py_ssize_t mask_base, Py_ssize_t n_background, bint gains,
):
    """A batch's storage, as the kernels read it."""
    cdef _Store store
    store.offset = &offset[0]
    store.tabulated = &tabulated[0]
    store.tables = &tables[0] if tables.shape[0] else NULL
    store.masks = &masks[0] if masks.shape[0] else NULL
    store.table_base = table_base
    store.mask_base = mask_base
    store.n_background = n_background
    store.gains = gains
    store.reach = NULL
    store.rc_tree_start = NULL
    return store


cdef void _use_row_covers(
    _Store *store, tuple covers, double[::1] row_tables, Py_ssize_t row_table_base
):
    """Point ``store`` at the row covers (:meth:`Paths.row_covers`'s arrays and
    their offsets), if any (``covers`` empty: none)."""
    cdef const Py_ssize_t[::1] tree_start, n_keys, n_players, offset
    cdef const Py_ssize_t[:, ::1] keys, players
    if not covers:
        return
    key_bits, tree_start, n_keys, keys, n_players, players, offset = covers
    if n_keys.shape[0] == 0:
        return
    store.rc_key_bits = key_bits
    store.rc_tree_start = &tree_start[0]
    store.rc_n_keys = &n_keys[0]
    store.rc_keys = &keys[0, 0]
    store.rc_n_players = &n_players[0]
    store.rc_players = &players[0, 0]
    store.rc_offset = &offset[0]
    store.row_tables = &row_tables[0] if row_tables.shape[0] else NULL
    store.row_table_base = row_table_base

