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
failure masks (multi-word bitsets, any depth) and counts ``R`` for each row.
Both paths compute the sums above from the same exact integer counts in the
same order, so their values are bit-identical. Values are summed over the
background, not averaged: the caller divides by its size once.

Rows are routed by the models' own rule (``_routing.pxd``); one depth-first
walk per row and tree gives every leaf's mask.
"""

from cython.parallel cimport parallel, prange
from libc.stdint cimport uint64_t
from libc.stdlib cimport free, malloc
from libc.string cimport memcpy, memset

from ._routing cimport Routing, goes_left

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
    static inline int sks_popcount(unsigned long long x) { return __builtin_popcountll(x); }
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
    Py_ssize_t levels               # stack entries of a walk: max depth + 2
    Py_ssize_t max_bits             # the largest D of any leaf


cdef struct _Store:
    # Where each leaf's background lives (one batch of trees).
    const Py_ssize_t *offset        # per leaf: into tables or masks
    const unsigned char *tabulated  # per leaf: 1 tables, 0 masks
    double *tables                  # Neg, Pos, P2 over 2**D subsets per leaf
    uint64_t *masks                 # (n_background, words) per leaf
    Py_ssize_t table_base           # offsets of the batch's first leaf
    Py_ssize_t mask_base
    Py_ssize_t n_background


cdef struct _Stack:
    # A depth-first walk of one tree for one row: pending nodes and their masks.
    Py_ssize_t *nodes               # (levels,)
    uint64_t *masks                 # (levels, words)
    Py_ssize_t top


cdef inline void _start(_Stack *stack, Py_ssize_t root, Py_ssize_t words, bint failure) noexcept nogil:
    """Begin a walk at ``root``: no failure yet, or every player a success."""
    stack.nodes[0] = root
    memset(stack.masks, 0xFF if not failure else 0, words * sizeof(uint64_t))
    stack.top = 1


cdef inline Py_ssize_t _next_leaf(
    const _Paths *paths, _Stack *stack, const double *x, bint failure
) noexcept nogil:
    """The walk's next leaf (-1 when done); its mask is at ``stack.top``.

    At each split, the child the row does not take gets the split's bit: set
    in a failure mask, cleared in a success mask.
    """
    cdef Py_ssize_t node, b, words = paths.words
    cdef uint64_t *here
    cdef uint64_t *other
    cdef uint64_t one
    while stack.top > 0:
        stack.top -= 1
        node = stack.nodes[stack.top]
        if paths.left[node] < 0:
            return node
        # Slot top: the right child; slot top + 1, walked first: the left one.
        here = stack.masks + stack.top * words
        memcpy(here + words, here, words * sizeof(uint64_t))
        other = here
        if not goes_left(&paths.routing, node, x[paths.feature[node]]):
            other = here + words
        b = paths.bit[node]
        one = (<uint64_t> 1) << (b & 63)
        if failure:
            other[b >> 6] |= one
        else:
            other[b >> 6] &= ~one
        stack.nodes[stack.top] = paths.right[node]
        stack.nodes[stack.top + 1] = paths.left[node]
        stack.top += 2
    return -1


cdef inline double _ranked_sum(
    const _Paths *paths, const double *R, Py_ssize_t stride, Py_ssize_t first,
    Py_ssize_t n, Py_ssize_t shift, Py_ssize_t b,
) noexcept nogil:
    """``sum_{k=first}^{n} R[k * stride] B(k + shift, b)``; 0 when ``b < 1``."""
    cdef Py_ssize_t k
    cdef double total = 0.0
    if b < 1:
        return 0.0
    for k in range(first, n + 1):
        total += R[k * stride] * paths.beta[(k + shift) * paths.beta_stride + b]
    return total


cdef void _tabulate(const _Paths *paths, double *table, Py_ssize_t D, double *R) noexcept nogil:
    """Turn a leaf's counts ``cnt(c)`` (``table[c]``) into Neg, Pos and P2.

    ``R`` is scratch of (D + 1) * 2**D doubles: the ranked zeta transform
    ``R[k * size + U]``, exact integers.
    """
    cdef Py_ssize_t size = (<Py_ssize_t> 1) << D, i, U, k, n, one
    memset(R, 0, (D + 1) * size * sizeof(double))
    for U in range(size):
        R[sks_popcount(U) * size + U] = table[U]
    for i in range(D):
        one = (<Py_ssize_t> 1) << i
        for U in range(size):
            if U & one:
                n = sks_popcount(U)
                for k in range(n):
                    R[k * size + U] += R[k * size + (U ^ one)]
    for U in range(size):
        n = sks_popcount(U)
        table[U] = _ranked_sum(paths, R + U, size, 0, n, 1, D - n)
        table[size + U] = _ranked_sum(paths, R + U, size, 1, n, 0, D - n + 1)
        table[2 * size + U] = _ranked_sum(paths, R + U, size, 1, n, 0, D - n)


cdef void _build_tree(
    const _Paths *paths, const _Store *store, Py_ssize_t tree, const double *Z,
    Py_ssize_t n_features, _Stack *stack, double *R,
) noexcept nogil:
    """Route the background through ``tree``; fill its leaves' tables or masks."""
    cdef Py_ssize_t z, leaf, node, words = paths.words
    cdef uint64_t *c
    for z in range(store.n_background):
        _start(stack, paths.roots[tree], words, True)
        while True:
            leaf = _next_leaf(paths, stack, Z + z * n_features, True)
            if leaf < 0:
                break
            c = stack.masks + stack.top * words
            if store.tabulated[leaf]:
                store.tables[store.offset[leaf] - store.table_base + c[0]] += 1.0
            else:
                memcpy(
                    store.masks + store.offset[leaf] - store.mask_base + z * words,
                    c, words * sizeof(uint64_t),
                )
    for node in range(paths.roots[tree], paths.roots[tree + 1]):
        if paths.left[node] < 0 and store.tabulated[node]:
            _tabulate(
                paths, store.tables + store.offset[node] - store.table_base,
                paths.bit[node], R,
            )


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


