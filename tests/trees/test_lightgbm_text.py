"""LightGBM text models read by skshapley itself, against LightGBM's own loader.

Model files are read without LightGBM (``read_model_file``) and explained
exactly as the Booster that LightGBM loads from the same file; hand-written
model strings reach depths and tree counts that training would not; every
kind of damage gives one ``ValueError`` naming what is wrong. Also the
wrapper cases found by running other projects' test suites: classifiers fitted
on fewer classes than ``num_class`` and column names with spaces.
"""

import subprocess
import sys

import numpy as np
import pandas as pd
import pytest

from skshapley import TreeExplainer
from skshapley.trees._readers.lightgbm import text as lightgbm_text
from skshapley.trees._readers.lightgbm.text import read_model_file, read_model_text

lgb = pytest.importorskip("lightgbm")

# The same leaves summed in the same order: LightGBM's raw score exactly, up
# to the rounding of a different summation order (~1e-15 of the scale).
RTOL = 1e-12
# Exact Shapley values both (LightGBM's TreeSHAP recursion, the quadrature):
# roundings differ by ~1e-15 of the output's scale.
SHAP_RTOL = 1e-9


def assert_close(actual, expected, rtol):
    scale = max(1.0, np.abs(expected).max())
    np.testing.assert_allclose(actual, expected, rtol=0, atol=rtol * scale)


