"""The trees of a LightGBM text model: all trees' arrays parsed and checked at once.

Each tree block of the text format holds flat arrays (``split_feature``,
``left_child``, ...). They are parsed field by field for all trees together
(one regular expression and one NumPy conversion per field, not per tree)
and checked with array operations, so 100,000 trees take about as long as
their text is to read, and no check recurses or walks a tree.

Arrays of all trees are concatenated tree by tree: internal nodes (LightGBM
numbers them ``0..num_leaves-2`` per tree, root 0) in ``split_feature``,
``threshold``, ``decision_type``, ``left_child``, ``right_child``,
``internal_count``; leaves in ``leaf_value`` and ``leaf_count``. Child
indices stay LightGBM's, local to their tree: ``c >= 0`` is internal node
``c``, ``c < 0`` is leaf ``~c``.
"""

import re

import numpy as np

from ...._runtime.limits import INT32_MAX

_INTS = re.compile(r"-?\d{1,10}(?: -?\d{1,10})*")
FLOAT = r"[+-]?(?:\d+\.?\d*|\.\d+)(?:[eE][+-]?\d+)?"
_FLOATS = re.compile(f"{FLOAT}(?: {FLOAT})*")

# decision_type bits (LightGBM's tree.h): 1 categorical, 2 default left,
# 4 * missing type (0 None, 1 Zero, 2 NaN; 3 is none).
CATEGORICAL_BIT = 1
_MAX_DECISION_TYPE = 11


class InvalidModel(Exception):
    """One problem of a model text; the caller names the model."""


def ints(text: str, what: str, count: int, low: int, high: int) -> np.ndarray:
    """``count`` integers in ``[low, high]`` separated by single spaces."""
    if count == 0 and text == "":
        return np.zeros(0, dtype=np.int64)
    if not _INTS.fullmatch(text):
        raise InvalidModel(f"{what} must be integers, got {text[:40]!r}")
    values = np.array(text.split(" "), dtype=np.int64)
    if len(values) != count:
        raise InvalidModel(f"{what} has {len(values)} values, expected {count}")
    if values.min() < low or values.max() > high:
        raise InvalidModel(f"{what} must lie in [{low}, {high}]")
    return values


def floats(text: str, what: str, count: int) -> np.ndarray:
    """``count`` finite numbers separated by single spaces."""
    if count == 0 and text == "":
        return np.zeros(0)
    if not _FLOATS.fullmatch(text):
        raise InvalidModel(f"{what} must be finite numbers, got {text[:40]!r}")
    values = np.array(text.split(" "), dtype=np.float64)
    if len(values) != count:
        raise InvalidModel(f"{what} has {len(values)} values, expected {count}")
    if not np.isfinite(values).all():
        raise InvalidModel(f"{what} must be finite numbers")
    return values


def _field(blocks, trees, key, counts, parse, *args, default=None):
    """Field ``key`` of the given trees, parsed together, concatenated.

    ``counts[i]`` values are expected of tree ``trees[i]``; a tree without
    the field takes ``default(counts[i])`` or is refused. If the joined text
    does not parse, the trees are parsed one by one to name the first bad one.
    """
    texts = []
    for t, count in zip(trees, counts, strict=True):
        text = blocks[t].get(key)
        if text is None and default is None:
            raise InvalidModel(f"tree {t} has no {key}")
        texts.append(default(int(count)) if text is None else text)
    found = [text.count(" ") + 1 if text else 0 for text in texts]
    try:
        if found != list(counts):
            raise InvalidModel
        return parse(" ".join(text for text in texts if text), key, sum(found), *args)
    except InvalidModel:
        for t, text, count in zip(trees, texts, counts, strict=True):
            parse(text, f"tree {t} {key}", int(count), *args)
        raise  # unreachable unless one tree alone parses but not all together


