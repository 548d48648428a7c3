# The interaction indices of one small product game, added to a row's
# columns: the compiled twin of _product_indices.py for games whose factors
# lie in [0, 1] or close to it (tree paths, kernel reference points), where
# plain products cannot overflow and underflow only below what a float64
# value can hold anyway. Inline, for the kernels that cimport it
# (_indices_core.pyx, trees/_index_core.pyx).
#
# A game has D players, their global numbers in increasing order, and
# factors a (in the coalition) and b (out). Every coalition S of at most
# `order` of its players gets
#
#     prod_{j in S} (a_j - b_j) * sum_p W[|S|, p] Q_S(x_p)   (+ FBII's term)
#
# with Q_S(x) = prod_{j not in S} (b_j + x (a_j - b_j)) at the points x_p:
# the rule's nodes, then 0 and 1/2 where the index weighs them (see
# _index_plan.py for the points and the weights W).
# The coalitions are visited depth first in increasing player order; each
# level keeps the product of the factors of the players skipped so far, and
# a suffix product gives the rest: O(points) per coalition, no division.
# Column: offset[|S|] plus the colexicographic rank sum_i C(s_i, i + 1) of
# the coalition's global players s_0 < s_1 < ..., less first_column: a
# rule may be a window of n_columns columns (games/_index_plan.py,
# ColumnWindow), and coalitions outside it are not recorded.

from libc.stdlib cimport calloc, free


cdef struct IndexRule:
    Py_ssize_t order
    Py_ssize_t n_points
    const double *points            # (n_points,)
    const double *weights           # (order + 1, n_points): W
    const unsigned char *derivative # (order + 1,): FBII below the top order
    Py_ssize_t min_size             # 0 if the empty coalition has a column
    const Py_ssize_t *binomial      # (n_players, order + 1): C(p, i)
    const Py_ssize_t *offset        # (order + 1,): each size's first column
    Py_ssize_t first_column         # the window's first column
    Py_ssize_t n_columns            # and its columns
    Py_ssize_t n_players


cdef struct GameScratch:
    double *factor                  # (max_players, points): b + x (a - b)
    double *suffix                  # (max_players + 1, points)
    double *running                 # (order + 1, points)
    unsigned char *inside           # (max_players,): in the coalition
    double *series                  # (order + 1,): FBII's Taylor terms


cdef inline Py_ssize_t window_column(
    const IndexRule *rule, Py_ssize_t column
) noexcept nogil:
    """The column's place in the rule's window, or -1 outside it."""
    column -= rule.first_column
    return column if 0 <= column < rule.n_columns else -1


cdef inline double _banzhaf_derivative(
    const IndexRule *rule, const GameScratch *scratch, Py_ssize_t n, const double *a,
    const double *b, Py_ssize_t r,
) noexcept nogil:
    """``(-1)**r 2**-(r+1) [h**r] R_S(1/2 + h)``, ``R_S(x) = (Q_S(x) -
    Q_S(0)) / x``, by the recurrence over the players outside ``S`` from the
    last: ``A <- d_j B + (c_j + h d_j) A``, ``B <- b_j B``."""
    cdef double *series = scratch.series
    cdef double suffix = 1.0, gap, centre, sign = 1.0 - 2.0 * (r % 2)
    cdef Py_ssize_t j, i
    for i in range(r + 1):
        series[i] = 0.0
    for j in range(n - 1, -1, -1):
        if scratch.inside[j]:
            continue
        gap = a[j] - b[j]
        centre = b[j] + 0.5 * gap
        for i in range(r, 0, -1):
            series[i] = centre * series[i] + gap * series[i - 1]
        series[0] = centre * series[0] + gap * suffix
        suffix *= b[j]
    for i in range(r + 1):
        sign *= 0.5
    return sign * series[r]


cdef inline void _record(
    const IndexRule *rule, const GameScratch *scratch, Py_ssize_t n, const double *a,
    const double *b, Py_ssize_t size, Py_ssize_t column, double gaps,
    const double *before, const double *after, const double *weights,
    Py_ssize_t n_outputs, double *out,
) noexcept nogil:
    """Add the coalition's value, ``gaps`` (its players' ``a - b``) times
    the functional of ``Q_S = before * after``, to each output's column."""
    cdef Py_ssize_t points = rule.n_points, p, o
    cdef const double *w = rule.weights + size * points
    cdef double value = 0.0
    column = window_column(rule, column)
    if column < 0:
        return
    for p in range(points):
        value += w[p] * before[p] * after[p]
    if rule.derivative[size]:
        value += _banzhaf_derivative(rule, scratch, n, a, b, rule.order - size)
    value *= gaps
    for o in range(n_outputs):
        out[o * rule.n_columns + column] += weights[o] * value


cdef inline void _visit(
    const IndexRule *rule, const GameScratch *scratch, Py_ssize_t n, const double *a,
    const double *b, const Py_ssize_t *players, Py_ssize_t size, Py_ssize_t start,
    Py_ssize_t rank, double gaps, const double *weights, Py_ssize_t n_outputs,
    double *out,
) noexcept nogil:
    """Record every coalition that adds players from ``start`` on to the
    current one (``size`` players, colex ``rank``, product of gaps ``gaps``;
    ``running[size]`` the product of the skipped players' factors)."""
    cdef Py_ssize_t points = rule.n_points, p, c, below
    cdef double *current = scratch.running + (size + 1) * points
    cdef const double *factor
    cdef double gap
    for p in range(points):
        current[p] = scratch.running[size * points + p]
    for c in range(start, n):
        factor = scratch.factor + c * points
        gap = a[c] - b[c]
        if gap != 0.0:  # else every coalition with c is worth 0
            below = rank + rule.binomial[players[c] * (rule.order + 1) + size + 1]
            scratch.inside[c] = 1
            _record(
                rule, scratch, n, a, b, size + 1, rule.offset[size + 1] + below,
                gaps * gap, current, scratch.suffix + (c + 1) * points, weights,
                n_outputs, out,
            )
            if size + 1 < rule.order:
                _visit(
                    rule, scratch, n, a, b, players, size + 1, c + 1, below,
                    gaps * gap, weights, n_outputs, out,
                )
            scratch.inside[c] = 0
        for p in range(points):
            current[p] *= factor[p]


cdef inline void add_game_indices(
    const IndexRule *rule, const GameScratch *scratch, Py_ssize_t n, const double *a,
    const double *b, const Py_ssize_t *players, const double *weights,
    Py_ssize_t n_outputs, double *out,
) noexcept nogil:
    """Add the game's indices, times ``weights[o]``, to ``out[o, column]``
    (``out`` of shape (n_outputs, n_columns)); ``n`` players at most the
    scratch's ``max_players``."""
    cdef Py_ssize_t points = rule.n_points, j, p
    cdef double gap
    cdef double *factor
    for j in range(n):
        factor = scratch.factor + j * points
        gap = a[j] - b[j]
        for p in range(points):
            factor[p] = b[j] + rule.points[p] * gap
    for p in range(points):
        scratch.suffix[n * points + p] = 1.0
        scratch.running[p] = 1.0
    for j in range(n - 1, -1, -1):
        for p in range(points):
            scratch.suffix[j * points + p] = (
                scratch.factor[j * points + p] * scratch.suffix[(j + 1) * points + p]
            )
    if rule.min_size == 0:
        _record(
            rule, scratch, n, a, b, 0, 0, 1.0, scratch.running, scratch.suffix,
            weights, n_outputs, out,
        )
    _visit(rule, scratch, n, a, b, players, 0, 0, 0, 1.0, weights, n_outputs, out)


cdef inline bint allocate_scratch(
    GameScratch *scratch, Py_ssize_t max_players, Py_ssize_t order, Py_ssize_t points
) noexcept nogil:
    """Allocate the buffers; False if any allocation failed (free them anyway)."""
    scratch.factor = <double *> calloc(max_players * points + 1, sizeof(double))
    scratch.suffix = <double *> calloc((max_players + 1) * points, sizeof(double))
    scratch.running = <double *> calloc((order + 1) * points, sizeof(double))
    scratch.inside = <unsigned char *> calloc(max_players + 1, 1)
    scratch.series = <double *> calloc(order + 1, sizeof(double))
    return not (
        scratch.factor == NULL or scratch.suffix == NULL or scratch.running == NULL
        or scratch.inside == NULL or scratch.series == NULL
    )


cdef inline void free_scratch(GameScratch *scratch) noexcept nogil:
    """Free the buffers (any of them NULL)."""
    free(scratch.factor)
    free(scratch.suffix)
    free(scratch.running)
    free(scratch.inside)
    free(scratch.series)
