"""Where each file a `--follow` names ended when the command started.

`diagnose --follow` reads what is written after that moment, not after its own start-up (imports and the signature
database take seconds on a busy machine), so the lines a job writes meanwhile are not lost. The console script
takes the marks first thing, with the standard library only; a file that was not there then is new, and is read
from its start.
"""

from __future__ import annotations

import os
import stat

MAX_FILES = 10_000  # files under the folders named, at most (a folder walk that would take long is cut short)

Marks = dict[str, tuple[int, int, int]]  # absolute path -> (device, inode, size)
_taken: Marks | None = None


def wants_follow(args: list[str]) -> bool:
    """The command line asks for --follow (before any `--`; not `diagnose run`)."""
    if args[:1] == ["run"]:
        return False
    for arg in args:
        if arg == "--":
            return False
        if arg in ("--follow", "-F"):
            return True
    return False


def take(paths: list[str]) -> Marks:
    """(device, inode, size) of each file named, and of the files under each folder named."""
    marks: Marks = {}
    for path in paths:
        _mark(path, marks)
    return marks


def _mark(path: str, marks: Marks) -> None:
    try:
        st = os.stat(path)
    except (OSError, ValueError):
        return
    if stat.S_ISREG(st.st_mode):
        marks[os.path.abspath(path)] = (st.st_dev, st.st_ino, st.st_size)
    elif stat.S_ISDIR(st.st_mode):
        for root, _dirs, files in os.walk(path):
            for name in files:
                if len(marks) >= MAX_FILES:
                    return
                _mark(os.path.join(root, name), marks)


def take_at_start(args: list[str]) -> None:
    """Called by the console script before anything else: the marks of every path-like argument of a --follow."""
    global _taken
    if wants_follow(args):
        _taken = take([a for a in args if a != "-" and not a.startswith("-")])


def taken() -> Marks | None:
    """The marks taken at start (None when the command was not started by the console script)."""
    return _taken
