"""Translate scikit-learn's ``n_jobs`` convention into an OpenMP thread count."""

import os
from numbers import Integral


def effective_n_threads(n_jobs: int | None) -> int:
    """Number of OpenMP threads to use for ``n_jobs``.

    ``None`` and ``-1`` mean every CPU this process may run on, as in
    scikit-learn's OpenMP-based estimators; ``-2`` all but one, and so on.
    A positive integer is capped at those CPUs: more threads than CPUs
    would not run any faster, but each thread allocates its own scratch
    memory, so ``n_jobs=10**5`` would exhaust memory (or OpenMP).

    Raises ``ValueError`` unless ``n_jobs`` is None or a nonzero integer.
    """
    if n_jobs is None:
        n_jobs = -1
    # (type() first: the ABC check takes longer than the rest of the call.)
    integer = type(n_jobs) is int or (
        isinstance(n_jobs, Integral) and not isinstance(n_jobs, bool)
    )
    if not integer or n_jobs == 0:
        raise ValueError(
            f"n_jobs must be None or a nonzero integer (-1 for all CPUs), got "
            f"{n_jobs!r}."
        )
    n_cpus = _available_cpus()
    if n_jobs > 0:
        return min(int(n_jobs), n_cpus)
    return max(1, n_cpus + 1 + int(n_jobs))


def _available_cpus() -> int:
    """The CPUs this process may run on (its affinity mask, where known)."""
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:  # not on Linux
        return os.cpu_count() or 1
