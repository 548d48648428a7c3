"""Node arrays that do not form trees are refused before any kernel reads them."""

import numpy as np
import pytest

from skshapley.trees._table import concatenate_trees


def stump(**changes):
    """Root splitting on feature 0 into leaves 1 and 2, with ``changes`` applied."""
    tree = {
        "feature": np.array([0, -2, -2]),
        "threshold": np.array([0.5, 0.0, 0.0]),
        "left": np.array([1, -1, -1]),
        "right": np.array([2, -1, -1]),
        "missing_left": np.zeros(3),
        "cover": np.array([10.0, 4.0, 6.0]),
        "value": np.array([[0.0], [1.0], [2.0]]),
        "output": 0,
    }
    tree.update(changes)
    return tree


def build(tree):
    return concatenate_trees(
        [tree], base_offset=[0.0], n_features=2, float32_inputs=False,
        allow_nan=False, allow_inf=False, output_names=("y",), raw_output="value",
    )  # fmt: skip


def test_a_well_formed_stump_is_accepted():
    assert build(stump()).n_trees == 1


@pytest.mark.parametrize(
    "changes",
    [
        {"left": np.array([0, -1, -1])},  # the root is its own child: a cycle
        {"left": np.array([1, -1, -1]), "right": np.array([3, -1, -1])},
        {"left": np.array([1, 2, -1]), "right": np.array([2, 2, -1])},
        {"left": np.array([2, -1, -1])},  # node 2 has two parents, 1 none
        {"right": np.array([-1, -1, -1])},  # a node with one child
        {"feature": np.array([2, -2, -2])},  # no feature 2
        {"feature": np.array([-1, -2, -2])},
        {"output": 1},  # no output 1
    ],
)
def test_malformed_node_arrays_are_refused(changes):
    with pytest.raises(ValueError, match="malformed"):
        build(stump(**changes))
