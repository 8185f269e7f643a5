"""Scan big inputs fast: search large byte blocks for the literals of the index, feed the scanner only the
lines that can matter.

Every signature regex, fact, whole-file condition and traceback start has a literal its line must
contain (its gate; see index.py). The engine (engine.py: Hyperscan, or the pure-Python plan) finds the
lines holding one in 4 MiB blocks; a line whose gate literal is all it holds of what its rules need is
dropped there, before it is decoded. The lines kept are fed with the lines around them on request (for
evidence and `within` windows), the head of the file is fed whole (config dumps, the year of the
timestamps), and feeding goes on line by line while the scanner waits on nearby lines. While a traceback
is open on a prefixed stream (`[rank3]:`, a Ray actor), only that stream's lines are fed, and the
scanner is told the line numbers it passes (it closes a traceback whose stream went silent). Lines never
fed hold no gate literal and belong to no stream holding an open traceback, or are copies of a line fed
already whose copies change nothing (NCCL's communicator-init lines: repeats.py), so they could not have
changed what the scanner reports: the result equals feeding every line (tests prove it on every sample).
"""

from __future__ import annotations

from bisect import bisect_left
from collections import deque
from collections.abc import Callable
from typing import BinaryIO, Protocol

from ..read.normalize import FACT_LINES, clean_text
from ..read.normalize import HEAD_LINES as HEAD_LINES  # the head it feeds whole (search/tail.py)
from ..read.sources import MAX_LINE, line_text
from .blocks import pieces
from .index import SearchIndex
from .repeats import Repeats
from .split import nth_line_end
from .streams import Lookback, Want, line_hits, prefixed_head, region_hits, stream_hits, stream_needles

BLOCK = 4 << 20
NOTHING = frozenset[str]()
STALE_CHECK_EVERY = 512  # the scanner's own (match/scanner.py): a skipped line it must be told of


class Sink(Protocol):
    """What the fast search feeds: a per-source scanner (match/scanner.py)."""

    facts_seen: set[str]
    lookback: Lookback | None

    def wants(self) -> bool | Want: ...

    def known_stream(self, head: str) -> bool: ...

    def tick(self, lineno: int) -> None: ...

    def feed_raw(self, lineno: int, raw: str, found: frozenset[str] | None = None) -> None: ...

    def repeat_free(self) -> str | None: ...

    def plain(self, stream: str) -> bool: ...

    def lend(self, lines: list[tuple[int, str]]) -> None: ...


WALK_CHUNK = 256 << 10  # bytes of a block searched at once for the lines of a stream (at most)
WALK_FIRST = 16 << 10  # ... the first time
MAX_NEEDLES = 256  # needles whose searched stretches are remembered (per block)


