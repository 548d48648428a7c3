"""Choosing an output by name: one rule for displays, reports and the command."""

import numpy as np
import pytest

from skshapley._output_choice import chosen_output, output_position

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
