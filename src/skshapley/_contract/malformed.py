"""Models read from files: attributes checked, lookup errors reported cleanly.

A model loaded from a file (skops, or a pickle the user trusts) can hold
attributes of any type and shape. Parsers check what they read explicitly;
what those checks do not name is turned into one ``ValueError`` here.
"""

import functools
from numbers import Integral

import numpy as np
from sklearn.exceptions import NotFittedError

from .._errors import UnsupportedModelError
from .._runtime.limits import MAX_OUTPUTS


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


def checked_classes(model) -> np.ndarray:
    """``model.classes_``, if it is a 1-D array of 2 to ``MAX_OUTPUTS`` labels."""
    classes = model.classes_
    if (
        not isinstance(classes, np.ndarray)
        or classes.ndim != 1
        or not 2 <= len(classes) <= MAX_OUTPUTS
    ):
        raise ValueError(
            f"The model's classes_ must be a 1-D array of 2 to {MAX_OUTPUTS:,} "
            f"labels; got {type(classes).__name__} of shape {np.shape(classes)}."
        )
    return classes


def checked_numbers(
    value,
    name: str,
    *,
    ndim: tuple[int, ...] | None = None,
    shape: tuple[int, ...] | None = None,
) -> np.ndarray:
    """The model's attribute ``name`` as a float64 array of finite numbers.

    ``ndim`` lists the allowed numbers of dimensions; ``shape`` is the one
    allowed shape.
    """
    try:
        array = np.asarray(value)
    except (TypeError, ValueError) as exc:  # ragged sequences
        raise ValueError(
            f"The model's {name} must be numbers; got {type(value).__name__}."
        ) from exc
    if array.dtype.kind not in "biuf":
        raise ValueError(
            f"The model's {name} must be numbers; got {type(value).__name__} of "
            f"dtype {array.dtype}."
        )
    if ndim is not None and array.ndim not in ndim:
        raise ValueError(
            f"The model's {name} must have {' or '.join(map(str, ndim))} "
            f"dimensions; got shape {array.shape}."
        )
    if shape is not None and array.shape != shape:
        raise ValueError(
            f"The model's {name} must have shape {shape}; got shape {array.shape}."
        )
    array = array.astype(np.float64)
    if not np.all(np.isfinite(array)):
        raise ValueError(f"The model's {name} must be finite; it holds NaN or inf.")
    return array
