"""`python -m diagnoser` works the same as the `diagnose` command (the console script's entry, too).

`--version` is answered before anything heavy is imported."""

from __future__ import annotations

import sys


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:
        from . import __version__
        print(f"diagnose {__version__}")
        return 0
    try:
        from .cli import main as cli_main

        return cli_main(argv)
    except KeyboardInterrupt:  # Ctrl-C while starting (cli.main handles it once running): the status a shell expects
        return 130


if __name__ == "__main__":
    sys.exit(main())
