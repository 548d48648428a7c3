"""``python -m skshapley.cli``: the ``skshapley`` command."""

import sys

from ._main import main

if __name__ == "__main__":
    sys.exit(main())
