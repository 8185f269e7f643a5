"""`python -m diagnoser` works the same as the `diagnose` command (the console script's entry, too).

`--version` is answered before anything heavy is imported."""

from __future__ import annotations

import contextlib
import os
import signal
import sys
from types import FrameType

_interrupted = False


def _on_sigint(_signum: int, _frame: FrameType | None) -> None:
    # Python's own handler raises KeyboardInterrupt too, but an interrupt that lands in a finaliser (a
    # __del__, a weakref callback) is printed as "Exception ignored" and lost: the run then went on and
    # ended 0. The flag remembers that the user asked to stop, whatever swallowed the exception.
    global _interrupted
    _interrupted = True
    raise KeyboardInterrupt


def main(argv: list[str] | None = None) -> int:
    args = sys.argv[1:] if argv is None else argv
    if args == ["--version"]:
        from . import __version__
        print(f"diagnose {__version__}")
        return 0
    if argv is None:  # the command itself: no cycle collection while it starts (a caller's process is left alone)
        from . import pause_gc, usercache

        pause_gc()
        usercache.install()  # the code dataclasses writes for the package's classes, compiled once (usercache.py)
    if signal.getsignal(signal.SIGINT) is signal.default_int_handler:  # not when a caller chose otherwise
        signal.signal(signal.SIGINT, _on_sigint)
    from .read import startmarks  # the standard library only: where each followed file ends now, before the imports

    startmarks.take_at_start(args)
    try:
        from .cli import main as cli_main

        code = cli_main(argv)
        if argv is None:
            usercache.save()
    except KeyboardInterrupt:  # Ctrl-C while starting (cli.main handles it once running): the status a shell expects
        code = 130
    if not _interrupted:
        return code
    code = code or 130
    if argv is None:  # the command itself, not a caller in the same process
        # CPython remembers an interrupt that reached C code running Python text (PyRun_String, which some
        # extensions call) even after we handled it, and at exit kills itself with SIGINT instead of
        # returning our status: seen as 'killed by SIGINT' one run in six. Leave with the status directly,
        # after flushing what was written.
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(OSError, ValueError):
                stream.flush()
        os._exit(code)
    return code


if __name__ == "__main__":
    sys.exit(main())
