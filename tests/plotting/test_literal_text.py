"""Text taken from data is drawn as written, never read as matplotlib math.

matplotlib reads text between two ``$`` as TeX math: a feature named
``$\\frac$`` made drawing fail (and with it the whole HTML report), and
``$x$`` was drawn as an italic x.
"""

import numpy as np
import pandas as pd
import pytest

from skshapley.plotting import (
    BeeswarmDisplay,
    DependenceDisplay,
    ImportanceDisplay,
    InteractionDisplay,
    WaterfallDisplay,
)

NAMES = ["$x$", "a$b", "\\frac", "$\\frac$", "x_$^"]
CATEGORIES = ["$lo$", "$\\frac$"]
OUTPUT = "$y$"


@pytest.fixture
def values():
    rng = np.random.default_rng(0)
    phi = pd.DataFrame(rng.normal(size=(30, len(NAMES))), columns=NAMES)
    X = pd.DataFrame(rng.normal(size=(30, len(NAMES))), columns=NAMES)
    X["a$b"] = rng.choice(CATEGORIES, size=30)  # categories named with '$'
    # Two outputs, so that the figures' titles name the chosen one.
    return pd.concat({OUTPUT: phi, "z": -phi}, axis=1), X


DISPLAYS = {
    "importance": lambda phi, X: ImportanceDisplay.from_values(
        phi, output=OUTPUT, raw_output="$m$"
    ),
    "beeswarm": lambda phi, X: BeeswarmDisplay.from_values(
        phi, X.drop(columns="a$b"), output=OUTPUT
    ),
    "dependence": lambda phi, X: DependenceDisplay.from_values(
        phi, X, "a$b", color="$\\frac$", output=OUTPUT
    ),
    "colored by categories": lambda phi, X: DependenceDisplay.from_values(
        phi, X, "$x$", color="a$b", output="z"
    ),
    "waterfall": lambda phi, X: WaterfallDisplay.from_values(
        phi.iloc[0], 1.0, x_row=X.iloc[0], output=OUTPUT
    ),
    "interactions": lambda phi, X: InteractionDisplay.from_values(
        np.eye(len(NAMES)), feature_names=NAMES
    ),
}

# Texts each figure must show as written (names, categories, output).
EXPECTED = {
    "importance": ["$x$", "$\\frac$", "x_$^", f"output: {OUTPUT}", "$m$"],
    "beeswarm": ["$x$", "$\\frac$", f"output: {OUTPUT}"],
    "dependence": ["a$b", "$\\frac$", *CATEGORIES, f"output: {OUTPUT}"],
    "colored by categories": ["$x$", "a$b", *CATEGORIES],
    "waterfall": ["$x$", "$\\frac$", "a$b = $lo$", f"output: {OUTPUT}"],
    "interactions": ["$x$", "$\\frac$", "x_$^"],
}


@pytest.mark.parametrize("kind", DISPLAYS)
def test_names_are_drawn_literally(values, kind):
    pytest.importorskip("matplotlib")
    from matplotlib import cbook
    from matplotlib.text import Text

    display = DISPLAYS[kind](*values)
    figure = display.figure_
    figure.canvas.draw()  # raised ValueError for "$\frac$"
    texts = [text.get_text() for text in figure.findobj(Text) if text.get_text()]
    math = [text for text in texts if cbook.is_math_text(text)]
    assert math == []
    shown = " ".join(text.replace("\\$", "$") for text in texts)
    for expected in EXPECTED[kind]:
        assert expected in shown
