"""Compiled loops of the product-game core.

A product game on players ``0..d-1`` has ``v(S) = w * prod_{j in S} a_j *
prod_{j not in S} b_j``. The Shapley value of player ``i`` is

    phi_i = w * (a_i - b_i) * Integral_0^1 prod_{j != i} f_j(t) dt,
    f_j(t) = b_j + t * (a_j - b_j),

which these kernels evaluate with a quadrature rule chosen per game by the
Python wrapper (``_product.py``), which also validates and allocates.

Numerics. No product here can overflow or underflow:

* every non-dummy player is scaled by an exact power of two so that
  ``max(|a_j|, |b_j|)`` lies in (1/2, 1]; then every ``|f_j(t)|`` is at most 1
  on [0, 1] and the exponents removed are added back once, at the end;
* running products are kept as a mantissa and a separate integer exponent,
  renormalized (exactly, by ``frexp``) when the mantissa drops below 2**-400;
* ``prod_{j != i} f_j`` is a prefix product times a suffix product: no
  division, so zero factors are exact and the work is O(d) per node.

Dummies (``a_j == b_j``) contribute the constant factor ``b_j`` and get exactly
zero; their factors join the game's constant, so a game costs O(n * m) for its
n non-dummy players and m quadrature points.
"""

from cython.parallel cimport parallel, prange, threadid
from libc.math cimport fabs, frexp, ldexp
from libc.stdlib cimport free, malloc

# Mantissas are renormalized below this (2**-400): a product of two of them
# times a quadrature weight stays far above the subnormal range (2**-1022).
cdef double _TINY = 3.872591914849318e-121
# Products above this (2**-900) times a quadrature weight are still normal.
cdef double _SAFE = 1.1830521861667747e-271


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


cdef inline void _accumulate(
    double *total, int *total_exponent, double value, int value_exponent
) noexcept nogil:
    """Add ``value * 2**value_exponent`` to ``total * 2**total_exponent``.

    Only ever scales down, so nothing overflows; what underflows in the
    alignment is below 2**-74 of the other term.
    """
    if value == 0.0:
        return
    if total[0] == 0.0:
        total[0] = value
        total_exponent[0] = value_exponent
    elif value_exponent == total_exponent[0]:
        total[0] += value
    elif value_exponent > total_exponent[0]:
        total[0] = ldexp(total[0], total_exponent[0] - value_exponent) + value
        total_exponent[0] = value_exponent
    else:
        total[0] += ldexp(value, value_exponent - total_exponent[0])


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
    double *a_scaled        # their factors, scaled so max(|a|, |b|) is in (1/2, 1]
    double *b_scaled
    double *integral        # integral of prod_{j != i} f_j, as mantissa ...
    int *integral_exponent  # ... and binary exponent
    double *partial         # running sum of the unscaled (safe) terms
    # Per player and node of a block (length (n_players + 1) * _BLOCK):
    double *suffix          # prod_{k >= j} f_k(t), as mantissa ...
    int *suffix_exponent    # ... and binary exponent


cdef _Scratch _allocate(Py_ssize_t n_players) noexcept nogil:
    """Scratch buffers for games of ``n_players``; any pointer may be NULL."""
    cdef _Scratch s
    cdef Py_ssize_t size = n_players + 1
    s.players = <Py_ssize_t *> malloc(size * sizeof(Py_ssize_t))
    s.a_scaled = <double *> malloc(4 * size * sizeof(double))
    s.b_scaled = s.a_scaled + size
    s.integral = s.a_scaled + 2 * size
    s.partial = s.a_scaled + 3 * size
    s.integral_exponent = <int *> malloc(size * sizeof(int))
    s.suffix = <double *> malloc(size * _BLOCK * sizeof(double))
    s.suffix_exponent = <int *> malloc(size * _BLOCK * sizeof(int))
    return s


cdef bint _allocated(_Scratch s) noexcept nogil:
    return (
        s.players != NULL and s.a_scaled != NULL and s.integral_exponent != NULL
        and s.suffix != NULL and s.suffix_exponent != NULL
    )


cdef void _release(_Scratch s) noexcept nogil:
    free(s.players)
    free(s.a_scaled)
    free(s.integral_exponent)
    free(s.suffix)
    free(s.suffix_exponent)


cdef inline double _factor(_Scratch s, Py_ssize_t p, double t) noexcept nogil:
    """``f_p(t) = b_p + t (a_p - b_p)`` for the scaled factors of player ``p``."""
    return s.b_scaled[p] + t * (s.a_scaled[p] - s.b_scaled[p])


cdef void _add_block(
    _Scratch s,
    Py_ssize_t n,
    const double *nodes,
    const double *node_weights,
    Py_ssize_t width,
) noexcept nogil:
    """Add ``width`` (<= _BLOCK) quadrature nodes' terms to the integrals.

    Every ``|f_j(t)| <= 1``, so every partial product is at least the full
    product in magnitude. Where the block's full products are at least
    ``_SAFE`` (so no factor is zero and nothing can underflow), each
    ``prod_{j != i} f_j`` is the full product divided by ``f_i``, correctly
    rounded, and the terms go to ``s.partial``. Otherwise
    ``_add_block_scaled`` uses prefix and suffix products with exponents.
    """
    cdef Py_ssize_t p, k
    cdef double full[_BLOCK]
    cdef double total
    cdef bint safe = True

    for k in range(width):
        full[k] = 1.0
    for p in range(n):
        for k in range(width):
            full[k] = full[k] * _factor(s, p, nodes[k])
    for k in range(width):
        safe = safe & (fabs(full[k]) >= _SAFE)
    if not safe:
        _add_block_scaled(s, n, nodes, node_weights, width)
        return

    for k in range(width):
        full[k] = full[k] * node_weights[k]
    for p in range(n):
        total = 0.0
        for k in range(width):
            total = total + full[k] / _factor(s, p, nodes[k])
        s.partial[p] += total


