"""Lazy explanations of Dask collections: the graph is built here, run by Dask.

``explain`` on a ``dask.dataframe.DataFrame`` returns a lazy DataFrame of
values with the same partitions, divisions and index; on a ``dask.array.Array``
a lazy array of shape (n_samples, n_outputs * n_players), rows chunked as
given. Each partition (block) is explained by the explainer's own
``explain``, so its values are those of an in-memory call on the same rows.

The fitted explainer enters the graph once, as one key (``dask.delayed``):
a distributed scheduler sends it to each worker once, not with every task.
Everything that can be checked without the data (fitted, ``output``, the
columns or the number of columns) is checked when the graph is built, so
that a mistake fails in the caller's process and not inside a worker. The
explainer is reached through its public API only: ``explain`` (of no rows,
for those checks and the result's columns; then of each partition) and
``for_partition``.

Dask is imported only when a Dask collection is passed: a Dask collection
cannot exist unless Dask is already imported.
"""

import sys

import numpy as np
import pandas as pd
from sklearn.utils.validation import check_is_fitted

from .._contract.reading import check_shape


def is_dask_collection(X) -> bool:
    """Whether ``X`` is a Dask collection, without importing Dask."""
    if "dask" not in sys.modules:
        return False
    import dask

    return dask.is_dask_collection(X)


def lazy_explanation(explainer, X, *, output=None, progress=None):
    """The lazy Shapley values of a Dask DataFrame or Array ``X``.

    Parameters
    ----------
    explainer : BaseExplainer
        A fitted explainer.
    X : dask.dataframe.DataFrame or dask.array.Array
        The rows to explain: a DataFrame's columns are matched by name as
        in memory; an array's columns are the model's, in order.
    output : object, default=None
        As for ``explain``: one of ``output_names_``, or every output.
    progress : None
        Anything else is refused: ``explain`` computes nothing here, so it
        has no progress to show (Dask's own progress bars do).

    Returns
    -------
    phi : dask.dataframe.DataFrame or dask.array.Array
        For a DataFrame, the frame ``explain`` returns, partition by
        partition (same divisions and index; ``(output, feature)``
        MultiIndex columns for several outputs). For an array, its values
        as float64, shape (n_samples, n_outputs * n_players) in the
        frame's column order, rows chunked as ``X``'s, columns in one chunk.

    Raises
    ------
    TypeError
        If ``X`` is another Dask collection (a Series, a Bag, a Delayed).
    ValueError
        If ``X``'s columns are not the model's (naming them), ``output``
        is not one of ``output_names_``, or ``progress`` is given, before
        anything is computed.
    """
    import dask
    import dask.array as da
    import dask.dataframe as dd

    if not isinstance(X, dd.DataFrame | da.Array):
        raise TypeError(
            "explain reads a dask.dataframe.DataFrame or a dask.array.Array of "
            f"rows; got a {type(X).__module__}.{type(X).__name__}."
        )
    if isinstance(X, da.Array):
        check_is_fitted(explainer)
        check_shape(X.shape, explainer.n_features_in_)  # with its rows, if known
    # No rows, explained in memory: the checks (fitted, output, columns or
    # their number) and the empty frame of the result's columns.
    empty = X._meta if isinstance(X, dd.DataFrame) else np.empty((0, X.shape[1]))
    meta = explainer.explain(empty, output=output)
    if progress is not None and progress is not False:
        raise ValueError(
            "progress is not shown for a Dask collection: explain only builds "
            "the graph. Show Dask's progress while it computes "
            "(dask.diagnostics.ProgressBar, or distributed.progress)."
        )
    # One key holding the explainer: each worker receives it once.
    shipped = dask.delayed(explainer, traverse=False)
    if isinstance(X, dd.DataFrame):
        return X.map_partitions(_explained_partition, shipped, output, meta=meta)
    X = X.rechunk({1: -1})  # a block holds whole rows
    return da.map_blocks(
        _explained_block,
        X,
        shipped,
        output,
        dtype=np.float64,
        chunks=(X.chunks[0], (meta.shape[1],)),
        meta=np.empty((0, 0), dtype=np.float64),
    )


def _explained_partition(
    partition: pd.DataFrame, explainer, output, partition_info=None
) -> pd.DataFrame:
    """The values of one partition, as an in-memory ``explain`` gives them."""
    number = 0 if partition_info is None else partition_info["number"]
    return explainer.for_partition(number).explain(partition, output=output)


def _explained_block(
    block: np.ndarray, explainer, output, block_info=None
) -> np.ndarray:
    """The values of one block of rows, flattened to (n_rows, n_columns)."""
    number = 0 if block_info is None else block_info[0]["chunk-location"][0]
    return explainer.for_partition(number).explain(block, output=output).to_numpy()


def lazy_moments(phi) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each column's mean of ``|phi|``, mean and standard deviation (``ddof=0``).

    ``phi`` is a Dask DataFrame of values, computed once, partition by
    partition, with one ``dask.compute``: each partition gives its count,
    sums and sum of squared deviations from its own mean, which are
    combined with Chan's formula (no sum of squares that could cancel).
    """
    import dask
    import dask.dataframe as dd

    if not isinstance(phi, dd.DataFrame):
        raise TypeError(
            "phi must be the DataFrame an explainer returns (pandas or Dask), "
            f"got a {type(phi).__module__}.{type(phi).__name__}."
        )
    parts = [dask.delayed(_partition_moments)(part) for part in phi.to_delayed()]
    ((counts, abs_sums, sums, squares),) = dask.compute(
        dask.delayed(np.stack)(parts, axis=1)
    )
    n_samples = counts.sum(axis=0)
    if not n_samples.any():
        raise ValueError("phi has no rows: explain at least one sample.")
    mean = sums.sum(axis=0) / n_samples
    with np.errstate(invalid="ignore", divide="ignore"):  # empty partitions
        offsets = np.where(counts > 0, sums / counts - mean, 0.0)
    spread = squares.sum(axis=0) + (counts * offsets**2).sum(axis=0)
    return abs_sums.sum(axis=0) / n_samples, mean, np.sqrt(spread / n_samples)


def _partition_moments(part: pd.DataFrame) -> np.ndarray:
    """A partition's count, sum of ``|phi|``, sum and squared deviations.

    Shape (4, n_columns): the statistics that combine across partitions.
    """
    values = part.to_numpy(dtype=np.float64)
    count = np.full(values.shape[1], float(len(values)))
    deviations = values - values.mean(axis=0) if len(values) else values
    return np.stack(
        [
            count,
            np.abs(values).sum(axis=0),
            values.sum(axis=0),
            (deviations**2).sum(axis=0),
        ]
    )
