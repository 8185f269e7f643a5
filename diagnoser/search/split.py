"""Split one big file into parts that begin at quiet places, so that several processes can scan it.

A part may begin only where the lines before it hold no candidate at all (no traceback start, no
literal any rule needs) for a long stretch: every scanner is idle there, whatever came before, so a
part scanned on its own reports exactly what one scan of the whole file reports for those lines. A
part also begins after the region where facts are read. Whole-file conditions are decided once all
parts are merged (see DeferredHitEvent).
"""

from __future__ import annotations

import io
import itertools
from dataclasses import dataclass
from pathlib import Path

from ..read.grouper import STALE_TB
from ..read.normalize import FACT_LINES, HEAD_LINES, Normalizer
from ..read.sources import decode, is_utf16
from .engine import LiteralSearch

SPLIT_MIN = 64 << 20  # a smaller file is not worth the processes
LEAD = 1 << 20  # bytes before a part's start read again, for the context of an early hit
QUIET_BYTES = LEAD + (64 << 10)  # the stretch before a part's start that must hold no candidate
QUIET_LINES = STALE_TB + 1000  # ... and at least this many lines (an open traceback would have closed)
SEEK_BYTES = 48 << 20  # how far past its ideal place a part's start is looked for
SEEK_FIRST = 4 << 20  # ... first this far (reading and searching 48 MB cost 0.17 s on a 2-core machine)


@dataclass(frozen=True, slots=True)
class Part:
    """Bytes start..end of the file; reading begins at `lead` (<= start) for look-back only; `last`: it ends the
    file (as it was when the parts were planned)."""

    start: int
    end: int
    lead: int
    last: bool = True


FACTS_CHUNK = 1 << 20  # read at a time looking for the end of the fact region


def _facts_end(path: Path) -> int | None:
    """The byte offset just past line FACT_LINES, or None when the file is not that long. Read a MiB at a time: the
    newlines of the chunk holding that line are walked one by one (a 16 MiB chunk walked up to 50,000 of them,
    about 40 ms of every split)."""
    with open(path, "rb") as fh:
        seen = 0
        offset = 0
        while True:
            chunk = fh.read(FACTS_CHUNK)
            if not chunk:
                return None
            n = chunk.count(b"\n")
            if seen + n >= FACT_LINES:
                return offset + nth_line_end(chunk, 0, FACT_LINES - seen)
            seen += n
            offset += len(chunk)


def nth_line_end(data: bytes | bytearray, start: int, n: int) -> int:
    """The offset just past the n-th newline from `start`, or -1 when there are fewer."""
    pos = start - 1
    for _ in range(n):
        pos = data.find(b"\n", pos + 1)
        if pos < 0:
            return -1
    return pos + 1


def quiet_start(window: bytes | bytearray, earliest: int, search: LiteralSearch) -> int | None:
    """The first line start at or after `earliest` in `window` (whole lines) before which QUIET_BYTES bytes
    and QUIET_LINES lines hold no candidate line, or None."""
    starts = search.line_starts(window)
    gap = 0  # where the current candidate-free stretch begins
    for nxt in [*starts, len(window)]:
        cut = max(gap + QUIET_BYTES, earliest)
        if cut < nxt:
            cut = window.find(b"\n", cut - 1) + 1 if cut > 0 else 0  # the next line start
            by_lines = nth_line_end(window, gap, QUIET_LINES)
            if by_lines >= 0:
                cut = max(cut, by_lines)
                if 0 < cut < nxt:
                    return cut
        end = window.find(b"\n", nxt)
        gap = end + 1 if end >= 0 else len(window)
    return None


def plan_parts(path: Path, size: int, parts: int, search: LiteralSearch) -> list[Part]:
    """Up to `parts` parts of the file, each beginning at a quiet line start (one part: no split)."""
    if parts < 2 or size < SPLIT_MIN or _is_utf16(path):  # a UTF-16 file is read whole, through its decoder
        return [Part(0, size, 0)]
    floor = _facts_end(path)
    if floor is None:
        return [Part(0, size, 0)]
    starts = [0]
    with open(path, "rb") as fh:
        for k in range(1, parts):
            target = max(size * k // parts, floor + QUIET_BYTES, starts[-1] + QUIET_BYTES)
            if target >= size:
                break
            # a short look first (a log with quiet places has one within a few MB), the whole reach after
            reach = min(SEEK_BYTES, max(SEEK_FIRST, size // (4 * parts)))  # a log with no quiet place costs less
            for seek in dict.fromkeys((min(SEEK_FIRST, reach), reach)):
                found = _quiet_near(fh, target, seek, search)
                if found is not None:
                    if found < size:
                        starts.append(found)
                    break
    bounds = [*starts, size]
    return [Part(a, b, max(0, a - LEAD) if a else 0, b == size) for a, b in itertools.pairwise(bounds)]


def _quiet_near(fh: io.BufferedReader, target: int, seek: int, search: LiteralSearch) -> int | None:
    """The offset of the first quiet line start at or after `target`, looking up to `seek` bytes past it."""
    begin = target - QUIET_BYTES
    fh.seek(begin)
    # one buffer, cut in place (slices of bytes would copy its ~50 MB: -j 2 peaked at 130 MB here)
    window = bytearray(QUIET_BYTES + seek)
    del window[fh.readinto(window):]
    if begin > 0:  # begin at a line start
        first = window.find(b"\n")
        if first < 0:
            return None
        del window[: first + 1]
        begin += first + 1
    cut = window.rfind(b"\n")
    if cut < 0:
        return None
    del window[cut + 1:]
    found = quiet_start(window, target - begin, search)
    return None if found is None else begin + found


def head_year(path: Path) -> int | None:
    """The year a scan from the start would date year-less timestamps with (see normalize.HEAD_LINES)."""
    norm = Normalizer(str(path))
    with open(path, "rb") as fh:
        for lineno in range(1, HEAD_LINES + 1):
            raw = fh.readline(1 << 16)
            if not raw:
                break
            norm.lines(lineno, decode(raw.rstrip(b"\n")))
            if norm.year is not None:
                break
    return norm.year


class LimitedReader:
    """A read-only view of bytes lead..end of a file, for one part's feeder."""

    def __init__(self, path: Path, lead: int, end: int) -> None:
        self.fh = open(path, "rb")  # noqa: SIM115 - closed by close()
        self.fh.seek(lead)
        self.left = end - lead

    def read(self, n: int = -1) -> bytes:
        if self.left <= 0:
            return b""
        want = self.left if n < 0 else min(n, self.left)
        data = self.fh.read(want)
        self.left -= len(data)
        return data

    def close(self) -> None:
        self.fh.close()


def _is_utf16(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            return is_utf16(fh.read(514))
    except OSError:
        return False
