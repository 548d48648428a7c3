# A tree's counts of the background's failure masks at its leaves, by a
# cover of "count nodes" (for _interventional_core.pyx's fit).
#
# The walk of _interventional_core carries every background row down every
# path and increments a count at every leaf: rows x leaves increments, most
# of a fit's time for a large background. A row's failure masks at all the
# leaves below a node n follow from its sides (left or right) at n's
# ancestors and at the internal nodes of n's subtree: at most COVER_BITS
# sides for a "count node", whose histogram of these keys (one increment a
# row) gives each of its leaves' counts afterwards, key by key. The count
# nodes cover the tree: every leaf is below exactly one. A full tree of depth
# 6 has 8 of them (at depth 3, keys of 3 + 7 sides) for 64 leaves.
#
# The counts are the same exact integers as the walk's, so the values built
# from them do not depend on which of the two counted.

from libc.stdint cimport uint32_t
from libc.string cimport memset

from ._routing cimport Routing, plain_numeric, route_block


cdef extern from "_sides.h" nogil:
    void sides_into_keys(uint32_t *keys, const unsigned char *went_left, int k, Py_ssize_t n)
    void numeric_sides_into_keys(
        uint32_t *keys, const double *x, double threshold, uint32_t missing_left,
        int k, Py_ssize_t n,
    )
    void numeric_sides_into_keys32(
        uint32_t *keys, const float *x, float threshold, uint32_t missing_left,
        int k, Py_ssize_t n,
    )
    float float32_threshold(double threshold)

# The most sides in a count node's key (its histogram has 2**COVER_BITS
# entries at most, 8 KB), the most nodes of a tree the cover takes, the most
# entries of a tree's histograms, and the background rows routed at once.
cdef enum:
    COVER_BITS = 11
    COVER_MAX_NODES = 1024
    COVER_MAX_ENTRIES = 1 << 16
    COVER_BLOCK = 256


cdef struct Cover:
    # One thread's scratch; nodes are numbered from the tree's root (local).
    unsigned char *went_left    # (COVER_BLOCK,)
    uint32_t *keys              # (COVER_BLOCK,)
    uint32_t *hist              # (COVER_MAX_ENTRIES,)
    Py_ssize_t *parent          # (COVER_MAX_NODES,) each below
    Py_ssize_t *depth
    Py_ssize_t *below           # internal nodes of the subtree
    Py_ssize_t *order           # the nodes in preorder
    Py_ssize_t *counters        # the count nodes, in preorder
    Py_ssize_t *key_nodes       # (COVER_MAX_NODES, COVER_BITS)
    Py_ssize_t *n_keys          # per count node: its key's sides
    Py_ssize_t *hist_start      # per count node: its histogram's first entry
    double **leaf_counts        # (COVER_MAX_NODES,) see cover_count
    Py_ssize_t *leaves          # (COVER_MAX_NODES,) see cover_leaves


cdef inline Py_ssize_t cover_bytes() noexcept nogil:
    """Bytes of a thread's Cover scratch (see cover_layout)."""
    return cover_layout(NULL, NULL)


cdef inline Py_ssize_t cover_layout(Cover *cover, char *state) noexcept nogil:
    """Point ``cover``'s buffers into ``state``; return its bytes (8-aligned)."""
    cdef Py_ssize_t used = 0, n = COVER_MAX_NODES, word = sizeof(Py_ssize_t)
    if cover != NULL:
        cover.went_left = <unsigned char *> state
        cover.keys = <uint32_t *> (state + COVER_BLOCK)
        cover.hist = <uint32_t *> (state + 5 * COVER_BLOCK)
    used = 5 * COVER_BLOCK + 4 * COVER_MAX_ENTRIES
    if cover != NULL:
        cover.parent = <Py_ssize_t *> (state + used)
        cover.depth = cover.parent + n
        cover.below = cover.depth + n
        cover.order = cover.below + n
        cover.counters = cover.order + n
        cover.n_keys = cover.counters + n
        cover.hist_start = cover.n_keys + n
        cover.key_nodes = cover.hist_start + n
        cover.leaf_counts = <double **> (cover.key_nodes + COVER_BITS * n)
        cover.leaves = <Py_ssize_t *> (cover.leaf_counts + n)
    return used + (9 + COVER_BITS) * n * word


