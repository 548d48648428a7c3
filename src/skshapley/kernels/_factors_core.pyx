"""Compiled kernel factors of ProductKernelExplainer's games.

The game of row ``x`` and reference point ``r`` is pure, with factors
``a_p = prod_{j in p} k_j(x_j, r_j)`` per player ``p`` (a feature, or a
group of features). Every supported kernel is ``exp(-distance)``, so
``log a_p`` is a sum of ``-gamma_j distance_j`` over the player's features,
and the core reads the gap ``a_p - 1 = expm1(log a_p)``: exact to rounding
where ``a_p`` is near 1, and never underflowing before the core scales it.

One pass per game, spread over OpenMP threads, each game written by one
thread only: the values do not depend on the number of threads. It also
counts each game's non-dummy players and their mean scaled gap (what
``_quadrature.game_statistics`` gives for ``b = 1``: ``a_p`` is at most 1,
so the scaled gap ``|a_p - 1| / max(|a_p|, 1)`` is ``|a_p - 1|``).
"""

from cython.parallel cimport prange
from libc.math cimport expm1, fabs


def kernel_gaps(
    const double[:, ::1] X,
    const double[:, ::1] reference,
    const double[::1] squared,
    const double[::1] absolute,
    const double[::1] chi2,
    const Py_ssize_t[::1] players,
    double[:, ::1] gaps,
    Py_ssize_t[::1] n_moving,
    double[::1] mean_gap,
    int n_threads,
):
    """Fill ``gaps[g]`` for the game ``g = row * n_references + reference``.

    ``gaps`` has shape (n_rows * n_references, n_players); feature ``j``
    belongs to player ``players[j]``, and a player without features is a
    dummy (gap 0). ``n_moving`` and ``mean_gap`` receive the games'
    statistics. The distances are those of ``KernelComponent.log_factors``.
    """
    cdef Py_ssize_t n_rows = X.shape[0], n_references = reference.shape[0]
    cdef Py_ssize_t n_features = X.shape[1], n_players = gaps.shape[1]
    cdef Py_ssize_t g, i, j, p, count
    cdef double difference, total, log_k
    cdef double *row

    for g in prange(n_rows * n_references, nogil=True, num_threads=n_threads,
                    schedule="static"):
        i = g // n_references
        row = &gaps[g, 0]
        for p in range(n_players):
            row[p] = 0.0
        for j in range(n_features):
            difference = X[i, j] - reference[g % n_references, j]
            log_k = -(squared[j] * (difference * difference))
            log_k = log_k - absolute[j] * fabs(difference)
            total = X[i, j] + reference[g % n_references, j]
            if chi2[j] != 0.0 and total != 0.0:
                log_k = log_k - chi2[j] * (difference * difference / total)
            row[players[j]] += log_k
        count = 0
        total = 0.0
        for p in range(n_players):
            row[p] = expm1(row[p])
            if row[p] != 0.0:
                count = count + 1
                total = total + fabs(row[p])
        n_moving[g] = count
        mean_gap[g] = total / count if count > 0 else 0.0
