"""The fast search: find, in big byte blocks, the few lines that hold a literal some rule needs.

One entry, `scan`, feeds a scanner the lines of a big input that can matter (see feeder.py); the literal
index it searches with is compiled once with the database (index.py); `plan_parts` cuts a very big file
at quiet places so several processes can scan it (split.py). grep, when usable, searches beside us
(grep.py); a pure-Python plan (plan.py) gives the same lines without it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import BinaryIO

from ..read.sources import read_guarded
from . import grep
from .feeder import FastFeeder, Sink
from .index import GateIndex, SearchIndex
from .split import LimitedReader, Part, head_year, plan_parts

__all__ = ["GateIndex", "LimitedReader", "Part", "SearchIndex", "Sink", "head_year", "plan_parts", "scan"]


def scan(sink: Sink, index: SearchIndex, reader: BinaryIO, count: Callable[[int], None], *, memory: int,
         name: str, warn: Callable[[str], None], first_line: int = 1, size: int | None = None) -> int:
    """Feed `sink` the lines of `reader` that can matter, in order, numbered from `first_line`; return the
    number of the last line read. grep searches beside us when the input is big or of unknown `size`; a
    corrupt gzip stream or a read error ends the input with a warning."""
    feeder = FastFeeder(sink, index, count, memory)
    feeder.next_line = first_line
    if size is None or size >= grep.GREP_MIN_BYTES:
        feeder.finder = grep.start(index.body)
    try:
        read_guarded(lambda: feeder.run(reader), warn, name)
    finally:
        if feeder.finder is not None:
            feeder.finder.close()
    return feeder.next_line - 1


def die_with_parent() -> None:
    """In a worker process: however the parent ends, the worker's grep ends with it."""
    grep.die_with_parent()