cdef void _table_gains(
    const _Paths *paths, const double *table, Py_ssize_t D, uint64_t A, double *gain
) noexcept nogil:
    """Each player's value per unit of leaf value, from the leaf's tables."""
    cdef Py_ssize_t size = (<Py_ssize_t> 1) << D, b
    cdef uint64_t low = A & ((<uint64_t> size) - 1)
    for b in range(D):
        if (low >> b) & 1:
            gain[b] = table[size + low] - table[2 * size + (low ^ ((<uint64_t> 1) << b))]
        else:
            gain[b] = -table[low]


cdef void _mask_gains(
    const _Paths *paths, const uint64_t *masks, Py_ssize_t n_background,
    Py_ssize_t D, const uint64_t *A, double *gain, double *R,
) noexcept nogil:
    """As :func:`_table_gains`, counting the background's failure masks.

    ``R`` is scratch of (D + 2) * (D + 1) doubles: ``R(A, k)``, then per
    player j the counts of masks with j, then ``R(A \\ {j}, k)``.
    """
    cdef Py_ssize_t words = paths.words, z, w, k, b, n
    cdef Py_ssize_t width = D + 1
    cdef double *with_player = R + width
    cdef double *without = with_player + D * width
    cdef const uint64_t *c
    cdef uint64_t bits
    cdef double positive, negative
    memset(R, 0, (D + 1) * width * sizeof(double))
    for z in range(n_background):
        c = masks + z * words
        if not _subset(c, A, words):
            continue
        k = 0
        for w in range(words):
            k += sks_popcount(c[w])
        R[k] += 1.0
        for w in range(words):
            bits = c[w]
            while bits:
                with_player[(w * 64 + sks_lowest_bit(bits)) * width + k] += 1.0
                bits &= bits - 1
    n = _count_bits(A, D)
    negative = _ranked_sum(paths, R, 1, 0, n, 1, D - n)
    positive = _ranked_sum(paths, R, 1, 1, n, 0, D - n + 1)
    for b in range(D):
        if _has(A, b):
            for k in range(n):
                without[k] = R[k] - with_player[b * width + k]
            gain[b] = positive - _ranked_sum(paths, without, 1, 1, n - 1, 0, D - n + 1)
        else:
            gain[b] = -negative


