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
import pandas as pd
import pytest
from crafted_trees import chain
from limited import run_limited
from sklearn.ensemble import RandomForestClassifier

from skshapley import TreeExplainer
from skshapley._runtime.limits import MAX_SCRATCH_BYTES_PER_THREAD
from skshapley.trees import _interventional, _tree_core
from skshapley.trees._interventional import _fitting_block


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
    assert explainer._path_dependent.block_rows == 32
    reference = explainer.explain(X).to_numpy()
    explainer._path_dependent.block_rows = block_rows  # the private knob of the kernel
    for n_jobs in (1, 2):
        explainer.set_params(n_jobs=n_jobs)
        phi = explainer.explain(X[:n_rows]).to_numpy()
        np.testing.assert_array_equal(phi, reference[:n_rows])


def scratch_bytes(explainer, rows):
    return 8 * _tree_core.scratch_doubles(
        rows,
        explainer.n_features_in_,
        len(explainer.player_names_),
        explainer._path_dependent.max_depth,
        int(explainer.n_quadrature_points_.max()),
        explainer.ensemble_.value.shape[1],
        # A row of sums per thread when the trees are walked in chunks.
        (len(explainer._path_dependent.chunk_start) > 2)
        * explainer.ensemble_.n_outputs
        * len(explainer.player_names_),
    )


def test_deep_trees_with_many_points_walk_fewer_rows_at_a_time():
    model = chain(20_000)
    X = np.array([[k, k + 1.0, k + 2.0] for k in (0.0, 10.0, 3000.0, 6000.0)])
    explainer = TreeExplainer(model, n_quadrature_points=100, n_jobs=1).fit()
    rows = explainer._path_dependent.block_rows
    # The most rows that fit the limit: ~33 MB of scratch per row here.
    assert 1 < rows < 32
    assert scratch_bytes(explainer, rows) <= MAX_SCRATCH_BYTES_PER_THREAD
    assert scratch_bytes(explainer, rows + 1) > MAX_SCRATCH_BYTES_PER_THREAD
    phi = explainer.explain(X).to_numpy()
    explainer._path_dependent.block_rows = 1
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
        assert len(explainer._path_dependent.chunk_start) > 2
        rows, _ = explainer._prepared(X[:1])
        for n_threads in (1, 2):
            out = np.zeros((1, 1, rows.shape[1]))
            try:
                explainer._path_dependent.forest().shapley(
                    rows, explainer._path_dependent.rules, 2**40, out, n_threads, 1
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


def test_rows_per_chunk_count_their_scratch_in_max_memory():
    # ~33 MB of walk scratch per row: a chunk takes as many rows as fit in
    # half of max_memory with their scratch, not with their input alone.
    model = chain(20_000)
    X = np.array([[k, k + 1.0, k + 2.0] for k in range(0, 7000, 1000)], dtype=float)
    explainer = TreeExplainer(model, n_quadrature_points=100, n_jobs=1).fit()
    expected = explainer.explain(X)
    per_row = scratch_bytes(explainer, 1) - scratch_bytes(explainer, 0)
    input_bytes = 8 * 3 * 3  # three float64 copies of a row of 3 features
    explainer.set_params(max_memory=2 * 3 * (per_row + input_bytes))
    assert explainer._rows_per_chunk() == 3
    chunks = []
    explainer.explain(X, progress=lambda done, total: chunks.append(done))
    assert chunks == [3, 6, 7]
    np.testing.assert_array_equal(explainer.explain(X), expected)
    explainer.set_params(max_memory=2 * (per_row + input_bytes) - 1)
    with pytest.raises(ValueError, match="explaining one row needs"):
        explainer.explain(X)


def test_interventional_rows_count_their_scratch():
    X, y = _three_classes()
    model = RandomForestClassifier(n_estimators=3, max_depth=6, random_state=0)
    explainer = TreeExplainer(model.fit(X, y), feature_perturbation="interventional")
    explainer.fit(X[:50])
    paths = explainer._background._paths()
    n_values = 3 * X.shape[1]
    per_row = paths.scratch_bytes(1, n_values) - paths.scratch_bytes(0, n_values)
    assert per_row > 8 * n_values
    assert explainer._row_bytes() == 8 * 3 * X.shape[1] + per_row
    # Interaction walks sum a row's matrices in their scratch instead.
    matrices = 8 * 3 * X.shape[1] ** 2
    walk = paths.scratch_bytes(1, matrices // 8) - paths.scratch_bytes(0, 0)
    assert explainer._row_bytes() + explainer._interaction_row_bytes() == (
        8 * 3 * X.shape[1] + matrices + walk
    )


def test_interventional_tables_are_built_in_a_quarter_of_max_memory(monkeypatch):
    # The background's rows are walked in blocks whose scratch, on all
    # threads, fits a quarter of max_memory: the same tables, the same bits.
    X, y = _three_classes()
    model = RandomForestClassifier(n_estimators=3, max_depth=3, random_state=0)
    model.fit(X, y)
    explainer = TreeExplainer(model, feature_perturbation="interventional", n_jobs=2)
    expected = explainer.fit(X[:20]).explain(X[20:40])
    paths = explainer._background._paths()
    per_row = paths.scratch_bytes(1, 0) - paths.scratch_bytes(0, 0)
    explainer.set_params(max_memory=4 * 2 * (paths.scratch_bytes(0, 0) + 3 * per_row))
    blocks = []

    def fitting_block(paths, row_values, limit):
        blocks.append((limit, _fitting_block(paths, row_values, limit)))
        return blocks[-1][1]

    monkeypatch.setattr(_interventional, "_fitting_block", fitting_block)
    monkeypatch.setattr(_interventional, "_TABLE_BUDGET_BYTES", 0)
    background = explainer.fit(X[:20])._background
    assert background._kept is None  # built at each call
    pd.testing.assert_frame_equal(explainer.explain(X[20:40]), expected)
    builds = [block for limit, block in blocks if limit < MAX_SCRATCH_BYTES_PER_THREAD]
    assert builds
    assert set(builds) == {3}


def _three_classes():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(200, 5))
    return X, (X[:, 0] > 0).astype(int) + (X[:, 1] > 0.5)


DEEP_ROWS_SCRIPT = """
import resource
import sys
import numpy as np
sys.path.insert(0, sys.argv[1])
from crafted_trees import chain
from skshapley import TreeExplainer

model = chain(20_000)
X = np.array([[k, k + 1.0, k + 2.0] for k in range(0, 20_000, 250)], dtype=float)
explainer = TreeExplainer(
    model, n_quadrature_points=100, n_jobs=2, max_memory="128MB"
).fit()
# From here on, 400 MB more address space than the process has.
with open("/proc/self/status") as status:
    size = next(int(line.split()[1]) for line in status if line.startswith("VmSize"))
limit = 1024 * size + 400 * 10**6
resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
phi = explainer.explain(X).to_numpy()
residual = phi.sum(axis=1) + explainer.expected_value_ - model.predict(X)
print("completed:", np.abs(residual).max() / np.abs(model.tree_.value).max())
"""


@pytest.mark.slow
def test_deep_rows_run_within_max_memory(tmp_path):
    # ~33 MB of scratch per row: two threads walking blocks of 7 rows took
    # 460 MB whatever max_memory said; its chunks now count the scratch.
    tests = Path(__file__).resolve().parents[1]
    status, out, err = run_limited([tests], cwd=tmp_path, code=DEEP_ROWS_SCRIPT)
    assert status == 0, err[-2000:]
    assert out.startswith("completed:")
    assert float(out.split()[1]) <= 1e-12
