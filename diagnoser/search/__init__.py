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
from ..read.sources import read_guarded
from .engine import LiteralSearch, engine_name
from .feeder import FastFeeder, Sink
from .index import GateIndex, SearchIndex
from .split import LimitedReader, Part, head_year, plan_parts
from .tail import tail_lines

__all__ = ["GateIndex", "LimitedReader", "LiteralSearch", "Part", "SearchIndex", "Sink", "engine_name",
           "head_year", "plan_parts", "scan"]


def scan(sink: Sink, index: SearchIndex, reader: BinaryIO, count: Callable[[int], None], *, memory: int,
         name: str, warn: Callable[[str], None], first_line: int = 1) -> int:
    """Feed `sink` the lines of `reader` that can matter, in order, numbered from `first_line`; return the
    number of the last line read. A corrupt gzip stream or a read error ends the input with a warning."""
    # the source's last lines are lent to the scanner at the end (each writer's last line and step)
    feeder = FastFeeder(sink, index, count, max(memory, activity.TAIL_LINES))
    feeder.next_line = first_line
    read_guarded(lambda: feeder.run(reader), warn, name)
    sink.lend(tail_lines(feeder, activity.TAIL_LINES))
    return feeder.next_line - 1


def die_with_parent() -> None:
    """In a worker process (Linux): it gets SIGKILL when its parent dies, so a stopped scan leaves nothing
    running."""
    with contextlib.suppress(OSError, AttributeError):
        import ctypes  # only in a worker process

        ctypes.CDLL(None).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG
