"""``python -m ansi2048``: the same as the ``ansi2048`` command."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
