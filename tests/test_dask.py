"""Lazy explanations of Dask collections, checked against in-memory ones.

The oracle is the explainer's own in-memory ``explain`` (and ``importance``)
on the computed rows: a Dask result must be the same frame, exactly, with
the same index, columns and partitions. The cluster tests run on a
``distributed.LocalCluster`` of two worker processes (started once for the
module), so the explainer really is pickled and shipped; deselect them with
``-m "not dask_cluster"`` where a cluster cannot start.
"""

import pickle
import warnings

import numpy as np
import pandas as pd
import pytest
from sklearn.compose import ColumnTransformer
from sklearn.ensemble import GradientBoostingRegressor, RandomForestClassifier
from sklearn.exceptions import NotFittedError
from sklearn.kernel_ridge import KernelRidge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler

from skshapley import (
    ExactExplainer,
    PermutationExplainer,
    ProductKernelExplainer,
    TreeExplainer,
    importance,
)

dd = pytest.importorskip("dask.dataframe")
da = pytest.importorskip("dask.array")

N_SAMPLES = 150


def numeric_data(n_features: int = 4) -> tuple[pd.DataFrame, np.ndarray]:
    """Rows with a named, non-default index, and a 3-class target."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        rng.normal(size=(N_SAMPLES, n_features)),
        columns=[f"f{j}" for j in range(n_features)],
        index=pd.Index(np.arange(1000, 1000 + N_SAMPLES), name="id"),
    )
    return X, rng.integers(0, 3, N_SAMPLES)


def tree_case():
    """A multi-output model: (output, feature) MultiIndex columns."""
    X, y = numeric_data()
    model = RandomForestClassifier(n_estimators=5, max_depth=4, random_state=0)
    return TreeExplainer(model.fit(X, y)).fit(), X


def kernel_case():
    X, y = numeric_data()
    model = KernelRidge(kernel="rbf", gamma=0.3, alpha=0.1).fit(X, y)
    return ProductKernelExplainer(model).fit(), X


def pipeline_case():
    """Raw input with a text column, one-hot encoded, grouped per input."""
    X, y = numeric_data(3)
    X["colour"] = np.array(["red", "green", "blue"])[y]
    preprocess = ColumnTransformer(
        [("onehot", OneHotEncoder(), ["colour"])], remainder=StandardScaler()
    )
    model = make_pipeline(preprocess, GradientBoostingRegressor(n_estimators=5))
    model.fit(X, X["f0"] + y)
    return TreeExplainer(model, groups="input").fit(), X


def exact_case():
    X, y = numeric_data(3)
    model = GradientBoostingRegressor(n_estimators=5, random_state=0).fit(X, y)
    return ExactExplainer(model).fit(X.iloc[:8]), X


CASES = {
    "tree": tree_case,
    "kernel": kernel_case,
    "pipeline": pipeline_case,
    "exact": exact_case,
}


@pytest.fixture(scope="module")
def client():
    """A client of two worker processes, one thread each, for the module."""
    distributed = pytest.importorskip("distributed")
    with (
        distributed.LocalCluster(
            n_workers=2,
            processes=True,
            threads_per_worker=1,
            dashboard_address=None,
        ) as cluster,
        distributed.Client(cluster, set_as_default=False) as client,
    ):
        yield client


@pytest.mark.dask_cluster
@pytest.mark.parametrize("case", list(CASES))
def test_frame_on_a_cluster_equals_in_memory(client, case):
    explainer, X = CASES[case]()
    lazy = explainer.explain(dd.from_pandas(X, npartitions=3))
    phi = client.compute(lazy).result()
    expected = explainer.explain(X)
    pd.testing.assert_frame_equal(phi, expected, check_exact=True)
    assert lazy.npartitions == 3
    assert lazy.divisions == dd.from_pandas(X, npartitions=3).divisions
    # The meta promises what the partitions hold.
    pd.testing.assert_frame_equal(lazy._meta, expected.iloc[:0])


@pytest.mark.dask_cluster
def test_array_on_a_cluster_equals_in_memory(client):
    explainer, X = tree_case()
    # Columns in two chunks: rechunked so that a block holds whole rows.
    array = da.from_array(X.to_numpy(), chunks=(40, 2))
    lazy = explainer.explain(array)
    n_columns = len(explainer.output_names_) * len(explainer.player_names_)
    assert lazy.shape == (N_SAMPLES, n_columns)
    assert lazy.chunks == ((40, 40, 40, 30), (n_columns,))
    values = client.compute(lazy).result()
    expected = explainer.explain(X.to_numpy()).to_numpy()
    np.testing.assert_array_equal(values, expected)


@pytest.mark.dask_cluster
def test_lazy_importance_on_a_cluster_equals_in_memory(client):
    explainer, X = tree_case()
    lazy = explainer.explain(dd.from_pandas(X, npartitions=4))
    with dask_config(client):
        table = importance(lazy)
    # Partitions are summed separately, then added: rounding differs from
    # one sum over all rows by a few units in the last place.
    pd.testing.assert_frame_equal(
        table, importance(explainer.explain(X)), rtol=1e-13, atol=1e-15
    )


def dask_config(client):
    """The client as the scheduler of ``dask.compute`` calls in the block."""
    import dask

    return dask.config.set(scheduler=client)


def test_lazy_importance_is_one_compute_of_statistics_not_rows():
    import dask

    explainer, X = tree_case()
    lazy = explainer.explain(dd.from_pandas(X, npartitions=3))
    returned = []

    def scheduler(graph, keys, **kwargs):
        result = dask.get(graph, keys, **kwargs)
        returned.append(len(pickle.dumps(result)))
        return result

    with dask.config.set(scheduler=scheduler):
        importance(lazy)
    # One pass, and what comes back is per-partition statistics (4 numbers
    # per column and partition), far smaller than the values themselves.
    assert len(returned) == 1
    assert returned[0] < explainer.explain(X).to_numpy().nbytes / 4


def test_importance_with_an_empty_partition_and_one_output():
    explainer, X = tree_case()
    frame = dd.from_pandas(X, npartitions=3)
    # The middle partition loses all its rows.
    low, high = frame.divisions[1], frame.divisions[2]
    kept = frame.map_partitions(
        lambda part: part[(part.index < low) | (part.index >= high)]
    )
    rows = X[(X.index < low) | (X.index >= high)]
    with warnings.catch_warnings():
        warnings.simplefilter("error")  # no 0/0 of the empty partition
        table = importance(explainer.explain(kept, output=1))
    expected = importance(explainer.explain(rows, output=1))
    # Rounding of partition sums, as above.
    pd.testing.assert_frame_equal(table, expected, rtol=1e-13, atol=1e-15)


def test_importance_of_no_rows():
    explainer, X = tree_case()
    empty = dd.from_pandas(X, npartitions=2)
    empty = empty[empty["f0"] > 100]
    with pytest.raises(ValueError, match="phi has no rows"):
        importance(explainer.explain(empty))


def test_importance_refuses_other_dask_collections():
    explainer, X = tree_case()
    lazy = explainer.explain(dd.from_pandas(X, npartitions=2))
    with pytest.raises(TypeError, match="Series"):
        importance(lazy[lazy.columns[0]])


def test_nothing_is_computed_before_compute():
    calls = []

    def model(rows):
        calls.append(len(rows))
        return np.asarray(rows, dtype=float).sum(axis=1)

    X, _ = numeric_data(3)
    explainer = ExactExplainer(model).fit(X.iloc[:4])
    before = len(calls)
    lazy = explainer.explain(dd.from_pandas(X, npartitions=3))
    array = explainer.explain(da.from_array(X.to_numpy(), chunks=50))
    assert len(calls) == before
    phi = lazy.compute(scheduler="sync")
    assert len(calls) > before
    pd.testing.assert_frame_equal(phi, explainer.explain(X), check_exact=True)
    np.testing.assert_array_equal(
        array.compute(scheduler="sync"), explainer.explain(X.to_numpy()).to_numpy()
    )


def test_explainer_is_one_key_of_the_graph():
    explainer, X = tree_case()
    lazy = explainer.explain(dd.from_pandas(X, npartitions=3))
    graph = dict(lazy.__dask_graph__())
    size = len(pickle.dumps(explainer))
    # Every task refers to the explainer by its key; none carries a copy.
    carrying = [key for key, task in graph.items() if len(pickle.dumps(task)) > size]
    assert len(carrying) == 1
    assert "TreeExplainer" in str(carrying[0])


@pytest.mark.parametrize("case", ["tree", "pipeline"])
def test_column_mismatch_fails_when_the_graph_is_built(case):
    explainer, X = CASES[case]()
    renamed = X.rename(columns={"f1": "extra"})
    with pytest.raises(ValueError, match=r"missing: \['f1'\], unknown: \['extra'\]"):
        explainer.explain(dd.from_pandas(renamed, npartitions=2))


def test_array_with_other_columns_fails_when_the_graph_is_built():
    explainer, X = tree_case()
    array = da.from_array(X.to_numpy()[:, :3], chunks=50)
    with pytest.raises(ValueError, match=r"shape \(n_samples, 4\).*\(150, 3\)"):
        explainer.explain(array)


def test_frame_picks_one_output():
    explainer, X = tree_case()
    lazy = explainer.explain(dd.from_pandas(X, npartitions=2), output=2)
    expected = explainer.explain(X, output=2)
    pd.testing.assert_frame_equal(
        lazy.compute(scheduler="sync"), expected, check_exact=True
    )
    with pytest.raises(ValueError, match="output"):
        explainer.explain(dd.from_pandas(X, npartitions=2), output="nothing")


def test_refusals_before_the_graph_is_built():
    explainer, X = tree_case()
    frame = dd.from_pandas(X, npartitions=2)
    with pytest.raises(NotFittedError):
        TreeExplainer(explainer.model).explain(frame)
    with pytest.raises(ValueError, match="Dask's progress"):
        explainer.explain(frame, progress=lambda done, total: None)
    with pytest.raises(TypeError, match=r"dask\.dataframe\.DataFrame or a dask\.array"):
        explainer.explain(frame["f0"])


def rowwise_product(X):
    """Three-way interactions, row by row (no batch-dependent rounding)."""
    X = np.asarray(X, dtype=float)
    return X[:, 0] * X[:, 1] * X[:, 2] + X[:, 3]


@pytest.mark.dask_cluster
def test_permutation_on_a_cluster_each_partition_draws_its_own_orderings(client):
    # Partitions are separate calls: each draws from a seed derived from
    # random_state and its number, so a frame and an array with the same
    # row partitions give the same values, twice, and every row adds up.
    rng = np.random.default_rng(4)
    X = pd.DataFrame(rng.normal(size=(60, 4)), columns=list("abcd"))
    explainer = PermutationExplainer(
        rowwise_product, n_permutations=2, random_state=5
    ).fit(X.iloc[:6])
    frame = client.compute(explainer.explain(dd.from_pandas(X, npartitions=3)))
    phi = frame.result()
    again = client.compute(explainer.explain(dd.from_pandas(X, npartitions=3)))
    pd.testing.assert_frame_equal(again.result(), phi, check_exact=True)
    array = da.from_array(X.to_numpy(), chunks=(20, 4))
    np.testing.assert_array_equal(
        client.compute(explainer.explain(array)).result(), phi.to_numpy()
    )
    total = phi.sum(axis=1) + explainer.expected_value_
    np.testing.assert_allclose(total, rowwise_product(X), rtol=0, atol=1e-12)
    # Each partition is the explainer on its rows with the derived seed.
    second = explainer.for_partition(1).explain(X.iloc[20:40])
    pd.testing.assert_frame_equal(phi.iloc[20:40], second, check_exact=True)
    # ... which is not the seed of the first (rows would share orderings).
    first_seeded = explainer.for_partition(0).explain(X.iloc[20:40])
    assert not np.array_equal(first_seeded.to_numpy(), second.to_numpy())


def test_permutation_standard_errors_are_refused_for_dask():
    X = pd.DataFrame(np.ones((4, 4)), columns=list("abcd"))
    explainer = PermutationExplainer(rowwise_product, random_state=0).fit(X)
    with pytest.raises(ValueError, match="return_std=True is not available"):
        explainer.explain(dd.from_pandas(X, npartitions=2), return_std=True)


def test_interactions_of_a_dask_collection_are_refused_clearly():
    explainer, X = tree_case()
    with pytest.raises(TypeError, match="explain its partitions"):
        explainer.explain_interactions(dd.from_pandas(X, npartitions=2))
