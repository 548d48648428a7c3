"""Where the command writes: checked before any work, written atomically.

An output file is first written in full to a temporary file in its own
folder, then renamed over the destination (``os.replace``, atomic on one file
system): an interruption, a full disk or an error leaves the previous file
as it was and no temporary file behind. An output that is an input, or that
exists already (unless ``--force``), is refused before anything is read.
"""

import contextlib
import os
from pathlib import Path

from .._runtime.files import atomic_write
from ._inputs import CommandError


def check_output(path: Path, *, inputs: tuple[Path, ...], force: bool) -> None:
    """Fail unless the command may write ``path``.

    ``path``'s folder must exist; ``path`` must not be one of ``inputs``
    (compared as files: the same path, a symbolic or a hard link), and must
    not exist unless ``force``.
    """
    if not path.parent.is_dir():
        raise CommandError(f"cannot write {path}: no folder {path.parent}")
    if path.is_dir():
        raise CommandError(f"cannot write {path}: it is a folder")
    for source in inputs:
        if _same_file(path, source):
            raise CommandError(
                f"--out {path} is the input file {source}; refusing to replace it"
            )
    if os.path.lexists(path) and not force:
        raise CommandError(
            f"--out {path} exists; pass --force to replace it, or choose another --out"
        )


def _same_file(first: Path, second: Path) -> bool:
    try:
        return os.path.samefile(first, second)
    except OSError:  # one of them does not exist (or cannot be read)
        return False


@contextlib.contextmanager
def writing(path: Path):
    """Report an ``OSError`` raised meanwhile as a :class:`CommandError`."""
    try:
        yield
    except OSError as exc:
        raise CommandError(f"cannot write {path}: {exc.strerror or exc}") from exc


@contextlib.contextmanager
def atomic_output(path: Path):
    """``atomic_write(path)``, its ``OSError`` reported as a :class:`CommandError`."""
    with writing(path), atomic_write(path) as temporary:
        yield temporary
