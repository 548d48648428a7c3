# The models' routing rule at an internal node, written once for the compiled
# tree kernels (_tree_core.pyx, _interactions_core.pyx, _interventional_core.pyx).

from libc.math cimport fabs, isnan


cdef extern from "_sides.h" nogil:
    void sides_numeric(
        const double *x, Py_ssize_t n, double threshold, unsigned char missing_left,
        unsigned char *went_left,
    )


cdef struct Routing:
    # A TreeEnsemble's split conditions (see _table.py), read-only.
    const double *threshold
    const unsigned char *missing_left   # bit 0: missing goes left; bit 1:
                                        # |x| <= zero_as_missing is missing
    const unsigned char *is_categorical
    const unsigned int *bitset          # (n_nodes, 8)
    double zero_as_missing              # LightGBM's kZeroThreshold


cdef inline bint goes_left(const Routing *routing, Py_ssize_t node, double x) noexcept nogil:
    """Whether a row with value ``x`` goes to ``node``'s left child."""
    cdef int category
    cdef unsigned char missing = routing.missing_left[node]
    if isnan(x) or (missing & 2 and fabs(x) <= routing.zero_as_missing):
        return missing & 1
    if routing.is_categorical[node]:
        if not (0.0 <= x < 256.0) or x != <int> x:
            return False
        category = <int> x
        return (routing.bitset[node * 8 + category // 32] >> (category % 32)) & 1
    return x <= routing.threshold[node]


cdef inline bint plain_numeric(const Routing *routing, Py_ssize_t node) noexcept nogil:
    """Whether ``node`` splits on a threshold alone: no categories, no zero as
    missing (NaN still goes to its side). Such splits take vectorized loops
    (``_sides.h``)."""
    return not (routing.is_categorical[node] or routing.missing_left[node] & 2)


cdef inline void route_block(
    const Routing *routing, Py_ssize_t node, const double *x, Py_ssize_t n,
    unsigned char *went_left,
) noexcept nogil:
    """``went_left[r] = goes_left(routing, node, x[r])`` for ``n`` values."""
    cdef Py_ssize_t r
    if plain_numeric(routing, node):
        sides_numeric(
            x, n, routing.threshold[node], routing.missing_left[node] & 1, went_left
        )
        return
    for r in range(n):
        went_left[r] = goes_left(routing, node, x[r])
