"""A model's outputs: named the same way by every parser, chosen by one rule."""

import numpy as np
import pytest
from sklearn.ensemble import GradientBoostingRegressor, RandomForestRegressor
from sklearn.kernel_ridge import KernelRidge

from skshapley import ProductKernelExplainer, TreeExplainer
from skshapley._contract.outputs import (
    chosen_output,
    class_output_names,
    output_position,
    plain_names,
    regression_output_names,
)


def test_names():
    assert regression_output_names(1) == ("target",)
    assert regression_output_names(3) == ("target 0", "target 1", "target 2")
    # One target predicted as a column (a 2-D predict) is named as a column.
    assert regression_output_names(1, as_columns=True) == ("target 0",)
    assert regression_output_names(2, as_columns=True) == ("target 0", "target 1")


def test_class_names():
    # A binary model's one raw output is the positive (second) class's.
    assert class_output_names(["no", "yes"], 1) == ("yes",)
    assert class_output_names([0, 1, 2], 3) == (0, 1, 2)


@pytest.mark.parametrize(
    ("classes", "n_outputs", "expected"),
    [
        (np.array([0, 1]), 1, (1,)),
        (np.array(["no", "yes"]), 1, ("yes",)),
        (np.array([0.5, 1.5, 2.5]), 3, (0.5, 1.5, 2.5)),
        (np.array([False, True]), 1, (True,)),
        (np.array(["a", 2], dtype=object), 2, ("a", 2)),
    ],
)
def test_class_names_are_python_values(classes, n_outputs, expected):
    # As a model holds its classes_ (NumPy scalars), printed as the labels.
    names = class_output_names(classes, n_outputs)
    assert names == expected
    assert [type(name) for name in names] == [type(name) for name in expected]
    assert "np." not in repr(names)


def test_plain_names_keep_other_objects():
    label = ("a", 1)  # a tuple label is not a NumPy scalar: kept as it is
    assert plain_names([np.int64(3), label, "x"]) == (3, label, "x")
    assert plain_names([np.int64(3), label])[1] is label


@pytest.mark.parametrize("n_targets", [1, 2])
@pytest.mark.parametrize(
    "make_explainer",
    [
        lambda X, y: TreeExplainer(RandomForestRegressor(3).fit(X, y)),
        lambda X, y: ProductKernelExplainer(KernelRidge(kernel="rbf").fit(X, y)),
    ],
)
def test_tree_and_kernel_regressors_agree(make_explainer, n_targets):
    rng = np.random.default_rng(0)
    X = rng.normal(size=(30, 3))
    y = X[:, :n_targets] if n_targets > 1 else X[:, 0]
    explainer = make_explainer(X, y).fit()
    assert explainer.output_names_ == regression_output_names(n_targets)


def test_boosting_names_its_single_output_target():
    X = np.arange(40.0).reshape(20, 2)
    model = GradientBoostingRegressor(n_estimators=2).fit(X, X[:, 0])
    assert TreeExplainer(model).fit().output_names_ == ("target",)


NAMES = ("setosa", "versicolor", 3)


@pytest.mark.parametrize(
    ("output", "position"),
    [
        ("setosa", 0),
        ("versicolor", 1),
        (3, 2),
        ("3", 2),  # a class typed as text, on a command line
        (np.int64(3), 2),
    ],
)
def test_output_position(output, position):
    assert output_position(NAMES, output) == position
    assert chosen_output(NAMES, output) == NAMES[position]


def test_an_equal_name_wins_over_one_with_the_same_text():
    # Class 1 and the label "1" both read "1": the equal one is chosen,
    # wherever it stands.
    assert output_position([1, "1"], "1") == 1
    assert output_position(["1", 1], 1) == 1
    assert chosen_output(["1", 1], 1) == 1
    assert isinstance(chosen_output(["1", 1], 1), int)


def test_the_first_of_names_with_the_same_text():
    assert output_position(["a", 1, 1.0], 1.0) == 1  # 1 == 1.0
    assert output_position([1.0, "1.0"], "1.0") == 1


@pytest.mark.parametrize(
    ("wording", "message"),
    [
        (
            {},
            "output 'nope' is not one of the model's outputs: [setosa, versicolor, 3].",
        ),
        (
            {"whose": "phi's"},
            "output 'nope' is not one of phi's outputs: [setosa, versicolor, 3].",
        ),
        (
            {"option": "--output"},
            "--output 'nope' is not one of the model's outputs: "
            "[setosa, versicolor, 3].",
        ),
    ],
)
def test_the_error_names_what_was_passed_and_the_outputs(wording, message):
    for choose in (output_position, chosen_output):
        with pytest.raises(ValueError, match="is not one of") as info:
            choose(NAMES, "nope", **wording)
        assert str(info.value) == message
