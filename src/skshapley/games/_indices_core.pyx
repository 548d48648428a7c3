"""Compiled interaction indices of batches of small product games.

The games' indices are added by ``_index_games.pxd``; this module holds the
entry points and the IndexRule's view of an ``IndexPlan``'s arrays.
"""

from cython.parallel cimport parallel, prange
from libc.stdlib cimport calloc, free

from ._index_games cimport (
    GameScratch,
    IndexRule,
    add_game_indices,
    allocate_scratch,
    free_scratch,
)

import numpy as np


cdef class RuleView:
    """An ``IndexPlan``'s (or ``ColumnWindow``'s) kernel arrays, kept alive,
    and their IndexRule."""

    def __init__(self, plan):
        cdef const double[::1] points
        cdef const double[:, ::1] weights
        cdef const unsigned char[::1] derivative
        cdef const Py_ssize_t[:, ::1] binomial
        cdef const Py_ssize_t[::1] offset
        self.arrays = plan.kernel_arrays
        points = self.arrays["points"]
        weights = self.arrays["weights"]
        derivative = self.arrays["derivative"]
        binomial = self.arrays["binomial"]
        offset = self.arrays["offset"]
        self.rule.order = plan.order
        self.rule.n_points = points.shape[0]
        self.rule.points = &points[0] if points.shape[0] else NULL
        self.rule.weights = &weights[0, 0] if points.shape[0] else NULL
        self.rule.derivative = &derivative[0]
        self.rule.min_size = plan.sizes.start
        self.rule.binomial = &binomial[0, 0]
        self.rule.offset = &offset[0]
        self.rule.first_column = plan.first_column
        self.rule.n_columns = plan.n_columns
        self.rule.n_players = plan.n_players


def add_row_games(
    RuleView view,
    const double[:, :, ::1] a,
    const double[:, ::1] b,
    const double[:, ::1] weights,
    double[:, :, ::1] out,
    int n_threads,
):
    """Add each row's games' indices to ``out`` (by colexicographic column).

    Row ``r`` has the games ``g`` on all ``n_players`` players with factors
    ``a[r, g]`` and ``b[g]``, weighted by ``weights[g, o]`` in output ``o``;
    ``out`` has shape (n_rows, n_outputs, n_columns). Rows are spread over
    ``n_threads`` OpenMP threads; each row's sums are in game order.
    Raises MemoryError if a thread's scratch cannot be allocated.
    """
    cdef Py_ssize_t n_rows = a.shape[0], n_games = a.shape[1], n_players = a.shape[2]
    cdef Py_ssize_t n_outputs = weights.shape[1], row, g
    cdef Py_ssize_t points = view.rule.n_points
    cdef const IndexRule *rule = &view.rule
    cdef Py_ssize_t[::1] players = np.arange(max(n_players, 1), dtype=np.intp)
    cdef GameScratch *scratch = NULL
    cdef bint ready = False  # (copied into each thread: initialized)
    cdef int[::1] failed = np.zeros(1, dtype=np.intc)
    if n_rows == 0 or n_games == 0:
        return
    with nogil, parallel(num_threads=min(n_threads, n_rows)):
        scratch = <GameScratch *> calloc(1, sizeof(GameScratch))
        ready = scratch != NULL and allocate_scratch(
            scratch, n_players, rule.order, points
        )
        for row in prange(n_rows, schedule="dynamic"):
            if not ready:
                failed[0] = 1
                continue
            for g in range(n_games):
                add_game_indices(
                    rule, scratch, n_players, &a[row, g, 0], &b[g, 0], &players[0],
                    &weights[g, 0], n_outputs, &out[row, 0, 0],
                )
        if scratch != NULL:
            free_scratch(scratch)
            free(scratch)
    if failed[0]:
        raise MemoryError("Could not allocate the interaction indices' scratch memory.")
