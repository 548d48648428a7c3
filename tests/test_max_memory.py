"""max_memory: explanations in chunks of rows, as in one piece, in bounded memory."""

import re
import subprocess
import sys
import textwrap
import tracemalloc

import numpy as np
import pandas as pd
import pytest
from limited import run_limited
from sklearn.base import clone
from sklearn.compose import make_column_transformer
from sklearn.datasets import make_classification
from sklearn.ensemble import RandomForestClassifier, RandomForestRegressor
from sklearn.kernel_ridge import KernelRidge
from sklearn.pipeline import make_pipeline
from sklearn.preprocessing import OneHotEncoder, StandardScaler
from sklearn.svm import SVC
from sklearn.tree import DecisionTreeRegressor

from skshapley import (
    ExactExplainer,
    PermutationExplainer,
    ProductKernelExplainer,
    TreeExplainer,
)
from skshapley._runtime.memory import parse_memory


@pytest.mark.parametrize(
    ("text", "n_bytes"),
    [
        (4096, 4096),
        ("4096", 4096),
        ("512MB", 512 * 10**6),
        ("512 mb", 512 * 10**6),
        ("2GiB", 2 * 2**30),
        ("1.5 GiB", 3 * 2**29),
        (".5KB", 500),
        ("3 kib", 3 * 1024),
        ("1TB", 10**12),
    ],
)
def test_parse_memory(text, n_bytes):
    assert parse_memory(text) == n_bytes


@pytest.mark.parametrize(
    "bad", [0, -5, True, 1.5, "", "MB", "12 parsecs", "-1GB", "0.1B", None, "1e9"]
)
def test_parse_memory_refuses(bad):
    with pytest.raises(ValueError, match="max_memory must be"):
        parse_memory(bad)


def frame(n=60, d=4, seed=0):
    rng = np.random.default_rng(seed)
    return pd.DataFrame(
        rng.normal(size=(n, d)), columns=[f"f{j}" for j in range(d)],
        index=pd.Index([f"r{i}" for i in range(n)], name="id"),
    )  # fmt: skip


def target(X):
    return X["f0"] * X["f1"] + np.sin(X["f2"]) - X["f3"]


def rowwise(X):
    """A model computed row by row: its outputs do not depend on the batch.

    (Models with matrix products, such as LogisticRegression, round a row
    differently in batches of other sizes; the model-agnostic explainers'
    calls shrink with max_memory, so only such a model is bit-identical.)
    """
    X = np.asarray(X, dtype=float)
    return np.tanh(X[:, 0] * X[:, 1]) + np.sin(X[:, 2]) - X[:, 3]


def fitted_explainers():
    X = frame()
    y = target(X)
    forest = RandomForestRegressor(10, max_depth=4, random_state=0).fit(X, y)
    kernel = make_pipeline(StandardScaler(), KernelRidge(kernel="rbf")).fit(X, y)
    background = X.iloc[:8]
    return {
        "tree": lambda **kw: TreeExplainer(forest, **kw).fit(),
        "interventional": lambda **kw: TreeExplainer(
            forest, feature_perturbation="interventional", **kw
        ).fit(background),
        "kernel pipeline": lambda **kw: ProductKernelExplainer(kernel, **kw).fit(),
        "exact": lambda **kw: ExactExplainer(rowwise, **kw).fit(background),
        "permutation": lambda **kw: PermutationExplainer(
            rowwise, random_state=0, **kw
        ).fit(background),
    }


EXPLAINERS = fitted_explainers()


def count_prepared_rows(monkeypatch, explainer) -> list:
    """The rows of each piece ``explainer`` prepares from now on, as a list."""
    prepared = []
    original = type(explainer)._prepared_input

    def counted(self, part):
        prepared.append(len(part))
        return original(self, part)

    monkeypatch.setattr(type(explainer), "_prepared_input", counted)
    return prepared