cdef void _add_block_scaled(
    _Scratch s,
    Py_ssize_t n,
    const double *nodes,
    const double *node_weights,
    Py_ssize_t width,
) noexcept nogil:
    """``_add_block`` for any factors, with products as mantissa and exponent.

    Adds to ``s.integral``.
    """
    cdef Py_ssize_t p, k, row
    cdef double prefix[_BLOCK]
    cdef int prefix_exponent[_BLOCK]

    for k in range(width):
        s.suffix[n * _BLOCK + k] = 1.0
        s.suffix_exponent[n * _BLOCK + k] = 0
    for p in range(n - 1, -1, -1):
        row = p * _BLOCK
        for k in range(width):
            s.suffix[row + k] = s.suffix[row + _BLOCK + k] * _factor(s, p, nodes[k])
            s.suffix_exponent[row + k] = s.suffix_exponent[row + _BLOCK + k]
            _renormalize(&s.suffix[row + k], &s.suffix_exponent[row + k])

    for k in range(width):
        prefix[k] = node_weights[k]
        prefix_exponent[k] = 0
    for p in range(n):
        row = (p + 1) * _BLOCK
        for k in range(width):
            _accumulate(
                &s.integral[p], &s.integral_exponent[p],
                prefix[k] * s.suffix[row + k],
                prefix_exponent[k] + s.suffix_exponent[row + k],
            )
            prefix[k] = prefix[k] * _factor(s, p, nodes[k])
            _renormalize(&prefix[k], &prefix_exponent[k])


cdef void _game_values(
    const double *a,
    const double *b,
    double weight,
    int weight_exponent,
    Py_ssize_t n_players,
    const double *nodes,
    const double *node_weights,
    Py_ssize_t n_nodes,
    double *out,
    _Scratch s,
) noexcept nogil:
    """Add one game's values to ``out`` (length ``n_players``)."""
    cdef Py_ssize_t j, p, q, n = 0
    cdef int shift, scale_exponent = weight_exponent
    cdef double constant = 1.0, largest, mantissa
    cdef int constant_exponent = 0

    for j in range(n_players):
        if a[j] == b[j]:
            _multiply(&constant, &constant_exponent, b[j])
        else:
            largest = fabs(a[j]) if fabs(a[j]) > fabs(b[j]) else fabs(b[j])
            # Scale by a power of two so that 1/2 < max(|a|, |b|) <= 1: factors
            # of 1 (as in pure games) stay exactly 1.
            if frexp(largest, &shift) == 0.5:
                shift -= 1
            s.a_scaled[n] = ldexp(a[j], -shift)
            s.b_scaled[n] = ldexp(b[j], -shift)
            scale_exponent += shift
            s.players[n] = j
            n += 1
    if n == 0 or constant == 0.0 or weight == 0.0:
        return

    for p in range(n):
        s.integral[p] = 0.0
        s.integral_exponent[p] = 0
        s.partial[p] = 0.0
    for q in range((n_nodes + _BLOCK - 1) // _BLOCK):
        _add_block(
            s, n, nodes + q * _BLOCK, node_weights + q * _BLOCK,
            min(_BLOCK, n_nodes - q * _BLOCK),
        )

    for p in range(n):
        _accumulate(&s.integral[p], &s.integral_exponent[p], s.partial[p], 0)

    _multiply(&constant, &constant_exponent, weight)
    constant = frexp(constant, &shift)
    scale_exponent += constant_exponent + shift
    for p in range(n):
        # frexp first, in its own statement: C leaves argument order open.
        mantissa = frexp(s.integral[p], &shift)
        out[s.players[p]] += _to_double(
            constant * (s.a_scaled[p] - s.b_scaled[p]) * mantissa,
            scale_exponent + s.integral_exponent[p] + shift,
        )


def product_game_values(
    const double[:, ::1] a,
    const double[:, ::1] b,
    const double[::1] weights,
    const int[::1] weight_exponents,
    const double[::1] nodes,
    const double[::1] node_weights,
    const Py_ssize_t[::1] rule_start,
    const Py_ssize_t[::1] rule_size,
    double[:, ::1] out,
    bint reduce,
    int n_threads,
    int[::1] out_of_memory,
):
    """Fill ``out`` with the values of games ``v(S) = weights[g] *
    2**weight_exponents[g] * prod_S a[g] * prod_(N-S) b[g]``.

    Game ``g`` uses the quadrature rule ``nodes[rule_start[g]:][:rule_size[g]]``
    (and the matching ``node_weights``). With ``reduce``, ``out`` has one
    zeroed row per thread and each thread adds its games' values to its row;
    otherwise ``out`` is zeroed with one row per game. A thread that cannot
    allocate its scratch memory sets ``out_of_memory[0]``.
    """
    cdef Py_ssize_t n_games = a.shape[0], n_players = a.shape[1]
    cdef Py_ssize_t g, row
    cdef _Scratch scratch

    with nogil, parallel(num_threads=n_threads):
        scratch = _allocate(n_players)
        for g in prange(n_games, schedule="guided"):
            if not _allocated(scratch):
                out_of_memory[0] = 1
                continue
            row = threadid() if reduce else g
            _game_values(
                &a[g, 0], &b[g, 0], weights[g], weight_exponents[g],
                n_players,
                &nodes[rule_start[g]], &node_weights[rule_start[g]],
                rule_size[g],
                &out[row, 0], scratch,
            )
        _release(scratch)


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
