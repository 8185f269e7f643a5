"""One followed file (read/follow.py): where we are in it, the line being assembled, and how its bytes become lines.

A followed file need not hold an open handle: past the open-file budget an idle one is closed ("parked") and reopened
by its path when it grows, from the offset it was read to, as long as it is the same file (device, inode and its
first bytes). What is remembered of a file read through a handle now closed is a `Seen` record.
"""

from __future__ import annotations

import os
import stat
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import BinaryIO

from .sources import MAX_LINE, line_text

READ_SIZE = 1 << 20
MAX_OPEN = 512  # handles kept open at most, whatever `ulimit -n` allows
HEAD = 64  # first bytes of a file remembered with its offset: a new file that got a freed inode differs there


@dataclass(slots=True)
class Tail:
    """One followed file: its open handle (None while parked), where we are, and the line being assembled."""

    path: Path
    name: str
    fh: BinaryIO | None  # an open binary file; None while parked (closed to stay within the open-file budget)
    ident: tuple[int, int]  # (device, inode) of the file the handle reads
    pos: int = 0
    lineno: int = 0
    partial: bytes = b""
    partial_since: float = 0.0
    last_data: float = field(default_factory=time.monotonic)
    old: list[tuple[BinaryIO, tuple[int, int]]] = field(default_factory=list)  # rotated handles still to drain
    gone: bool = False
    gone_since: float = 0.0
    overlong: bool = False  # the partial line reached MAX_LINE: the rest of it is dropped
    rank: int | None = None
    role: str = "worker"
    host: str | None = None
    head: bytes = b""  # the file's first bytes, taken when it is parked
    stamp: tuple[int, int] = (0, 0)  # (size, mtime) when it was parked
    recent: bytes = b""  # the last bytes read (up to HEAD): where a copy of the file must hold the same
    # at its last truncation: (head, recent, offset read to, start of the line we were in, line number)
    before: tuple[bytes, bytes, int, int, int] | None = None


@dataclass(frozen=True, slots=True)
class Seen:
    """A file read through a handle now closed: its size and mtime then, how far it was read, and its first bytes."""

    size: int
    mtime: int
    pos: int
    lineno: int
    head: bytes


def open_budget() -> int:
    """How many files may be open at once: half of what the open-file limit leaves free, at most MAX_OPEN."""
    try:
        import resource
        soft = resource.getrlimit(resource.RLIMIT_NOFILE)[0]
        if soft == resource.RLIM_INFINITY:
            soft = 1 << 20
    except (ImportError, OSError, ValueError):
        soft = 1024
    try:
        used = len(os.listdir("/proc/self/fd"))
    except OSError:
        used = 16
    return max(2, min(MAX_OPEN, (soft - used) // 2))


def own_outputs() -> set[tuple[int, int]]:
    """The regular files our standard output and error are written to."""
    own: set[tuple[int, int]] = set()
    for fd in (1, 2):
        try:
            st = os.fstat(fd)
        except OSError:
            continue
        if stat.S_ISREG(st.st_mode):
            own.add(ident_of(st))
    return own


def ident_of(st: os.stat_result) -> tuple[int, int]:
    return (st.st_dev, st.st_ino)


def head_of(fh: BinaryIO, upto: int) -> bytes:
    """The first bytes of an open file (at most HEAD, and none past `upto`), without moving its offset."""
    try:
        return os.pread(fh.fileno(), min(HEAD, upto), 0)
    except (OSError, ValueError):
        return b""


def same_head(path: Path, head: bytes) -> bool:
    """The file at `path` begins with `head` (the same file, or its copy)."""
    try:
        with open(path, "rb") as fh:
            return fh.read(len(head)) == head
    except OSError:
        return False


def was_cut(tail: Tail) -> bool:
    """Whether the file of an open tail was truncated since it was read: shorter than where we are, or other first
    bytes (truncated and written past where we were, or to the same size)."""
    assert tail.fh is not None
    try:
        size = os.fstat(tail.fh.fileno()).st_size
    except OSError:
        return False
    return size < tail.pos or head_of(tail.fh, len(tail.head)) != tail.head


def read_some(fh: BinaryIO) -> bytes:
    """What the handle has now, at most 8 MiB (come back for the rest next poll: memory stays bounded)."""
    out = b""
    while True:
        chunk: bytes = fh.read(READ_SIZE)
        if not chunk:
            return out
        out += chunk
        if len(out) >= 8 * READ_SIZE:
            return out


# what a followed file gives: (its tail, the number of the first line, the lines): whole lines as read (bytes,
# each ending in a newline), or one line as text (str: a partial line flushed, or the head of a cut one)
Piece = tuple[Tail, int, "bytes | str"]


def lines(tail: Tail, data: bytes, now: float) -> Iterator[Piece]:
    """The complete lines of `data` after the tail's partial line, in one piece; the rest waits for its newline."""
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
    first = tail.lineno + 1
    tail.lineno += data.count(b"\n", 0, end + 1)
    yield tail, first, data if end + 1 == len(data) else data[:end + 1]


def flush(tail: Tail) -> Iterator[Piece]:
    """The partial line as a line of its own (its writer went quiet, or its file ended)."""
    raw, tail.partial = tail.partial, b""
    cut, tail.overlong = tail.overlong, False
    tail.lineno += 1
    yield tail, tail.lineno, line_text(raw, cut)


def one_by_one(pieces: Iterator[Piece]) -> Iterator[tuple[Tail, int, str]]:
    """The lines of `pieces`, one by one, as text."""
    for tail, first, got in pieces:
        if isinstance(got, str):
            yield tail, first, got
            continue
        for k, raw in enumerate(got[:-1].split(b"\n")):
            yield tail, first + k, line_text(raw)
