"""Follow growing files the way `tail -F` does: appends, rotation, truncation, new and deleted files.

No line is lost and none is read twice: a partial last line waits for its newline (or for a short idle
time, when the writer died mid-line); after a rotation the rest of the old file is read before the new
one; a truncated file is read again from its start; files that appear later in a followed folder are
read from their start.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from ..i18n import Msg
from ..safe import shown_path
from .sources import MAX_LINE, line_text, lines_before
from .startmarks import Marks
from .walk import describe, expand

READ_SIZE = 1 << 20
IDLE_FLUSH = 2.0  # seconds a partial last line waits for its newline
# seconds a deleted file's handle is kept once drained (a rotation's new file may come late); then it is closed,
# so that a job that deletes and creates files forever does not run us out of file handles
RELEASE_AFTER = 5.0
MAX_CLOSED = 1 << 16


@dataclass(slots=True)
class Tail:
    """One followed file: its open handle, where we are, and the line being assembled."""

    path: Path
    name: str
    fh: object  # an open binary file
    ident: tuple[int, int]  # (device, inode) of the file the handle reads
    pos: int = 0
    lineno: int = 0
    partial: bytes = b""
    partial_since: float = 0.0
    last_data: float = field(default_factory=time.monotonic)
    old: list[tuple[object, tuple[int, int]]] = field(default_factory=list)  # rotated handles still to drain
    gone: bool = False
    gone_since: float = 0.0
    overlong: bool = False  # the partial line reached MAX_LINE: the rest of it is dropped
    rank: int | None = None
    role: str = "worker"
    host: str | None = None


def _ident(st: os.stat_result) -> tuple[int, int]:
    return (st.st_dev, st.st_ino)


def _own_outputs() -> set[tuple[int, int]]:
    """The regular files our standard output and error are written to."""
    own: set[tuple[int, int]] = set()
    for fd in (1, 2):
        try:
            st = os.fstat(fd)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            own.add(_ident(st))
    return own


class Follower:
    """Polls the followed paths; `poll()` returns the complete new lines as (tail, lineno, text)."""

    def __init__(self, paths: list[Path], from_start: bool, warn: Callable[[str], None],
                 rescan_every: float = 1.0, start: Marks | None = None) -> None:
        self.roots = paths
        self.start = start  # where each file ended when the command started (read/startmarks.py)
        self.warn = warn
        self.tails: dict[Path, Tail] = {}
        self.rescan_every = rescan_every
        self.last_rescan = 0.0
        # Files (device, inode) read through a handle now closed, with their size and mtime then: the same file seen
        # again under another name (train.log -> train.log.1) is not read twice; a new file that got a freed inode
        # (a job that makes and deletes files fast) has another mtime and is read. At most MAX_CLOSED remembered.
        self.closed: dict[tuple[int, int], tuple[int, int]] = {}
        self.own = _own_outputs()  # `diagnose -F DIR > DIR/report.txt` would read its own report, again and again
        for path in self._files():
            self._open(path, from_start=from_start)
        self.last_rescan = time.monotonic()

    def _files(self) -> list[Path]:
        found: list[Path] = []
        for root in self.roots:
            if root.is_dir():
                found += [s.path for s in expand(root, lambda _m: None) if s.path is not None]
            elif root.exists():
                found.append(root)
        return found

    def _open(self, path: Path, from_start: bool) -> None:
        try:
            fh = open(path, "rb")  # noqa: SIM115 - kept open while followed
            st = os.fstat(fh.fileno())
        except OSError as exc:
            self.warn(Msg("warn_cannot_follow", path=path, reason=exc.strerror or exc))
            return
        if _ident(st) in self.own:
            self.warn(Msg("warn_follow_own", path=shown_path(path)))
            fh.close()  # never opened: the rescan skips it by self.own
            return
        if fh.read(2) == b"\x1f\x8b":
            self.warn(Msg("warn_follow_gz", path=path))
            fh.close()
            return
        rank, role, host = describe(path)
        tail = Tail(path, shown_path(path), fh, _ident(st), rank=rank, role=role, host=host)
        self.closed.pop(tail.ident, None)
        if from_start:
            fh.seek(0)
        else:
            tail.pos = self._start_at(path, st)
            tail.lineno = lines_before(path, tail.pos)
            fh.seek(tail.pos)
        self.tails[path] = tail

    def _start_at(self, path: Path, st: os.stat_result) -> int:
        """Where a file is first read from: its end; with the marks taken when the command started, where it ended
        then (a file that was not there then, or was replaced or truncated since, is all new)."""
        if self.start is None:
            return st.st_size
        mark = self.start.get(os.path.abspath(path))
        if mark is None or (mark[0], mark[1]) != _ident(st) or mark[2] > st.st_size:
            return 0
        return mark[2]

    def _held(self) -> set[tuple[int, int]]:
        """The files (device, inode) read through an open handle, whatever their name now."""
        held = set(self.own)
        for t in self.tails.values():
            held.add(t.ident)
            held.update(ident for _fh, ident in t.old)
        return held

    def _close(self, fh: object, ident: tuple[int, int]) -> None:
        try:
            st = os.fstat(fh.fileno())  # type: ignore[attr-defined]
            self.closed[ident] = (st.st_size, st.st_mtime_ns)
            if len(self.closed) > MAX_CLOSED:
                del self.closed[next(iter(self.closed))]
        except OSError:
            pass
        fh.close()  # type: ignore[attr-defined]

    def _read_before(self, ident: tuple[int, int], st: os.stat_result) -> bool:
        return self.closed.get(ident) == (st.st_size, st.st_mtime_ns)

    def poll(self) -> Iterator[tuple[Tail, int, str]]:
        now = time.monotonic()
        if now - self.last_rescan >= self.rescan_every:
            self.last_rescan = now
            held = self._held()
            for path in self._files():
                if path in self.tails:
                    continue
                try:
                    st = os.stat(path)
                except OSError:
                    continue
                ident = _ident(st)
                if ident in held or self._read_before(ident, st):
                    continue  # a file we read already, renamed by a rotation (train.log -> train.log.1)
                self._open(path, from_start=True)  # a new rank or worker: all of it is new
        for tail in list(self.tails.values()):
            yield from self._poll_one(tail, now)

    def _read(self, tail: Tail, fh: object) -> bytes:
        out = b""
        while True:
            chunk: bytes = fh.read(READ_SIZE)  # type: ignore[attr-defined]
            if not chunk:
                return out
            out += chunk
            if len(out) >= 8 * READ_SIZE:
                return out  # come back for the rest next poll: the caller's memory stays bounded

    def _poll_one(self, tail: Tail, now: float) -> Iterator[tuple[Tail, int, str]]:
        # 1. the rest of rotated-away files, oldest first
        while tail.old:
            fh, _ident_old = tail.old[0]
            data = self._read(tail, fh)
            if data:
                yield from self._lines(tail, data, now)
                continue
            self._close(fh, _ident_old)
            tail.old.pop(0)
            if tail.partial:
                yield from self._flush(tail)
        # 2. the current file
        data = self._read(tail, tail.fh)
        if data:
            tail.pos += len(data)
            yield from self._lines(tail, data, now)
        else:
            yield from self._check_path(tail, now)

    def _check_path(self, tail: Tail, now: float) -> Iterator[tuple[Tail, int, str]]:
        try:
            st = os.stat(tail.path)
        except FileNotFoundError:
            if not tail.gone:
                tail.gone, tail.gone_since = True, now  # deleted (or rotated, no new file yet): keep the handle
            yield from self._idle(tail, now)
            if not tail.partial and not tail.old and now - tail.gone_since >= RELEASE_AFTER:
                self._release(tail)  # drained and gone for good: a new file at its path is found as new
            return
        except OSError:
            return
        if _ident(st) != tail.ident:
            # rotated: a new file at the path; drain the old handle first, then read the new one from 0
            tail.old.append((tail.fh, tail.ident))
            try:
                fh = open(tail.path, "rb")  # noqa: SIM115
                tail.fh, tail.ident, tail.pos, tail.gone = fh, _ident(os.fstat(fh.fileno())), 0, False
                tail.lineno = 0
                self.closed.pop(tail.ident, None)
            except OSError as exc:
                self.warn(Msg("warn_reopen", path=tail.path, reason=exc.strerror or exc))
            yield from self._poll_one(tail, now)
            return
        if st.st_size < tail.pos:
            # truncated in place (copytruncate): what is there now was written after the truncation
            if tail.partial:
                yield from self._flush(tail)
            tail.fh.seek(0)  # type: ignore[attr-defined]
            tail.pos = 0
            tail.lineno = 0
            return
        yield from self._idle(tail, now)

    def _release(self, tail: Tail) -> None:
        self._close(tail.fh, tail.ident)
        if self.tails.get(tail.path) is tail:
            del self.tails[tail.path]

    def _idle(self, tail: Tail, now: float) -> Iterator[tuple[Tail, int, str]]:
        if tail.partial and now - tail.partial_since >= IDLE_FLUSH:
            yield from self._flush(tail)

    def _lines(self, tail: Tail, data: bytes, now: float) -> Iterator[tuple[Tail, int, str]]:
        tail.last_data = now
        if tail.overlong:
            nl = data.find(b"\n")
            if nl < 0:
                return  # still inside the over-long line
            tail.overlong = False
            data = data[nl:]  # the newline ends the (already cut) partial line
        data = tail.partial + data if tail.partial else data
        end = data.rfind(b"\n")
        if end < 0:
            tail.partial = data[:MAX_LINE]
            tail.overlong = len(data) >= MAX_LINE
            tail.partial_since = now
            return
        rest = data[end + 1:]
        tail.partial = rest[:MAX_LINE]
        tail.overlong = len(rest) >= MAX_LINE
        tail.partial_since = now
        for raw in data[:end].split(b"\n"):
            tail.lineno += 1
            yield tail, tail.lineno, line_text(raw)

    def _flush(self, tail: Tail) -> Iterator[tuple[Tail, int, str]]:
        raw, tail.partial = tail.partial, b""
        cut, tail.overlong = tail.overlong, False
        tail.lineno += 1
        yield tail, tail.lineno, line_text(raw, cut)

    def close(self) -> None:
        for tail in self.tails.values():
            for fh, _ in tail.old:
                fh.close()  # type: ignore[attr-defined]
            tail.fh.close()  # type: ignore[attr-defined]
