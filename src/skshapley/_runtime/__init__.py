"""How work runs: memory budgets and chunks of rows, progress, threads,
limits, files, optional libraries, and the lazy (Dask) path, which reaches
the explainers through their public API only."""
