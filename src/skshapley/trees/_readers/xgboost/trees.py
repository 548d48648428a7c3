"""One XGBoost tree: its fields checked, its nodes walked, its table rows.

How XGBoost routes and what the table stores instead is described in
:mod:`._xgboost`. The arrays come from a document that may have been
altered: lengths, types and ranges are checked, and the walk from the root
refuses a node reached twice, so a cycle or a shared child cannot make it
loop or grow.
"""

import numpy as np

from ...._errors import UnsupportedModelError
from ...._runtime.limits import INT32_MAX, MAX_OUTPUTS
from ..._table import (
    BITSET_WORDS,
    N_CATEGORIES,
    ParsedTree,
    category_bitset,
    swap_children,
)
from . import document as doc
from .document import MalformedModel

# How far a split's cover may be from the sum of its children's, relative
# to it: float32 storage of float64 hessian sums leaves <= 2e-7 (measured
# on every family and tree method); 1e-5 leaves room for other summation
# orders and still keeps every cover ratio within 1e-5 of [0, 1].
_COVER_RTOL = 1e-5


def parse_tree(tree_json, path, output, weight, n_features) -> ParsedTree:
    """The nodes of the tree ``tree_json`` (at ``path``), in preorder.

    Only nodes reachable from the root are kept. ``output`` is the output
    the tree adds to, ``weight`` its float32 weight (DART), ``n_features``
    the model's. Raises :class:`MalformedModel` if the tree is malformed.

    Pruned trees keep deleted nodes in their arrays; walking from the root
    drops them (and ignores what they hold).
    """
    param = doc.mapping(tree_json, "tree_param", path)
    ppath = f"{path}.tree_param"
    n_nodes = doc.integer(param, "num_nodes", ppath, low=1, high=INT32_MAX)
    width = doc.integer(
        param, "size_leaf_vector", ppath, low=0, high=MAX_OUTPUTS, default=1
    )
    if width > 1:
        raise UnsupportedModelError(
            "XGBoost multi-output trees (multi_strategy='multi_output_tree') "
            "are not supported; train with one_output_per_tree."
        )

    def field(key, dtype):
        return doc.numbers(tree_json, key, path, dtype, length=n_nodes)

    left_json, right_json = (
        field("left_children", np.int64),
        field("right_children", np.int64),
    )
    order = _preorder(left_json.tolist(), right_json.tolist(), path)
    new_index = np.full(n_nodes, -1, dtype=np.intp)
    new_index[order] = np.arange(len(order))
    left_old, right_old = left_json[order], right_json[order]
    internal = left_old >= 0
    feature = field("split_indices", np.int64)[order]
    _check_features(feature, internal, order, path, n_features)
    condition = field("split_conditions", np.float32)[order]
    # float32, as XGBoost holds it (JSON prints the shortest decimal of it).
    cover = field("sum_hessian", np.float32)[order].astype(np.float64)
    field("base_weights", np.float32)  # unused, but part of a valid tree
    with np.errstate(over="ignore"):
        leaf_value = condition * np.float32(weight)  # XGBoost's float32 product
    if not np.all(np.isfinite(leaf_value[~internal])):
        raise MalformedModel(
            f"{path}.split_conditions holds a non-finite leaf value (node "
            f"{order[~internal][~np.isfinite(leaf_value[~internal])][0]})"
        )
    threshold = np.nextafter(condition, np.float32(-np.inf)).astype(np.float64)
    tree = ParsedTree(
        feature=np.where(internal, feature, -1),
        threshold=np.where(internal, threshold, 0.0),
        left=np.where(internal, new_index[np.maximum(left_old, 0)], -1),
        right=np.where(internal, new_index[np.maximum(right_old, 0)], -1),
        missing_left=_default_left(field("default_left", np.int64), order, path),
        cover=cover,
        value=np.where(internal, 0.0, leaf_value.astype(np.float64))[:, None],
        output=output,
        is_categorical=np.zeros(len(order), dtype=np.uint8),
        category_bitset=np.zeros((len(order), BITSET_WORDS), dtype=np.uint32),
    )
    _check_covers(tree, order, path)
    _set_categorical_nodes(tree, tree_json, path, new_index)
    return tree


def _default_left(default_left, order, path):
    """The missing-value rule, 1 (left) or 0 (right); XGBoost reads no other."""
    default_left = default_left[order]
    bad = (default_left != 0) & (default_left != 1)
    if np.any(bad):
        raise MalformedModel(
            f"{path}.default_left[{order[bad][0]}] is {default_left[bad][0]}; "
            "allowed: 0 or 1"
        )
    return default_left.astype(np.uint8)


