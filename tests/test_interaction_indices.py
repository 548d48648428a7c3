"""explain_interactions(X, index=..., order=...): interaction indices of any
order of real models, against each index's definition on the model's own
game (tests/naive.py: the path-dependent value function by its recursion,
the kernel game by the model's kernel), through the public explainers."""

import itertools

import numpy as np
import pandas as pd
import pytest
from crafted_trees import chain
from naive import (
    cast_inputs,
    coalition_of_players,
    interaction_index_by_definition,
    kernel_value_table,
    path_dependent_value,
    predict_ensemble,
    rows_on_thresholds,
)
from sklearn.datasets import load_diabetes, load_iris
from sklearn.ensemble import (
    GradientBoostingClassifier,
    HistGradientBoostingRegressor,
    RandomForestRegressor,
)
from sklearn.gaussian_process import GaussianProcessRegressor
from sklearn.gaussian_process.kernels import RBF
from sklearn.kernel_ridge import KernelRidge
from sklearn.svm import SVR
from sklearn.tree import DecisionTreeRegressor

from skshapley import (
    ExactExplainer,
    PermutationExplainer,
    ProductKernelExplainer,
    TreeExplainer,
)
from skshapley._contract.interactions import _COLUMN_BYTES as COLUMN_BYTES
from skshapley.games import INDICES

EFFICIENT = ("k-SII", "STII", "FSII")


def diabetes(n_features=5, n=150):
    X, y = load_diabetes(return_X_y=True, as_frame=True)
    return X.iloc[:n, :n_features], y.iloc[:n]


def tree_table(explainer, x, players):
    """v(S) of the path-dependent game, all coalitions (2**d, n_outputs)."""
    table = explainer.ensemble_
    x = cast_inputs(table, x[None])[0]
    return np.array(
        [
            path_dependent_value(table, x, coalition_of_players(players, mask))
            for mask in range(2 ** len(players))
        ]
    )


def assert_matches(frame, tables, index, order, n_outputs, tolerance=1e-11):
    """Each row and output of ``frame`` equals the definition on its table."""
    n_players = int(np.log2(tables[0].shape[0]))
    for r, table in enumerate(tables):
        for o in range(n_outputs):
            expected = interaction_index_by_definition(
                table[:, o], n_players, index, order
            )
            row = frame.iloc[r]
            values = row.iloc[
                o * len(row) // n_outputs : (o + 1) * len(row) // n_outputs
            ]
            assert len(values) == len(expected)
            scale = max(1.0, np.abs(table).max())
            for label, coalition in zip(values.index, expected, strict=True):
                assert values[label] == pytest.approx(
                    expected[coalition], abs=tolerance * scale
                ), (index, order, coalition)


def tree_models():
    X, y = diabetes()
    with_nan = X.copy()
    with_nan.iloc[::4, 1] = np.nan
    categorical = X.copy()
    categorical["sex"] = (X["sex"] > 0).astype(int) + 2 * (X["bmi"] > 0).astype(int)
    iris = load_iris(as_frame=True)
    return {
        "tree": (DecisionTreeRegressor(max_depth=5, random_state=0), X, y),
        "forest": (
            RandomForestRegressor(n_estimators=3, max_depth=4, random_state=0),
            X,
            y,
        ),
        "gbc_multiclass": (
            GradientBoostingClassifier(n_estimators=2, max_depth=3, random_state=0),
            iris.data,
            iris.target,
        ),
        "hist_nan": (HistGradientBoostingRegressor(max_iter=4), with_nan, y),
        "hist_categorical": (
            HistGradientBoostingRegressor(max_iter=4, categorical_features=["sex"]),
            categorical,
            y,
        ),
    }


def booster_models():
    xgboost = pytest.importorskip("xgboost")
    lightgbm = pytest.importorskip("lightgbm")
    X, y = diabetes()
    with_nan = X.copy()
    with_nan.iloc[::3, 2] = np.nan
    return {
        "xgboost_nan": (
            xgboost.XGBRegressor(n_estimators=4, max_depth=3, random_state=0),
            with_nan,
            y,
        ),
        "lightgbm": (
            lightgbm.LGBMRegressor(n_estimators=4, num_leaves=6, verbose=-1),
            X,
            y,
        ),
    }