cdef void _explain_row(
    const _Paths *paths, const _Store *store, Py_ssize_t tree_begin,
    Py_ssize_t tree_end, const double *x, double *phi, _Stack *stack,
    double *gain, double *R,
) noexcept nogil:
    """Add one row's values (times the background size) over the trees to ``phi``."""
    cdef Py_ssize_t tree, leaf, D, b, o, player, words = paths.words
    cdef Py_ssize_t n_players = paths.n_players
    cdef const uint64_t *A
    cdef const double *value
    cdef double *row
    for tree in range(tree_begin, tree_end):
        row = phi + paths.tree_output[tree] * n_players
        _start(stack, paths.roots[tree], words, False)
        while True:
            leaf = _next_leaf(paths, stack, x, False)
            if leaf < 0:
                break
            D = paths.bit[leaf]
            A = stack.masks + stack.top * words
            if store.tabulated[leaf]:
                _table_gains(
                    paths, store.tables + store.offset[leaf] - store.table_base,
                    D, A[0], gain,
                )
            else:
                _mask_gains(
                    paths, store.masks + store.offset[leaf] - store.mask_base,
                    store.n_background, D, A, gain, R,
                )
            value = paths.value + leaf * paths.value_stride
            for b in range(D):
                player = paths.players[paths.players_start[leaf] + b]
                for o in range(paths.tree_width[tree]):
                    row[o * n_players + player] += value[o] * gain[b]


cdef void _pair_terms(
    const _Paths *paths, const uint64_t *masks, Py_ssize_t n_background,
    Py_ssize_t D, const uint64_t *A, double *gain, double *pair,
) noexcept nogil:
    """A leaf's Shapley values and interaction indices per unit of leaf value.

    Summed over the background rows with ``c ⊆ A`` in closed form: for
    players j, k outside A, ``B(na + 1, nb - 1)``; j outside A and k in c,
    ``-B(na, nb)``; both in c, ``B(na - 1, nb + 1)``. ``pair`` is (D, D),
    filled above the diagonal.
    """
    cdef Py_ssize_t words = paths.words, z, w, j, k, na, nb, n, m
    cdef Py_ssize_t s = paths.beta_stride
    cdef const double *beta = paths.beta
    cdef const uint64_t *c
    cdef uint64_t bits
    cdef double outside = 0.0, negative = 0.0
    cdef double *with_player = pair + D * D   # (D,): sum of B(na, nb) over c ∋ k
    cdef Py_ssize_t *members = <Py_ssize_t *> (with_player + D)
    n = _count_bits(A, D)
    nb = D - n
    memset(pair, 0, (D * D + D) * sizeof(double))
    for j in range(D):
        gain[j] = 0.0
    for z in range(n_background):
        c = masks + z * words
        if not _subset(c, A, words):
            continue
        na = 0
        for w in range(words):
            bits = c[w]
            while bits:
                members[na] = w * 64 + sks_lowest_bit(bits)
                na += 1
                bits &= bits - 1
        if nb >= 1:
            negative += beta[(na + 1) * s + nb]
        if nb >= 2:
            outside += beta[(na + 1) * s + nb - 1]
        for m in range(na):
            j = members[m]
            gain[j] += beta[na * s + nb + 1]
            if nb >= 1:
                with_player[j] += beta[na * s + nb]
            for k in range(m + 1, na):
                pair[j * D + members[k]] += beta[(na - 1) * s + nb + 1]
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


cdef void _interactions_row(
    const _Paths *paths, const _Store *store, Py_ssize_t tree_begin,
    Py_ssize_t tree_end, const double *x, double *out, _Stack *stack,
    double *gain, double *pair,
) noexcept nogil:
    """Add one row's interaction matrices (times the background size) to ``out``.

    ``out`` is (n_outputs, n_players, n_players), in shap's convention:
    half the index off the diagonal, the main effect on it.
    """
    cdef Py_ssize_t tree, leaf, D, j, k, o, pj, pk, words = paths.words
    cdef Py_ssize_t n_players = paths.n_players
    cdef const uint64_t *A
    cdef const double *value
    cdef double *block
    cdef double half, v
    for tree in range(tree_begin, tree_end):
        _start(stack, paths.roots[tree], words, False)
        while True:
            leaf = _next_leaf(paths, stack, x, False)
            if leaf < 0:
                break
            D = paths.bit[leaf]
            A = stack.masks + stack.top * words
            _pair_terms(
                paths, store.masks + store.offset[leaf] - store.mask_base,
                store.n_background, D, A, gain, pair,
            )
            value = paths.value + leaf * paths.value_stride
            for o in range(paths.tree_width[tree]):
                v = value[o]
                block = out + (paths.tree_output[tree] + o) * n_players * n_players
                for j in range(D):
                    pj = paths.players[paths.players_start[leaf] + j]
                    block[pj * n_players + pj] += v * gain[j]
                    for k in range(j + 1, D):
                        pk = paths.players[paths.players_start[leaf] + k]
                        half = 0.5 * v * pair[j * D + k]
                        block[pj * n_players + pk] += half
                        block[pk * n_players + pj] += half
                        block[pj * n_players + pj] -= half
                        block[pk * n_players + pk] -= half


