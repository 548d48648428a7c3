"""The tree kernel's scratch memory is sized, and bounded, before the walk.

Each thread walks a block of rows at a time in one scratch buffer; the rows
per block are chosen at ``fit`` so that it fits
``MAX_SCRATCH_BYTES_PER_THREAD``, and a model for which even one row does not
fit is refused there, before anything is allocated. The values do not depend
on the block size nor on the number of threads: every row's arithmetic is
the same.
"""

import textwrap
from pathlib import Path

import numpy as np
import pytest
from crafted_trees import chain
from limited import run_limited
from sklearn.ensemble import RandomForestClassifier

from skshapley import TreeExplainer
from skshapley._limits import MAX_SCRATCH_BYTES_PER_THREAD
from skshapley.trees import _tree_core


@pytest.fixture(scope="module")
def forest_and_rows():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(300, 6))
    y = (X[:, 0] + X[:, 1] * X[:, 2] > 0).astype(int) + (X[:, 3] > 1)
    model = RandomForestClassifier(n_estimators=5, max_depth=8, random_state=0)
    return model.fit(X, y), X[:100]


@pytest.mark.parametrize("block_rows", [1, 7, 32])
@pytest.mark.parametrize("n_rows", [1, 2, 31, 33, 100])
def test_values_do_not_depend_on_the_block_size(forest_and_rows, block_rows, n_rows):
    model, X = forest_and_rows
    explainer = TreeExplainer(model, n_jobs=1).fit()
    assert explainer._block_rows == 32
    reference = explainer.explain(X).to_numpy()
    explainer._block_rows = block_rows  # the private knob of the kernel
    for n_jobs in (1, 2):
        explainer.set_params(n_jobs=n_jobs)
        phi = explainer.explain(X[:n_rows]).to_numpy()
        np.testing.assert_array_equal(phi, reference[:n_rows])


def scratch_bytes(explainer, rows):
    return 8 * _tree_core.scratch_doubles(
        rows,
        explainer.n_features_in_,
        len(explainer.player_names_),
        explainer._max_depth,
        int(explainer.n_quadrature_points_.max()),
        explainer.ensemble_.value.shape[1],
        # A row of sums per thread when the trees are walked in chunks.
        (len(explainer._chunk_start) > 2)
        * explainer.ensemble_.n_outputs
        * len(explainer.player_names_),
    )


def test_deep_trees_with_many_points_walk_fewer_rows_at_a_time():
    model = chain(20_000)
    X = np.array([[k, k + 1.0, k + 2.0] for k in (0.0, 10.0, 3000.0, 6000.0)])
    explainer = TreeExplainer(model, n_quadrature_points=100, n_jobs=1).fit()
    rows = explainer._block_rows
    # The most rows that fit the limit: ~33 MB of scratch per row here.
    assert 1 < rows < 32
    assert scratch_bytes(explainer, rows) <= MAX_SCRATCH_BYTES_PER_THREAD
    assert scratch_bytes(explainer, rows + 1) > MAX_SCRATCH_BYTES_PER_THREAD
    phi = explainer.explain(X).to_numpy()
    explainer._block_rows = 1
    np.testing.assert_array_equal(explainer.explain(X).to_numpy(), phi)
    residual = phi.sum(axis=1) + explainer.expected_value_ - model.predict(X)
    # 100 points on 3 distinct features: exact; ~20,000-factor products.
    assert np.abs(residual).max() <= 1e-12 * np.abs(model.tree_.value).max()


def test_a_tree_too_deep_for_one_row_is_refused_at_fit():
    # Depth 3,000 with 65,536 points needs ~3 GB per row: refused before the
    # rule (O(points**2) to compute) or any scratch exists.
    model = chain(3000)
    explainer = TreeExplainer(model, n_quadrature_points=65_536)
    with pytest.raises(
        ValueError,
        match=r"depth 3000 with 65536 points .* more than the limit of 256 MiB",
    ):
        explainer.fit()


def test_a_scratch_the_system_refuses_is_a_memory_error(tmp_path):
    """Called with a depth whose scratch cannot be allocated (fit would refuse
    the model), every path of the kernel raises MemoryError: blocks on one
    thread, and chunks of trees over two threads for a row."""
    code = textwrap.dedent(
        """
        import sys
        import numpy as np
        sys.path.insert(0, sys.argv[1])
        from schedule_models import forest
        from skshapley import TreeExplainer

        model, X = forest()
        explainer = TreeExplainer(model).fit()
        assert len(explainer._chunk_start) > 2
        rows, _ = explainer._prepared(X[:1])
        for n_threads in (1, 2):
            out = np.zeros((1, 1, rows.shape[1]))
            try:
                explainer._forest().shapley(
                    rows, explainer._rules, 2**40, out, n_threads, 1
                )
            except MemoryError as error:
                print(n_threads, error)
        """
    )
    tests = Path(__file__).resolve().parents[1]
    status, stdout, stderr = run_limited([tests], cwd=tmp_path, code=code)
    assert status == 0, stderr[-2000:]
    message = "Could not allocate the tree kernel's scratch memory."
    assert stdout.splitlines() == [f"1 {message}", f"2 {message}"]