@pytest.mark.parametrize("name", list(EXPLAINERS))
@pytest.mark.parametrize("as_array", [False, True])
def test_chunks_give_the_values_of_one_piece(name, as_array, monkeypatch):
    X = frame(n=37, seed=1)
    rows = X.to_numpy() if as_array else X
    whole = EXPLAINERS[name]().explain(rows)
    # Fitted with the default budget (the interventional tables are built
    # at fit within it), then explained with a few rows a chunk.
    explainer = EXPLAINERS[name]()
    row_bytes = explainer._row_bytes()
    explainer.set_params(max_memory=2 * row_bytes * 5)  # 5 rows per chunk
    assert explainer._rows_per_chunk() == 5
    prepared = count_prepared_rows(monkeypatch, explainer)
    chunked = explainer.explain(rows)
    assert prepared == [5] * 7 + [2]  # 37 rows, prepared chunk by chunk
    pd.testing.assert_frame_equal(chunked, whole, check_exact=True)


def test_max_memory_too_small_for_one_row_says_what_one_row_needs():
    explainer = EXPLAINERS["tree"](max_memory="100B")
    needed = 2 * explainer._row_bytes()
    with pytest.raises(ValueError, match=f"one row needs {needed:,} bytes"):
        explainer.explain(frame(n=3))


def test_bad_max_memory_is_refused_by_explain():
    explainer = EXPLAINERS["kernel pipeline"](max_memory="lots")
    with pytest.raises(ValueError, match="max_memory must be"):
        explainer.explain(frame(n=3))


def test_an_exact_explainers_rows_count_their_tables_and_hybrids():
    # Each row of a chunk keeps a table of 2**n_players values per output;
    # a row evaluates up to 2**n_players - 2 hybrids per background row (8
    # here), each with two positions (32 bytes at their peak) and an output,
    explainer = EXPLAINERS["exact"]()
    row = 8 * 3 * 4  # three float64 copies of a row of 4 features
    tables = 8 * len(explainer.output_names_) * 2**4
    hybrids = (2**4 - 2) * 8 * (32 + 8)
    # and compares the row with each background row: 3 bytes per feature
    # (the comparison and two temporaries) and one per player.
    comparison = 8 * (3 * 4 + 4)
    assert explainer._row_bytes() == row + tables + hybrids + comparison


def test_an_exact_explanation_past_max_memory_is_refused_with_what_it_needs():
    """16 players against 1,000 background rows: 2.6 GB of hybrids per row."""
    rng = np.random.default_rng(0)
    background = rng.normal(size=(1000, 16))
    explainer = ExactExplainer(lambda X: np.asarray(X).sum(axis=1)).fit(background)
    needed = 2 * explainer._row_bytes()
    assert needed > 2 * (2**16 - 2) * 1000 * 40
    with pytest.raises(ValueError, match=f"one row needs {needed:,} bytes"):
        explainer.explain(background[:1])


def test_a_pipeline_with_string_columns_in_chunks():
    rng = np.random.default_rng(0)
    X = pd.DataFrame(
        {
            "colour": rng.choice(["red", "blue", "green"], 50),
            "size": rng.normal(size=50),
        }
    )
    y = (X["colour"] == "red") * 2.0 + X["size"]
    model = make_pipeline(
        make_column_transformer((OneHotEncoder(), ["colour"]), remainder="passthrough"),
        RandomForestRegressor(5, max_depth=3, random_state=0),
    ).fit(X, y)
    whole = TreeExplainer(model, groups="input").fit().explain(X)
    explainer = TreeExplainer(model, groups="input").fit()
    explainer.set_params(max_memory=2 * explainer._row_bytes() * 3)
    pd.testing.assert_frame_equal(explainer.explain(X), whole, check_exact=True)


