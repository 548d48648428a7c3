"""scikit-learn regression trees with node arrays of the test's choosing.

``Tree.__setstate__`` (what unpickling calls) installs any node arrays in a
fitted ``DecisionTreeRegressor``, so that scikit-learn's own ``predict`` is
an independent oracle for trees no training run would produce: chains of
depth 100,000, zero or extreme covers, NaN thresholds.
"""

import numpy as np
from sklearn.tree import DecisionTreeRegressor
from sklearn.tree._tree import NODE_DTYPE, Tree


def regressor_from_arrays(left, right, feature, threshold, cover, value, n_features):
    """A fitted ``DecisionTreeRegressor`` with the given node arrays.

    ``left`` and ``right`` are -1 at leaves; children must come after their
    parent (as scikit-learn numbers them). ``value`` has one entry per node.
    """
    left, right = np.asarray(left), np.asarray(right)
    n_nodes = len(left)
    stub = np.arange(2.0 * n_features).reshape(2, n_features)
    model = DecisionTreeRegressor(max_depth=1).fit(stub, [0.0, 1.0])
    nodes = np.zeros(n_nodes, dtype=NODE_DTYPE)
    internal = left >= 0
    nodes["left_child"] = left
    nodes["right_child"] = right
    nodes["feature"] = np.where(internal, feature, -2)
    nodes["threshold"] = np.where(internal, threshold, -2.0)
    nodes["n_node_samples"] = 1
    nodes["weighted_n_node_samples"] = cover
    depth = np.zeros(n_nodes, dtype=np.intp)
    for node in np.flatnonzero(internal):  # parents before children
        depth[left[node]] = depth[right[node]] = depth[node] + 1
    # A fresh Tree, as unpickling makes: __setstate__ does not reallocate
    # the node buffer of a tree that already has one.
    tree_ = Tree(n_features, np.ones(1, dtype=np.intp), 1)
    tree_.__setstate__(
        {
            "max_depth": int(depth.max()),
            "node_count": n_nodes,
            "nodes": nodes,
            "values": np.asarray(value, dtype=np.float64).reshape(n_nodes, 1, 1),
        }
    )
    model.tree_ = tree_
    return model


def tree_arrays(model):
    """The node arrays of a fitted scikit-learn tree, for tests/naive.py."""
    tree_ = model.tree_
    return {
        "left": tree_.children_left,
        "right": tree_.children_right,
        "feature": tree_.feature,
        "cover": tree_.weighted_n_node_samples,
        "value": tree_.value[:, 0, 0],
    }


def sklearn_goes_left(model, x):
    """Where scikit-learn sends the row ``x`` at each node (float32 compare)."""
    tree_ = model.tree_
    x32 = np.asarray(x, dtype=np.float32)[np.maximum(tree_.feature, 0)]
    return x32 <= tree_.threshold


def chain(depth, n_features=3, seed=0):
    """A tree of ``depth`` splits in a row, cycling over ``n_features`` features.

    Spine node ``k`` (id ``2k``) splits on feature ``k % n_features`` at
    threshold ``k // n_features + 0.5``: rows whose value is at most that
    leave to a leaf (id ``2k + 1``), the others go on down the spine. A row
    with feature values ``v`` thus leaves near depth ``n_features * min(v)``.
    Covers shrink down the spine by random leaf masses; leaf values are
    random.
    """
    rng = np.random.default_rng(seed)
    n_nodes = 2 * depth + 1
    spine = np.arange(0, 2 * depth, 2)
    left, right = np.full(n_nodes, -1), np.full(n_nodes, -1)
    left[spine], right[spine] = spine + 1, spine + 2
    feature = np.full(n_nodes, -1)
    threshold = np.zeros(n_nodes)
    feature[spine] = np.arange(depth) % n_features
    threshold[spine] = np.arange(depth) // n_features + 0.5
    leaf_mass = rng.uniform(0.5, 2.0, n_nodes)
    cover = np.zeros(n_nodes)
    cover[-1] = leaf_mass[-1]
    cover[spine + 1] = leaf_mass[spine + 1]
    # A spine node's cover: everything below it (cumulative from the bottom).
    cover[spine] = np.cumsum((leaf_mass[spine + 1])[::-1])[::-1] + cover[-1]
    value = rng.normal(size=n_nodes)
    return regressor_from_arrays(
        left, right, feature, threshold, cover, value, n_features
    )