cdef class Paths:
    """A TreeEnsemble's paths, ready for interventional values.

    Parameters
    ----------
    ensemble : TreeEnsemble
        The parsed model.
    bit, players_start, players : ndarray of intp
        From :func:`path_bits` (per node) and each leaf's players by bit.
    beta : ndarray of shape (max_bits + 2, max_bits + 2)
        ``B(a, b)`` for ``1 <= a, b <= max_bits + 1``.
    n_players, words, max_depth : int
        The players; the 64-bit words of a mask (``max_bits`` bits); the
        depth of the deepest tree.
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
        self.paths.players = &self.players[0] if self.players.shape[0] else NULL
        self.paths.beta = &self.beta[0, 0]
        self.paths.beta_stride = self.beta.shape[1]
        self.paths.words = words
        self.paths.levels = max_depth + 2
        self.paths.max_bits = max_bits

    cdef _Store _store(
        self, const Py_ssize_t[::1] offset, const unsigned char[::1] tabulated,
        double[::1] tables, uint64_t[::1] masks, Py_ssize_t table_base,
        Py_ssize_t mask_base, Py_ssize_t n_background,
    ):
        cdef _Store store
        store.offset = &offset[0]
        store.tabulated = &tabulated[0]
        store.tables = &tables[0] if tables.shape[0] else NULL
        store.masks = &masks[0] if masks.shape[0] else NULL
        store.table_base = table_base
        store.mask_base = mask_base
        store.n_background = n_background
        return store

    def build(
        self, Py_ssize_t tree_begin, Py_ssize_t tree_end, const double[:, ::1] Z,
        const Py_ssize_t[::1] offset, const unsigned char[::1] tabulated,
        double[::1] tables, uint64_t[::1] masks, Py_ssize_t table_base,
        Py_ssize_t mask_base, Py_ssize_t table_bits, int n_threads,
        int[::1] out_of_memory,
    ):
        """Fill the trees' leaves' tables (zeroed by the caller) or masks.

        ``Z`` is the validated background; ``table_bits`` the largest D of a
        tabulated leaf. One thread per tree: the values do not depend on
        the threads.
        """
        cdef _Store store = self._store(
            offset, tabulated, tables, masks, table_base, mask_base, Z.shape[0]
        )
        cdef const _Paths *paths = &self.paths
        cdef _Stack stack
        cdef Py_ssize_t *nodes = NULL
        cdef uint64_t *stack_masks = NULL
        cdef double *R = NULL
        cdef Py_ssize_t tree, n_features = Z.shape[1]
        cdef Py_ssize_t zeta = (table_bits + 1) << table_bits if table_bits >= 0 else 0
        if Z.shape[0] == 0:
            return
        with nogil, parallel(num_threads=n_threads):
            nodes = <Py_ssize_t *> malloc(paths.levels * sizeof(Py_ssize_t))
            stack_masks = <uint64_t *> malloc(
                paths.levels * paths.words * sizeof(uint64_t)
            )
            R = <double *> malloc((zeta + 1) * sizeof(double))
            for tree in prange(tree_begin, tree_end, schedule="dynamic"):
                if nodes == NULL or stack_masks == NULL or R == NULL:
                    out_of_memory[0] = 1
                    continue
                stack = _Stack(nodes, stack_masks, 0)
                _build_tree(paths, &store, tree, &Z[0, 0], n_features, &stack, R)
            free(nodes)
            free(stack_masks)
            free(R)

    def shapley(
        self, const double[:, ::1] X, Py_ssize_t tree_begin, Py_ssize_t tree_end,
        const Py_ssize_t[::1] offset, const unsigned char[::1] tabulated,
        double[::1] tables, uint64_t[::1] masks, Py_ssize_t table_base,
        Py_ssize_t mask_base, Py_ssize_t n_background, double[:, :, ::1] out,
        int n_threads, int[::1] out_of_memory,
    ):
        """Add each row's values over the trees, times ``n_background``, to ``out``.

        ``out`` has shape (n_samples, n_outputs, n_players). One thread per
        row: the values do not depend on the threads.
        """
        cdef _Store store = self._store(
            offset, tabulated, tables, masks, table_base, mask_base, n_background
        )
        cdef const _Paths *paths = &self.paths
        cdef _Stack stack
        cdef Py_ssize_t *nodes = NULL
        cdef uint64_t *stack_masks = NULL
        cdef double *gain = NULL
        cdef double *R = NULL
        cdef Py_ssize_t i, D = paths.max_bits
        if X.shape[0] == 0:
            return
        with nogil, parallel(num_threads=n_threads):
            nodes = <Py_ssize_t *> malloc(paths.levels * sizeof(Py_ssize_t))
            stack_masks = <uint64_t *> malloc(
                paths.levels * paths.words * sizeof(uint64_t)
            )
            gain = <double *> malloc((D + 1) * sizeof(double))
            R = <double *> malloc((D + 2) * (D + 1) * sizeof(double))
            for i in prange(X.shape[0], schedule="dynamic"):
                if nodes == NULL or stack_masks == NULL or gain == NULL or R == NULL:
                    out_of_memory[0] = 1
                    continue
                stack = _Stack(nodes, stack_masks, 0)
                _explain_row(
                    paths, &store, tree_begin, tree_end, &X[i, 0], &out[i, 0, 0],
                    &stack, gain, R,
                )
            free(nodes)
            free(stack_masks)
            free(gain)
            free(R)

    def interactions(
        self, const double[:, ::1] X, Py_ssize_t tree_begin, Py_ssize_t tree_end,
        const Py_ssize_t[::1] offset, const unsigned char[::1] tabulated,
        uint64_t[::1] masks, Py_ssize_t mask_base, Py_ssize_t n_background,
        double[:, :, :, ::1] out, int n_threads, int[::1] out_of_memory,
    ):
        """Add each row's interaction matrices, times ``n_background``, to ``out``.

        ``out`` has shape (n_samples, n_outputs, n_players, n_players);
        every leaf keeps its background's masks (``tabulated`` all 0).
        """
        cdef _Store store
        cdef const _Paths *paths = &self.paths
        cdef _Stack stack
        cdef Py_ssize_t *nodes = NULL
        cdef uint64_t *stack_masks = NULL
        cdef double *gain = NULL
        cdef double *pair = NULL
        cdef Py_ssize_t i, D = paths.max_bits
        if X.shape[0] == 0:
            return
        store.offset = &offset[0]
        store.tabulated = &tabulated[0]
        store.masks = &masks[0] if masks.shape[0] else NULL
        store.mask_base = mask_base
        store.n_background = n_background
        with nogil, parallel(num_threads=n_threads):
            nodes = <Py_ssize_t *> malloc(paths.levels * sizeof(Py_ssize_t))
            stack_masks = <uint64_t *> malloc(
                paths.levels * paths.words * sizeof(uint64_t)
            )
            gain = <double *> malloc((D + 1) * sizeof(double))
            # The pairs, a row of sums, and the members of a mask (as many
            # doubles as Py_ssize_t's).
            pair = <double *> malloc((D * D + 2 * D + 1) * sizeof(double))
            for i in prange(X.shape[0], schedule="dynamic"):
                if nodes == NULL or stack_masks == NULL or gain == NULL or pair == NULL:
                    out_of_memory[0] = 1
                    continue
                stack = _Stack(nodes, stack_masks, 0)
                _interactions_row(
                    paths, &store, tree_begin, tree_end, &X[i, 0],
                    &out[i, 0, 0, 0], &stack, gain, pair,
                )
            free(nodes)
            free(stack_masks)
            free(gain)
            free(pair)


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
