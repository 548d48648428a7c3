"""Numbers in captions and cards: rounding noise around 0 is written 0."""

import pytest

from skshapley.report._html import format_number


@pytest.mark.parametrize(
    ("value", "scale", "text"),
    [
        (5.551115123125783e-17, 1.0, "0"),  # a sum of probabilities that is 0
        (-5.551115123125783e-17, 1.0, "0"),
        (1e-12, 1.0, "0"),  # the bound itself
        (2e-12, 1.0, "2.00e−12"),  # above it: a real, tiny number
        (5.551115123125783e-17, 0.0, "5.55e−17"),  # no scale: nothing is noise
        (3e-10, 1000.0, "0"),  # relative to max |f(x)|
        (0.25, 1.0, "0.25"),
    ],
)
def test_noise_is_zero(value, scale, text):
    assert format_number(value, scale=scale) == text