PEAK_SCRIPT = textwrap.dedent(
    """
    import resource, sys
    import numpy as np
    from sklearn.tree import DecisionTreeRegressor
    from skshapley import TreeExplainer

    n, d = 2_000_000, 20
    rng = np.random.default_rng(0)
    fit_X = rng.normal(size=(2_000, d))
    model = DecisionTreeRegressor(max_depth=4, random_state=0).fit(
        fit_X, fit_X[:, 0] + fit_X[:, 1]
    )
    explainer = TreeExplainer(model, n_jobs=1, max_memory=sys.argv[1]).fit()
    X = rng.normal(size=(n, d))
    before = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    phi = explainer.explain(X)
    after = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    print(before, after, phi.shape[0])
    """
)


@pytest.mark.slow
def test_peak_memory_of_two_million_rows_is_the_result_plus_max_memory():
    # X (320 MB) and the result (320 MB) are in memory either way; what the
    # explanation adds on top stays within max_memory (64 MB) plus 40 MB for
    # allocator slack, where one piece would add X's copy (320 MB) and more.
    out = subprocess.run(
        [sys.executable, "-c", PEAK_SCRIPT, "64MB"],
        capture_output=True, text=True, check=True,
    )  # fmt: skip
    before, after, n_rows = map(int, out.stdout.split())
    assert n_rows == 2_000_000
    result_kib = 2_000_000 * 20 * 8 // 1024
    added_kib = after - before
    assert added_kib < result_kib + (64 + 40) * 1000, (added_kib, result_kib)


# -- the permutation explainer's orderings ------------------------------------


def test_permutation_draws_in_chunks_give_the_values_of_one_piece(monkeypatch):
    """Orderings are drawn chunk by chunk: the same values, bounded memory."""
    X = frame(n=3, seed=2)
    background = frame(n=20, seed=3)
    # Not antithetic: rowwise has pairwise interactions only, for which
    # antithetic pairs are exact and the standard errors all rounding.
    whole = PermutationExplainer(
        rowwise, n_permutations=50, antithetic=False, random_state=4
    ).fit(background)
    assert whole._draws_per_chunk() >= 50
    chunked = clone(whole).set_params(max_memory=4 * 7 * whole._draw_bytes())
    chunked.fit(background)
    assert chunked._draws_per_chunk() == 7
    counts = []
    original = PermutationExplainer._orderings

    def counted(self, rng, count):
        counts.append(count)
        return original(self, rng, count)

    monkeypatch.setattr(PermutationExplainer, "_orderings", counted)
    values, errors = chunked.explain(X, return_std=True)
    assert counts == ([7] * 7 + [1]) * 3
    expected, expected_errors = whole.explain(X, return_std=True)
    # The same draws, added one after another whatever the chunks: the same
    # bits. The errors merge the chunks' deviations (Chan et al.): a few
    # roundings of the largest (the additive features' are rounding only).
    pd.testing.assert_frame_equal(values, expected, check_exact=True)
    scale = np.abs(expected_errors.to_numpy()).max()
    assert scale > 0.01
    np.testing.assert_allclose(errors, expected_errors, rtol=0, atol=1e-12 * scale)


def test_permutation_max_memory_too_small_for_one_ordering():
    # Enough for the background (24 * 20 * 4 bytes in half), not for a row.
    explainer = PermutationExplainer(rowwise, max_memory="5kB").fit(frame(n=20))
    needed = 2 * explainer._row_bytes()
    assert explainer._row_bytes() > explainer._draw_bytes() > 4 * 20 * 52
    with pytest.raises(ValueError, match=f"one row needs {needed:,} bytes"):
        explainer.explain(frame(n=2))


@pytest.mark.parametrize("count", [0, 2**31, 2**63, 1.5, True])
def test_permutation_counts_beyond_the_limit_are_refused(count):
    explainer = PermutationExplainer(rowwise, n_permutations=count)
    with pytest.raises(ValueError, match=r"n_permutations must be an integer from 1"):
        explainer.fit(frame(n=5))