def training_data(n=300, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    X[:, 1] = rng.integers(0, 6, n)
    X[rng.random(n) < 0.1, 0] = np.nan
    X[rng.random(n) < 0.3, 2] = 0.0
    y = np.nan_to_num(X[:, 0]) + np.isin(X[:, 1], [2, 5]) + X[:, 2] + 0.3 * X[:, 3]
    return X, y


def booster(kind):
    X, y = training_data()
    params = {"num_leaves": 8, "min_data_in_leaf": 5, "verbose": -1}
    rounds = 6
    if kind == "multiclass":
        params.update(objective="multiclass", num_class=3)
        y = np.digitize(y, [0.0, 1.0])
    elif kind == "random_forest":
        params.update(boosting="rf", bagging_fraction=0.7, bagging_freq=1)
    elif kind == "zero_as_missing":
        params.update(zero_as_missing=True)
    elif kind == "categorical":
        params.update(min_data_per_group=5, cat_smooth=1.0)
    categorical = [1] if kind == "categorical" else "auto"
    names = ["age", "colour", "zeros", "noise"]
    data = lgb.Dataset(X, y, feature_name=names, categorical_feature=categorical)
    return lgb.train(params, data, rounds)


def lightgbm_raw(model, X, text):
    """``predict(raw_score=True)``, averaged in random-forest mode as we do."""
    raw = np.reshape(model.predict(X, raw_score=True), (len(X), -1))
    if "\naverage_output\n" in text:
        raw = raw / model.current_iteration()
    return raw


@pytest.mark.parametrize(
    "kind",
    ["regression", "zero_as_missing", "categorical", "multiclass", "random_forest"],
)
def test_model_file_matches_lightgbm(kind, tmp_path):
    path = tmp_path / "model.txt"
    booster(kind).save_model(path)
    loaded = lgb.Booster(model_file=str(path))
    model = read_model_file(path)
    assert model.feature_names == ("age", "colour", "zeros", "noise")
    explainer = TreeExplainer(model).fit()
    X = training_data(60, seed=1)[0]
    raw = lightgbm_raw(loaded, X, path.read_text())
    assert_close(np.reshape(explainer.raw_predict(X), raw.shape), raw, RTOL)
    # The same explanation as the Booster's: the same table.
    reference = TreeExplainer(loaded).fit()
    np.testing.assert_array_equal(explainer.explain(X), reference.explain(X))
    n_outputs = raw.shape[1]
    contrib = np.reshape(loaded.predict(X, pred_contrib=True), (len(X), n_outputs, -1))
    if kind == "random_forest":
        contrib = contrib / loaded.current_iteration()
    phi = explainer.explain(X).to_numpy().reshape(len(X), n_outputs, -1)
    assert_close(phi, contrib[:, :, :-1], SHAP_RTOL)


def test_explaining_a_file_needs_no_lightgbm(tmp_path):
    path = tmp_path / "model.txt"
    model = booster("categorical")
    model.save_model(path)
    X = training_data(20, seed=2)[0]
    frame = pd.DataFrame(X, columns=model.feature_name())
    frame.to_csv(tmp_path / "rows.csv", index=False)
    code = (
        "import sys; sys.modules['lightgbm'] = None; "  # import lightgbm fails
        "from skshapley.cli import main; "
        "sys.exit(main(['explain', '--model', 'model.txt', '--data', 'rows.csv', "
        "'--out', 'phi.csv', '-q']))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, cwd=tmp_path
    )
    assert result.returncode == 0, result.stderr
    table = pd.read_csv(tmp_path / "phi.csv", index_col=0)
    assert_close(table.sum(axis=1), model.predict(X, raw_score=True), RTOL)


# ---------------------------------------------------------------------------
# Hand-written models: depth and number of trees.


def tree_text(index, tree):
    """One ``Tree=`` block from (features, thresholds, left, right, leaves, counts)."""
    feature, threshold, left, right, leaf_value, leaf_count, internal_count = tree
    join = " ".join
    return (
        f"Tree={index}\nnum_leaves={len(leaf_value)}\nnum_cat=0\n"
        f"split_feature={join(map(str, feature))}\n"
        f"threshold={join(repr(float(t)) for t in threshold)}\n"
        f"decision_type={join(['2'] * len(feature))}\n"
        f"left_child={join(map(str, left))}\nright_child={join(map(str, right))}\n"
        f"leaf_value={join(repr(float(v)) for v in leaf_value)}\n"
        f"leaf_count={join(map(str, leaf_count))}\n"
        f"internal_count={join(map(str, internal_count))}\n"
        "is_linear=0\nshrinkage=1\n\n\n"
    )


def model_text(trees, n_features=5):
    names = " ".join(f"f{j}" for j in range(n_features))
    infos = " ".join(["[-3:3]"] * n_features)
    return (
        f"tree\nversion=v4\nnum_class=1\nnum_tree_per_iteration=1\nlabel_index=0\n"
        f"max_feature_idx={n_features - 1}\nobjective=regression\n"
        f"feature_names={names}\nfeature_infos={infos}\n\n"
        + "".join(tree_text(i, tree) for i, tree in enumerate(trees))
        + "end of trees\n\npandas_categorical:null\n"
    )


def chain(depth, rng, n_features=5):
    """A tree whose internal node u has leaf u on the left, node u+1 right."""
    nodes = np.arange(depth)
    return (
        rng.integers(0, n_features, depth),
        rng.normal(size=depth),
        ~nodes,
        np.append(nodes[1:], ~depth),
        rng.normal(size=depth + 1),
        np.ones(depth + 1, dtype=int),
        depth + 1 - nodes,
    )


def stump(rng):
    return (
        [rng.integers(5)],
        rng.normal(size=1),
        [-1],
        [-2],
        rng.normal(size=2),
        [3, 4],
        [7],
    )


def check_against_lightgbm(text, X):
    model = read_model_text(text)
    explainer = TreeExplainer(model).fit()
    expected = lgb.Booster(model_str=text).predict(X, raw_score=True)
    assert_close(explainer.raw_predict(X), expected, RTOL)
    phi = explainer.explain(X)
    assert_close(phi.sum(axis=1) + explainer.expected_value_, expected, 1e-10)


def test_deep_tree():
    # dump_model's nested JSON made the old parser recurse once per level.
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 5))
    check_against_lightgbm(model_text([chain(2000, rng), chain(3, rng)]), X)


@pytest.mark.parametrize(
    "n_trees", [5000, pytest.param(100_000, marks=pytest.mark.slow)]
)
def test_many_trees(n_trees):
    rng = np.random.default_rng(1)
    X = rng.normal(size=(5, 5))
    check_against_lightgbm(model_text([stump(rng) for _ in range(n_trees)]), X)


# ---------------------------------------------------------------------------
# Damaged files: one ValueError naming the problem.


def base_text():
    rng = np.random.default_rng(2)
    return model_text([chain(3, rng), stump(rng)])


def replace(old, new, count=1):
    return lambda text: text.replace(old, new, count)


def set_line(key, value, occurrence=0):
    """The ``occurrence``-th line ``key=...`` replaced by ``key=value``."""

    def edit(text):
        lines = text.split("\n")
        found = [i for i, line in enumerate(lines) if line.startswith(f"{key}=")]
        lines[found[occurrence]] = f"{key}={value}"
        return "\n".join(lines)

    return edit


CATEGORICAL_TREE = (
    "Tree=0\nnum_leaves=2\nnum_cat=1\nsplit_feature=0\nthreshold={threshold}\n"
    "decision_type=1\nleft_child=-1\nright_child=-2\nleaf_value=1 2\n"
    "leaf_count=3 4\ninternal_count=7\ncat_boundaries={boundaries}\n"
    "cat_threshold=5\nis_linear=0\nshrinkage=1\n\n\n"
)


