"""Compiled loops of the product-game core.

A product game on players ``0..d-1`` has ``v(S) = w * prod_{j in S} a_j *
prod_{j not in S} b_j``. The Shapley value of player ``i`` is

    phi_i = w * (a_i - b_i) * Integral_0^1 prod_{j != i} f_j(t) dt,
    f_j(t) = b_j + t * (a_j - b_j),

which these kernels evaluate with a quadrature rule chosen per game by the
Python wrapper (``_product.py``), which also validates and allocates. Games
are given by ``b`` and the gaps ``a - b``: a caller that knows the gaps more
accurately than ``a`` (kernel factors ``exp(z)`` next to 1, whose gap is
``expm1(z)``) keeps that accuracy.

Numerics. No product here can overflow or underflow:

* every non-dummy player (nonzero gap) is scaled by an exact power of two so
  that ``max(|a_j|, |b_j|)`` lies in (1/2, 1]; then every ``|f_j(t)|`` is at most 1
  on [0, 1] and the exponents removed are added back once, at the end;
* at each quadrature node the product of all (nonzero) factors is formed
  once, and kept as a mantissa and a separate integer exponent, renormalized
  exactly (by ``frexp``) when the mantissa drops below 2**-400, unless the
  plain product is safely representable;
* each player's ``prod_{j != i} f_j`` is that product divided by ``f_i``: one
  correctly rounded operation, O(n) work per node for n players. Zero
  factors are counted, not divided by: with one zero, only its player has a
  nonzero term; with two or more, no player has;
* the players' integrals share one binary exponent per game, raised when a
  block of nodes has larger products.
"""

from cython.parallel cimport parallel, prange, threadid
from libc.math cimport fabs, frexp, ldexp
from libc.stdlib cimport free, malloc

from ._rules cimport Rule, Rules, rule_of, rules_view

# Mantissas are renormalized below this (2**-400): a product of two of them
# times a quadrature weight stays far above the subnormal range (2**-1022).
cdef double _TINY = 3.872591914849318e-121
# Products above this (2**-900) times a quadrature weight are still normal.
cdef double _SAFE = 1.1830521861667747e-271
# The integrals' exponent rises when a block's products exceed it by this much;
# it starts so low that the first block with a nonzero product sets it.
cdef int _HEADROOM = 64
cdef int _UNSET = -(1 << 30)


cdef inline void _renormalize(double *mantissa, int *exponent) noexcept nogil:
    """Move the binary exponent of a small nonzero mantissa into ``exponent``."""
    cdef int shift
    if mantissa[0] != 0.0 and fabs(mantissa[0]) < _TINY:
        mantissa[0] = frexp(mantissa[0], &shift)
        exponent[0] += shift


cdef inline void _multiply(double *mantissa, int *exponent, double x) noexcept nogil:
    """Multiply the number ``mantissa * 2**exponent`` by any finite ``x``."""
    cdef int shift
    mantissa[0] *= frexp(x, &shift)
    exponent[0] += shift
    _renormalize(mantissa, exponent)


cdef inline double _to_double(double mantissa, int exponent) noexcept nogil:
    """``mantissa * 2**exponent``, rounded once (inf or 0 only if it must be)."""
    cdef int shift
    mantissa = frexp(mantissa, &shift)
    return ldexp(mantissa, exponent + shift)


# Quadrature nodes are processed in blocks of this many: their running
# products are independent, which keeps the floating-point units busy.
cdef enum:
    _BLOCK = 8


cdef struct _Scratch:
    # Per player (length n_players + 1):
    Py_ssize_t *players     # indices of the non-dummy players
    double *gap_scaled      # their a - b and b, scaled so that max(|a|, |b|)
    double *b_scaled        # is in (1/2, 1]
    double *integral        # integral of prod_{j != i} f_j, in units of 2**e


cdef _Scratch _allocate(Py_ssize_t n_players) noexcept nogil:
    """Scratch buffers for games of ``n_players``; NULL if out of memory."""
    cdef _Scratch s
    cdef Py_ssize_t size = n_players + 1
    s.players = <Py_ssize_t *> malloc(size * sizeof(Py_ssize_t))
    s.gap_scaled = <double *> malloc(3 * size * sizeof(double))
    s.b_scaled = s.gap_scaled + size
    s.integral = s.gap_scaled + 2 * size
    return s