def tree_arrays(blocks: list, n_features: int) -> dict:
    """All trees' arrays (see the module docstring), checked to form trees.

    Returns a dict of the concatenated arrays plus ``num_leaves`` and
    ``is_linear`` per tree and ``category_words``: for each categorical
    internal node (by its position in the concatenated arrays), the words of
    its bitset.
    """
    every = range(len(blocks))
    ones = [1] * len(blocks)
    n_leaves = _field(blocks, every, "num_leaves", ones, ints, 1, INT32_MAX)
    arrays = {
        "num_leaves": n_leaves,
        "num_cat": _field(blocks, every, "num_cat", ones, ints, 0, INT32_MAX),
        "is_linear": _field(
            blocks, every, "is_linear", ones, ints, 0, 1, default=lambda n: "0"
        ).astype(bool),
        "leaf_value": _field(blocks, every, "leaf_value", n_leaves, floats),
    }
    # Already applied to the leaf values, but LightGBM refuses a tree whose
    # shrinkage is not a number.
    _field(blocks, every, "shrinkage", ones, floats, default=lambda n: "1")
    split = np.flatnonzero(n_leaves > 1)  # trees with internal nodes
    n_internal = n_leaves[split] - 1
    for key, low, high in (
        ("split_feature", 0, n_features - 1),
        ("left_child", -INT32_MAX, INT32_MAX),
        ("right_child", -INT32_MAX, INT32_MAX),
        ("internal_count", 1, INT32_MAX),
    ):
        arrays[key] = _field(blocks, split, key, n_internal, ints, low, high)
    arrays["threshold"] = _field(blocks, split, "threshold", n_internal, floats)
    arrays["decision_type"] = _decision_types(blocks, split, n_internal)
    # Single-leaf trees need no count (their cover is unused): 1.
    arrays["leaf_count"] = np.ones(int(n_leaves.sum()), dtype=np.int64)
    leaf_start = np.cumsum(n_leaves) - n_leaves
    arrays["leaf_count"][_ranges(leaf_start[split], n_leaves[split])] = _field(
        blocks, split, "leaf_count", n_leaves[split], ints, 0, INT32_MAX
    )
    tree_of_node = np.repeat(split, n_internal)
    _check_children(arrays, tree_of_node, n_leaves)
    _check_counts(arrays, tree_of_node, n_leaves, leaf_start)
    arrays["category_words"] = _category_words(blocks, arrays, tree_of_node)
    return arrays


def _ranges(starts, lengths) -> np.ndarray:
    """The concatenated ranges ``starts[i] : starts[i] + lengths[i]``."""
    offsets = np.repeat(starts - (np.cumsum(lengths) - lengths), lengths)
    return np.arange(int(np.sum(lengths))) + offsets


def _local_index(tree_of_node) -> np.ndarray:
    """Each internal node's index within its tree."""
    starts = np.flatnonzero(np.diff(tree_of_node, prepend=-1))
    sizes = np.diff(np.append(starts, len(tree_of_node)))
    return np.arange(len(tree_of_node)) - np.repeat(starts, sizes)


def _decision_types(blocks, split, n_internal) -> np.ndarray:
    # Absent: all 0 (numerical, missing type None, default right), as LightGBM.
    values = _field(
        blocks, split, "decision_type", n_internal, ints, 0, _MAX_DECISION_TYPE,
        default=lambda n: " ".join(["0"] * n),
    )  # fmt: skip
    if np.any((values >> 2) == 3):
        bad = split[np.repeat(np.arange(len(split)), n_internal)[values >> 2 == 3][0]]
        raise InvalidModel(f"tree {bad} decision_type has an unknown missing type")
    return values


def _first_tree(tree_of_node, bad) -> int:
    return int(tree_of_node[np.flatnonzero(bad)[0]])