def categorical(threshold=0, boundaries="0 1"):
    def edit(text):
        head, _, tail = text.partition("Tree=0\n")
        tail = tail[tail.index("Tree=1\n") :]
        tree = CATEGORICAL_TREE.format(threshold=threshold, boundaries=boundaries)
        return head + tree + tail

    return edit


DAMAGE = [
    (replace("tree\n", "three\n"), "first line must be 'tree'"),
    (replace("end of trees\n", ""), "must be 'Tree=2' or 'end of trees'"),
    (lambda text: text[: text.index("Tree=1")], "no 'end of trees'"),
    (replace("num_class=1\n", ""), "header has no num_class"),
    (set_line("num_class", "0"), r"num_class must lie in \[1, 100000\]"),
    (set_line("num_class", "100001"), r"num_class must lie in \[1, 100000\]"),
    (set_line("num_class", "2"), "num_tree_per_iteration=1 differs"),
    (set_line("max_feature_idx", "1000000"), r"max_feature_idx must lie in"),
    (set_line("max_feature_idx", "1e9"), "max_feature_idx must be integers"),
    (set_line("feature_names", "f0 f1 f2 f3"), "feature_names must list 5"),
    (set_line("feature_names", "f0 f1 f2 f3 f0"), "duplicated names"),
    (set_line("feature_infos", "a b c d e"), "feature_infos has an entry 'a'"),
    (set_line("objective", "regression_x"), "objective 'regression_x'"),
    (set_line("objective", ""), "objective '' is not"),
    (replace("end of trees\n", "end of trees\n\nparameters:\n[boosting: gbdt]\n"),
     "no 'end of parameters'"),
    (set_line("objective", "binary sigmoid:x"), "option 'sigmoid:x'"),
    (replace("num_class=1\n", "num_class=1\nnum_class=1\n"), "'num_class' twice"),
    (replace("Tree=1", "Tree=2"), "must be 'Tree=1'"),
    (replace("num_leaves=4\n", ""), "tree 0 has no num_leaves"),
    (set_line("num_leaves", "5"), "tree 0 leaf_value has 4 values, expected 5"),
    (set_line("num_leaves", "2000000000"), "tree 0 leaf_value has 4 values"),
    (set_line("left_child", "-1 -2"), "tree 0 left_child has 2 values, expected 3"),
    (set_line("left_child", "-1 -2 x"), "tree 0 left_child must be integers"),
    (set_line("right_child", "1 0 -4"), "tree 0 has a right_child out of range"),
    (set_line("right_child", "2 2 -4"), "tree 0's child indices do not form"),
    (set_line("right_child", "1 2 -5"), "tree 0 has a right_child out of range"),
    (set_line("right_child", "1 2 -3"), "tree 0's child indices do not form"),
    (set_line("split_feature", "0 5 1"), r"split_feature must lie in \[0, 4\]"),
    (set_line("split_feature", "0 -1 1"), r"split_feature must lie in \[0, 4\]"),
    (set_line("decision_type", "2 12 2"), r"decision_type must lie in \[0, 11\]"),
    (set_line("decision_type", "2 1 2"), "categorical splits but num_cat=0"),
    (set_line("threshold", "0.5 nan 1"), "threshold must be finite numbers"),
    (set_line("threshold", "0.5 1e999 1"), "threshold must be finite numbers"),
    (set_line("leaf_value", "1 2 inf 4"), "leaf_value must be finite numbers"),
    (set_line("leaf_value", "1 2  4"), "leaf_value must be finite numbers"),
    (set_line("leaf_count", "1 1 2 1"), "internal_count is not the sum"),
    (set_line("leaf_count", "1 1 -1 1"), r"leaf_count must lie in \[0,"),
    (set_line("internal_count", "4 3 0"), r"internal_count must lie in \[1,"),
    (set_line("is_linear", "2"), r"is_linear must lie in \[0, 1\]"),
    (set_line("shrinkage", "abc", occurrence=1), "tree 1 shrinkage must be finite"),
    (categorical(threshold=1), "not a bitset index in"),
    (categorical(threshold=0.5), "not a bitset index in"),
    (categorical(boundaries="1 1"), "cat_boundaries must rise from 0"),
    (categorical(boundaries="0 2"), "cat_threshold has 1 values, expected 2"),
    (replace("num_class=1\nnum_tree_per_iteration=1",
             "num_class=3\nnum_tree_per_iteration=3"),
     "2 trees are not a whole number of iterations of 3"),
    (replace("pandas_categorical:null", "pandas_categorical:" + "[" * 100_000),
     "pandas_categorical line is not JSON"),
    (replace("pandas_categorical:null", 'pandas_categorical:[{"a": 1}]'),
     "pandas_categorical must be lists"),
    (replace("version=v4\n", "version=v4\ntree_sizes=1 2\n"), "tree_sizes does not"),
    (replace("f0 f1", "f0\x00 f1"), "NUL bytes"),
]  # fmt: skip


