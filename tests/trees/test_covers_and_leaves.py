"""Covers and leaf values at their extremes, through the public explainer.

Trees come from a fitted scikit-learn tree whose covers, leaf values or
thresholds are replaced (``Tree.__setstate__``, see tests/crafted_trees.py):
scikit-learn's ``predict`` is the oracle for the raw output, and coalitions
enumerated over an iterative path-dependent value function
(tests/naive.py) for the Shapley values. Zero covers are legal (a node that
no sample of positive weight reached); NaN, infinite or negative covers,
covers that grow from parent to child, and non-finite or overflowing leaf
values are refused at ``fit`` with a message naming the tree and node.
"""

import numpy as np
import pytest
from crafted_trees import regressor_from_arrays, sklearn_goes_left, tree_arrays
from naive import path_dependent_shapley_by_leaves
from sklearn.tree import DecisionTreeRegressor

from skshapley import TreeExplainer

N_FEATURES = 3


def fitted():
    """A depth-4 tree on 3 features, and its training rows."""
    rng = np.random.default_rng(0)
    X = rng.normal(size=(200, N_FEATURES))
    y = X[:, 0] + 2 * X[:, 1] * X[:, 2] + rng.normal(scale=0.1, size=200)
    return DecisionTreeRegressor(max_depth=4, random_state=0).fit(X, y), X


def subtree(tree_, node):
    """The nodes of the subtree rooted at ``node`` (iteratively)."""
    nodes, stack = [], [node]
    while stack:
        u = stack.pop()
        nodes.append(u)
        if tree_.children_left[u] >= 0:
            stack += [tree_.children_left[u], tree_.children_right[u]]
    return np.array(nodes)


def with_changes(model, cover=None, value=None, threshold=None):
    tree_ = model.tree_
    return regressor_from_arrays(
        tree_.children_left,
        tree_.children_right,
        tree_.feature,
        tree_.threshold if threshold is None else threshold,
        tree_.weighted_n_node_samples if cover is None else cover,
        tree_.value[:, 0, 0] if value is None else value,
        N_FEATURES,
    )


def extreme_covers():
    """Covers with a zero subtree, a tiny one, a huge root, and underflow."""
    model, X = fitted()
    tree_ = model.tree_
    cover = tree_.weighted_n_node_samples
    # Two nodes with splits below their children, one in each half of the
    # tree: their subtrees get the extreme covers (children of a zero-cover
    # parent included).
    a, b = (
        next(
            u
            for u in subtree(tree_, half)
            if tree_.children_left[u] >= 0
            and tree_.children_left[tree_.children_left[u]] >= 0
        )
        for half in (tree_.children_left[0], tree_.children_right[0])
    )
    zero, tiny, huge, underflow = (cover.copy() for _ in range(4))
    zero[subtree(tree_, a)] = 0.0
    tiny[subtree(tree_, a)] *= 1e-308 / cover[a]  # subnormal covers below a
    huge *= 1e308 / cover[0]  # the root's cover is 1e308
    underflow *= 1e308 / cover[0]
    underflow[subtree(tree_, b)] *= 1e-308 / cover[b]  # ratio 1e-616 -> 0
    reaching = model.decision_path(X.astype(np.float32)).toarray()
    rows = np.concatenate(
        [X[reaching[:, a] == 1][:3], X[reaching[:, b] == 1][:3], X[:4]]
    )
    return model, rows, {"zero": zero, "tiny": tiny, "huge": huge,
                         "underflow": underflow}  # fmt: skip


MODEL, ROWS, COVERS = extreme_covers()


@pytest.mark.parametrize("name", list(COVERS))
def test_extreme_covers_keep_efficiency_and_exact_values(name):
    model = with_changes(MODEL, cover=COVERS[name])
    explainer = TreeExplainer(model).fit()
    phi = explainer.explain(ROWS).to_numpy()
    raw = model.predict(ROWS)
    assert np.isfinite(phi).all()
    assert np.isfinite(explainer.expected_value_)
    scale = np.abs(model.tree_.value).max()
    # Sums of ~16 leaves' products of <= 4 factors: a few roundings.
    residual = phi.sum(axis=1) + explainer.expected_value_ - raw
    assert np.abs(residual).max() <= 1e-13 * scale
    arrays = tree_arrays(model)
    for x, row in zip(ROWS, phi, strict=True):
        expected = path_dependent_shapley_by_leaves(
            arrays, sklearn_goes_left(model, x), list(range(N_FEATURES))
        )
        np.testing.assert_allclose(row, expected, rtol=0, atol=1e-13 * scale)