def _check_children(arrays, tree_of_node, n_leaves):
    """Children: internal ones after their parent, every node reached once.

    LightGBM numbers internal nodes in the order it splits them, so every
    internal child has a larger index than its parent; with that, one parent
    per node means one tree rooted at node 0 (no cycle, nothing detached).
    """
    local = _local_index(tree_of_node)
    node_start = np.arange(len(local)) - local
    leaves = n_leaves[tree_of_node]
    leaf_start = (np.cumsum(n_leaves) - n_leaves)[tree_of_node]
    reached_internal = np.zeros(len(local), dtype=np.int64)
    reached_leaf = np.zeros(int(n_leaves.sum()), dtype=np.int64)
    for key in ("left_child", "right_child"):
        child = arrays[key]
        internal = child >= 0
        bad = np.where(
            internal, (child <= local) | (child > leaves - 2), ~child >= leaves
        )
        if bad.any():
            raise InvalidModel(
                f"tree {_first_tree(tree_of_node, bad)} has a {key} out of range "
                "or not after its parent"
            )
        np.add.at(reached_internal, (node_start + child)[internal], 1)
        np.add.at(reached_leaf, (leaf_start + ~child)[~internal], 1)
    bad_internal = reached_internal != np.where(local == 0, 0, 1)
    if bad_internal.any():
        raise InvalidModel(
            f"tree {_first_tree(tree_of_node, bad_internal)}'s child indices do "
            "not form a tree"
        )
    split = n_leaves > 1
    bad_leaf = (reached_leaf != 1) & np.repeat(split, n_leaves)
    if bad_leaf.any():
        tree = np.repeat(np.arange(len(n_leaves)), n_leaves)[
            np.flatnonzero(bad_leaf)[0]
        ]
        raise InvalidModel(f"tree {tree}'s child indices do not form a tree")


def _check_counts(arrays, tree_of_node, n_leaves, leaf_start):
    """Each internal node's count is its children's sum (covers add up)."""
    local = _local_index(tree_of_node)
    node_start = np.arange(len(local)) - local
    total = np.zeros(len(local), dtype=np.int64)
    for key in ("left_child", "right_child"):
        child = arrays[key]
        total += np.where(
            child >= 0,
            arrays["internal_count"][np.maximum(node_start + child, 0)],
            arrays["leaf_count"][leaf_start[tree_of_node] + ~np.minimum(child, -1)],
        )
    bad = total != arrays["internal_count"]
    if bad.any():
        raise InvalidModel(
            f"tree {_first_tree(tree_of_node, bad)}'s internal_count is not the "
            "sum of its children's counts"
        )


def _category_words(blocks, arrays, tree_of_node) -> dict:
    """The bitset words of each categorical node, checked.

    Node ``u``'s categories are the bits of ``cat_threshold[b[k]:b[k + 1]]``
    with ``k = threshold[u]`` and ``b = cat_boundaries``.
    """
    categorical = (arrays["decision_type"] & CATEGORICAL_BIT) == 1
    with_cat = set(np.flatnonzero(arrays["num_cat"] > 0))
    trees = sorted(with_cat.union(tree_of_node[categorical].tolist()))
    words = {}
    for t in trees:
        nodes = np.flatnonzero(categorical & (tree_of_node == t))
        n_cat = int(arrays["num_cat"][t])
        where = f"tree {t}"
        if n_cat == 0:
            raise InvalidModel(f"{where} has categorical splits but num_cat=0")
        fields = blocks[t]
        if "cat_boundaries" not in fields or "cat_threshold" not in fields:
            raise InvalidModel(f"{where} has num_cat={n_cat} but no category bitsets")
        bounds = ints(
            fields["cat_boundaries"], f"{where} cat_boundaries", n_cat + 1, 0, INT32_MAX
        )
        if bounds[0] != 0 or np.any(np.diff(bounds) < 0):
            raise InvalidModel(f"{where} cat_boundaries must rise from 0")
        bits = ints(
            fields["cat_threshold"], f"{where} cat_threshold", int(bounds[-1]), 0,
            2**32 - 1,
        )  # fmt: skip
        index = arrays["threshold"][nodes]
        if np.any((index != np.floor(index)) | (index < 0) | (index >= n_cat)):
            raise InvalidModel(
                f"{where} has a categorical split whose threshold is not a "
                f"bitset index in [0, {n_cat})"
            )
        for u, k in zip(nodes, index.astype(np.int64), strict=True):
            words[int(u)] = bits[bounds[k] : bounds[k + 1]].astype(np.uint32)
    return words
