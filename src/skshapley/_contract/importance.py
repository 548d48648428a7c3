"""Global feature importance from Shapley values, as a tidy table."""

import numpy as np
import pandas as pd

from .._runtime.dask import is_dask_collection, lazy_moments


def importance(phi: pd.DataFrame) -> pd.DataFrame:
    """Mean absolute Shapley value, mean, spread and rank of each feature.

    Parameters
    ----------
    phi : pandas.DataFrame or dask.dataframe.DataFrame
        Shapley values as an explainer's ``explain`` returns them: one row
        per sample, one column per feature, or columns ``(output, feature)``
        for several outputs. A lazy Dask DataFrame (``explain`` of a Dask
        DataFrame) is computed in one pass, with one ``dask.compute``: the
        table is that of the computed frame, up to rounding (partitions are
        summed separately).

    Returns
    -------
    table : pandas.DataFrame
        One row per feature (index ``feature``), or per ``(output, feature)``
        for several outputs, sorted by output and then by rank. Columns:
        ``mean_abs`` (mean of ``|phi|``: the global importance), ``mean``
        (mean of ``phi``: the average direction), ``std`` (standard
        deviation of ``phi``, ``ddof=0``) and ``rank`` (1 for the largest
        ``mean_abs`` of its output; ties share the smaller rank).

    Examples
    --------
    >>> import pandas as pd
    >>> from skshapley import importance
    >>> phi = pd.DataFrame({"age": [1.0, -3.0], "bmi": [0.5, 0.5]})
    >>> importance(phi)
             mean_abs  mean  std  rank
    feature
    age           2.0  -1.0  2.0     1
    bmi           0.5   0.5  0.0     2

    A lazy Dask frame gives the same table, computed in one pass:

    >>> import dask.dataframe as dd
    >>> importance(dd.from_pandas(phi, npartitions=2)).equals(importance(phi))
    True
    """
    if is_dask_collection(phi):
        return _table(*lazy_moments(phi), phi.columns)
    if not isinstance(phi, pd.DataFrame):
        raise TypeError(
            f"phi must be the DataFrame an explainer returns, got {type(phi).__name__}."
        )
    if len(phi) == 0:
        raise ValueError("phi has no rows: explain at least one sample.")
    values = phi.to_numpy(dtype=np.float64)
    moments = (np.abs(values).mean(axis=0), values.mean(axis=0), values.std(axis=0))
    return _table(*moments, phi.columns)


def _table(
    mean_abs: np.ndarray, mean: np.ndarray, std: np.ndarray, columns: pd.Index
) -> pd.DataFrame:
    """The importance table of each column's moments, ranked and sorted."""
    table = pd.DataFrame(
        {"mean_abs": mean_abs, "mean": mean, "std": std}, index=columns
    )
    if isinstance(columns, pd.MultiIndex):
        table.index = table.index.set_names(["output", "feature"])
        by_output = table.groupby(level=0, sort=False)["mean_abs"]
        table["rank"] = by_output.rank(ascending=False, method="min").astype(int)
        order = pd.Index(table.index.get_level_values(0).unique())
        position = order.get_indexer(table.index.get_level_values(0))
        return table.iloc[np.lexsort((table["rank"].to_numpy(), position))]
    table.index.name = "feature"
    table["rank"] = table["mean_abs"].rank(ascending=False, method="min").astype(int)
    return table.sort_values("rank", kind="stable")