PERMUTATION_SCRIPT = """
import numpy as np
from skshapley import PermutationExplainer
rng = np.random.default_rng(0)
background = rng.normal(size=(2000, 4))
model = lambda X: np.asarray(X).sum(axis=1)
explainer = PermutationExplainer(
    model, n_permutations=3000, random_state=0, max_memory="256MB"
).fit(background)
phi = explainer.explain(background[:1])
print(float(phi.to_numpy().sum() + explainer.expected_value_), model(background[:1])[0])
"""


@pytest.mark.slow
def test_permutations_past_memory_run_within_max_memory(tmp_path):
    # All 3000 antithetic draws at once would need about 3 GB of working
    # arrays (4 players x 2000 background rows each): past what the limited
    # process may allocate, so it completes only if the draws are chunked.
    status, out, err = run_limited(
        [], cwd=tmp_path, memory_bytes=3 * 2**30, code=PERMUTATION_SCRIPT
    )
    assert status == 0, err
    total, prediction = map(float, out.split())
    assert total == pytest.approx(prediction, abs=1e-9)


# -- the interventional tables and masks built at fit --------------------------


def test_interventional_fit_within_max_memory_or_refused_with_what_it_needs():
    """One fully grown tree keeps a mask per background row at deep leaves."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(1500, 30))
    tree = DecisionTreeRegressor(random_state=0).fit(X, X.sum(axis=1))

    def fit(max_memory, rows=X):
        return TreeExplainer(
            tree, feature_perturbation="interventional", max_memory=max_memory
        ).fit(rows)

    with pytest.raises(ValueError, match=r"need ([\d,]+) bytes at once") as info:
        fit("20MB")
    message = str(info.value)
    assert "against 1,500 background rows" in message
    assert "tree 0 (1,500 leaves;" in message
    needed = int(re.search(r"at least ([\d,]+) bytes", message)[1].replace(",", ""))
    assert needed > parse_memory("20MB")
    with pytest.raises(ValueError, match="need"):
        fit(needed - 1)
    fit(needed)  # exactly what the message says is enough
    fitting = int(re.search(r"about ([\d,]+) rows fit", message)[1].replace(",", ""))
    explainer = fit("20MB", X[:fitting])  # the sample it suggests fits
    phi = explainer.explain(X[:3])
    # Efficiency: the values add up to the tree's prediction.
    np.testing.assert_allclose(
        phi.sum(axis=1) + explainer.expected_value_, tree.predict(X[:3]), atol=1e-9
    )


INTERVENTIONAL_SCRIPT = """
import numpy as np
from sklearn.tree import DecisionTreeRegressor
from skshapley import TreeExplainer
rng = np.random.default_rng(0)
X = rng.normal(size=(16384, 30))
tree = DecisionTreeRegressor(random_state=0).fit(X, X.sum(axis=1))
try:
    TreeExplainer(tree, feature_perturbation="interventional").fit(X)
except ValueError as exc:
    print("refused:", exc)
