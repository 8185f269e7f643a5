"""Follow growing files the way `tail -F` does: appends, rotation, truncation, new and deleted files.

No line is lost and none is read twice: a partial last line waits for its newline (or for a short idle time, when
the writer died mid-line); after a rotation the rest of the old file is read before the new one; a truncated file is
read again from its start, and its copy (copytruncate, read/copies.py) from where we were; files that appear later
in a followed folder are read from their start. At most `budget` files are open (read/handles.py); a folder is
listed again every MIN_RESCAN seconds (less often when that is costly), the files polled every MIN_PAUSE seconds.
"""

from __future__ import annotations

import os
import time
from collections import OrderedDict
from collections.abc import Callable, Iterator
from pathlib import Path

from ..i18n import Msg
from ..safe import shown_path
from . import tail as tails
from .copies import Copies
from .handles import Handles
from .sources import lines_before
from .startmarks import Marks
from .tail import HEAD, Seen, Tail, flush, head_of, ident_of, lines, open_budget, own_outputs, read_some, same_head
from .walk import describe, follow_walk

IDLE_FLUSH = 2.0  # seconds a partial last line waits for its newline
RELEASE_AFTER = 5.0  # seconds a deleted file's handle is kept once drained (a rotation's new file may come late)
MIN_RESCAN = 0.2  # seconds between two listings of a followed folder, at least
RESCAN_COST = 20  # and at least this many times what the last listing took (it costs at most 1/20 of the time)
MIN_PAUSE = 0.02  # seconds between two polls that found nothing, at least (a rotated file may live 50 ms)
POLL_COST = 10  # and at least this many times what the last poll took


