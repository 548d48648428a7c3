"""Node arrays that do not form trees are refused before any kernel reads them."""

import numpy as np
import pytest
from sklearn.ensemble import HistGradientBoostingClassifier

from skshapley import TreeExplainer
from skshapley._runtime.limits import MAX_FEATURES, MAX_OUTPUTS
from skshapley.trees._table import ParsedTree, concatenate_trees


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
    return ParsedTree(**tree)


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


@pytest.mark.parametrize(
    "changes",
    [
        {"threshold": np.array([0.5, 0.0])},  # per-node arrays of other lengths
        {"cover": np.array([10.0, 4.0, 6.0, 1.0])},
        {"missing_left": np.zeros(2)},
        {"value": np.array([1.0, 2.0, 3.0])},  # not (n_nodes, width)
        {"is_categorical": np.zeros(4)},
        {"category_bitset": np.zeros((3, 7))},
    ],
)
def test_per_node_arrays_of_the_wrong_shape_are_refused(changes):
    # The kernels index every array by node: a short one would be read past
    # its end.
    with pytest.raises(ValueError, match="malformed"):
        build(stump(**changes))


def test_too_many_features_or_outputs_are_refused_before_any_array():
    fields = {
        "float32_inputs": False, "allow_nan": False, "allow_inf": False,
        "output_names": ("y",), "raw_output": "value",
    }  # fmt: skip
    with pytest.raises(ValueError, match=f"at most {MAX_FEATURES}"):
        concatenate_trees(
            [stump()], base_offset=[0.0], n_features=MAX_FEATURES + 1, **fields
        )
    with pytest.raises(ValueError, match=f"{MAX_OUTPUTS + 1} outputs; at most"):
        concatenate_trees(
            [stump()], base_offset=np.zeros(MAX_OUTPUTS + 1), n_features=2, **fields
        )
    with pytest.raises(ValueError, match="no trees"):
        concatenate_trees([], base_offset=[0.0], n_features=2, **fields)
    with pytest.raises(ValueError, match="base score is not finite"):
        concatenate_trees([stump()], base_offset=[np.nan], n_features=2, **fields)


def test_output_names_must_match_the_outputs():
    # A tampered classes_ would otherwise label outputs that do not exist.
    with pytest.raises(ValueError, match=r"names 2 outputs .* but has 1"):
        concatenate_trees(
            [stump()], base_offset=[0.0], n_features=2, float32_inputs=False,
            allow_nan=False, allow_inf=False, output_names=("a", "b"),
            raw_output="value",
        )  # fmt: skip


def test_a_classifier_whose_classes_do_not_fit_its_outputs_is_refused():
    X = np.arange(40.0).reshape(20, 2)
    model = HistGradientBoostingClassifier(max_iter=2).fit(X, X[:, 0] > 10)
    model.classes_ = np.array([0, 1, 2, 3])  # 1 output (binary), 4 classes
    with pytest.raises(ValueError, match="names 3 outputs"):
        TreeExplainer(model).fit()