@pytest.mark.parametrize(
    "name",
    ["tree", "forest", "gbc_multiclass", "hist_nan", "hist_categorical", "boosters"],
)
def test_tree_indices_equal_their_definitions(name):
    cases = booster_models() if name == "boosters" else {name: tree_models()[name]}
    for model, X, y in cases.values():
        model.fit(X, y)
        explainer = TreeExplainer(model).fit()
        rows = X.iloc[:3]
        players = [[j] for j in range(X.shape[1])]
        tables = [tree_table(explainer, x, players) for x in rows.to_numpy()]
        n_outputs = len(explainer.output_names_)
        for index in INDICES:
            for order in (1, 2, 4):
                frame = explainer.explain_interactions(rows, index=index, order=order)
                assert_matches(frame, tables, index, order, n_outputs)


def test_rows_on_thresholds_and_missing_values():
    # Edge rows through the public explainer: on, just below and just above
    # each threshold, and NaN where the model has a rule for it.
    model, X, y = tree_models()["hist_nan"]
    model.fit(X, y)
    explainer = TreeExplainer(model).fit()
    edges = rows_on_thresholds(explainer.ensemble_, X.to_numpy())[::7][:6]
    edges[0, 1] = np.nan
    players = [[j] for j in range(X.shape[1])]
    tables = [tree_table(explainer, x, players) for x in edges]
    for index in ("k-SII", "FSII", "FBII"):
        frame = explainer.explain_interactions(edges, index=index, order=3)
        assert_matches(frame, tables, index, 3, 1)


def test_tree_groups_are_the_players():
    model, X, y = tree_models()["forest"]
    model.fit(X, y)
    groups = {"body": ["bmi", "bp"]}
    explainer = TreeExplainer(model, groups=groups).fit()
    position = {name: j for j, name in enumerate(X.columns)}
    players = [
        [position[c] for c in groups.get(name, [name])]
        for name in explainer.player_names_
    ]
    rows = X.iloc[5:7]
    tables = [tree_table(explainer, x, players) for x in rows.to_numpy()]
    frame = explainer.explain_interactions(rows, index="STII", order=2)
    assert ("body",) in frame.columns
    assert_matches(frame, tables, "STII", 2, 1)


def kernel_models():
    X, y = diabetes(n_features=5, n=60)
    return [
        KernelRidge(kernel="rbf", gamma=0.2).fit(X, y),
        KernelRidge(kernel="laplacian", gamma=0.3).fit(X, y),
        SVR(kernel="rbf", gamma=0.5).fit(X, y),
        GaussianProcessRegressor(RBF([0.1] * 5), optimizer=None).fit(X, y),
    ], X


def test_kernel_indices_equal_their_definitions():
    models, X = kernel_models()
    rows = X.iloc[:2]
    for model in models:
        explainer = ProductKernelExplainer(model).fit()
        tables = [np.asarray(kernel_value_table(model, x)) for x in rows.to_numpy()]
        tables = [t.reshape(len(t), -1) for t in tables]
        for index in INDICES:
            for order in (1, 3):
                frame = explainer.explain_interactions(rows, index=index, order=order)
                assert_matches(frame, tables, index, order, 1)


@pytest.mark.parametrize("index", EFFICIENT)
def test_efficient_indices_sum_to_the_raw_output(index):
    model, X, y = tree_models()["gbc_multiclass"]
    model.fit(X, y)
    explainer = TreeExplainer(model).fit()
    frame = explainer.explain_interactions(X.iloc[::30], index=index, order=3)
    raw = explainer.raw_predict(X.iloc[::30])
    for o, output in enumerate(explainer.output_names_):
        np.testing.assert_allclose(frame[output].sum(axis=1), raw[:, o], atol=1e-12)
    models, X = kernel_models()
    kernel = ProductKernelExplainer(models[0]).fit()
    frame = kernel.explain_interactions(X.iloc[:5], index=index, order=2)
    np.testing.assert_allclose(
        frame.sum(axis=1), kernel.raw_predict(X.iloc[:5]), rtol=1e-12
    )


def test_efficiency_on_paths_of_a_hundred_players():
    # 150 splits in a row over 100 features: paths of 100 distinct players.
    model = chain(150, n_features=100)
    rows = np.full((4, 100), 2.0)
    rows[1] = 1.0
    rows[2, 40] = rows[3, 99] = 0.0
    explainer = TreeExplainer(model).fit()
    raw = model.predict(rows)
    for index in EFFICIENT:
        frame = explainer.explain_interactions(rows, index=index, order=2)
        assert frame.shape == (4, 1 + 100 + 4950)
        np.testing.assert_allclose(
            frame.sum(axis=1), raw, rtol=0, atol=1e-12 * np.abs(raw).max()
        )


def test_layout_outputs_and_index():
    model, X, y = tree_models()["gbc_multiclass"]
    model.fit(X, y)
    explainer = TreeExplainer(model).fit()
    rows = X.iloc[[3, 70, 140]]
    frame = explainer.explain_interactions(rows, index="FSII", order=2)
    names = list(explainer.player_names_)
    coalitions = [()] + [(n,) for n in names] + list(itertools.combinations(names, 2))
    assert frame.columns.names == ["output", "coalition"]
    assert frame.columns.tolist() == [
        (output, c) for output in explainer.output_names_ for c in coalitions
    ]
    pd.testing.assert_index_equal(frame.index, rows.index)
    one = explainer.explain_interactions(rows, index="FSII", order=2, output=1)
    assert one.columns.name == "coalition"
    np.testing.assert_array_equal(one.to_numpy(), frame[1].to_numpy())
    sii = explainer.explain_interactions(rows, index="SII", order=1, output=0)
    assert sii.columns.tolist() == [(n,) for n in names]


def test_top_k_keeps_each_rows_largest_values():
    model, X, y = tree_models()["forest"]
    model.fit(X, y)
    explainer = TreeExplainer(model).fit()
    rows = X.iloc[:4]
    full = explainer.explain_interactions(rows, index="k-SII", order=3)
    top = explainer.explain_interactions(rows, index="k-SII", order=3, top_k=5)
    assert top.index.names == ["row", "rank"]
    assert list(top.columns) == ["coalition", "value"]
    for r, label in enumerate(rows.index):
        expected = full.iloc[r].abs().sort_values(ascending=False, kind="stable")[:5]
        kept = top.loc[label]
        assert list(kept["coalition"]) == list(expected.index)
        np.testing.assert_array_equal(kept["value"], full.iloc[r][expected.index])


def test_threshold_keeps_the_values_at_least_as_large():
    model, X, y = tree_models()["gbc_multiclass"]
    model.fit(X, y)
    explainer = TreeExplainer(model).fit()
    rows = X.iloc[::50]
    full = explainer.explain_interactions(rows, index="STII", order=3)
    kept = explainer.explain_interactions(rows, index="STII", order=3, threshold=0.05)
    assert kept.index.names == ["row", "output", "rank"]
    for label in rows.index:
        for output in explainer.output_names_:
            values = full.loc[label, output]
            expected = values[values.abs() >= 0.05]
            expected = expected.iloc[np.argsort(-expected.abs(), kind="stable")]
            if expected.empty:
                assert (label, output) not in kept.index.droplevel("rank")
                continue
            got = kept.loc[(label, output)]
            assert list(got["coalition"]) == list(expected.index)
            np.testing.assert_array_equal(got["value"], expected.to_numpy())
    both = explainer.explain_interactions(
        rows, index="STII", order=3, threshold=0.05, top_k=2
    )
    assert both.index.get_level_values("rank").max() <= 1
    pd.testing.assert_frame_equal(both, kept[kept.index.get_level_values("rank") < 2])
    nothing = explainer.explain_interactions(rows, index="STII", threshold=1e9)
    assert nothing.empty
    assert list(nothing.columns) == ["coalition", "value"]


def test_a_result_too_large_for_max_memory_says_how_many_coalitions():
    X, y = diabetes(n_features=10)
    model = DecisionTreeRegressor(max_depth=3).fit(X, y)
    explainer = TreeExplainer(model, max_memory="500KB").fit()
    with pytest.raises(ValueError, match="has 385 coalitions per row") as error:
        explainer.explain_interactions(X, index="SII", order=4)
    assert "top_k" in str(error.value)
    assert "smaller order" in str(error.value)
    top = explainer.explain_interactions(X, index="SII", order=4, top_k=3)
    assert len(top) == 3 * len(X)
    # One row's k-SII beyond max_memory (24 players, order 5: 55,455
    # coalitions): it needs them all at once, and top_k would not help.
    wide = np.random.default_rng(0).normal(size=(100, 24))
    tree = DecisionTreeRegressor(max_depth=3).fit(wide, wide[:, 0])
    explainer = TreeExplainer(tree, max_memory="500KB").fit()
    with pytest.raises(ValueError, match="55,455 coalitions") as error:
        explainer.explain_interactions(wide[:1], index="k-SII", order=5, top_k=3)
    assert "one row needs" in str(error.value)
    assert "smaller order" in str(error.value)
    assert "index='SII'" in str(error.value)
    assert "top_k" not in str(error.value)


def window_explainers():
    """Explainers of every kind of index kernel on 12 players."""
    X, y = diabetes(n_features=10, n=120)
    X = X.assign(s7=X["s1"] * X["s2"], s8=X["bmi"] - X["bp"])
    forest = RandomForestRegressor(n_estimators=4, max_depth=6, random_state=0)
    forest.fit(X, y)
    ridge = KernelRidge(kernel="rbf", gamma=0.2).fit(X.iloc[:40], y.iloc[:40])
    return X, [
        (TreeExplainer, forest, {}, None),
        (TreeExplainer, forest, {"feature_perturbation": "interventional"}, X[:30]),
        (ProductKernelExplainer, ridge, {}, None),
        (
            ProductKernelExplainer,
            ridge,
            {"feature_perturbation": "interventional"},
            X[:5],
        ),
        (ExactExplainer, forest, {}, X[:2]),
    ]


@pytest.mark.parametrize("index", [i for i in INDICES if i != "k-SII"])
def test_coalitions_beyond_one_rows_memory_come_in_windows(index):
    # max_memory for a half, then a third, of one row's coalitions, besides
    # what the explainer keeps per row (rows_per_chunk: twice a chunk's
    # bytes): the first leaves room for one row's result, not the second.
    X, explainers = window_explainers()
    for cls, model, settings, background in explainers:
        whole = cls(model, **settings).fit(background)
        # (fitted with the default: a background's tables need more)
        windowed = cls(model, **settings).fit(background)
        for order in (4, 2):
            expected = whole.explain_interactions(X[:3], index=index, order=order)
            width = len(expected.columns)
            windowed.set_params(
                max_memory=2 * (windowed._row_bytes() + COLUMN_BYTES * (width // 2 + 1))
            )
            pd.testing.assert_frame_equal(
                windowed.explain_interactions(X[:1], index=index, order=order),
                expected[:1],
                rtol=1e-12,
                atol=1e-12,
            )
            windowed.set_params(
                max_memory=2 * (windowed._row_bytes() + COLUMN_BYTES * (width // 3 + 1))
            )
            top = windowed.explain_interactions(
                X[:3], index=index, order=order, top_k=9
            )
            largest = np.sort(np.abs(expected.to_numpy()), axis=1)[:, ::-1][:, :9]
            np.testing.assert_allclose(
                np.abs(top["value"].to_numpy().reshape(3, 9)), largest, atol=1e-12
            )
            for (row, _), (coalition, value) in zip(
                top.index, top.to_numpy(), strict=True
            ):
                column = expected.columns.get_loc(coalition)
                assert expected.iloc[row, column] == pytest.approx(value, abs=1e-12)


@pytest.mark.parametrize(
    ("kwargs", "error", "message"),
    [
        ({"index": "Shapley"}, ValueError, "index must be one of 'SII', 'k-SII'"),
        ({"index": "SII", "order": 0}, ValueError, "order must be >= 1"),
        ({"index": "SII", "order": 6}, ValueError, r"between 1 and the number"),
        ({"order": 3}, ValueError, "pass index= one of"),
        ({"top_k": 3}, ValueError, "pass index= one of"),
        ({"index": "SII", "top_k": 0}, ValueError, "top_k must be >= 1"),
        ({"threshold": 0.1}, ValueError, "pass index= one of"),
        ({"index": "SII", "threshold": -1.0}, ValueError, "threshold must be"),
        ({"index": "SII", "threshold": np.nan}, ValueError, "threshold must be"),
        ({"index": "SII", "threshold": "1"}, ValueError, "threshold must be"),
    ],
)
def test_bad_requests(kwargs, error, message):
    model, X, y = tree_models()["tree"]
    explainer = TreeExplainer(model.fit(X, y)).fit()
    with pytest.raises(error, match=message):
        explainer.explain_interactions(X.iloc[:2], **kwargs)


def test_sampling_explainers_have_no_indices():
    model, X, y = tree_models()["tree"]
    model.fit(X, y)
    sampled = PermutationExplainer(model).fit(X.iloc[:5])
    with pytest.raises(NotImplementedError, match="supports_indices is False"):
        sampled.explain_interactions(X.iloc[:2], index="SII")


def hybrid_tables(explainer, rows, background):
    """v(S) = mean_z f(x_S, z_rest), by the parsed trees' raw output in
    float64 (tests/naive.py, a router of its own)."""
    table, n_players = explainer.ensemble_, rows.shape[1]
    tables = []
    for x in rows.to_numpy():
        values = []
        for mask in range(2**n_players):
            inside = np.array([(mask >> j) & 1 for j in range(n_players)], bool)
            hybrids = np.where(inside, x, background.to_numpy())
            values.append(predict_ensemble(table, hybrids).mean(axis=0))
        tables.append(np.array(values))
    return tables


@pytest.mark.parametrize("name", ["forest", "gbc_multiclass", "hist_nan", "boosters"])
def test_interventional_tree_indices_equal_their_definitions(name):
    cases = booster_models() if name == "boosters" else {name: tree_models()[name]}
    for model, X, y in cases.values():
        model.fit(X, y)
        background = X.iloc[:25]
        explainer = TreeExplainer(model, feature_perturbation="interventional").fit(
            background
        )
        rows = X.iloc[[30, 41]]
        n_outputs = len(explainer.output_names_)
        tables = hybrid_tables(explainer, rows, background)
        for index in INDICES:
            for order in (1, 3):
                frame = explainer.explain_interactions(rows, index=index, order=order)
                assert_matches(frame, tables, index, order, n_outputs, 1e-10)


def test_interventional_indices_after_a_pickle_and_with_too_little_memory():
    import pickle

    model, X, y = tree_models()["forest"]
    model.fit(X, y)
    explainer = TreeExplainer(model, feature_perturbation="interventional").fit(
        X.iloc[:40]
    )
    before = explainer.explain_interactions(X.iloc[:3], index="FSII", order=2)
    again = pickle.loads(pickle.dumps(explainer))
    pd.testing.assert_frame_equal(
        again.explain_interactions(X.iloc[:3], index="FSII", order=2), before
    )
    # Routing 100 rows through the nodes of a larger forest takes more than
    # half of max_memory, though the background itself fits.
    forest = RandomForestRegressor(n_estimators=10, max_depth=7, random_state=0)
    forest.fit(X, y)
    n_nodes = sum(tree.tree_.node_count for tree in forest.estimators_)
    small = TreeExplainer(
        forest, feature_perturbation="interventional", max_memory=n_nodes * 100
    ).fit(X.iloc[:100])
    with pytest.raises(ValueError, match="route the 100 background rows"):
        small.explain_interactions(X.iloc[:1], index="SII", order=2)


def test_exact_explainer_indices_equal_the_tree_games():
    # Interventional against one background row, the exact explainer's game
    # on a tree is the tree's; checked against its own definition.
    model, X, y = tree_models()["forest"]
    model.fit(X, y)
    background = X.iloc[:4]
    exact = ExactExplainer(model).fit(background)
    rows = X.iloc[10:12]
    hybrid_tables = []
    for x in rows.to_numpy():
        table = []
        for mask in range(2 ** X.shape[1]):
            inside = np.array([(mask >> j) & 1 for j in range(X.shape[1])], bool)
            hybrids = np.where(inside, x, background.to_numpy())
            table.append(model.predict(pd.DataFrame(hybrids, columns=X.columns)).mean())
        hybrid_tables.append(np.array(table)[:, None])
    for index in INDICES:
        frame = exact.explain_interactions(rows, index=index, order=3)
        assert_matches(frame, hybrid_tables, index, 3, 1, tolerance=1e-10)


def shapiq_tree_indices():
    """The indices shapiq's path-dependent TreeExplainer computes: SII and
    k-SII since 1.3, also BII and the Möbius transform since 1.7."""
    from importlib.metadata import version

    major, minor = (int(part) for part in version("shapiq").split(".")[:2])
    return ("SII", "k-SII") + (("BII", "Moebius") if (major, minor) >= (1, 7) else ())


def test_tree_indices_equal_shapiqs_tree_explainer():
    shapiq = pytest.importorskip("shapiq")
    model, X, y = tree_models()["forest"]
    model.fit(X, y)
    explainer = TreeExplainer(model).fit()
    names = list(X.columns)
    for index in shapiq_tree_indices():
        for order in (2, 3):
            theirs = shapiq.TreeExplainer(model, index=index, max_order=order)
            for r in (0, 7):
                values = theirs.explain(X.iloc[r].to_numpy())
                ours = explainer.explain_interactions(
                    X.iloc[[r]], index=index, order=order
                ).iloc[0]
                lookup = values.interaction_lookup
                for label, value in ours.items():
                    # shapiq leaves out coalitions whose value is 0.
                    coalition = tuple(names.index(n) for n in label)
                    expected = (
                        values.values[lookup[coalition]] if coalition in lookup else 0
                    )
                    assert value == pytest.approx(expected, abs=1e-10), (
                        index, order, coalition,
                    )  # fmt: skip


def test_to_shapiq_gives_shapiqs_own_values():
    shapiq = pytest.importorskip("shapiq")
    from skshapley import to_shapiq

    model, X, y = tree_models()["forest"]
    model.fit(X, y)
    explainer = TreeExplainer(model).fit()
    frame = explainer.explain_interactions(X.iloc[2:4], index="k-SII", order=3)
    converted = to_shapiq(frame, row=X.index[3])
    theirs = shapiq.TreeExplainer(model, index="k-SII", max_order=3).explain(
        X.iloc[3].to_numpy()
    )
    assert (converted.index, converted.max_order) == ("k-SII", 3)
    assert converted.n_players == X.shape[1]
    assert not converted.estimated
    assert converted.baseline_value == pytest.approx(explainer.expected_value_)
    for coalition, position in theirs.interaction_lookup.items():
        assert converted[coalition] == pytest.approx(theirs.values[position], abs=1e-10)


def test_to_shapiq_of_several_outputs_and_bad_input():
    pytest.importorskip("shapiq")
    from skshapley import to_shapiq

    model, X, y = tree_models()["gbc_multiclass"]
    model.fit(X, y)
    explainer = TreeExplainer(model).fit()
    frame = explainer.explain_interactions(X.iloc[:1], index="STII", order=2)
    converted = to_shapiq(frame, output=2)
    assert converted.baseline_value == pytest.approx(explainer.expected_value_[2])
    assert converted[(0, 1)] == pytest.approx(frame[2].iloc[0][tuple(X.columns[:2])])
    with pytest.raises(ValueError, match="pass output= one of"):
        to_shapiq(frame)
    two = explainer.explain_interactions(X.iloc[:2], index="STII", order=2, output=0)
    with pytest.raises(ValueError, match="have 2 rows: pass row="):
        to_shapiq(two)
    top = explainer.explain_interactions(X.iloc[:1], index="STII", top_k=2)
    with pytest.raises(ValueError, match="not a top_k table"):
        to_shapiq(top)


@pytest.mark.parametrize("index", ["k-SII", "FSII"])
def test_the_same_bits_whatever_the_threads(index):
    model, X, y = tree_models()["gbc_multiclass"]
    model.fit(X, y)
    rows = X.iloc[::7]
    for params, background in [
        ({}, None),
        ({"feature_perturbation": "interventional"}, X.iloc[:30]),
    ]:
        frames = [
            TreeExplainer(model, n_jobs=n_jobs, **params)
            .fit(background)
            .explain_interactions(rows, index=index, order=3)
            for n_jobs in (1, 2)
        ]
        pd.testing.assert_frame_equal(frames[0], frames[1], check_exact=True)
    models, X = kernel_models()
    frames = [
        ProductKernelExplainer(models[0], n_jobs=n_jobs)
        .fit()
        .explain_interactions(X.iloc[:9], index=index, order=2)
        for n_jobs in (1, 2)
    ]
    pd.testing.assert_frame_equal(frames[0], frames[1], check_exact=True)


def test_indices_are_exact_whatever_the_explainers_quadrature():
    # n_quadrature_points rules Shapley values only: indices take each
    # tree's exact rule (one point per tree here is far from it).
    model, X, y = tree_models()["forest"]
    model.fit(X, y)
    rows = X.iloc[:3]
    exact = TreeExplainer(model).fit()
    one_point = TreeExplainer(model, n_quadrature_points=1).fit()
    for index in ("SII", "k-SII", "FSII"):
        pd.testing.assert_frame_equal(
            one_point.explain_interactions(rows, index=index, order=2),
            exact.explain_interactions(rows, index=index, order=2),
        )
