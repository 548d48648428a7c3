"""Compiled kernel factors of ProductKernelExplainer's games.

The game of row ``x`` and reference point ``r`` is pure, with factors
``a_p = prod_{j in p} k_j(x_j, r_j)`` per player ``p`` (a feature, or a
group of features). Every supported kernel is ``exp(-distance)``, so
``log a_p`` is a sum of ``-gamma_j distance_j`` over the player's features
(``kernel_log_factors``); the core reads the gap ``a_p - 1 = expm1(log
a_p)``, exact to rounding where ``a_p`` is near 1 and never underflowing
before the core scales it. (NumPy's ``expm1`` takes it: vectorized, it is
~15 times faster than the C library's, whose cost would exceed the
quadrature's.) ``pure_game_statistics`` then counts each game's non-dummy
players and their mean scaled gap.

Each game is written by one thread only: the values do not depend on the
number of threads.
"""

from cython.parallel cimport prange
from libc.math cimport fabs


def kernel_log_factors(
    const double[:, ::1] X,
    const double[:, ::1] reference,
    const double[::1] squared,
    const double[::1] absolute,
    const double[::1] chi2,
    const Py_ssize_t[::1] players,
    double[:, ::1] out,
    int n_threads,
):
    """Fill ``out[g]`` with the log factors of game ``g = row * n_references +
    reference``.

    ``out`` has shape (n_rows * n_references, n_players); feature ``j``
    belongs to player ``players[j]`` (a player without features keeps log
    factor 0: a dummy). ``log k_j = -(squared_j (x - r)**2 + absolute_j |x -
    r| + chi2_j (x - r)**2 / (x + r))``, the chi-squared term 0 where ``x +
    r = 0``.
    """
    cdef Py_ssize_t n_rows = X.shape[0], n_references = reference.shape[0]
    cdef Py_ssize_t n_features = X.shape[1], n_players = out.shape[1]
    cdef Py_ssize_t g, j, p
    cdef const double *x
    cdef const double *r
    cdef double *row
    cdef bint has_chi2 = False, grouped = n_players != n_features

    for j in range(n_features):
        has_chi2 = has_chi2 or chi2[j] != 0.0
        grouped = grouped or players[j] != j

    # Guided: a thread that shares its core with other work takes fewer games
    # (each game's factors are its own: the values do not depend on it).
    for g in prange(n_rows * n_references, nogil=True, num_threads=n_threads,
                    schedule="guided"):
        x = &X[g // n_references, 0]
        r = &reference[g % n_references, 0]
        row = &out[g, 0]
        if grouped:
            for p in range(n_players):
                row[p] = 0.0
            for j in range(n_features):
                row[players[j]] += _log_kernel(
                    x[j] - r[j], x[j] + r[j], squared[j], absolute[j], chi2[j],
                    has_chi2,
                )
        else:
            for j in range(n_features):
                row[j] = _log_kernel(
                    x[j] - r[j], x[j] + r[j], squared[j], absolute[j], chi2[j],
                    has_chi2,
                )


cdef inline double _log_kernel(
    double difference,
    double total,
    double squared,
    double absolute,
    double chi2,
    bint has_chi2,
) noexcept nogil:
    """``log k_j(x_j, r_j)`` from ``x_j - r_j`` and ``x_j + r_j``."""
    cdef double log_k = -(squared * (difference * difference))
    log_k = log_k - absolute * fabs(difference)
    if has_chi2 and chi2 != 0.0 and total != 0.0:
        log_k = log_k - chi2 * (difference * difference / total)
    return log_k


def pure_game_statistics(
    const double[:, ::1] gaps,
    Py_ssize_t[::1] n_moving,
    double[::1] mean_gap,
    int n_threads,
):
    """``_quadrature.game_statistics`` of pure games (``b = 1``).

    Kernel factors ``a`` are at most 1, so a player's scaled gap ``|a - 1| /
    max(|a|, 1)`` is its ``|gap|``.
    """
    cdef Py_ssize_t n_games = gaps.shape[0], n_players = gaps.shape[1]
    cdef Py_ssize_t g, p, count
    cdef double total

    for g in prange(n_games, nogil=True, num_threads=n_threads, schedule="guided"):
        count = 0
        total = 0.0
        for p in range(n_players):
            if gaps[g, p] != 0.0:
                count = count + 1
                total = total + fabs(gaps[g, p])
        n_moving[g] = count
        mean_gap[g] = total / count if count > 0 else 0.0
