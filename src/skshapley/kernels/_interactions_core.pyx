"""Compiled loop of ProductKernelExplainer's interaction values.

A reference point's game is pure: ``v(S) = alpha prod_{j in S} a_j`` with
kernel factors ``a_j`` in [0, 1], given as gaps ``g_j = a_j - 1`` in
[-1, 0]. With ``f_j(t) = 1 + t g_j`` in [1 - t, 1], ``u_j = g_j / f_j`` and
``G(t) = prod_j f_j(t)``, its Shapley interaction index of ``j != k`` is
``alpha Integral G u_j u_k dt`` and its Shapley value ``alpha Integral G
u_j dt``. Per quadrature point and reference point that is a rank-one
update of the row's matrix, ``c u u^T`` with ``c = alpha w_q G``: the sum
over references and points is a weighted Gram matrix, accumulated here in
its upper triangle, in loops over contiguous players that the compiler
vectorizes. Factors lie in (0, 1], so ``G`` cannot overflow; it underflows
only where the game's whole contribution is below 1e-300 of ``|alpha|``.

Rows are spread over OpenMP threads, each writing only its own rows, so the
values do not depend on the number of threads.
"""

from cython.parallel cimport parallel, prange
from libc.stdlib cimport free, malloc

import numpy as np


cdef void _add_row(
    const double *gaps,
    const double *weights,
    const double *nodes,
    const double *node_weights,
    Py_ssize_t n_references,
    Py_ssize_t n_outputs,
    Py_ssize_t n_players,
    Py_ssize_t n_points,
    double *u,
    double *index,
    double *phi,
) noexcept nogil:
    """Add one row's games to ``index`` (n_outputs, n_players, n_players;
    upper triangle) and ``phi`` (n_outputs, n_players)."""
    cdef Py_ssize_t m, q, o, j, k
    cdef const double *g
    cdef double t, product, scale, c, cu
    cdef double *block
    for m in range(n_references):
        g = gaps + m * n_players
        for q in range(n_points):
            t = nodes[q]
            product = 1.0
            for j in range(n_players):
                product *= 1.0 + t * g[j]
                u[j] = g[j] / (1.0 + t * g[j])
            scale = node_weights[q] * product
            for o in range(n_outputs):
                c = scale * weights[m * n_outputs + o]
                if c == 0.0:
                    continue
                block = index + o * n_players * n_players
                for j in range(n_players):
                    cu = c * u[j]
                    phi[o * n_players + j] += cu
                    for k in range(j + 1, n_players):
                        block[j * n_players + k] += cu * u[k]


def add_interactions(
    const double[:, :, ::1] gaps,
    const double[:, ::1] weights,
    const double[::1] nodes,
    const double[::1] node_weights,
    double[:, :, :, ::1] index,
    double[:, :, ::1] phi,
    int n_threads,
):
    """Add pure product games' interaction indices and Shapley values.

    ``gaps`` (n_rows, n_references, n_players) are ``a - 1``, ``weights``
    (n_references, n_outputs) the games' weights, ``nodes`` and
    ``node_weights`` the quadrature rule on [0, 1]. ``index`` (n_rows,
    n_outputs, n_players, n_players) receives the indices above its diagonal
    only (the caller mirrors them); ``phi`` (n_rows, n_outputs, n_players)
    the Shapley values.
    """
    cdef Py_ssize_t n_rows = gaps.shape[0], n_references = gaps.shape[1]
    cdef Py_ssize_t n_players = gaps.shape[2], n_outputs = weights.shape[1]
    cdef Py_ssize_t n_points = nodes.shape[0], row
    cdef double *u = NULL
    cdef int[::1] failed = np.zeros(1, dtype=np.intc)
    if n_rows == 0 or n_references == 0 or n_players == 0:
        return
    with nogil, parallel(num_threads=n_threads):
        # Assigned in the parallel block: private to each thread.
        u = <double *> malloc(n_players * sizeof(double))
        for row in prange(n_rows, schedule="dynamic"):
            if u == NULL:
                failed[0] = 1
                continue
            _add_row(
                &gaps[row, 0, 0], &weights[0, 0], &nodes[0], &node_weights[0],
                n_references, n_outputs, n_players, n_points, u,
                &index[row, 0, 0, 0], &phi[row, 0, 0],
            )
        free(u)
    if failed[0]:
        raise MemoryError("Could not allocate the interaction kernel's scratch memory.")
