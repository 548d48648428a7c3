"""Checked access to the fields of an XGBoost model document.

The document is what XGBoost saves (``Booster.save_raw("json")``, a
``.json`` or ``.ubj`` file), decoded into dicts, lists, NumPy arrays (typed
UBJSON arrays) and scalars. A file may have been altered, so every field the
parser reads is checked here for presence, type, length and range before
anything is built from it; the first problem found raises
:class:`MalformedModel`, naming the field by its path in the document.
"""

import re

import numpy as np


class MalformedModel(ValueError):
    """What is wrong with an XGBoost model document (a field and the problem)."""


# XGBoost writes its parameters as decimal strings ("4"); older files and
# other writers may use JSON numbers.
_DECIMAL = re.compile(r"[+-]?[0-9]{1,19}")


def _kind(value) -> str:
    if isinstance(value, np.ndarray):
        return f"an array of {value.dtype}"
    return {
        dict: "an object",
        list: "an array",
        str: "a string",
        bool: "a boolean",
        int: "an integer",
        float: "a number",
        type(None): "null",
    }.get(type(value), type(value).__name__)


def join(path: str, key) -> str:
    """The path of member ``key`` (a name, or an index) of the value at ``path``."""
    if isinstance(key, int):
        return f"{path}[{key}]"
    return f"{path}.{key}" if path else key


def member(parent, key: str, path: str, default=None, *, required: bool = True):
    """``parent[key]``, where ``parent`` (at ``path``) must be an object."""
    if not isinstance(parent, dict):
        raise MalformedModel(
            f"{path or 'the document'} must be an object, got {_kind(parent)}"
        )
    if key not in parent:
        if required:
            raise MalformedModel(f"{join(path, key)} is missing")
        return default
    return parent[key]


def mapping(parent, key: str, path: str) -> dict:
    """The object ``parent[key]``."""
    value = member(parent, key, path)
    if not isinstance(value, dict):
        raise MalformedModel(f"{join(path, key)} must be an object, got {_kind(value)}")
    return value


def sequence(parent, key: str, path: str, *, required: bool = True) -> list:
    """The array ``parent[key]`` as a list of its values (``[]`` if absent)."""
    value = member(parent, key, path, [], required=required)
    if isinstance(value, np.ndarray):
        return value.tolist()
    if not isinstance(value, list):
        raise MalformedModel(f"{join(path, key)} must be an array, got {_kind(value)}")
    return value


def text(parent, key: str, path: str) -> str:
    """The string ``parent[key]``."""
    value = member(parent, key, path)
    if not isinstance(value, str):
        raise MalformedModel(f"{join(path, key)} must be a string, got {_kind(value)}")
    return value


def integer(
    parent, key: str, path: str, *, low: int, high: int, default: int | None = None
) -> int:
    """The integer parameter ``parent[key]`` (a decimal string or a number).

    It must lie in ``[low, high]``; ``default`` is used if it is absent (and
    required if ``default`` is None).
    """
    value = member(parent, key, path, default, required=default is None)
    if isinstance(value, str) and _DECIMAL.fullmatch(value.strip()):
        value = int(value)
    if not isinstance(value, int) or isinstance(value, bool):
        raise MalformedModel(f"{join(path, key)} must be an integer, got {value!r:.40}")
    if not low <= value <= high:
        raise MalformedModel(f"{join(path, key)} is {value}; allowed: {low} to {high}")
    return value


def numbers(
    parent,
    key: str,
    path: str,
    dtype,
    *,
    length: int | None = None,
    required: bool = True,
) -> np.ndarray:
    """The array of numbers ``parent[key]`` as ``dtype``.

    Integer arrays must hold integers that fit ``dtype``; float arrays take
    any numbers, rounded to ``dtype`` as XGBoost reads them (float32:
    beyond its range they become ``±inf``). ``length`` is the required
    length, if any; an absent optional array is empty.
    """
    if not required and member(parent, key, path, None, required=False) is None:
        return np.empty(0, dtype)
    value = member(parent, key, path)
    if isinstance(value, list):
        try:
            value = np.array(value) if value else np.empty(0, dtype)
        except (ValueError, TypeError, OverflowError):
            value = None  # ragged or mixed: not an array of numbers
    integral = np.dtype(dtype).kind in "iu"
    allowed = "iub" if integral else "iubf"
    if not (
        isinstance(value, np.ndarray)
        and value.ndim == 1
        and value.dtype.kind in allowed
    ):
        kind = "integers" if integral else "numbers"
        got = _kind(member(parent, key, path))
        raise MalformedModel(f"{join(path, key)} must be an array of {kind}, got {got}")
    if integral and value.size:
        limits = np.iinfo(dtype)
        if value.min() < limits.min or value.max() > limits.max:
            raise MalformedModel(
                f"{join(path, key)} holds integers outside {limits.min} to {limits.max}"
            )
    if length is not None and len(value) != length:
        raise MalformedModel(
            f"{join(path, key)} has {len(value)} entries, expected {length}"
        )
    with np.errstate(over="ignore"):
        return value.astype(dtype)