def _preorder(left, right, path):
    """Nodes reachable from the root, in preorder; each must be reached once.

    A child pointing back to an ancestor (a cycle) or a node with two
    parents would make a walk revisit nodes forever or duplicate them.
    """
    n_nodes = len(left)
    seen = bytearray(n_nodes)
    order = []
    stack = [0]
    while stack:
        node = stack.pop()
        if seen[node]:
            raise MalformedModel(
                f"{path}: node {node} is reached twice from the root (a cycle or "
                "a shared child)"
            )
        seen[node] = 1
        order.append(node)
        if left[node] == -1:
            if right[node] != -1:
                raise MalformedModel(
                    f"{path}.right_children[{node}] is {right[node]} at a leaf "
                    "(left child -1)"
                )
            continue
        for key, child in (
            ("right_children", right[node]),
            ("left_children", left[node]),
        ):
            if not 0 <= child < n_nodes:
                raise MalformedModel(
                    f"{path}.{key}[{node}] is {child}; allowed: -1 or 0 to "
                    f"{n_nodes - 1}"
                )
            stack.append(child)
    return np.array(order, dtype=np.intp)


def _check_features(feature, internal, order, path, n_features):
    bad = internal & ((feature < 0) | (feature >= n_features))
    if np.any(bad):
        node = order[bad][0]
        raise MalformedModel(
            f"{path}.split_indices[{node}] is {feature[bad][0]}; the model has "
            f"features 0 to {n_features - 1}"
        )


def _check_covers(tree: ParsedTree, order, path) -> None:
    """Covers weight the paths: finite, nonnegative, and each split's the sum
    of its children's (XGBoost sums hessians in float64 and stores float32:
    measured <= 2e-7 apart). A child holding more than its parent would
    make cover ratios above 1, which no model has and the kernel's
    bounded factors assume away.
    """
    cover = tree.cover
    bad = ~np.isfinite(cover) | (cover < 0)
    internal = np.flatnonzero(tree.left >= 0)
    children = cover[tree.left[internal]] + cover[tree.right[internal]]
    unequal = np.abs(children - cover[internal]) > _COVER_RTOL * cover[internal]
    bad[internal[unequal]] = True
    if np.any(bad):
        node = order[bad][0]
        raise MalformedModel(
            f"{path}.sum_hessian[{node}] is {cover[bad][0]}; covers must be finite, "
            "nonnegative and at each split the sum of the children's"
        )


def _set_categorical_nodes(tree: ParsedTree, tree_json, path, new_index) -> None:
    """Categorical splits: listed categories go right in XGBoost.

    The table sends the bitset's categories left and every other value
    (unlisted, negative, >= 256, NaN by the missing rule) right, so each
    categorical node's children are swapped and its missing rule flipped.
    """
    n_nodes = len(new_index)

    def field(key, length=None):
        return doc.numbers(
            tree_json, key, path, np.int64, length=length, required=False
        )

    nodes = field("categories_nodes")
    segments, sizes = (
        field("categories_segments", len(nodes)),
        field("categories_sizes", len(nodes)),
    )
    categories = field("categories")
    marked = np.zeros(n_nodes, dtype=bool)
    for old, begin, size in zip(
        nodes.tolist(), segments.tolist(), sizes.tolist(), strict=True
    ):
        if not 0 <= old < n_nodes or marked[old]:
            raise MalformedModel(
                f"{path}.categories_nodes lists node {old} twice or out of range"
            )
        marked[old] = True
        if min(begin, size) < 0 or begin + size > len(categories):
            raise MalformedModel(
                f"{path}: the categories of node {old} (from {begin}, {size} of them) "
                f"are beyond categories' {len(categories)} entries"
            )
        u = new_index[old]
        if u < 0:  # a deleted node
            continue
        if tree.left[u] < 0:
            raise MalformedModel(f"{path}.categories_nodes lists leaf {old}")
        listed = categories[begin : begin + size]
        if np.any(listed < 0):
            raise MalformedModel(f"{path}: node {old} lists a negative category")
        if listed.size and listed.max() >= N_CATEGORIES:
            raise UnsupportedModelError(
                f"XGBoost categorical split on category {listed.max()}: the tree "
                f"table's bitsets hold categories 0..{N_CATEGORIES - 1} only."
            )
        tree.is_categorical[u] = 1
        swap_children(tree, u)
        tree.threshold[u] = 0.0
        tree.category_bitset[u] |= category_bitset(listed)
    split_type = field("split_type", n_nodes)
    if "split_type" in tree_json:
        reachable = new_index >= 0
        internal = np.zeros(n_nodes, dtype=bool)
        internal[reachable] = tree.left[new_index[reachable]] >= 0
        disagree = internal & ((split_type != 0) != marked)
        if np.any(disagree):
            raise MalformedModel(
                f"{path}: node {np.flatnonzero(disagree)[0]} is categorical by "
                "split_type but not by categories_nodes, or the reverse"
            )
