"""skshapley.importance: the global importance table."""

import numpy as np
import pandas as pd
import pytest

from skshapley import importance


def test_statistics_and_ranks_of_one_output():
    rng = np.random.default_rng(0)
    values = rng.normal(size=(50, 4)) * [1.0, 3.0, 0.1, 2.0]
    phi = pd.DataFrame(values, columns=["a", "b", "c", "d"])
    table = importance(phi)
    assert list(table.index) == ["b", "d", "a", "c"]
    assert table.index.name == "feature"
    assert list(table["rank"]) == [1, 2, 3, 4]
    for name in "abcd":
        column = phi[name].to_numpy()
        assert table.loc[name, "mean_abs"] == pytest.approx(np.abs(column).mean())
        assert table.loc[name, "mean"] == pytest.approx(column.mean())
        assert table.loc[name, "std"] == pytest.approx(column.std())


def test_ties_share_the_smaller_rank():
    phi = pd.DataFrame({"x": [1.0, -1.0], "y": [-1.0, 1.0], "z": [0.0, 0.0]})
    table = importance(phi)
    assert table.loc["x", "rank"] == table.loc["y", "rank"] == 1
    assert table.loc["z", "rank"] == 3


def test_several_outputs_keep_their_order_and_rank_within_each():
    columns = pd.MultiIndex.from_product(
        [["setosa", "other"], ["p", "q"]], names=["output", "feature"]
    )
    phi = pd.DataFrame([[1.0, 2.0, 5.0, 0.0], [1.0, -2.0, -5.0, 1.0]], columns=columns)
    table = importance(phi)
    assert table.index.names == ["output", "feature"]
    assert list(table.index) == [
        ("setosa", "q"),
        ("setosa", "p"),
        ("other", "p"),
        ("other", "q"),
    ]
    assert list(table["rank"]) == [1, 2, 1, 2]
    assert table.loc[("other", "q"), "mean_abs"] == pytest.approx(0.5)


def test_bad_input():
    with pytest.raises(TypeError, match="DataFrame"):
        importance(np.ones((2, 3)))
    with pytest.raises(ValueError, match="no rows"):
        importance(pd.DataFrame(columns=["a"], dtype=float))