class Follower(Handles):
    """Polls the followed paths; `poll()` returns what they gained, in pieces of whole lines (tails.Piece)."""

    def __init__(self, paths: list[Path], from_start: bool, warn: Callable[[str], None],
                 rescan_every: float | None = None, start: Marks | None = None) -> None:
        self.roots = paths
        self.start = start  # where each file ended when the command started (read/startmarks.py)
        self.warn = warn
        self.tails: dict[Path, Tail] = {}
        self.active: OrderedDict[Path, Tail] = OrderedDict()  # tails with an open handle, least recently read first
        self.handles = 0  # open handles: the active tails' and the rotated ones still to drain
        self.budget = open_budget()
        self.rescan_every = rescan_every  # None: as often as listing the folders stays cheap
        self.walk_cost = 0.0
        self.cost = 0.0  # seconds the last poll took
        self.copies = Copies()  # copytruncate's copies (read/copies.py)
        self.last_rescan = 0.0
        self.unlisted: set[str] = set()  # folders that could not be listed, said once each
        self.skipped: set[Path] = set()  # files that are not logs (binary, or named as no log is)
        # Files (device, inode) read through a handle now closed: the same file seen again under another name
        # (train.log -> train.log.1) is not read twice, and what it got since is read from where we were; a new
        # file that got a freed inode (another mtime, other first bytes) is read from its start. At most MAX_CLOSED.
        self.closed: dict[tuple[int, int], Seen] = {}
        self.own = own_outputs()  # `diagnose -F DIR > DIR/report.txt` would read its own report, again and again
        for path in self._files():
            self._open(path, from_start=from_start)
        self.last_rescan = time.monotonic()

    def _files(self) -> list[Path]:
        began = time.monotonic()
        found: list[Path] = []
        for root in self.roots:
            if root.is_dir():
                found += follow_walk(root, self.tails, self.skipped, self._unlisted)
            elif root.exists():
                found.append(root)
        self.walk_cost = time.monotonic() - began
        return found

    def _unlisted(self, folder: str, reason: str) -> None:
        if folder not in self.unlisted and len(self.unlisted) < 64:
            self.unlisted.add(folder)
            self.warn(Msg("warn_unreadable_dirs", n=1, sample=f"{folder} ({reason})"))

    # -- files -----------------------------------------------------------------------------------------
    def _open(self, path: Path, from_start: bool, seen: Seen | None = None) -> None:
        got = self._handle(path)
        if got is None:
            return
        fh, st = got
        if ident_of(st) in self.own:
            self.warn(Msg("warn_follow_own", path=shown_path(path)))
            fh.close()  # never opened: the rescan skips it by self.own
            self.handles -= 1
            return
        if head_of(fh, 2) == b"\x1f\x8b":
            self.warn(Msg("warn_follow_gz", path=path))
            fh.close()
            self.handles -= 1
            return
        rank, role, host = describe(path)
        tail = Tail(path, shown_path(path), fh, ident_of(st), rank=rank, role=role, host=host)
        self.closed.pop(tail.ident, None)
        if seen is not None:  # a file we read before, renamed, that grew since: on from where we were
            tail.pos, tail.lineno = seen.pos, seen.lineno
        elif not from_start:
            tail.pos = self._start_at(path, st)
            tail.lineno = lines_before(path, tail.pos)
        fh.seek(tail.pos)
        self.tails[path] = tail
        self.active[path] = tail

    def _start_at(self, path: Path, st: os.stat_result) -> int:
        """Where a file is first read from: its end; with the marks taken when the command started, where it ended
        then (a file that was not there then, or was replaced or truncated since, is all new)."""
        if self.start is None:
            return st.st_size
        mark = self.start.get(os.path.abspath(path))
        if mark is None or (mark[0], mark[1]) != ident_of(st) or mark[2] > st.st_size:
            return 0
        return mark[2]

    def _held(self) -> set[tuple[int, int]]:
        """The files (device, inode) followed now (open or parked), whatever their name now."""
        held = set(self.own)
        for t in self.tails.values():
            held.add(t.ident)
            held.update(ident for _fh, ident in t.old)
        return held

    def _rescan_due(self, now: float) -> bool:
        every = self.rescan_every
        if every is None:
            every = max(MIN_RESCAN, RESCAN_COST * self.walk_cost)
        return now - self.last_rescan >= every

    def poll(self) -> Iterator[tails.Piece]:
        now = time.monotonic()
        if self._rescan_due(now):
            held = self._held()
            for path in self._files():
                if path in self.tails:
                    continue
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                ident = ident_of(st)
                if ident in held:
                    continue  # a file we follow, renamed by a rotation (train.log -> train.log.1)
                seen = self.closed.get(ident)
                if seen is not None and st.st_size == seen.size == seen.pos and st.st_mtime_ns == seen.mtime:
                    continue  # read to its end already, under another name
                if seen is not None and (st.st_size < seen.pos or not same_head(path, seen.head)):
                    seen = None  # another file that got a freed inode
                copy = self.copies.check(self.tails.values(), path, st, now) if seen is None else None
                if copy is True:
                    continue  # a copy of a file we read, made before its truncation: looked at again next time
                if isinstance(copy, tuple):
                    seen = Seen(-1, 0, copy[0], copy[1], b"")
                self._open(path, from_start=True, seen=seen)  # a new rank or worker: all of it is new
            self.last_rescan = time.monotonic()
        for tail in list(self.tails.values()):
            if tail.fh is None:
                yield from self._wake(tail, now)
            else:
                yield from self._poll_one(tail, now)
        self.cost = time.monotonic() - now

    def pause(self) -> float:
        """How long to wait before the next poll when this one found nothing: MIN_PAUSE, or longer when a poll costs
        more than 1/POLL_COST of the time (thousands of files)."""
        return max(MIN_PAUSE, POLL_COST * self.cost)

    def _wake(self, tail: Tail, now: float) -> Iterator[tails.Piece]:
        """A parked file: reopened by its path when it changed; released when it went."""
        try:
            st = os.stat(tail.path)
        except OSError:
            st = None
        if st is None or ident_of(st) != tail.ident:
            # gone, or replaced: what it got since it was parked is read if it shows up under another name
            self._remember(tail.ident, Seen(tail.stamp[0], tail.stamp[1], tail.pos, tail.lineno, tail.head))
            if tail.partial:
                yield from flush(tail)
            del self.tails[tail.path]
            if st is not None:
                self._open(tail.path, from_start=True)
                new = self.tails.get(tail.path)
                if new is not None and new.fh is not None:
                    yield from self._poll_one(new, now)  # read now: it may be truncated before the next poll
            return
        if st.st_size == tail.pos and (st.st_size, st.st_mtime_ns) == tail.stamp:  # read to its end, unchanged
            yield from self._idle(tail, now)
            return
        got = self._handle(tail.path)
        if got is None:
            return
        tail.fh = got[0]
        self.active[tail.path] = tail
        if st.st_size < tail.pos or not same_head(tail.path, tail.head):  # truncated (and written again) while parked
            yield from self._truncated(tail)
        else:
            tail.fh.seek(tail.pos)
        yield from self._poll_one(tail, now)

    def _poll_one(self, tail: Tail, now: float) -> Iterator[tails.Piece]:
        # 1. the rest of rotated-away files, oldest first
        while tail.old:
            fh, ident_old = tail.old[0]
            data = read_some(fh)
            if data:
                yield from lines(tail, data, now)
                continue
            self._close(fh, ident_old, None, tail.lineno)
            tail.old.pop(0)
            if tail.partial:
                yield from flush(tail)
        # 2. whether its path still names the file, before reading it (a writer that never pauses rotates too, and a
        # file truncated and written past where we were is read from its start); then the current file
        assert tail.fh is not None
        try:
            st: os.stat_result | None = os.stat(tail.path)
        except FileNotFoundError:
            st = None  # deleted (or rotated, no new file yet): the handle is kept until drained
        except OSError:
            return
        if st is not None and ident_of(st) != tail.ident:
            copy = self.copies.check(self.tails.values(), tail.path, st, now, tail)
            if copy is not True:
                yield from self._rotated(tail, copy or None, now)
                return
            st = None  # the new file waits (a copy being made?); the old one is read on meanwhile
        if tails.was_cut(tail):  # by its handle: a file renamed away may have been cut too
            yield from self._truncated(tail)
        data = read_some(tail.fh)
        if data:
            tail.pos += len(data)
            tail.recent = (tail.recent + data)[-HEAD:]
            if len(tail.head) < HEAD:
                tail.head = head_of(tail.fh, tail.pos)
            self.active.move_to_end(tail.path)
            yield from lines(tail, data, now)
            return
        if st is None:
            if not tail.gone:
                tail.gone, tail.gone_since = True, now
            if not tail.partial and not tail.old and now - tail.gone_since >= RELEASE_AFTER:
                self._release(tail)  # drained and gone for good: a new file at its path is found as new
                return
        yield from self._idle(tail, now)

    def _rotated(self, tail: Tail, copy: tuple[int, int] | None, now: float) -> Iterator[tails.Piece]:
        """A new file at the path: drain the old handle first, then read the new one from 0 (a copy of another
        followed file from where that one was truncated)."""
        assert tail.fh is not None
        if tails.was_cut(tail):
            yield from self._truncated(tail)  # truncated and written again before it was renamed: drained from 0
        tail.old.append((tail.fh, tail.ident))
        self.active.pop(tail.path, None)
        self.handles -= 1  # counted again below, as the new handle
        got = self._handle(tail.path)
        self.handles += 1  # the old handle, still open until drained
        if got is None:
            tail.fh = None
            self.warn(Msg("warn_reopen", path=tail.path, reason="-"))
            return
        fh, fst = got
        tail.fh, tail.ident, tail.pos, tail.gone, tail.lineno = fh, ident_of(fst), 0, False, 0
        tail.head = tail.recent = b""
        if isinstance(copy, tuple):
            tail.pos, tail.lineno = copy
            fh.seek(tail.pos)
        self.active[tail.path] = tail
        self.closed.pop(tail.ident, None)
        yield from self._poll_one(tail, now)

    def _truncated(self, tail: Tail) -> Iterator[tails.Piece]:
        """Truncated in place (copytruncate): what is there now was written after the truncation. What was written
        between our last read and the truncation is in the copy, when one appears in a followed folder: it is read
        from the start of the line we were in (read/copies.py)."""
        at = tail.pos - len(tail.partial)
        tail.before = (tail.head, tail.recent, tail.pos, at, tail.lineno)
        self.last_rescan = 0.0  # its copy is made before the truncation: list the folder at the next poll
        if tail.partial:
            yield from flush(tail)
        if tail.fh is not None:
            tail.fh.seek(0)
        tail.pos = 0
        tail.lineno = 0
        tail.head = tail.recent = b""

    def _idle(self, tail: Tail, now: float) -> Iterator[tails.Piece]:
        if tail.partial and now - tail.partial_since >= IDLE_FLUSH:
            yield from flush(tail)

    def close(self) -> None:
        for tail in self.tails.values():
            for fh, _ in tail.old:
                fh.close()
            if tail.fh is not None:
                tail.fh.close()