cdef inline Py_ssize_t cover_plan(
    Cover *cover, const Py_ssize_t *left, const Py_ssize_t *right,
    Py_ssize_t root, Py_ssize_t n_nodes, Py_ssize_t key_bits,
    Py_ssize_t *fixed_work,
) noexcept nogil:
    """The tree's count nodes and their keys; their number, or -1 if none fit.

    Keys of at most ``key_bits`` (at most COVER_BITS) sides: count nodes at
    most that deep. The count nodes are ``cover.counters`` (local, in
    preorder), their keys' nodes ``cover.key_nodes`` (local, COVER_BITS a
    count node).
    ``fixed_work`` gets the histograms' entries times the leaves each
    serves: the work of turning the histograms into the leaves' counts.
    """
    cdef Py_ssize_t top = 0, n_order = 0, i, node, child, c, n_counters = 0
    cdef Py_ssize_t entries = 0, n_keys, up, j
    # Preorder with parents and depths (an explicit stack in `counters`).
    cover.counters[0] = 0
    cover.depth[0] = 0
    cover.parent[0] = -1
    top = 1
    while top:
        top -= 1
        node = cover.counters[top]
        cover.order[n_order] = node
        n_order += 1
        if left[root + node] < 0:
            continue
        for j in range(2):  # the right child first: the left one is popped first
            child = (right if j == 0 else left)[root + node] - root
            if child <= 0 or child >= n_nodes or top >= n_nodes:
                return -1
            cover.parent[child] = node
            cover.depth[child] = cover.depth[node] + 1
            cover.counters[top] = child
            top += 1
    if n_order != n_nodes:
        return -1
    for i in range(n_order - 1, -1, -1):
        node = cover.order[i]
        cover.below[node] = 0
        if left[root + node] >= 0:
            cover.below[node] = (
                1 + cover.below[left[root + node] - root]
                + cover.below[right[root + node] - root]
            )
    # A node of the preorder is a count node if its key fits and no
    # ancestor is one: then its subtree's nodes follow it in the preorder.
    fixed_work[0] = 0
    i = 0
    while i < n_order:
        node = cover.order[i]
        n_keys = cover.depth[node] + cover.below[node]
        if n_keys > key_bits:
            if left[root + node] < 0:
                return -1  # a leaf deeper than a key
            i += 1
            continue
        cover.counters[n_counters] = node
        cover.n_keys[n_counters] = n_keys
        cover.hist_start[n_counters] = entries
        entries += (<Py_ssize_t> 1) << n_keys
        if entries > COVER_MAX_ENTRIES:
            return -1
        fixed_work[0] += ((<Py_ssize_t> 1) << n_keys) * (cover.below[node] + 1)
        # The key: the ancestors' sides from the root down, then the subtree's.
        up = node
        for j in range(cover.depth[node] - 1, -1, -1):
            up = cover.parent[up]
            cover.key_nodes[n_counters * COVER_BITS + j] = up
        j = cover.depth[node]
        while i < n_order and (
            cover.order[i] == node or cover.depth[cover.order[i]] > cover.depth[node]
        ):
            if left[root + cover.order[i]] >= 0:
                cover.key_nodes[n_counters * COVER_BITS + j] = cover.order[i]
                j += 1
            i += 1
        n_counters += 1
    return n_counters


cdef inline void block_keys(
    uint32_t *keys, unsigned char *went_left, const Py_ssize_t *key_nodes,
    Py_ssize_t n_keys, const Routing *routing, const Py_ssize_t *feature,
    const double *X, const float *X32, Py_ssize_t stride, Py_ssize_t first,
    Py_ssize_t n,
) noexcept nogil:
    """The keys of ``n`` rows from ``first``: their sides at ``key_nodes``.

    ``X`` holds the rows by feature (``X[f * stride + row]``), ``X32`` the
    same as floats if they are its exact values (else NULL). Sides at plain
    numerical splits go straight into the keys; the other splits' are
    routed by the models' rule first, through ``went_left`` (``n`` bytes).
    """
    cdef Py_ssize_t k, node, column
    cdef unsigned char missing_left
    memset(keys, 0, n * sizeof(uint32_t))
    for k in range(n_keys):
        node = key_nodes[k]
        column = feature[node] * stride + first
        missing_left = routing.missing_left[node] & 1
        if not plain_numeric(routing, node):
            route_block(routing, node, X + column, n, went_left)
            sides_into_keys(keys, went_left, k, n)
        elif X32 != NULL:
            numeric_sides_into_keys32(
                keys, X32 + column, float32_threshold(routing.threshold[node]),
                missing_left, k, n,
            )
        else:
            numeric_sides_into_keys(
                keys, X + column, routing.threshold[node], missing_left, k, n
            )


