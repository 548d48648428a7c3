"""Sizes of a skops archive, checked before skops reads anything in it.

A skops file is a zip archive: ``schema.json``, one ``.npy`` file per array
and one ``.npz`` archive (itself a zip of ``.npy`` files) per sparse matrix.
A few kilobytes of zip can declare gigabytes once decompressed, and a
hundred-byte ``.npy`` header can claim an array of any shape, which NumPy
allocates before it reads the data. :func:`check_skops_archive` bounds both
with what the archive declares: :mod:`zipfile` never returns more than a
member's declared size, and an array is refused unless its member holds all
its bytes.
"""

import io
import math
import zipfile
from pathlib import Path

import numpy as np
from numpy.lib import format as npy_format


def check_skops_archive(path: Path, max_bytes: int) -> None:
    """Raise ``ValueError`` unless ``path`` is a skops archive of bounded size.

    The file, and the sum of its members' declared uncompressed sizes
    (nested ``.npz`` members included), must be at most ``max_bytes``; the
    members must be ``schema.json``, ``.npy`` arrays of plain (not object)
    dtype whose header agrees with their size, and ``.npz`` archives of such
    arrays, nested one level at most.
    """
    size = path.stat().st_size
    if size > max_bytes:
        raise ValueError(
            f"the file has {size:,} bytes; at most {max_bytes:,} are read."
        )
    with zipfile.ZipFile(path) as archive:
        _check_members(archive, max_bytes, outer=True)


def _check_members(archive: zipfile.ZipFile, budget: int, *, outer: bool) -> int:
    """The declared uncompressed size of ``archive``'s members, checked."""
    members = archive.infolist()
    total = sum(info.file_size for info in members)
    if total > budget:
        raise ValueError(
            f"its members hold {total:,} bytes once uncompressed; at most "
            f"{budget:,} are read."
        )
    for info in members:
        name = info.filename
        if outer and name == "schema.json":
            continue
        if name.endswith(".npy"):
            _check_array(archive, info)
        elif outer and name.endswith(".npz"):
            with archive.open(info) as member:
                nested = zipfile.ZipFile(io.BytesIO(member.read()))
            total += _check_members(nested, budget - total, outer=False)
        else:
            raise ValueError(f"it holds an unexpected member {name!r}.")
    return total


def _check_array(archive: zipfile.ZipFile, info: zipfile.ZipInfo) -> None:
    """Refuse an ``.npy`` member that claims more bytes than it holds."""
    with archive.open(info) as member:
        version = npy_format.read_magic(member)
        if version == (1, 0):
            shape, _, dtype = npy_format.read_array_header_1_0(member)
        elif version == (2, 0):
            shape, _, dtype = npy_format.read_array_header_2_0(member)
        else:
            raise ValueError(f"array {info.filename!r} has .npy version {version}.")
        held = info.file_size - member.tell()  # the bytes after the header
    if dtype.hasobject:
        raise ValueError(f"array {info.filename!r} holds Python objects.")
    claimed = math.prod(shape) * np.dtype(dtype).itemsize
    if claimed > held:
        raise ValueError(
            f"array {info.filename!r} claims {claimed:,} bytes but its member "
            f"holds {held:,}."
        )