"""


@pytest.mark.slow
def test_interventional_fit_past_memory_is_refused_before_allocating(tmp_path):
    # Its masks would take about 10 GB: under a 3 GB address space the fit
    # must refuse before allocating them (it used to die).
    status, out, err = run_limited(
        [], cwd=tmp_path, memory_bytes=3 * 2**30, code=INTERVENTIONAL_SCRIPT
    )
    assert status == 0, err
    assert out.startswith("refused: Interventional values of this model against")


def test_an_interventional_background_past_max_memory_is_refused_at_fit():
    rng = np.random.default_rng(0)
    X = rng.normal(size=(2000, 30))
    tree = DecisionTreeRegressor(max_depth=4, random_state=0).fit(X, X[:, 0])
    explainer = TreeExplainer(
        tree, feature_perturbation="interventional", max_memory=2 * 16 * 2000 * 30 - 2
    )
    with pytest.raises(
        ValueError,
        match=r"background data \(fit's X\) of 2,000 rows and 30 features needs "
        r"960,000 bytes as 2 float64 copies.*\(about 1,999 rows fit;",
    ):
        explainer.fit(X)
    explainer.set_params(max_memory=2 * 16 * 2000 * 30).fit(X)  # exactly enough
    explainer.set_params(max_memory=2 * 16 * 2000 * 30 - 2).fit(X[:1999])


def test_one_output_keeps_only_its_values():
    """explain(output=k) holds one output's values, the others a chunk's only."""
    X, y = make_classification(
        n_samples=4000, n_features=20, n_informative=10, n_classes=10, random_state=0
    )
    forest = RandomForestClassifier(n_estimators=3, max_depth=6, random_state=0)
    explainer = TreeExplainer(forest.fit(X, y), max_memory="4MB").fit()
    every_output = 8 * len(X) * 10 * 20  # 6.4 MB: the buffer it used to fill
    tracemalloc.start()
    try:
        one = explainer.explain(X, output=3)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < every_output
    expected = explainer.explain(X[:50])
    np.testing.assert_array_equal(one.to_numpy()[:50], expected[3].to_numpy())


@pytest.mark.parametrize("name", list(EXPLAINERS))
def test_raw_predict_runs_in_chunks_with_the_values_of_one_piece(name, monkeypatch):
    X = frame(n=37, seed=5)
    whole = EXPLAINERS[name]().raw_predict(X)
    explainer = EXPLAINERS[name]()
    input_bytes = 8 * 3 * 4  # three float64 copies of a row of 4 features
    explainer.set_params(max_memory=2 * input_bytes * 5)  # 5 rows at a time
    sizes = []
    original = type(explainer)._raw_rows

    def counted(self, rows, *args):
        sizes.append(len(rows))
        return original(self, rows, *args)

    monkeypatch.setattr(type(explainer), "_raw_rows", counted)
    chunked = explainer.raw_predict(X)
    assert sizes == [5] * 7 + [2]
    if name == "kernel pipeline":
        # A kernel's output is a matrix product: BLAS rounds it by how many
        # rows it multiplies at once (a few ulps).
        np.testing.assert_allclose(chunked, whole, rtol=1e-13, atol=1e-15)
    else:
        np.testing.assert_array_equal(chunked, whole)


def test_raw_predict_needs_no_room_for_an_explanation():
    """16 players against 1,000 background rows: too big to explain, not to predict."""
    rng = np.random.default_rng(0)
    background = rng.normal(size=(1000, 16))
    explainer = ExactExplainer(lambda X: np.asarray(X).sum(axis=1)).fit(background)
    np.testing.assert_allclose(
        explainer.raw_predict(background[:3]), background[:3].sum(axis=1)
    )


LIMITED_SCRIPTS = {
    # 2**16 coalitions against 1,000 background rows: 2.6 GB per row at once.
    "exact": """
import numpy as np
from skshapley import ExactExplainer
rng = np.random.default_rng(0)
background = rng.normal(size=(1000, 16))
explainer = ExactExplainer(lambda X: np.asarray(X).sum(axis=1)).fit(background)
try:
    explainer.explain(background[:2])
except ValueError as exc:
    print("refused:", exc)
""",
    # 3,000 rows of a 2,000-point kernel model with 40 features in 64 MB of
    # working memory: the rows' kernel factors at once would be 1.9 GB.
    "kernel": """
