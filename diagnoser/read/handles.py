"""The open-file budget of `--follow` (read/follow.py): at most `budget` handles; past it the least recently read file
is closed ("parked") and reopened by its path when it grows. What is remembered of a file read through a handle now
closed is a `Seen` record, so that the same file under another name is not read twice."""

from __future__ import annotations

import os
from collections import OrderedDict
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

from ..i18n import Msg
from .tail import Seen, Tail, head_of

MAX_CLOSED = 1 << 16  # files read through a handle now closed, remembered at most


class Handles:
    """The handles of the followed files: the active tails' (least recently read first) and rotated ones."""

    warn: Callable[[str], None]
    budget: int
    handles: int
    active: OrderedDict[Path, Tail]
    tails: dict[Path, Tail]
    closed: dict[tuple[int, int], Seen]

    def _room(self) -> None:
        """Park the least recently read files until one more handle fits the budget."""
        for tail in list(self.active.values()):
            if self.handles < self.budget:
                return
            if not tail.old:
                self._park(tail)

    def _park(self, tail: Tail) -> None:
        fh = tail.fh
        assert fh is not None
        try:
            st = os.fstat(fh.fileno())
            tail.stamp = (st.st_size, st.st_mtime_ns)
        except OSError:
            tail.stamp = (-1, 0)
        head = head_of(fh, tail.pos)
        if head.startswith(tail.head):
            tail.head = head
        else:  # truncated and written again since it was last read: its wake must see that (not take it as read)
            tail.stamp = (-1, 0)
        fh.close()
        tail.fh = None
        self.handles -= 1
        self.active.pop(tail.path, None)

    def _handle(self, path: Path) -> tuple[BinaryIO, os.stat_result] | None:
        self._room()
        try:
            # unbuffered: a buffer would hold bytes the file no longer has after a truncation (seek(0) keeps them)
            fh = open(path, "rb", buffering=0)  # noqa: SIM115 - kept open while followed
            st = os.fstat(fh.fileno())
        except OSError as exc:
            self.warn(Msg("warn_cannot_follow", path=path, reason=exc.strerror or exc))
            return None
        self.handles += 1
        return fh, st

    def _release(self, tail: Tail) -> None:
        """Stop following a file: its handle closed and remembered, its tail dropped."""
        if tail.fh is not None:
            self._close(tail.fh, tail.ident, tail.pos, tail.lineno)
            tail.fh = None
        self.active.pop(tail.path, None)
        if self.tails.get(tail.path) is tail:
            del self.tails[tail.path]

    def _close(self, fh: BinaryIO, ident: tuple[int, int], pos: int | None, lineno: int) -> None:
        """Close a handle; `pos`: how far it was read (None: to where the handle is)."""
        try:
            st = os.fstat(fh.fileno())
            pos = fh.tell() if pos is None else pos
            self._remember(ident, Seen(st.st_size, st.st_mtime_ns, pos, lineno, head_of(fh, pos)))
        except (OSError, ValueError):
            pass
        fh.close()
        self.handles -= 1

    def _remember(self, ident: tuple[int, int], seen: Seen) -> None:
        self.closed[ident] = seen
        if len(self.closed) > MAX_CLOSED:
            del self.closed[next(iter(self.closed))]

