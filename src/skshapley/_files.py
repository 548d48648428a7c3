"""Writing a file so that it is either complete or not there at all."""

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