@pytest.mark.parametrize(("damage", "message"), DAMAGE)
def test_damaged_models_are_refused(damage, message):
    text = base_text()
    read_model_text(text)  # the undamaged text is valid
    damaged = damage(text)
    assert damaged != text
    with pytest.raises(
        ValueError, match=f"^the model is not a valid LightGBM model: .*{message}"
    ):
        read_model_text(damaged)


def test_tree_sizes_are_checked():
    # LightGBM finds each tree by tree_sizes: a size that does not match the
    # text is refused (LightGBM's loader fails or reads other lines).
    text = booster("regression").model_to_string()
    read_model_text(text)
    sizes = next(line for line in text.split("\n") if line.startswith("tree_sizes="))
    first, rest = sizes.removeprefix("tree_sizes=").split(" ", 1)
    wrong = text.replace(sizes, f"tree_sizes={int(first) + 1} {rest}")
    with pytest.raises(ValueError, match="tree_sizes does not match"):
        read_model_text(wrong)
    # One blank line less after a tree: the same blocks, other byte offsets.
    with pytest.raises(ValueError, match="tree_sizes does not match"):
        read_model_text(text.replace("\n\n\nTree=1", "\n\nTree=1"))
    # One size less: LightGBM would read one tree less.
    with pytest.raises(ValueError, match="tree_sizes does not match"):
        read_model_text(text.replace(sizes, sizes.rsplit(" ", 1)[0]))
    # LightGBM does not use the last size (no tree starts after the last).
    last = sizes.rsplit(" ", 1)[0] + " 12345"
    read_model_text(text.replace(sizes, last))
    with pytest.raises(ValueError, match="tree_sizes does not match"):
        read_model_text(text.replace(sizes, sizes.rsplit(" ", 1)[0] + " x"))


def test_categorical_feature_with_numerical_split():
    text = booster("categorical").model_to_string()
    read_model_text(text)
    lines = [line for line in text.split("\n") if not line.startswith("tree_sizes=")]
    # The categorical feature 1 listed as numerical: its splits still are
    # categorical, and a numerical split on a categorical feature is refused.
    i = next(i for i, line in enumerate(lines) if line.startswith("split_feature="))
    j = next(i for i, line in enumerate(lines) if line.startswith("decision_type="))
    n = len(lines[i].split(" "))
    lines[i] = "split_feature=" + " ".join(["1"] * n)
    lines[j] = "decision_type=" + " ".join(["2"] * n)
    with pytest.raises(ValueError, match="feature 1 is categorical but has numerical"):
        read_model_text("\n".join(lines))


def test_file_errors(tmp_path, monkeypatch):
    path = tmp_path / "model.txt"
    path.write_bytes(base_text().encode())
    assert read_model_file(path).n_trees == 2
    monkeypatch.setattr(lightgbm_text, "MAX_MODEL_FILE_BYTES", 100)
    with pytest.raises(ValueError, match=r"model\.txt is larger than 100 bytes"):
        read_model_file(path)
    monkeypatch.undo()
    path.write_bytes(b"tree\n\xff\xfe")
    with pytest.raises(ValueError, match=r"model\.txt is not a valid LightGBM model: "
                       r"it is not UTF-8"):  # fmt: skip
        read_model_file(path)


def test_repr():
    model = read_model_text(base_text())
    assert repr(model) == "LightGBMTextModel(n_trees=2, n_features=5, n_outputs=1)"


# ---------------------------------------------------------------------------
# Found by running other projects' test suites.


THREE_CLASSES = {"objective": "multiclass", "num_class": 3}