cdef inline void _histograms(
    Cover *cover, Py_ssize_t n_counters, const Routing *routing,
    const Py_ssize_t *feature, Py_ssize_t root, const double *ZT,
    const float *ZT32, Py_ssize_t n_background,
) noexcept nogil:
    """Each count node's histogram of its keys over the background.

    ``ZT32``: the background as floats, if exact (see block_keys).
    """
    cdef Py_ssize_t first, n, c, r, k
    cdef Py_ssize_t key_nodes[COVER_BITS]
    cdef uint32_t *hist
    memset(cover.hist, 0, sizeof(uint32_t) * (
        cover.hist_start[n_counters - 1]
        + ((<Py_ssize_t> 1) << cover.n_keys[n_counters - 1])
    ))
    first = 0
    while first < n_background:
        n = min(<Py_ssize_t> COVER_BLOCK, n_background - first)
        for c in range(n_counters):
            for k in range(cover.n_keys[c]):
                key_nodes[k] = root + cover.key_nodes[c * COVER_BITS + k]
            block_keys(
                cover.keys, cover.went_left, key_nodes, cover.n_keys[c], routing,
                feature, ZT, ZT32, n_background, first, n,
            )
            hist = cover.hist + cover.hist_start[c]
            for r in range(n):
                hist[cover.keys[r]] += 1
        first += n


cdef inline Py_ssize_t cover_leaves(
    const Cover *cover, Py_ssize_t c, Py_ssize_t n_nodes, const Py_ssize_t *left,
    Py_ssize_t root, Py_ssize_t *leaves,
) noexcept nogil:
    """The leaves below count node ``c`` (local, in preorder); their number."""
    cdef Py_ssize_t i = 0, node, n_leaves = 0, top = cover.counters[c]
    while cover.order[i] != top:
        i += 1
    while True:  # the count node's subtree follows it in the preorder
        node = cover.order[i]
        if left[root + node] < 0:
            leaves[n_leaves] = node
            n_leaves += 1
        i += 1
        if i == n_nodes or cover.depth[cover.order[i]] <= cover.depth[top]:
            return n_leaves


cdef inline void leaf_failures(
    const Cover *cover, Py_ssize_t c, Py_ssize_t leaf, const Py_ssize_t *left,
    const Py_ssize_t *bit, Py_ssize_t root, Py_ssize_t *low, Py_ssize_t *high,
) noexcept nogil:
    """The failure mask at ``leaf`` of each key of count node ``c``.

    A row fails the split at a key's node (sets that player's bit of the
    leaf's mask) when it goes to the side the leaf is not on: its side bit
    equals the leaf's side there (0 left). The mask of key ``k`` is
    ``low[k & 63] | high[k >> 6]`` (64 entries each): its low and high six
    sides' parts.
    """
    cdef Py_ssize_t n_keys = cover.n_keys[c], p, node, child, value
    cdef const Py_ssize_t *key_nodes = cover.key_nodes + c * COVER_BITS
    cdef Py_ssize_t side[COVER_BITS]
    cdef Py_ssize_t player[COVER_BITS]
    # Which key sides are on the leaf's path, and its side there.
    for p in range(n_keys):
        side[p] = -1
    child = leaf
    while cover.parent[child] >= 0:
        node = cover.parent[child]
        for p in range(n_keys):
            if key_nodes[p] == node:
                side[p] = 0 if left[root + node] == root + child else 1
                player[p] = bit[root + node]
        child = node
    for value in range(64):
        low[value] = 0
        high[value] = 0
        for p in range(min(n_keys, 6)):
            if side[p] >= 0 and ((value >> p) & 1) == side[p]:
                low[value] |= (<Py_ssize_t> 1) << player[p]
        for p in range(6, n_keys):
            if side[p] >= 0 and ((value >> (p - 6)) & 1) == side[p]:
                high[value] |= (<Py_ssize_t> 1) << player[p]


