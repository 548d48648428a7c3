"""Global feature importance from Shapley values, as a tidy table."""

import numpy as np
import pandas as pd


def importance(phi: pd.DataFrame) -> pd.DataFrame:
    """Mean absolute Shapley value, mean, spread and rank of each feature.

    Parameters
    ----------
    phi : pandas.DataFrame
        Shapley values as an explainer's ``explain`` returns them: one row
        per sample, one column per feature, or columns ``(output, feature)``
        for several outputs.

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
    """
    if not isinstance(phi, pd.DataFrame):
        raise TypeError(
            f"phi must be the DataFrame an explainer returns, got {type(phi).__name__}."
        )
    if len(phi) == 0:
        raise ValueError("phi has no rows: explain at least one sample.")
    values = phi.to_numpy(dtype=np.float64)
    table = pd.DataFrame(
        {
            "mean_abs": np.abs(values).mean(axis=0),
            "mean": values.mean(axis=0),
            "std": values.std(axis=0),
        },
        index=phi.columns,
    )
    if isinstance(phi.columns, pd.MultiIndex):
        table.index = table.index.set_names(["output", "feature"])
        by_output = table.groupby(level=0, sort=False)["mean_abs"]
        table["rank"] = by_output.rank(ascending=False, method="min").astype(int)
        order = pd.Index(table.index.get_level_values(0).unique())
        position = order.get_indexer(table.index.get_level_values(0))
        return table.iloc[np.lexsort((table["rank"].to_numpy(), position))]
    table.index.name = "feature"
    table["rank"] = table["mean_abs"].rank(ascending=False, method="min").astype(int)
    return table.sort_values("rank", kind="stable")
