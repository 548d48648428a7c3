"""The table's helpers that every parser uses: category bitsets, mirrored splits."""

import numpy as np

from skshapley.trees._table import (
    BITSET_WORDS,
    N_CATEGORIES,
    ZERO_AS_MISSING,
    ParsedTree,
    category_bitset,
    concatenate_trees,
    in_category_bitset,
    swap_children,
)


def test_category_bitset_sets_exactly_the_listed_categories():
    rng = np.random.default_rng(0)
    for _ in range(20):
        listed = rng.choice(N_CATEGORIES, size=rng.integers(0, 40), replace=True)
        bitset = category_bitset(listed)
        assert bitset.shape == (BITSET_WORDS,)
        assert bitset.dtype == np.uint32
        # Oracle: the layout written out bit by bit, as Python integers.
        expected = sum(1 << int(c) for c in set(listed.tolist()))
        words = [(expected >> (32 * w)) & 0xFFFFFFFF for w in range(BITSET_WORDS)]
        assert bitset.tolist() == words
        for c in range(N_CATEGORIES):
            assert in_category_bitset(bitset, c) == (c in set(listed.tolist()))


def test_category_bitset_of_the_extremes():
    assert category_bitset([0]).tolist() == [1] + [0] * 7
    assert category_bitset([255]).tolist() == [0] * 7 + [2**31]


def two_stumps_tree():
    """Root 0 on feature 0 (children 1, 2), node 1 on feature 1 (3, 4)."""
    return ParsedTree(
        feature=np.array([0, 1, -1, -1, -1]),
        threshold=np.zeros(5),
        left=np.array([1, 3, -1, -1, -1]),
        right=np.array([2, 4, -1, -1, -1]),
        missing_left=np.array([1, 0, 0, 0, 0], dtype=np.uint8),
        cover=np.array([4.0, 2.0, 2.0, 1.0, 1.0]),
        value=np.arange(5.0)[:, None],
    )


def test_swap_children_mirrors_the_given_nodes_only():
    tree = two_stumps_tree()
    swap_children(tree, 0)
    assert tree.left.tolist() == [2, 3, -1, -1, -1]
    assert tree.right.tolist() == [1, 4, -1, -1, -1]
    # Missing values keep their child: it was the left one, now the right.
    assert tree.missing_left.tolist() == [0, 0, 0, 0, 0]
    swap_children(tree, np.array([0, 1]))
    assert tree.left.tolist() == [1, 4, -1, -1, -1]
    assert tree.right.tolist() == [2, 3, -1, -1, -1]
    assert tree.missing_left.tolist() == [1, 1, 0, 0, 0]


def test_swap_children_keeps_bit_1_of_the_missing_rule():
    tree = two_stumps_tree()
    tree.missing_left[1] = 2  # zero-as-missing, to the right
    swap_children(tree, 1)
    assert tree.missing_left[1] == 3


def test_concatenate_trees_renumbers_children_and_fills_absent_categories():
    categorical = two_stumps_tree()
    bitsets = np.zeros((5, BITSET_WORDS), np.uint32)
    bitsets[1] = category_bitset([3, 200])
    categorical = ParsedTree(
        **{
            **vars(categorical),
            "is_categorical": np.array([0, 1, 0, 0, 0], np.uint8),
            "category_bitset": bitsets,
            "output": 1,
        }
    )
    ensemble = concatenate_trees(
        [two_stumps_tree(), categorical], base_offset=[0.0, 0.0], n_features=2,
        float32_inputs=False, allow_nan=True, allow_inf=True,
        output_names=("a", "b"), raw_output="value",
    )  # fmt: skip
    assert ensemble.roots.tolist() == [0, 5]
    assert ensemble.left.tolist() == [1, 3, -1, -1, -1, 6, 8, -1, -1, -1]
    assert ensemble.is_categorical.tolist() == [0] * 6 + [1, 0, 0, 0]
    assert ensemble.category_bitset[:5].sum() == 0
    assert np.array_equal(ensemble.category_bitset[6], bitsets[1])
    assert ensemble.tree_output.tolist() == [0, 1]
    assert ensemble.tree_width.tolist() == [1, 1]


def test_zero_as_missing_is_lightgbms_float_bound():
    # kZeroThreshold = 1e-35f: the float32 nearest 1e-35, widened.
    assert ZERO_AS_MISSING == 1.0000000180025095e-35
    assert np.float32(ZERO_AS_MISSING) == np.float32(1e-35)
