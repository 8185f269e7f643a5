"""`python -m diagnoser` works the same as the `diagnose` command."""

from __future__ import annotations

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
