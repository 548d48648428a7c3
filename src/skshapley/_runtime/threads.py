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


#: The least work worth a thread of its own, in estimated nanoseconds at one
#: thread. Starting a team costs little on idle cores, but on busy ones a
#: thread may wait a whole time slice (milliseconds) to be scheduled, and the
#: call waits for it: a row of a small model took 15 ms at two threads
#: against 0.08 ms at one, with both cores busy. Work of less than this a
#: thread runs on fewer threads.
MIN_THREAD_WORK_NS = 1_000_000


def threads_for(n_threads: int, n_rows: int, row_cost_ns: float | None) -> int:
    """The threads worth starting for ``n_rows`` rows of ``row_cost_ns`` each.

    At most ``n_threads``, and one per ``MIN_THREAD_WORK_NS`` of work (at
    least one); ``n_threads`` if the cost is not known (None). The values
    do not depend on the threads.
    """
    if row_cost_ns is None:
        return n_threads
    threads = int(n_rows * row_cost_ns // MIN_THREAD_WORK_NS)
    return max(1, min(n_threads, threads))
