"""How the compiled tree kernels share trees out among threads: chunks."""

import numpy as np

# Trees are walked in at most this many chunks, each worth at least
# CHUNK_WORK node visits per value of a row it adds.
MAX_CHUNKS = 32
CHUNK_WORK = 16


def tree_chunks(ensemble, node_work: np.ndarray, row_values: int) -> np.ndarray:
    """Consecutive trees in chunks of about equal work: their start positions.

    Chunk ``c`` is trees ``start[c]`` to ``start[c + 1]``. The kernels sum
    a row's values chunk by chunk, so that a few rows can use every thread;
    each chunk beyond the first costs a row of ``row_values`` sums to add,
    so chunks are made only where the trees' work (their nodes times
    ``node_work``, each tree's work per node and row) is large against it,
    and at most ``MAX_CHUNKS``. They depend on the model alone: values are
    the same whatever the threads.
    """
    nodes = np.diff(np.append(ensemble.roots, len(ensemble.feature)))
    work = np.cumsum(nodes * node_work, dtype=np.float64)
    n_chunks = int(
        min(MAX_CHUNKS, ensemble.n_trees, work[-1] // (CHUNK_WORK * row_values))
    )
    if n_chunks <= 1:
        return np.array([0, ensemble.n_trees], dtype=np.intp)
    # A chunk ends after the tree that reaches its share of the work.
    ends = np.searchsorted(work, work[-1] * np.arange(1, n_chunks) / n_chunks) + 1
    return np.unique(np.concatenate(([0], ends, [ensemble.n_trees]))).astype(np.intp)
