# The schedule of a few rows over chunks of trees, written once for the
# compiled tree kernels (_tree_core.pyx, _interactions_core.pyx,
# _interventional_core.pyx). Fewer blocks of rows than threads:
# (block, chunk) items shared between the threads; chunk 0's values go straight
# to the rows' values, chunk c > 0's to partial sums, added in chunk order
# once every item is done: the sums a thread makes walking its block
# through the chunks one after another.

cdef enum:
    # The chunks' sums of a few rows may take this many doubles (32 MiB)
    # (_tree_core's: or as much as its threads' scratch); beyond, each block
    # (or row) runs on one thread. The interventional kernel's bound is its
    # threads' scratch alone (_interventional.Background._explain).
    MAX_PARTIAL_VALUES = 4194304  # 2**22


cdef extern from "_lanes.h" nogil:
    void lanes_add(double *out, const double *a, Py_ssize_t n)


cdef inline double *item_values(
    Py_ssize_t first, Py_ssize_t chunk, Py_ssize_t n_samples, Py_ssize_t row_values,
    double *values, double *partials,
) noexcept nogil:
    """Where the sums of the block from row ``first`` over chunk ``chunk`` go.

    ``values`` is (n_samples, row_values), ``partials`` (n_chunks - 1,
    n_samples, row_values).
    """
    if chunk == 0:
        return values + first * row_values
    return partials + ((chunk - 1) * n_samples + first) * row_values


cdef inline void add_chunk_sums(
    double *values, const double *partials, Py_ssize_t n_samples,
    Py_ssize_t n_chunks, Py_ssize_t row_values,
) noexcept nogil:
    """Add the chunks' ``partials`` to ``values``, row by row in chunk order."""
    cdef Py_ssize_t row, c
    for row in range(n_samples):
        for c in range(1, n_chunks):
            lanes_add(
                values + row * row_values,
                partials + ((c - 1) * n_samples + row) * row_values,
                row_values,
            )
