"""Scan big inputs fast: search large byte blocks for the literals of the index, feed the scanner only the
lines that can matter.

Every signature regex, fact, whole-file condition and traceback start has a literal its line must
contain (its gate; see index.py). A plan (plan.py), or grep beside us (grep.py), finds the lines holding
one in 4 MiB blocks. Those lines are fed with the lines around them on request (for evidence and
`within` windows), the head of the file is fed whole (config dumps, the year of the timestamps), and
feeding goes on line by line while the scanner is busy (a traceback open, a hit waiting). Lines never
fed hold no gate literal, so they could not have changed what the scanner reports: the result equals
feeding every line (tests prove it on every sample).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Iterator
from typing import BinaryIO, Protocol

from ..read.normalize import FACT_LINES, HEAD_LINES
from ..read.sources import MAX_LINE, line_text
from .grep import GrepFinder
from .index import SearchIndex

BLOCK = 4 << 20


class Sink(Protocol):
    """What the fast search feeds: a per-source scanner (match/scanner.py)."""

    facts_seen: set[str]
    lookback: Callable[[int, int], list[tuple[int, str]]] | None

    @property
    def busy(self) -> bool: ...

    def feed_raw(self, lineno: int, raw: str) -> None: ...


class FastFeeder:
    """Feeds one source's lines to its scanner, in order, skipping the lines that cannot matter.

    A line is fed when it is in the head of the file, when the scanner is busy, or when it holds a
    literal some rule needs (found by the cover, confirmed on the line). The lines it skips are lent
    to the scanner on request (`lookback`), for the context of a hit.
    """

    def __init__(self, scanner: Sink, index: SearchIndex, count: Callable[[int], None], memory: int,
                 finder: GrepFinder | None = None) -> None:
        self.scanner = scanner
        self.count = count
        self.memory = memory  # physical lines the scanner may ask to be lent back
        self.finder = finder  # grep's candidates for the blocks after the fact region (grep.py)
        scanner.lookback = self._lookback
        self.first_facts = dict(index.first_facts)
        self.body_literals = index.body
        # In the first FACT_LINES lines the facts are read too; after them only rules and checkpoints.
        self.head_plan = index.head_plan
        self.body_plan = index.body_plan
        self.facts_known = -1
        self.dropped: frozenset[bytes] = frozenset()
        self.next_line = 1  # number of the next line to be handed out
        self.block = b""
        self.block_first = 1
        self.block_last = 0
        # earlier blocks (bytes, first line, last line), enough to lend `memory` lines across block edges
        self.history: deque[tuple[bytes, int, int]] = deque()
        self.cur_off = 0  # where the line being fed starts in `block`
        self.cur_line = 0

    def _refresh(self) -> None:
        """Forget the literals of facts already found (they are only ignored when confirming a line)."""
        seen = self.scanner.facts_seen
        if len(seen) == self.facts_known:
            return
        self.facts_known = len(seen)
        gone = {lit for name, lits in self.first_facts.items() if name in seen for lit in lits}
        still = set().union(*(lits for name, lits in self.first_facts.items() if name not in seen))
        self.dropped = frozenset(lit.encode("utf-8") for lit in gone - still - self.body_literals)

    def run(self, fh: BinaryIO) -> int:
        """Read to the end; return the number of physical lines."""
        self._refresh()
        finder = self.finder
        ahead: tuple[bytes, bool] | None = None  # read one block ahead, so grep searches it meanwhile
        for piece, whole in self._pieces(fh):
            if whole and finder is not None:
                finder.feed(piece)
            if ahead is not None:
                self._piece(*ahead)
            ahead = (piece, whole)
        if finder is not None:
            finder.end()
        if ahead is not None:
            self._piece(*ahead)
        return self.next_line - 1

    def _piece(self, piece: bytes, whole: bool) -> None:
        if whole:
            self._block(piece)
        else:
            self._feed_loose(piece)

    def _pieces(self, fh: BinaryIO) -> Iterator[tuple[bytes, bool]]:
        """The input as blocks of whole lines (True), and the cut heads of over-long lines (False)."""
        carry = b""
        long_head: bytes | None = None  # the first MAX_LINE bytes of a line still being read past
        while True:
            chunk = fh.read(BLOCK)
            if not chunk:
                break
            self.count(len(chunk))
            if long_head is not None:
                nl = chunk.find(b"\n")
                if nl < 0:
                    continue  # still inside the over-long line
                yield long_head, False
                long_head, chunk = None, chunk[nl + 1:]
            data = carry + chunk if carry else chunk
            end = data.rfind(b"\n")
            if end < 0:
                if len(data) >= MAX_LINE:
                    long_head, carry = data[:MAX_LINE], b""
                else:
                    carry = data
                continue
            carry = data[end + 1:]
            yield (data if end + 1 == len(data) else data[: end + 1]), True
            if len(carry) >= MAX_LINE:
                long_head, carry = carry[:MAX_LINE], b""
        if long_head is not None:
            yield long_head, False
        elif carry:
            yield carry + b"\n", True

    def _candidates(self, block: bytes) -> list[int]:
        """Starts of the lines that hold a trie piece or a pass string of the plan."""
        if self.finder is not None:
            starts = self.finder.candidates(block)  # every block fed is asked for, in order
            if starts is not None and self.block_first > FACT_LINES:
                return starts
        found: set[int] = set()
        plan = self.head_plan if self.block_first <= FACT_LINES else self.body_plan
        if plan.trie is not None:
            for m in plan.trie.finditer(block):
                found.add(block.rfind(b"\n", 0, m.start()) + 1)
        for lit in plan.passes:
            i = block.find(lit)
            while i >= 0:
                found.add(block.rfind(b"\n", 0, i) + 1)
                nl = block.find(b"\n", i)
                i = block.find(lit, nl + 1) if nl >= 0 else -1
        return sorted(found)

    def _block(self, block: bytes) -> None:
        if self.block:
            self.history.append((self.block, self.block_first, self.block_last))
            while len(self.history) > 1 and self.block_first - self.history[1][1] >= self.memory:
                self.history.popleft()
        self.block, self.block_first = block, self.next_line
        self.block_last = self.next_line + block.count(b"\n") - 1
        self._refresh()
        starts = self._candidates(block)
        ci, pos, size = 0, 0, len(block)
        scanner = self.scanner
        while pos < size:
            if self.next_line <= HEAD_LINES or scanner.busy:
                pos = self._feed_at(pos)
                continue
            while ci < len(starts) and starts[ci] < pos:
                ci += 1
            if ci == len(starts):
                self.next_line += block.count(b"\n", pos)
                return
            cand = starts[ci]
            self.next_line += block.count(b"\n", pos, cand)
            end = block.find(b"\n", cand)
            raw = block[cand:end]
            if len(scanner.facts_seen) != self.facts_known:
                self._refresh()
            plan = self.head_plan if self.next_line <= FACT_LINES else self.body_plan
            if plan.confirmed(raw, plan.covers_in(raw), self.dropped):
                pos = self._feed_at(cand)
            else:
                self.next_line += 1
                pos = end + 1

    def _feed_at(self, pos: int) -> int:
        block = self.block
        nl = block.find(b"\n", pos)
        end = nl if nl >= 0 else len(block)
        self.cur_off, self.cur_line = pos, self.next_line
        self._feed(block[pos:end])
        return end + 1

    def _feed_loose(self, raw: bytes) -> None:
        """An over-long line that began after the last block."""
        self.cur_off, self.cur_line = len(self.block), self.next_line
        self._feed(raw)

    def _feed(self, raw: bytes) -> None:
        self.scanner.feed_raw(self.next_line, line_text(raw))
        self.next_line += 1

    def _lookback(self, first: int, last: int) -> list[tuple[int, str]]:
        """The lines numbered first..last (all before the line being fed), as far as they are still held."""
        out: list[tuple[int, str]] = []
        # (bytes, the first line it holds, the line just before `end`, where to search back from)
        views = [(self.block, self.block_first, self.cur_line - 1, self.cur_off - 1)]
        views += [(data, lo, hi, len(data) - 1) for data, lo, hi in reversed(self.history)]
        for data, lo, lineno, end in views:
            while lineno >= max(first, lo) and end >= 0:
                begin = data.rfind(b"\n", 0, end) + 1
                if lineno <= last:
                    out.append((lineno, line_text(data[begin:end])))
                end, lineno = begin - 1, lineno - 1
            if lineno < first:
                break
        out.reverse()
        return out