class FastFeeder:
    """Feeds one source's lines to its scanner, in order, skipping the lines that cannot matter.

    A line is fed when it is in the head of the file, when the scanner waits on nearby lines, when it
    belongs to a stream holding an open traceback, or when it holds a gate literal its rules can use
    (found by the engine, confirmed on the line). The lines it skips are lent to the scanner on request
    (`lookback`), for the context of a hit.
    """

    def __init__(self, scanner: Sink, index: SearchIndex, count: Callable[[int], None], memory: int) -> None:
        self.scanner = scanner
        self.index = index
        self.count = count
        self.memory = memory  # physical lines the scanner may ask to be lent back
        scanner.lookback = self._lookback
        self.first_facts = dict(index.first_facts)
        self.body_literals = index.body
        self.head_search, self.body_search = index.head_search, index.body_search  # facts too, in the first FACT_LINES
        # a line the engine found is searched again for every gate literal it holds (the scanner's found set)
        self.line_search, self.head_literals = index.line_search, index.head
        self.found_at, self.found_here = -1, frozenset[str]()  # where in `block` that line starts, what it holds
        # the literals of the head's lines (fed whole), by where they start in `block`, up to head_end
        self.head_found: dict[int, frozenset[str]] | None = None
        self.head_end = -1
        # past the fact region: the body literals of each line of `block` holding one, by where it starts (one scan)
        self.block_found: dict[int, frozenset[str]] | None = None
        self.decoded_at, self.decoded = -1, ""  # the same for the line _matters decoded: its text
        self.facts_known, self.dropped = -1, frozenset[str]()
        self.next_line = 1  # number of the next line to be handed out
        self.block, self.block_first, self.block_last = b"", 1, 0
        # earlier blocks (bytes, first line, last line), enough to lend `memory` lines across block edges
        self.history: deque[tuple[bytes, int, int]] = deque()
        self.cur_off, self.cur_line = 0, 0  # where the line being fed starts in `block`, its number
        self.candidates = 0  # lines the engine found (for the benchmark)
        self.repeats = Repeats(index.lean)  # lines whose copies change nothing
        self.repeat_key: bytes | None = None  # what a copy of the line _matters looked at would have in common with it
        # needle -> (start, end, the starts of the lines in block[start:end] holding it), for hit_block
        self.hits: dict[bytes, tuple[int, int, list[int]]] = {}
        self.hit_block = b""

    def _refresh(self) -> None:
        """Forget the literals of facts already found."""
        seen = self.scanner.facts_seen
        if len(seen) == self.facts_known:
            return
        self.facts_known = len(seen)
        gone = {lit for name, lits in self.first_facts.items() if name in seen for lit in lits}
        still = set().union(*(lits for name, lits in self.first_facts.items() if name not in seen))
        self.dropped = frozenset(gone - still - self.body_literals)

    def run(self, fh: BinaryIO) -> int:
        """Read to the end; return the number of physical lines."""
        self._refresh()
        for piece, whole in pieces(fh, self.count, BLOCK):
            if whole:
                self.feed_block(piece)
            else:
                self.feed_loose(piece)
        return self.next_line - 1

    def _matters(self, raw: bytes, pos: int) -> bool:
        """Whether a line the engine found (at `pos`) holds a gate literal with what its rules need beside it."""
        head = self.next_line <= FACT_LINES
        known = self.block_found
        every = self.found_here = known[pos] if known is not None else self.line_search.found_in(raw)
        self.found_at = pos
        found = every & (self.head_literals if head else self.body_literals)
        # past the head a job fact's literal (a Ray actor's prefix) is read by nothing: what the copies are told by
        key = self.repeat_key = self.repeats.key(raw, found)
        stream = None if key is None else self.repeats.keys.get(key)
        if not found or (stream is not None and self.scanner.plain(stream)):
            return False  # nothing to read here, or a copy of a line read already (repeats.py)
        if len(self.scanner.facts_seen) != self.facts_known:
            self._refresh()
        text = line_text(raw)
        self.decoded_at, self.decoded = pos, text  # fed next, most often: not decoded twice
        return self.index.matters(found, clean_text(text), self.dropped if head else frozenset())

    def feed_block(self, block: bytes) -> None:
        """Whole lines that follow the last ones (a block of a file; a piece of a live source)."""
        if self.block:
            self.history.append((self.block, self.block_first, self.block_last))
            while len(self.history) > 1 and self.block_first - self.history[1][1] >= self.memory:
                self.history.popleft()
        self.block, self.block_first = block, self.next_line
        self.found_at = self.decoded_at = -1
        self.head_found, self.head_end = None, -1
        if self.block_first <= HEAD_LINES:  # the head is fed whole: its lines' literals found in one scan
            end = nth_line_end(block, 0, HEAD_LINES - self.block_first + 1)
            self.head_end = end if end >= 0 else len(block)
            self.head_found = self.line_search.found_by_start(block[: self.head_end])
        self._refresh()
        self._feed_lines(block)
        self.block_last = self.next_line - 1  # the lines are counted on the way (not the whole block once more)

    def _feed_lines(self, block: bytes) -> None:
        # past the fact region only body literals are read (SearchIndex): each line's, from one scan of the block, are
        # what the scanner reads of it (a Hyperscan call per line cost several times its matches: own log, 7 µs)
        late = self.block_first > FACT_LINES
        known = self.block_found = self.body_search.found_by_start(block) if late and self.index.complete else None
        search = self.body_search if late else self.head_search
        starts = sorted(known) if known is not None else search.line_starts(block)
        self.candidates += len(starts)
        ci, pos, size = 0, 0, len(block)
        scanner = self.scanner
        while pos < size:
            want = True if self.next_line <= HEAD_LINES else scanner.wants()
            needles = stream_needles(want) if isinstance(want, tuple) else None
            if want is True or (want and needles is None):
                pos = self._feed_at(pos)
                continue
            while ci < len(starts) and starts[ci] < pos:
                ci += 1
            if isinstance(want, tuple) and "" in want[0]:
                # a traceback is open on the lines without a transport prefix: any line may be one, but those of a
                # Ray prefix the normaliser knows (scanner.known_stream)
                end = block.find(b"\n", pos)
                raw = block[pos:end]
                head = prefixed_head(raw)
                if head is None or not scanner.known_stream(head) or (needles and line_hits(raw, needles)) \
                        or (ci < len(starts) and starts[ci] == pos and self._matters(raw, pos)):
                    pos = self._feed_at(pos)
                else:
                    scanner.tick(self.next_line)
                    self.next_line += 1
                    pos = end + 1
                continue
            cand = starts[ci] if ci < len(starts) else size
            if needles:
                pos, done = self._walk(pos, cand, needles)
                if not done or pos >= size:
                    continue  # a line was fed or the scanner told of a line: ask it again
            else:
                self.next_line += block.count(b"\n", pos, cand)
                pos = cand
                if pos >= size:
                    return
            end = block.find(b"\n", pos)
            raw = block[pos:end]
            if (needles and line_hits(raw, needles)) or self._matters(raw, pos):
                pos = self._feed_at(pos)
            else:
                if needles:
                    scanner.tick(self.next_line)
                self.next_line += 1
                pos = end + 1

    def _walk(self, pos: int, stop: int, needles: tuple[bytes, ...]) -> tuple[int, bool]:
        """Lines from `pos` up to `stop` while tracebacks are open on the streams of `needles`: feed the next
        line of those streams, telling the scanner of the lines passed on the way. Returns where to go on,
        and whether `stop` was reached with nothing fed and no traceback closed on the way (else the
        scanner is asked again what it wants)."""
        block = self.block
        if self.hit_block is not block or len(self.hits) > MAX_NEEDLES:
            self.hit_block, self.hits = block, {}
        # each needle's lines are searched a stretch at a time and remembered: the needles change as tracebacks
        # open and close and windows are decided, a stretch already searched for a needle is not searched again
        best = end = stop
        for n in needles:
            got = self.hits.get(n)
            if got is None or not got[0] <= pos < got[1]:
                # past `stop` too (the next walk goes on in it); from a few KB, twice as far each time (a needle in
                # every other line is soon not needed: its lines are not all listed)
                size = min(WALK_CHUNK, 2 * (got[1] - got[0])) if got is not None else WALK_FIRST
                upto = pos + size
                upto = block.find(b"\n", upto - 1) + 1 if upto < len(block) else len(block)
                got = self.hits[n] = (pos, upto, stream_hits(block[pos:upto], (n,)))
            base, upto, hits = got
            i = bisect_left(hits, pos - base)
            if i < len(hits):
                best = min(best, base + hits[i])
            end = min(end, upto)  # what is known: up to the nearest end of a stretch searched
        target = min(best, end)
        lineno = self.next_line
        skipped = block.count(b"\n", pos, target)
        tick = lineno + (-lineno) % STALE_CHECK_EVERY  # the next line number the scanner checks at
        if tick < lineno + skipped:
            # pass up to that line and tell the scanner of it, then ask again
            for _ in range(tick - lineno + 1):
                pos = block.find(b"\n", pos) + 1
            self.next_line = tick + 1
            self.scanner.tick(tick)
            return pos, False
        self.next_line = lineno + skipped
        if target < stop and target < end:
            return self._feed_at(target), False
        return target, target >= stop

    def _feed_at(self, pos: int) -> int:
        block = self.block
        nl = block.find(b"\n", pos)
        end = nl if nl >= 0 else len(block)
        self.cur_off, self.cur_line = pos, self.next_line
        raw = block[pos:end]
        plain = raw.isascii() and len(raw) < MAX_LINE  # decoded, such a line is the same: the literals found stand
        found = self.found_here if plain and pos == self.found_at else None
        if found is None and plain and pos < self.head_end and self.head_found is not None:
            found = self.head_found.get(pos, NOTHING)
        self._feed(self.decoded if pos == self.decoded_at else raw, found)
        if pos == self.found_at and self.repeat_key is not None:
            stream = self.scanner.repeat_free()
            if stream is not None:
                self.repeats.remember(self.repeat_key, stream)
        return end + 1

    def feed_loose(self, raw: bytes | str) -> None:
        """An over-long line that began after the last block (or a line a live source read as text)."""
        self.cur_off, self.cur_line = len(self.block), self.next_line
        self._feed(raw)

    def _feed(self, raw: bytes | str, found: frozenset[str] | None = None) -> None:
        self.scanner.feed_raw(self.next_line, raw if isinstance(raw, str) else line_text(raw), found)
        self.next_line += 1

    def _lookback(self, first: int, last: int, needles: tuple[bytes, ...] | None = None) -> list[tuple[int, str]]:
        """The lines numbered first..last (all before the line being fed), as far as they are still held; with
        `needles`, only those holding one as read or once cleaned (region_hits: the others are not decoded)."""
        out: list[tuple[int, str]] = []
        # (bytes, the first line it holds, the line just before `end`, where to search back from)
        views = [(self.block, self.block_first, self.cur_line - 1, self.cur_off - 1)]
        views += [(data, lo, hi, len(data) - 1) for data, lo, hi in reversed(self.history)]
        for data, lo, lineno, end in views:
            spans: list[tuple[int, int, int]] = []  # (line number, start, end) of the lines wanted, last first
            while lineno >= max(first, lo) and end >= 0:
                begin = data.rfind(b"\n", 0, end) + 1
                if lineno <= last:
                    spans.append((lineno, begin, end))
                end, lineno = begin - 1, lineno - 1
            if spans and needles is not None:  # the lines holding a needle, found in one search of their stretch
                base = spans[-1][1]
                hits = set(region_hits(data[base:spans[0][2] + 1], needles))
                spans = [x for x in spans if x[1] - base in hits]
            out += [(n, line_text(data[b:e])) for n, b, e in spans]
            if lineno < first:
                break
        out.reverse()
        return out
