"""Reading a file within a size limit; writing one so that it is either
complete or not there at all."""

import contextlib
import os
import tempfile
from collections.abc import Iterator
from pathlib import Path


@contextlib.contextmanager
def atomic_write(path: str | os.PathLike) -> Iterator[Path]:
    """A temporary path next to ``path``, moved onto ``path`` at the end.

    The body writes the temporary file; when it ends without an exception
    the file replaces ``path`` (``os.replace``: atomic on one file system),
    and otherwise (``KeyboardInterrupt`` included) it is removed, so an
    interruption, a full disk or an error leaves the previous file as it
    was. The file gets the permissions a new file would (not the temporary
    file's owner-only ones). ``OSError`` propagates.
    """
    path = Path(path)
    descriptor, name = tempfile.mkstemp(
        dir=path.parent, prefix=f".{path.name}.", suffix=".tmp"
    )
    os.close(descriptor)
    temporary = Path(name)
    try:
        yield temporary
        os.chmod(temporary, 0o666 & ~_umask())
        os.replace(temporary, path)
    finally:
        with contextlib.suppress(FileNotFoundError):
            temporary.unlink()


def _umask() -> int:
    mask = os.umask(0o022)  # reading the mask means setting it: set it back
    os.umask(mask)
    return mask


def read_limited(path: Path, limit: int, too_large: str) -> bytes:
    """The bytes of the file ``path``, refusing files of more than ``limit``.

    The size is checked before reading, and the read itself is bounded: the
    file may grow meanwhile, or not know its size (a pipe).

    Parameters
    ----------
    path : Path
        The file.
    limit : int
        The most bytes accepted.
    too_large : str
        The message of the error for a larger file, a format string with
        the fields ``name`` (the file's name), ``size`` (its size, or
        ``limit + 1`` if it grew past the limit while read) and ``limit``.

    Raises
    ------
    ValueError
        If the file has more than ``limit`` bytes.
    OSError
        If it cannot be read.
    """
    size = path.stat().st_size
    if size <= limit:
        with path.open("rb") as file:
            data = file.read(limit + 1)
        size = len(data)
    if size > limit:
        raise ValueError(too_large.format(name=path.name, size=size, limit=limit))
    return data
