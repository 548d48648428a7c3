"""Models read from files: attributes checked, lookup errors reported cleanly.

A model loaded from a file (skops, or a pickle the user trusts) can hold
attributes of any type and shape. Parsers check what they read explicitly;
what those checks do not name is turned into one ``ValueError`` here.
"""

import functools
from numbers import Integral

from sklearn.exceptions import NotFittedError

from ._errors import UnsupportedModelError


def malformed_model_errors(parse):
    """Report a parser's lookup and type errors on a malformed model as
    ``ValueError``.

    The last line of defence for attributes of unexpected types or shapes
    that the explicit checks do not name. :class:`UnsupportedModelError`
    (the "unsupported model" ``TypeError``) and ``NotFittedError`` pass.
    """

    @functools.wraps(parse)
    def checked(model):
        try:
            return parse(model)
        except (UnsupportedModelError, NotFittedError):  # the user's to act on
            raise
        except (AttributeError, IndexError, KeyError, TypeError) as exc:
            raise ValueError(
                f"The {type(model).__name__} is malformed ({type(exc).__name__}: "
                f"{exc}); the model file may be corrupt."
            ) from exc

    return checked


def checked_count(model, attribute: str, most: int) -> int:
    """``model.<attribute>``, if it is an integer in 1..``most``."""
    value = getattr(model, attribute)
    if (
        isinstance(value, bool)
        or not isinstance(value, Integral)
        or not 1 <= value <= most
    ):
        raise ValueError(
            f"The model's {attribute} must be an integer from 1 to {most:,}; "
            f"got {value!r}."
        )
    return int(value)
