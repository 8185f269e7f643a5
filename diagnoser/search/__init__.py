"""The fast search: find, in big byte blocks, the few lines that hold a literal some rule needs.

One entry, `scan`, feeds a scanner the lines of a big input that can matter (see feeder.py); the literal
index it searches with is compiled once with the database (index.py); the engine that searches a block
is Hyperscan where installed, a pure-Python plan otherwise (engine.py, plan.py), with the same result;
`plan_parts` cuts a very big file at quiet places so several processes can scan it (split.py).
"""

from __future__ import annotations

import contextlib
import signal
from collections.abc import Callable
from typing import BinaryIO

from ..read import activity
from ..read.sources import MAX_LINE, read_guarded
from .engine import LiteralSearch, engine_name
from .feeder import FastFeeder, Sink
from .index import GateIndex, SearchIndex
from .split import LimitedReader, Part, head_year, plan_parts
from .tail import lent_tail

__all__ = ["GateIndex", "LimitedReader", "LiteralSearch", "LiveGate", "Part", "SearchIndex", "Sink", "engine_name",
           "head_year", "plan_parts", "scan"]


def scan(sink: Sink, index: SearchIndex, reader: BinaryIO, count: Callable[[int], None], *, memory: int,
         name: str, warn: Callable[[str], None], first_line: int = 1, ends_source: bool = True) -> int:
    """Feed `sink` the lines of `reader` that can matter, in order, numbered from `first_line`; return the
    number of the last line read. A corrupt gzip stream or a read error ends the input with a warning.
    `ends_source`: the reader ends the source (not a part of a split file followed by another)."""
    # the source's last lines are lent to the scanner at the end (each writer's last line and step); a part that
    # ends before the source does has no such lines (a scan of the whole file would not lend them either); nor are the
    # head's, fed whole
    feeder = FastFeeder(sink, index, count, max(memory, activity.TAIL_LINES) if ends_source else memory)
    feeder.next_line = first_line
    read_guarded(lambda: feeder.run(reader), warn, name)
    if ends_source:
        sink.lend(lent_tail(feeder, activity.TAIL_LINES))
    return feeder.next_line - 1


def _uncounted(_n: int) -> None:
    return None


class LiveGate:
    """`scan` for a source that grows (--follow): its lines come in pieces, as text, and pass the same gate
    (the head fed whole, open tracebacks' streams, the lines around a hit lent back) through one feeder kept
    from piece to piece; only the lines that can matter reach the scanner. `end` lends the tail as `scan`
    does. The result equals feeding every line, as `scan`'s does (tests/test_live_gate.py)."""

    def __init__(self, sink: Sink, index: SearchIndex, memory: int) -> None:
        self.sink, self.index, self.memory = sink, index, max(memory, activity.TAIL_LINES)
        self.feeder: FastFeeder | None = None

    def feed(self, first: int, got: bytes | str | list[str]) -> bytes:
        """Lines numbered from `first` on (a lower number than the next one expected: the file began again,
        rotated or truncated): whole lines as read (bytes), one line as text (a partial or cut line), or lines
        as text. Returns them as bytes (what the session counts)."""
        feeder = self.feeder
        if feeder is None or first < feeder.next_line:
            self.end()
            feeder = self.feeder = FastFeeder(self.sink, self.index, _uncounted, self.memory)
        feeder.next_line = first
        if isinstance(got, bytes):
            feeder.feed_block(got)
            return got
        texts = [got] if isinstance(got, str) else got
        data = ("\n".join(texts) + "\n").encode("utf-8", "replace")
        if not isinstance(got, str) and max(map(len, texts)) * 3 < MAX_LINE:
            feeder.feed_block(data)  # no line long enough to be cut once encoded
            return data
        for text in texts:  # one by one, as read: a cut line is not cut again
            feeder.feed_loose(text)
        return data

    def end(self) -> int:
        """The source ended (or began again): its tail lent to the scanner; the number of its last line."""
        if self.feeder is None:
            return 0
        self.sink.lend(lent_tail(self.feeder, activity.TAIL_LINES))
        return self.feeder.next_line - 1


def die_with_parent() -> None:
    """In a worker process (Linux): it gets SIGKILL when its parent dies, so a stopped scan leaves nothing
    running."""
    with contextlib.suppress(OSError, AttributeError):
        import ctypes  # only in a worker process

        ctypes.CDLL(None).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