cdef bint _allocated(_Scratch s) noexcept nogil:
    return s.players != NULL and s.gap_scaled != NULL


cdef void _release(_Scratch s) noexcept nogil:
    free(s.players)
    free(s.gap_scaled)


cdef inline double _block_sum(const double *terms) noexcept nogil:
    """Sum of ``_BLOCK`` (= 8) terms as a tree: a short dependency chain."""
    return (
        ((terms[0] + terms[1]) + (terms[2] + terms[3]))
        + ((terms[4] + terms[5]) + (terms[6] + terms[7]))
    )


cdef inline double _factor(_Scratch s, Py_ssize_t p, double t) noexcept nogil:
    """``f_p(t) = b_p + t (a_p - b_p)`` for the scaled factors of player ``p``."""
    return s.b_scaled[p] + t * s.gap_scaled[p]


cdef bint _node_products(
    _Scratch s,
    Py_ssize_t n,
    const double *nodes,
    double *mantissa,
    int *exponent,
    int *n_zeros,
    Py_ssize_t *zero_at,
) noexcept nogil:
    """Each node's product of nonzero factors, as mantissa and exponent.

    Also counts each node's zero factors and where the last one is. Tries
    plain products first: if all are at least ``_SAFE``, no factor is zero and
    no exponent is needed, and it returns True.
    """
    cdef Py_ssize_t p, k
    cdef double f
    cdef bint small, safe = True

    for k in range(_BLOCK):
        mantissa[k] = 1.0
        exponent[k] = 0
        n_zeros[k] = 0
        zero_at[k] = -1
    for p in range(n):
        for k in range(_BLOCK):
            mantissa[k] = mantissa[k] * _factor(s, p, nodes[k])
    for k in range(_BLOCK):
        safe = safe & (fabs(mantissa[k]) >= _SAFE)
    if safe:
        return True

    for k in range(_BLOCK):
        mantissa[k] = 1.0
    for p in range(n):
        small = False
        for k in range(_BLOCK):
            f = _factor(s, p, nodes[k])
            if f == 0.0:
                n_zeros[k] += 1
                zero_at[k] = p
            else:
                mantissa[k] = mantissa[k] * f
            small = small | (fabs(mantissa[k]) < _TINY)
        if small:
            for k in range(_BLOCK):
                _renormalize(&mantissa[k], &exponent[k])
    return False


cdef void _add_block(
    _Scratch s,
    Py_ssize_t n,
    const double *nodes,
    const double *node_weights,
    int *integral_exponent,
) noexcept nogil:
    """Add the terms of a block of ``_BLOCK`` quadrature nodes to the integrals.

    At each node, the product of the nonzero factors is formed once and each
    player's term ``prod_{j != i} f_j`` is that product divided by ``f_i``
    (correctly rounded): with no zero factor, for every player; with one,
    only the zero's player has a (nonzero) term; with two or more, none has.
    The terms go to ``s.integral``, whose common binary exponent is
    ``integral_exponent[0]``; it is raised (and the sums rescaled) when a
    block's products are larger.

    Dividing by a nonzero factor cannot overflow: with ``max(|a|, |b|)`` in
    (1/2, 1], a computed ``f(t) = b + t (a - b)`` is either 0 or at least
    about ``2**-54 * min(t, 1 - t)``, far from the float64 limits for any
    Gauss–Legendre node, and the quotient is at most ``2**_HEADROOM`` times
    that.
    """
    cdef Py_ssize_t p, k
    cdef double mantissa[_BLOCK]
    cdef double alone[_BLOCK]
    cdef double terms[_BLOCK]
    cdef int exponent[_BLOCK]
    cdef int n_zeros[_BLOCK]
    cdef Py_ssize_t zero_at[_BLOCK]
    cdef double f
    cdef int shift, block_exponent = 0
    cdef bint contributes = False, any_zero = False

    cdef bint safe = _node_products(
        s, n, nodes, mantissa, exponent, n_zeros, zero_at
    )

    if safe:
        # Plain products, far from the float64 limits: exponent 0 for all.
        for k in range(_BLOCK):
            mantissa[k] = node_weights[k] * mantissa[k]
        contributes = True
    else:
        for k in range(_BLOCK):
            if n_zeros[k] <= 1:
                mantissa[k] = node_weights[k] * frexp(mantissa[k], &shift)
                exponent[k] += shift
                if not contributes or exponent[k] > block_exponent:
                    block_exponent = exponent[k]
                contributes = True
    if not contributes:
        return
    if block_exponent > integral_exponent[0] + _HEADROOM:
        for p in range(n):
            s.integral[p] = ldexp(s.integral[p], integral_exponent[0] - block_exponent)
        integral_exponent[0] = block_exponent
    if safe:
        if integral_exponent[0] != 0:
            for k in range(_BLOCK):
                mantissa[k] = ldexp(mantissa[k], -integral_exponent[0])
    else:
        for k in range(_BLOCK):
            if n_zeros[k] <= 1:
                mantissa[k] = ldexp(mantissa[k], exponent[k] - integral_exponent[0])
            else:
                mantissa[k] = 0.0
            alone[k] = mantissa[k] if n_zeros[k] == 1 else 0.0
            if n_zeros[k] > 0:
                mantissa[k] = 0.0
                any_zero = True

    if not any_zero:
        for p in range(n):
            for k in range(_BLOCK):
                terms[k] = mantissa[k] / _factor(s, p, nodes[k])
            s.integral[p] += _block_sum(terms)
        return
    for p in range(n):
        for k in range(_BLOCK):
            f = _factor(s, p, nodes[k])
            terms[k] = mantissa[k] / (f + (f == 0.0)) + (
                alone[k] if zero_at[k] == p else 0.0
            )
        s.integral[p] += _block_sum(terms)