def test_zero_covers_weigh_nothing_unless_the_row_goes_there():
    # The base value ignores the zero subtree; a row that reaches it gets
    # its leaf's value in full (efficiency), credited to the features that
    # sent it there.
    model = with_changes(MODEL, cover=COVERS["zero"])
    explainer = TreeExplainer(model).fit()
    row = ROWS[:1]
    phi = explainer.explain(row).to_numpy()[0]
    assert phi.sum() + explainer.expected_value_ == pytest.approx(
        model.predict(row)[0], abs=1e-13
    )
    assert np.abs(phi).max() > 0


@pytest.mark.parametrize(
    ("bad", "match"),
    [
        (np.nan, r"tree 0, node 1, has cover nan: covers must be finite"),
        (np.inf, r"tree 0, node 1, has cover inf: covers must be finite"),
        (-1.0, r"tree 0, node 1, has cover -1.0: covers must be finite and >= 0"),
        (1e9, r"tree 0, node 1, has cover 1000000000.0, more than its parent's"),
    ],
)
def test_bad_covers_are_refused_at_fit(bad, match):
    cover = MODEL.tree_.weighted_n_node_samples.copy()
    cover[1] = bad
    with pytest.raises(ValueError, match=match):
        TreeExplainer(with_changes(MODEL, cover=cover)).fit()


def test_a_root_without_mass_is_refused():
    cover = np.zeros_like(MODEL.tree_.weighted_n_node_samples)
    with pytest.raises(ValueError, match="root has zero cover"):
        TreeExplainer(with_changes(MODEL, cover=cover)).fit()


def leaf_of(model):
    return int(np.flatnonzero(model.tree_.children_left < 0)[0])


@pytest.mark.parametrize("bad", [np.nan, np.inf, -np.inf])
def test_non_finite_leaf_values_are_refused_at_fit(bad):
    value = MODEL.tree_.value[:, 0, 0].copy()
    leaf = leaf_of(MODEL)
    value[leaf] = bad
    with pytest.raises(ValueError, match=rf"tree 0, node {leaf}, has leaf value"):
        TreeExplainer(with_changes(MODEL, value=value)).fit()


def test_leaf_values_that_could_overflow_are_refused():
    value = MODEL.tree_.value[:, 0, 0].copy()
    value[leaf_of(MODEL)] = 2e300
    with pytest.raises(
        ValueError,
        match=r"leaf values are too large: .* 2e\+300, above the limit of 1e\+300",
    ):
        TreeExplainer(with_changes(MODEL, value=value)).fit()


def test_large_leaf_values_below_the_limit_keep_efficiency():
    value = MODEL.tree_.value[:, 0, 0] * 1e299
    model = with_changes(MODEL, value=value)
    explainer = TreeExplainer(model).fit()
    phi = explainer.explain(ROWS).to_numpy()
    assert np.isfinite(phi).all()
    residual = phi.sum(axis=1) + explainer.expected_value_ - model.predict(ROWS)
    assert np.abs(residual).max() <= 1e-13 * np.abs(value).max()


def test_nan_thresholds_route_as_scikit_learn_does():
    # x <= NaN is false: every (non-missing) value goes right, in
    # scikit-learn, XGBoost and LightGBM alike.
    threshold = MODEL.tree_.threshold.copy()
    threshold[[0, MODEL.tree_.children_right[0]]] = np.nan
    model = with_changes(MODEL, threshold=threshold)
    explainer = TreeExplainer(model).fit()
    np.testing.assert_array_equal(explainer.raw_predict(ROWS), model.predict(ROWS))
    phi = explainer.explain(ROWS).to_numpy()
    arrays = tree_arrays(model)
    scale = np.abs(model.tree_.value).max()
    for x, row in zip(ROWS, phi, strict=True):
        expected = path_dependent_shapley_by_leaves(
            arrays, sklearn_goes_left(model, x), list(range(N_FEATURES))
        )
        np.testing.assert_allclose(row, expected, rtol=0, atol=1e-13 * scale)


@pytest.mark.parametrize("cover", [0.0, 5.0])
def test_a_tree_without_splits_is_its_leaf_whatever_its_cover(cover):
    model = regressor_from_arrays([-1], [-1], [-2], [0.0], [cover], [3.0], N_FEATURES)
    explainer = TreeExplainer(model).fit()
    assert explainer.expected_value_ == 3.0
    np.testing.assert_array_equal(explainer.explain(ROWS).to_numpy(), 0.0)
    # One row at a time takes the one-row walk.
    for row in ROWS:
        np.testing.assert_array_equal(explainer.explain(row[None]).to_numpy(), 0.0)
    np.testing.assert_array_equal(explainer.raw_predict(ROWS), model.predict(ROWS))
