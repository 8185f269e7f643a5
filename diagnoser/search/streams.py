"""What the fast search looks for while the scanner waits on some lines (match/scanner.py wants): the lines of
the streams of open tracebacks and the lines holding a literal of a `within` window, found in raw bytes though a
colour code or a control character may split them; and the lines certainly not of the stream without a transport
prefix."""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from ..read.prefixes import REMOVED_START, clean_bytes

Want = tuple[tuple[str, ...], tuple[str, ...]]  # (streams, literals): see SourceScanner.wants
# the fast search lends the lines first..last it skipped (only those holding one of the needles): FastFeeder._lookback
Lookback = Callable[[int, int, tuple[bytes, ...] | None], list[tuple[int, str]]]


@lru_cache(maxsize=256)
def needles_of(literals: tuple[str, ...]) -> tuple[bytes, ...]:
    """Literals as the fast search looks for them in lines as read (line_hits, stream_hits)."""
    return tuple(sorted({lit.encode("utf-8", "surrogatepass") for lit in literals}))


@lru_cache(maxsize=256)
def stream_needles(want: tuple[tuple[str, ...], tuple[str, ...]]) -> tuple[bytes, ...] | None:
    """What the lines the scanner wants hold once cleaned: for each stream, the longest of its prefixes; each
    literal as is. None when a stream has no such ASCII text (then every line is fed). The stream without a
    transport prefix ("") adds none: its lines are those prefixed_head cannot rule out."""
    streams, literals = want
    out = set(needles_of(literals))
    for key in streams:
        parts = [p for p in key.split("|") if p]
        if not parts:
            continue  # the lines without a transport prefix: see prefixed_head
        best = max(parts, key=len)
        if not best.isascii():
            return None
        out.add(best.encode("ascii"))
    return tuple(sorted(out))


@lru_cache(maxsize=256)
def _broken(needle: bytes) -> re.Pattern[bytes]:
    """Finds a start of `needle` directly followed by something the cleaning removes: where a colour code
    or a control character may split the needle in the line as read. A start is tried once, with the longest
    prefix of the needle found there (possessive: no shorter one is tried after it); a shorter one is followed by a
    byte of the needle, which begins nothing removed unless one inside the needle does: then every prefix is tried.
    The lines holding a match are the same either way (what stream_hits asks); trying each prefix at each "(" of a
    Ray log cost several times more."""
    inner = b""
    opt = b")?" if any(ch in REMOVED_START for ch in needle[1:-1]) else b")?+"
    for ch in reversed(needle[1:-1]):
        inner = b"(?:" + re.escape(bytes([ch])) + inner + opt
    return re.compile(re.escape(needle[:1]) + inner + b"(?=[" + re.escape(REMOVED_START) + b"])")


def _found(data: bytes, needles: tuple[bytes, ...], starts: bool = True) -> list[int]:
    """Each needle's occurrences in `data`: the starts of their lines, or (`starts` False) their own offsets."""
    out: list[int] = []
    for n in needles:
        i = data.find(n)
        while i >= 0:
            out.append(data.rfind(b"\n", 0, i) + 1 if starts else i)
            i = data.find(n, i + 1)
    return out


def stream_hits(region: bytes, needles: tuple[bytes, ...]) -> list[int]:
    """Offsets of the starts of the lines of `region` (whole lines) that may belong to the streams of
    `needles`: those whose text, colour codes and control characters removed, holds one."""
    found = set(_found(region, needles))
    rfind = region.rfind
    for n in needles:
        for m in _broken(n).finditer(region):  # rare: check that line once cleaned
            start = rfind(b"\n", 0, m.start()) + 1
            if start not in found:
                end = region.find(b"\n", m.start())
                if n in clean_bytes(region[start:end if end >= 0 else len(region)]):
                    found.add(start)
    return sorted(found)


def region_hits(region: bytes, needles: tuple[bytes, ...]) -> list[int]:
    """What stream_hits gives, found by cleaning `region` once instead of looking for each needle split by what the
    cleaning removes (cheaper for many needles in a short region: a window's look-back). The cleaning removes
    nothing that spans lines, so a needle found in the cleaned region is in the cleaned line."""
    if any(b"\n" in n for n in needles):
        return stream_hits(region, needles)
    found = set(_found(region, needles))
    clean = clean_bytes(region)
    if len(clean) == len(region):
        return sorted(found)
    at = sorted(_found(clean, needles, starts=False))
    line_at = raw_at = 0  # where the line of the last hit starts, in `clean` and in `region`
    for i in at:
        k = clean.count(b"\n", line_at, i)
        if k:
            line_at = clean.rfind(b"\n", 0, i) + 1
            for _ in range(k):
                raw_at = region.find(b"\n", raw_at) + 1
        found.add(raw_at)
    return sorted(found)


HEAD_BYTES = 512  # a Ray prefix is looked for in the first bytes of a line


def prefixed_head(raw: bytes) -> str | None:
    """The Ray prefix "(...) " a physical line (bytes, no line end) starts with once cleaned, as the normaliser
    reads it first (read/normalize.py _strip_prefixes); None when it starts otherwise."""
    head = raw[:HEAD_BYTES]
    if not head.startswith(b"("):
        head = clean_bytes(head)
        if not head.startswith(b"("):
            return None
    elif b"\x1b" in head or b"[" in head:
        head = clean_bytes(head)
    close = head.find(b")")
    if close <= 0 or head[close + 1:close + 2] != b" ":
        return None
    return head[:close + 2].decode("utf-8", "replace")


_REMOVED = re.compile(b"[" + re.escape(REMOVED_START) + b"]")


def line_hits(raw: bytes, needles: tuple[bytes, ...]) -> bool:
    """Whether one physical line (bytes) holds a needle as read or once cleaned (stream_hits for one line)."""
    for n in needles:
        if n in raw:
            return True
    if _REMOVED.search(raw) is None:
        return False
    clean = clean_bytes(raw)
    return any(n in clean for n in needles)