@pytest.mark.parametrize(
    ("params", "labels", "names"),
    [
        # LightGBM's wrapper label-encodes y: class k is output k; num_class=3
        # gives 3 outputs (and predict_proba columns) whatever y holds.
        (THREE_CLASSES, ["a"], ("a", "unseen class 1", "unseen class 2")),
        (THREE_CLASSES, ["a", "b"], ("a", "b", "unseen class 2")),
        ({**THREE_CLASSES, "objective": "multiclassova"}, [7],
         (7, "unseen class 1", "unseen class 2")),
        # "binary" explains label 1, which one class leaves unseen.
        ({"objective": "binary"}, ["a"], ("unseen class 1",)),
    ],
)  # fmt: skip
def test_classifier_with_fewer_classes_than_outputs(params, labels, names):
    X = training_data()[0]
    y = np.resize(
        np.array(labels, dtype=object if isinstance(labels[0], str) else None), len(X)
    )
    model = lgb.LGBMClassifier(n_estimators=3, verbose=-1, **params).fit(X, y)
    explainer = TreeExplainer(model).fit()
    assert explainer.output_names_ == names
    n_outputs = len(names)
    assert model.predict_proba(X[:1]).shape[1] == max(n_outputs, 2)
    phi = explainer.explain(X).to_numpy().reshape(len(X), n_outputs, -1)
    contrib = np.reshape(model.predict(X, pred_contrib=True), (len(X), n_outputs, -1))
    assert_close(phi, contrib[:, :, :-1], SHAP_RTOL)
    raw = np.reshape(model.predict(X, raw_score=True), (len(X), n_outputs))
    assert_close(np.reshape(explainer.raw_predict(X), raw.shape), raw, RTOL)


def test_column_names_with_spaces():
    # LightGBM renames "a b" to "a_b"; its wrapper predicts on the frame
    # with the original names, and so does the explainer.
    X, y = training_data()
    frame = pd.DataFrame(X, columns=["age in years", "colour", "zero s", "noise"])
    model = lgb.LGBMRegressor(n_estimators=4, verbose=-1).fit(frame, y)
    assert list(model.feature_names_in_) == [
        "age_in_years",
        "colour",
        "zero_s",
        "noise",
    ]
    explainer = TreeExplainer(model).fit()
    shuffled = frame[["noise", "zero s", "age in years", "colour"]]
    phi = explainer.explain(shuffled)
    assert list(phi.columns) == list(model.feature_names_in_)
    contrib = model.predict(frame, pred_contrib=True)
    assert_close(phi.to_numpy(), contrib[:, :-1], SHAP_RTOL)
    # Columns named as the booster names them are accepted as well.
    renamed = frame.set_axis(model.feature_names_in_, axis=1)
    np.testing.assert_array_equal(explainer.explain(renamed), phi)
    with pytest.raises(ValueError, match="missing: \\['age_in_years'\\]"):
        explainer.explain(frame.rename(columns={"age in years": "age"}))


# -- keys of another LightGBM release -----------------------------------------


@pytest.fixture(scope="module")
def every_key_text():
    """A model whose text holds every header and tree key LightGBM 4.x writes
    for tree models it can explain (categorical splits, monotone constraints)."""
    rng = np.random.default_rng(0)
    X = pd.DataFrame(rng.normal(size=(300, 3)), columns=["a", "b", "c"])
    X["colour"] = pd.Categorical(rng.choice(["x", "y", "z"], 300))
    model = lgb.LGBMRegressor(
        n_estimators=3, monotone_constraints=[1, 0, 0, 0], verbose=-1
    ).fit(X, X["a"] + (X["colour"] == "x"))
    return model.booster_.model_to_string()


@pytest.mark.parametrize(
    ("edit", "where", "key"),
    [
        (lambda t: t.replace("\nversion=v4\n", "\nversion=v4\nleaf_scale=2\n"),
         "the header", "leaf_scale"),
        (lambda t: t.replace("\nshrinkage=", "\ntree_weight=0.5\nshrinkage=", 1),
         "tree 0", "tree_weight"),
        (lambda t: t.replace("\nshrinkage=", "\nbias=1\nshrinkage=", 3),
         "tree 0", "bias"),
    ],
)  # fmt: skip
def test_a_key_of_another_release_is_refused_naming_it(
    every_key_text, edit, where, key
):
    text = edit(every_key_text)
    assert text != every_key_text
    with pytest.raises(
        TypeError,
        match=rf"^model\.txt has a field skshapley does not know, '{key}' in "
        rf"{where}, written by LightGBM's model format 'v4'",
    ):
        read_model_text(text, source="model.txt")
    # The version named is the file's own.
    with pytest.raises(TypeError, match=r"model format 'v5'"):
        read_model_text(text.replace("version=v4", "version=v5"), "model.txt")


def test_every_key_lightgbm_writes_is_known(every_key_text):
    read_model_text(every_key_text)
    header = every_key_text.split("\nTree=")[0]
    assert "monotone_constraints=" in header
    assert "cat_threshold=" in every_key_text