cdef void _game_values(
    const double *gap,
    const double *b,
    double weight,
    int weight_exponent,
    Py_ssize_t n_players,
    Rule rule,
    double *out,
    _Scratch s,
) noexcept nogil:
    """Add one game's values to ``out`` (length ``n_players``)."""
    cdef Py_ssize_t j, k, p, q, n = 0
    cdef double block_nodes[_BLOCK]
    cdef double block_weights[_BLOCK]
    cdef int shift, scale_exponent = weight_exponent
    cdef double constant = 1.0, largest, a, mantissa, scale
    cdef int constant_exponent = 0, integral_exponent = _UNSET

    for j in range(n_players):
        if gap[j] == 0.0:
            _multiply(&constant, &constant_exponent, b[j])
        else:
            a = b[j] + gap[j]
            largest = fabs(a) if fabs(a) > fabs(b[j]) else fabs(b[j])
            # Scale by a power of two so that 1/2 < max(|a|, |b|) <= 1: factors
            # of 1 (as in pure games) stay exactly 1.
            if 0.5 < largest <= 1.0:
                s.gap_scaled[n] = gap[j]
                s.b_scaled[n] = b[j]
            else:
                if frexp(largest, &shift) == 0.5:
                    shift -= 1
                s.gap_scaled[n] = ldexp(gap[j], -shift)
                s.b_scaled[n] = ldexp(b[j], -shift)
                scale_exponent += shift
            s.players[n] = j
            n += 1
    if n == 0 or constant == 0.0 or weight == 0.0:
        return

    for p in range(n):
        s.integral[p] = 0.0
    for q in range((rule.n_points + _BLOCK - 1) // _BLOCK):
        # A short last block is padded with copies of its last node, weighted 0.
        for k in range(_BLOCK):
            block_nodes[k] = rule.nodes[min(q * _BLOCK + k, rule.n_points - 1)]
            block_weights[k] = (
                rule.weights[q * _BLOCK + k]
                if q * _BLOCK + k < rule.n_points
                else 0.0
            )
        _add_block(s, n, block_nodes, block_weights, &integral_exponent)

    _multiply(&constant, &constant_exponent, weight)
    constant = frexp(constant, &shift)
    scale_exponent += constant_exponent + integral_exponent + shift
    if -1074 <= scale_exponent <= 1023:
        # 2**scale_exponent is a double, and multiplying by it rounds as ldexp
        # does: once, and only if the result is subnormal.
        scale = ldexp(1.0, scale_exponent)
        for p in range(n):
            out[s.players[p]] += (
                constant * s.gap_scaled[p] * s.integral[p]
            ) * scale
        return
    for p in range(n):
        # frexp first, in its own statement: C leaves argument order open.
        mantissa = frexp(s.integral[p], &shift)
        out[s.players[p]] += _to_double(
            constant * s.gap_scaled[p] * mantissa,
            scale_exponent + shift,
        )


def product_game_values(
    const double[:, ::1] gap,
    const double[:, ::1] b,
    const double[::1] weights,
    const int[::1] weight_exponents,
    rules,
    double[:, ::1] out,
    bint reduce,
    int n_threads,
    int[::1] out_of_memory,
):
    """Fill ``out`` with the values of games ``v(S) = weights[g] *
    2**weight_exponents[g] * prod_S a[g] * prod_(N-S) b[g]``, given by
    ``b`` and ``gap = a - b``.

    Game ``g`` uses its rule of ``rules`` (a ``_quadrature.Rules``). With
    ``reduce``, ``out`` has one zeroed row per thread and each thread adds its
    games' values to its row; otherwise ``out`` is zeroed with one row per
    game. A thread that cannot
    allocate its scratch memory sets ``out_of_memory[0]``.
    """
    cdef Py_ssize_t n_games = gap.shape[0], n_players = gap.shape[1]
    cdef Py_ssize_t g, row
    cdef _Scratch scratch
    cdef Rules rule_table = rules_view(rules)

    with nogil, parallel(num_threads=n_threads):
        scratch = _allocate(n_players)
        for g in prange(n_games, schedule="guided"):
            if not _allocated(scratch):
                out_of_memory[0] = 1
                continue
            row = threadid() if reduce else g
            _game_values(
                &gap[g, 0], &b[g, 0], weights[g], weight_exponents[g],
                n_players, rule_of(&rule_table, g), &out[row, 0], scratch,
            )
        _release(scratch)


# Games per task of ``pure_game_sums``: a fixed partition of each row's games,
# whatever the number of threads, so that the sums are too.
cdef enum:
    _GAMES_PER_TASK = 8

GAMES_PER_TASK = _GAMES_PER_TASK


def pure_game_sums(
    const double[:, ::1] gap,
    const double[:, ::1] weights,
    rules,
    double[:, :, ::1] partial,
    double[:, :, ::1] out,
    int n_threads,
    int[::1] out_of_memory,
):
    """Add to ``out[r, o]`` the values of row ``r``'s pure games, weighted.

    Row ``r`` has the games ``r * n + i`` for ``i < n`` (``n = len(weights)``)
    with ``b = 1`` and the gaps ``gap[r * n + i]``; game ``i`` of a row counts
    ``weights[i, o]`` times in output ``o``. Game ``g`` uses its rule of
    ``rules``.

    The games of a row are cut into tasks of ``GAMES_PER_TASK`` consecutive
    games, spread over the threads; each task sums its games in order into
    its own slice of ``partial`` (one per task: of shape (n_rows * n_tasks,
    n_outputs, n_players)), and the tasks are then added in order: the sums
    do not depend on the number of threads, nor on the other rows. A thread
    that cannot allocate its scratch memory sets ``out_of_memory[0]``.
    """
    cdef Py_ssize_t n_per_row = weights.shape[0], n_outputs = weights.shape[1]
    cdef Py_ssize_t n_rows = out.shape[0], n_players = gap.shape[1]
    cdef Py_ssize_t n_tasks = (n_per_row + _GAMES_PER_TASK - 1) // _GAMES_PER_TASK
    # Initialized: the parallel block copies them into each thread.
    cdef Py_ssize_t task, row, first, i, g, o, p, k, j = 0
    cdef _Scratch scratch
    cdef double *ones = NULL
    cdef double *values = NULL
    cdef double weight, total
    cdef Rules rule_table = rules_view(rules)

    with nogil, parallel(num_threads=n_threads):
        scratch = _allocate(n_players)
        ones = <double *> malloc(2 * n_players * sizeof(double))
        values = ones + n_players
        if ones != NULL:
            for j in range(n_players):
                ones[j] = 1.0
        for task in prange(n_rows * n_tasks, schedule="dynamic"):
            if not _allocated(scratch) or ones == NULL:
                out_of_memory[0] = 1
                continue
            row = task // n_tasks
            first = (task % n_tasks) * _GAMES_PER_TASK
            for o in range(n_outputs):
                for p in range(n_players):
                    partial[task, o, p] = 0.0
            for i in range(first, min(first + _GAMES_PER_TASK, n_per_row)):
                g = row * n_per_row + i
                for p in range(n_players):
                    values[p] = 0.0
                _game_values(
                    &gap[g, 0], ones, 1.0, 0, n_players, rule_of(&rule_table, g),
                    values, scratch,
                )
                for o in range(n_outputs):
                    weight = weights[i, o]
                    # One-vs-one outputs leave most reference points out.
                    if weight != 0.0:
                        for p in range(n_players):
                            partial[task, o, p] += weight * values[p]
        free(ones)
        _release(scratch)
        # In the same parallel region (each prange ends with a barrier);
        # guided, as the tasks: each sum's order is fixed by its tasks.
        for k in prange(n_rows * n_outputs * n_players, schedule="guided"):
            total = 0.0
            for i in range(n_tasks):
                total = total + partial[
                    k // (n_outputs * n_players) * n_tasks + i,
                    k // n_players % n_outputs,
                    k % n_players,
                ]
            out[k // (n_outputs * n_players), k // n_players % n_outputs,
                k % n_players] += total


def group_factors(
    const double[:, ::1] a,
    const double[:, ::1] b,
    const Py_ssize_t[::1] members,
    const Py_ssize_t[::1] group_start,
    double[:, ::1] a_out,
    double[:, ::1] b_out,
    int[::1] exponents_out,
    int n_threads,
):
    """Factors of the quotient game in which each group acts as one player.

    Group ``k`` holds players ``members[group_start[k]:group_start[k + 1]]``;
    its factors are the products of its members' factors. They are stored as
    ``a_out * 2**s``, ``b_out * 2**s`` with one exponent ``s`` per group and
    game, chosen so that ``max(|a_out|, |b_out|)`` lies in [1/2, 1); each
    game's exponents are summed into ``exponents_out[g]``.
    """
    cdef Py_ssize_t n_games = a.shape[0], n_groups = group_start.shape[0] - 1
    cdef Py_ssize_t g, k, m
    cdef double product_a, product_b
    cdef int exponent_a, exponent_b, common, total

    for g in prange(n_games, nogil=True, num_threads=n_threads):
        total = 0
        for k in range(n_groups):
            product_a = 1.0
            product_b = 1.0
            exponent_a = 0
            exponent_b = 0
            for m in range(group_start[k], group_start[k + 1]):
                _multiply(&product_a, &exponent_a, a[g, members[m]])
                _multiply(&product_b, &exponent_b, b[g, members[m]])
            product_a = frexp(product_a, &common)
            exponent_a = exponent_a + common
            product_b = frexp(product_b, &common)
            exponent_b = exponent_b + common
            if product_a == 0.0:
                common = exponent_b
            elif product_b == 0.0 or exponent_a > exponent_b:
                common = exponent_a
            else:
                common = exponent_b
            a_out[g, k] = ldexp(product_a, exponent_a - common)
            b_out[g, k] = ldexp(product_b, exponent_b - common)
            total = total + common
        exponents_out[g] = total


def game_statistics(
    const double[:, ::1] gap,
    const double[:, ::1] b,
    Py_ssize_t[::1] n_moving,
    double[::1] mean_gap,
    int n_threads,
):
    """Per game: the number of non-dummy players and their mean scaled gap.

    The scaled gap of a player is ``|a - b| / max(|a|, |b|)`` (in [0, 2]),
    from ``gap = a - b`` and ``b``; the ``"auto"`` rule's error bound grows
    with the mean scaled gap of the non-dummies.
    """
    cdef Py_ssize_t n_games = gap.shape[0], n_players = gap.shape[1]
    cdef Py_ssize_t g, j, count
    cdef double total, largest, a

    for g in prange(n_games, nogil=True, num_threads=n_threads):
        count = 0
        total = 0.0
        for j in range(n_players):
            if gap[g, j] != 0.0:
                a = b[g, j] + gap[g, j]
                largest = fabs(a) if fabs(a) > fabs(b[g, j]) else fabs(b[g, j])
                total = total + fabs(gap[g, j]) / largest
                count = count + 1
        n_moving[g] = count
        mean_gap[g] = total / count if count > 0 else 0.0
