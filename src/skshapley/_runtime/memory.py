"""Memory budgets: the ``max_memory`` parameter, in bytes or as text."""

import functools
import re
from numbers import Integral

#: The working memory an explanation may use beyond its result, by default.
DEFAULT_MAX_MEMORY = "1GB"

_UNITS = {
    "b": 1,
    "kb": 10**3,
    "mb": 10**6,
    "gb": 10**9,
    "tb": 10**12,
    "kib": 2**10,
    "mib": 2**20,
    "gib": 2**30,
    "tib": 2**40,
}
_PATTERN = re.compile(r"^\s*(\d+(?:\.\d*)?|\.\d+)\s*([a-z]*)\s*$", re.IGNORECASE)


def parse_memory(value) -> int:
    """``value`` in bytes: an integer, or text such as ``"512MB"`` or ``"2 GiB"``.

    Parameters
    ----------
    value : int or str
        A positive number of bytes, or a number followed by a unit: B, KB,
        MB, GB, TB (powers of 1000) or KiB, MiB, GiB, TiB (powers of 1024),
        in any case.

    Returns
    -------
    n_bytes : int
        The number of bytes, at least 1.

    Raises
    ------
    ValueError
        If ``value`` is not such a number or text.

    Examples
    --------
    >>> from skshapley._runtime.memory import parse_memory
    >>> parse_memory("512MB"), parse_memory("1.5 GiB"), parse_memory(4096)
    (512000000, 1610612736, 4096)
    """
    if isinstance(value, Integral) and not isinstance(value, bool) and value >= 1:
        return int(value)
    if isinstance(value, str):
        return _parse_text(value)
    raise _invalid(value)


@functools.lru_cache(maxsize=64)
def _parse_text(value: str) -> int:
    """:func:`parse_memory` of text, remembered: every explain call asks."""
    match = _PATTERN.match(value)
    if match is not None and match.group(2).lower() in _UNITS | {"": 1}:
        n_bytes = int(float(match.group(1)) * _UNITS.get(match.group(2).lower(), 1))
        if n_bytes >= 1:
            return n_bytes
    raise _invalid(value)


def _invalid(value) -> ValueError:
    """The error for a ``max_memory`` that is not a size."""
    return ValueError(
        "max_memory must be a positive number of bytes or text such as "
        f'"512MB" or "2GiB" (units {", ".join(_UNITS)}); got {value!r}.'
    )
