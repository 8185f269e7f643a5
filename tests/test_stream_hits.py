"""stream_hits (the lines of a stretch whose cleaned text holds a needle) gives the lines the implementation it
replaced gave, on texts built to split, hide and fake needles: colour codes split across a needle, codes inside
codes, ESC without a code, lost and written-out ESC forms, control bytes, needles holding "[", "#", "^" or "\\",
non-ASCII bytes, needles at the start and end of a stretch, stretches without a final newline."""

from __future__ import annotations

import random
import re
from functools import lru_cache

from diagnoser.read.prefixes import REMOVED_START, clean_bytes
from diagnoser.search.streams import _broken, region_hits, stream_hits

# The reference: streams._broken and streams.stream_hits as they were before _broken became possessive (copied here
# on purpose, unchanged, so that the new search is compared with the old one and not with itself).


@lru_cache(maxsize=256)
def _old_broken(needle: bytes) -> re.Pattern[bytes]:
    inner = b""
    for ch in reversed(needle[1:-1]):
        inner = b"(?:" + re.escape(bytes([ch])) + inner + b")?"
    return re.compile(re.escape(needle[:1]) + inner + b"(?=[" + re.escape(REMOVED_START) + b"])")


def _old_found(data: bytes, needles: tuple[bytes, ...]) -> list[int]:
    out: list[int] = []
    for n in needles:
        i = data.find(n)
        while i >= 0:
            out.append(data.rfind(b"\n", 0, i) + 1)
            i = data.find(n, i + 1)
    return out


def _old_stream_hits(region: bytes, needles: tuple[bytes, ...]) -> list[int]:
    found = set(_old_found(region, needles))
    rfind = region.rfind
    for n in needles:
        for m in _old_broken(n).finditer(region):
            start = rfind(b"\n", 0, m.start()) + 1
            if start not in found:
                end = region.find(b"\n", m.start())
                if n in clean_bytes(region[start:end if end >= 0 else len(region)]):
                    found.add(start)
    return sorted(found)


# stream needles (a Ray prefix, a rank tag) and literals, some holding what a removed sequence begins with
NEEDLES = [b"(PolicyTrainer pid=5, ip=1.2)", b"[rank3]:", b"a\\b", b"x#y", b"p^q", b"u[v", b"[36m", b"ab[", b"c[0",
           "é[".encode(), b"(", b"ab", b"a\x07b", b"a\nb", b"m(", b"0m", b"Error: x"]
JUNK = [b"\x1b[36m", b"\x1b[0m", b"\x1b[1;31m", b"[0m", b"[36m", b"\x1b", b"\x1b[", b"\x1b[3\x1b[0m6m", b"\x1b]0;t\x07",
        b"\x1b]8;;u\x1b\\", b"\x1bM", b"\x07", b"\x00", b"\x7f", b"#033[1m", b"^[[2K", b"\\033[0m", b"\\x1b[3m",
        b"\\e[0m", b"033", b"[", b"#", b"^", b"\\", b"m", b"3", b"6m", b"\n", b" ", b"\r", "é".encode(), b"\xff"]


def _piece(rng: random.Random) -> bytes:
    """What the cleaning removes or keeps, or a needle, whole or cut in two or three with such pieces put between."""
    if rng.random() < 0.6:
        return rng.choice(JUNK)
    n = rng.choice(NEEDLES)
    cuts = sorted(rng.sample(range(1, len(n)), min(len(n) - 1, rng.randrange(0, 3)))) if len(n) > 1 else []
    parts = [n[a:b] for a, b in zip([0, *cuts], [*cuts, len(n)], strict=True)]
    return b"".join(p + b"".join(rng.choice(JUNK) for _ in range(rng.randrange(0, 3))) for p in parts)


def test_stream_hits_gives_the_lines_the_old_search_gave() -> None:
    rng = random.Random(1313)
    differing = 0
    for _ in range(12_000):
        region = b"".join(_piece(rng) for _ in range(rng.randrange(1, 12)))
        if rng.random() < 0.7:
            region += b"\n"
        needles = tuple(rng.sample(NEEDLES, rng.randrange(1, 4)))
        want = _old_stream_hits(region, needles)
        assert stream_hits(region, needles) == want, (region, needles)
        assert region_hits(region, needles) == want, (region, needles)
        differing += want != sorted(set(_old_found(region, needles)))
    assert differing > 200  # many stretches had a line whose needle only the cleaning made whole


def test_a_needle_holding_what_a_removal_begins_with_tries_every_prefix() -> None:
    """"a\\b" in "a\\033[0m\\b": cleaned, the line holds it; its longest prefix at "a" ("a\\") is followed by "0",
    which begins nothing, but the shorter "a" is followed by "\\", which begins "\\033[0m"."""
    line = b"a\\033[0m\\b\n"
    assert b"a\\b" in clean_bytes(line) and b"a\\b" not in line
    assert stream_hits(b"x\n" + line, (b"a\\b",)) == [2] == _old_stream_hits(b"x\n" + line, (b"a\\b",))
    assert b"?+" not in _broken(b"a\\b").pattern and b"?+" in _broken(b"[rank3]:").pattern


def test_ray_lines_of_other_actors_and_a_split_prefix() -> None:
    """The usual stretch: coloured Ray prefixes of several actors, one line of the needle's actor whose prefix a
    colour code splits (found only once cleaned), one whose prefix is whole."""
    needle = b"(PolicyTrainer pid=56355, ip=10.1.58.37)"
    lines = [b"\x1b[36m(PolicyTrainer pid=5635%d, ip=10.1.58.37)\x1b[0m step %d" % (i % 5 + 6, i) for i in range(50)]
    lines[17] = b"\x1b[36m(PolicyTrainer pid=563\x1b[1m55, ip=10.1.58.37)\x1b[0m split"
    lines[33] = b"\x1b[36m(PolicyTrainer pid=56355, ip=10.1.58.37)\x1b[0m whole"
    region = b"\n".join(lines)  # no final newline
    starts = [region.index(lines[17]), region.index(lines[33])]
    assert stream_hits(region, (needle,)) == starts == _old_stream_hits(region, (needle,))
