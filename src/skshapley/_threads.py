"""Translate scikit-learn's ``n_jobs`` convention into an OpenMP thread count."""

import os
from numbers import Integral


def effective_n_threads(n_jobs: int | None) -> int:
    """Number of OpenMP threads to use for ``n_jobs``.

    ``None`` and ``-1`` mean every CPU this process may run on, as in
    scikit-learn's OpenMP-based estimators; ``-2`` all but one, and so on;
    a positive integer is taken as is.
    """
    if n_jobs is None:
        n_jobs = -1
    if not isinstance(n_jobs, Integral) or isinstance(n_jobs, bool) or n_jobs == 0:
        raise ValueError(f"n_jobs must be None or a nonzero integer, got {n_jobs!r}.")
    if n_jobs > 0:
        return int(n_jobs)
    try:
        n_cpus = len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        n_cpus = os.cpu_count() or 1
    return max(1, n_cpus + 1 + int(n_jobs))