cdef inline bint cover_count(
    Cover *cover, const Routing *routing, const Py_ssize_t *feature,
    const Py_ssize_t *left, const Py_ssize_t *right, const Py_ssize_t *bit,
    Py_ssize_t root, Py_ssize_t end, const double *ZT, const float *ZT32,
    Py_ssize_t n_background, double min_gain,
) noexcept nogil:
    """Add the background's failure-mask counts to the leaves of one tree.

    The tree's nodes are ``root`` to ``end``; ``cover.leaf_counts[node - root]``
    is each leaf's table of 2**D counts (NULL: the leaf keeps masks, and
    the tree is not counted here). Counts only if the tree fits the cover
    and the increments it saves, ``n_background`` per node, are at least
    ``min_gain`` times the work of turning histograms into counts; returns
    whether it counted.
    """
    cdef Py_ssize_t n_nodes = end - root, n_counters, fixed_work, c, node, i, k
    cdef Py_ssize_t n_leaves
    cdef const uint32_t *hist
    cdef double *counts
    cdef Py_ssize_t low[64]
    cdef Py_ssize_t high[64]
    if n_nodes > COVER_MAX_NODES or n_background >= (<Py_ssize_t> 1) << 32:
        return False
    for node in range(n_nodes):
        if left[root + node] < 0 and cover.leaf_counts[node] == NULL:
            return False
    n_counters = cover_plan(cover, left, right, root, n_nodes, COVER_BITS, &fixed_work)
    if n_counters <= 0 or n_background * n_nodes < min_gain * fixed_work:
        return False
    _histograms(cover, n_counters, routing, feature, root, ZT, ZT32, n_background)
    for c in range(n_counters):
        hist = cover.hist + cover.hist_start[c]
        n_leaves = cover_leaves(cover, c, n_nodes, left, root, cover.leaves)
        for i in range(n_leaves):
            leaf_failures(cover, c, cover.leaves[i], left, bit, root, low, high)
            counts = cover.leaf_counts[cover.leaves[i]]
            for k in range((<Py_ssize_t> 1) << cover.n_keys[c]):
                if hist[k]:
                    counts[low[k & 63] | high[k >> 6]] += hist[k]
    return True


# Row covers: the same count nodes (with shorter keys) serve rows at explain.
# A row's success masks at the leaves below a count node follow from its key
# as a background row's failure masks do, so the sum over those leaves of
# each leaf's value times its gains is a table over the keys: one lookup
# and a few additions a row, instead of a walk to every leaf.

cdef inline Py_ssize_t cover_players(
    Cover *cover, Py_ssize_t c, Py_ssize_t n_nodes, const Py_ssize_t *left,
    const Py_ssize_t *bit, const Py_ssize_t *players_start,
    const Py_ssize_t *players, Py_ssize_t root, Py_ssize_t *out,
) noexcept nogil:
    """The distinct players on count node ``c``'s leaves' paths; their number.

    In the order the preorder of its leaves meets them (at most its key's
    sides). Overwrites ``cover.leaves``.
    """
    cdef Py_ssize_t n_leaves, i, b, j, player, n_players = 0, leaf
    n_leaves = cover_leaves(cover, c, n_nodes, left, root, cover.leaves)
    for i in range(n_leaves):
        leaf = root + cover.leaves[i]
        for b in range(bit[leaf]):
            player = players[players_start[leaf] + b]
            for j in range(n_players):
                if out[j] == player:
                    break
            else:
                out[n_players] = player
                n_players += 1
    return n_players


cdef inline void fill_row_table(
    Cover *cover, Py_ssize_t c, Py_ssize_t n_nodes, Py_ssize_t root,
    const Py_ssize_t *left, const Py_ssize_t *bit, const Py_ssize_t *players_start,
    const Py_ssize_t *players, const double *value, Py_ssize_t value_stride,
    Py_ssize_t width, const Py_ssize_t *slots, Py_ssize_t n_slots, double *table,
) noexcept nogil:
    """Count node ``c``'s row table: ``table[(key * width + o) * n_slots + j]``.

    The sum over its leaves of value ``o`` times the gain of player
    ``slots[j]`` at the success mask the key gives (the complement of its
    failure mask on the leaf's D players). ``cover.leaf_counts`` holds
    each leaf's gains (``_tabulate``'s tables).
    """
    cdef Py_ssize_t n_leaves, i, b, j, k, o, D, leaf, success, n_keys = cover.n_keys[c]
    cdef Py_ssize_t low[64]
    cdef Py_ssize_t high[64]
    cdef Py_ssize_t slot[COVER_BITS]
    cdef const double *gains
    cdef const double *leaf_value
    cdef double *entry
    memset(table, 0, sizeof(double) * (n_slots * width) << n_keys)
    n_leaves = cover_leaves(cover, c, n_nodes, left, root, cover.leaves)
    for i in range(n_leaves):
        leaf = root + cover.leaves[i]
        D = bit[leaf]
        for b in range(D):
            for j in range(n_slots):
                if slots[j] == players[players_start[leaf] + b]:
                    slot[b] = j
        leaf_failures(cover, c, cover.leaves[i], left, bit, root, low, high)
        leaf_value = value + leaf * value_stride
        for k in range((<Py_ssize_t> 1) << n_keys):
            success = ~(low[k & 63] | high[k >> 6]) & (((<Py_ssize_t> 1) << D) - 1)
            gains = cover.leaf_counts[cover.leaves[i]] + success * D
            entry = table + k * width * n_slots
            for o in range(width):
                for b in range(D):
                    entry[o * n_slots + slot[b]] += leaf_value[o] * gains[b]
