"""A copy of a followed file (logrotate's `copytruncate`): the copy holds what the original had when it was truncated,
and the lines written between our last read of the original and its truncation are only there. Told by its first
bytes and by the last bytes we read of the original, at the same offset (read/tail.py keeps both)."""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

from .tail import HEAD, Tail, ident_of

COPY_WAIT = 1.0  # seconds a file that may be a copy being made waits to be told; then it is a new file


class Copies:
    """copy_of, and how long each file (device, inode) told "wait" has waited."""

    def __init__(self) -> None:
        self.waiting: dict[tuple[int, int], float] = {}

    def check(self, tails: Iterable[Tail], path: Path, st: os.stat_result, now: float,
              but: Tail | None = None) -> tuple[int, int] | bool | None:
        copy = copy_of(tails, path, st, but)
        ident = ident_of(st)
        if copy is not True:
            self.waiting.pop(ident, None)
            return copy
        if len(self.waiting) > 4096:
            self.waiting.clear()
        return now - self.waiting.setdefault(ident, now) < COPY_WAIT or None


def copy_of(tails: Iterable[Tail], path: Path, st: os.stat_result,
            but: Tail | None = None) -> tuple[int, int] | bool | None:
    """Whether a new file is the copy of a followed one (logrotate's copytruncate): its first bytes, and the last
    ones we read of the original at the same offset, are the same. A copy of a file truncated since is read from
    the line we were in when it was truncated, as (offset, line number); True: a copy of a file not truncated yet
    (its truncation is to come, or the copy is being made: look again, for at most COPY_WAIT seconds)."""
    try:
        with open(path, "rb") as fh:
            head = fh.read(HEAD)
            for tail in tails:
                if tail is but:
                    continue
                states = [(tail.head, tail.recent, tail.pos, -1, tail.lineno)]
                if tail.before is not None:
                    states.append(tail.before)
                for first, recent, pos, at, lineno in states:
                    size = min(len(first), st.st_size)
                    if not first or head[:size] != first[:size]:
                        continue
                    if st.st_size < pos:
                        return True  # a copy being made (or too short to tell yet)
                    if not recent:
                        continue
                    if os.pread(fh.fileno(), len(recent), pos - len(recent)) != recent:
                        continue
                    if at < 0:  # the original as we read it: still to be truncated, it holds all the copy has
                        if tail.fh is not None and st.st_size <= os.fstat(tail.fh.fileno()).st_size:
                            return True
                        return tail.pos - len(tail.partial), lineno  # truncated, we have not seen it yet
                    tail.before = None
                    return at, lineno
    except OSError:
        return None
    return None