import numpy as np
from sklearn.kernel_ridge import KernelRidge
from skshapley import ProductKernelExplainer
rng = np.random.default_rng(0)
X = rng.normal(size=(2000, 40))
model = KernelRidge(kernel="rbf", gamma=0.02).fit(X, X[:, 0])
explainer = ProductKernelExplainer(model, max_memory="64MB").fit()
print("completed:", explainer.explain(rng.normal(size=(3000, 40))).shape)
""",
}


@pytest.mark.slow
@pytest.mark.parametrize("name", list(LIMITED_SCRIPTS))
def test_explainers_under_an_address_space_limit_complete_or_refuse(tmp_path, name):
    status, out, err = run_limited(
        [], cwd=tmp_path, memory_bytes=3 * 2**30, code=LIMITED_SCRIPTS[name]
    )
    assert status == 0, err
    assert out.startswith("refused: max_memory" if name == "exact" else "completed:")


def test_a_kernel_model_of_many_outputs_keeps_its_partial_sums_small():
    """120 one-vs-one outputs: the games' partial sums shrink with the blocks."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(600, 20))
    model = SVC(kernel="rbf", decision_function_shape="ovo")
    explainer = ProductKernelExplainer(model.fit(X, rng.integers(0, 16, 600))).fit()
    assert len(explainer.output_names_) == 120
    tracemalloc.start()
    try:
        phi = explainer.explain(X[:200])
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    # The result is 200 * 120 * 20 doubles (3.8 MB); blocks of 87 rows kept
    # 87 * 75 tasks * 120 outputs * 20 players doubles of partial sums
    # (125 MB) beside it.
    assert peak < 30e6
    raw = explainer.raw_predict(X[:200])
    total = phi.to_numpy().reshape(200, 120, 20).sum(axis=2)
    np.testing.assert_allclose(
        total + explainer.expected_value_.to_numpy(), raw, rtol=0, atol=1e-9
    )


def test_leave_one_out_rows_count_their_hybrids():
    """A hybrid per player and background row: 1,000 players against 100
    rows need 3.2 MB per row (twice that in the budget), refused under 6 MB,
    saying so."""
    rng = np.random.default_rng(0)
    background = rng.normal(size=(100, 1000))

    def model(X):
        X = np.asarray(X)
        return X[:, 0] + X[:, 1] * X[:, 2]

    explainer = ExactExplainer(model, index="loo", max_memory="6MB").fit(background)
    needed = 2 * explainer._row_bytes()
    assert needed > 2 * 1000 * 100 * 32
    with pytest.raises(ValueError, match=f"one row needs {needed:,} bytes"):
        explainer.explain(background[:2])
    values = explainer.set_params(max_memory=needed).explain(background[:2])
    expected = (
        ExactExplainer(model, index="loo").fit(background).explain(background[:2])
    )
    pd.testing.assert_frame_equal(values, expected)


@pytest.mark.parametrize("name", ["tree", "kernel pipeline", "permutation"])
def test_a_polars_frame_is_converted_chunk_by_chunk(name, monkeypatch):
    """Its rows reach pandas a chunk at a time, with the values of a pandas frame."""
    pl = pytest.importorskip("polars")
    X = frame(n=37, seed=1).reset_index(drop=True)
    expected = EXPLAINERS[name]().explain(X)
    explainer = EXPLAINERS[name]()
    explainer.set_params(max_memory=2 * explainer._row_bytes() * 5)
    prepared = count_prepared_rows(monkeypatch, explainer)
    values = explainer.explain(pl.from_pandas(X[X.columns[::-1]]))
    assert prepared == [5] * 7 + [2]
    pd.testing.assert_frame_equal(values, expected, check_exact=True)


@pytest.mark.parametrize("name", ["tree", "kernel pipeline", "permutation"])
@pytest.mark.parametrize(
    "labels",
    [
        pd.RangeIndex(5, 79, 2),  # kept in the metadata alone
        pd.Index([f"row {i}" for i in range(37)], name="id"),  # kept as a column
    ],
)
def test_a_pyarrow_table_is_converted_chunk_by_chunk(name, labels, monkeypatch):
    """Its rows reach pandas a chunk at a time, labelled by its pandas index."""
    pa = pytest.importorskip("pyarrow")
    X = frame(n=37, seed=1).set_axis(labels)
    expected = EXPLAINERS[name]().explain(X)
    explainer = EXPLAINERS[name]()
    explainer.set_params(max_memory=2 * explainer._row_bytes() * 5)
    prepared = count_prepared_rows(monkeypatch, explainer)
    values = explainer.explain(pa.Table.from_pandas(X[X.columns[::-1]]))
    assert prepared == [5] * 7 + [2]
    pd.testing.assert_frame_equal(values, expected, check_exact=True)
