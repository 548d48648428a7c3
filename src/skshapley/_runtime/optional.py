"""Optional libraries, imported when needed, with one message saying how to install.

skshapley needs only numpy, scipy, scikit-learn and pandas; matplotlib
(figures, reports), skops and pyarrow (files of the command) are imported
by the code that uses them, never when skshapley is imported.
"""

import importlib
from types import ModuleType


class MissingDependencyError(ImportError):
    """An optional library is not installed; the message says how to install it.

    Its own class lets the command report it as the user's to fix (exit
    status 1), and not as an ``ImportError`` raised by a bug.
    """


def optional_import(
    module: str, purpose: str, *, install: str | None = None
) -> ModuleType:
    """Import ``module``, or raise an ImportError saying how to install it.

    Parameters
    ----------
    module : str
        The module to import, such as ``"skops.io"``.
    purpose : str
        What needs it, the subject of the message (``"reading model.skops"``).
    install : str, default=None
        What to ``pip install``; ``None`` means ``module``'s top-level package.

    Returns
    -------
    module : module
        The imported module.

    Raises
    ------
    MissingDependencyError
        If ``module`` cannot be imported (an ``ImportError``).
    """
    package = module.partition(".")[0]
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise MissingDependencyError(
            f"{purpose} needs {package}, which is not installed: "
            f"pip install {install or package}"
        ) from exc


def require_matplotlib(purpose: str) -> ModuleType:
    """matplotlib, or a :class:`MissingDependencyError` naming the ``plot`` extra."""
    return optional_import("matplotlib", purpose, install='"skshapley[plot]"')
