"""The records findings are made of: where a thing was seen, a finding per signature, an unrecognised error, a fact,
the first failure of a rank."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import TypeVar

from ..lazyre import lazy
from ..match.events import (
    EvidenceLine,
    UnrecognizedEvent,
)
from ..match.schema import Signature
from ..read.normalize import LogLine
from .health import Trip

T = TypeVar("T")
MAX_RANKS = 4096
MAX_SOURCES = 64
MAX_UNRECOGNIZED = 500
MAX_LONE = 20  # lone exception lines kept (the latest), see scanner._LONE
MAX_TIMELINE = 4096
_NUMBERS = lazy(r"0x[0-9a-fA-F]+|\d+")


@dataclass(slots=True)
class Location:
    """Where in the logs something was seen: file, line, rank, time."""

    source: str
    line: int
    rank: int | None = None
    time: str | None = None
    ts: float | None = None
    host: str | None = None
    actor: str | None = None
    pid: int | None = None
    source_index: int = 0

    @classmethod
    def of(cls, line: LogLine) -> Location:
        return cls(line.source, line.lineno, line.rank, line.time, line.ts, line.host, line.actor, line.pid,
                   line.source_index)

    def to_json(self) -> dict[str, object]:
        return {"source": self.source, "line": self.line, "rank": self.rank, "time": self.time,
                "host": self.host, "actor": self.actor}

    def short(self) -> str:
        return f"{self.source}:{self.line}"


def earlier(a: Location, b: Location) -> bool:
    """True when `a` was seen before `b`: by timestamp when both have one, else by position."""
    if a.ts is not None and b.ts is not None and a.ts != b.ts:
        return a.ts < b.ts
    return (a.source_index, a.line) < (b.source_index, b.line)


@dataclass(slots=True)
class Finding:
    """A signature's hits, folded: how many, the first and last, what they captured."""

    sig: Signature
    count: int
    first: Location
    last: Location
    captures: dict[str, str]
    evidence: tuple[EvidenceLine, ...]
    ranks: set[int] = field(default_factory=set)
    hosts: set[str] = field(default_factory=set)
    sources: list[str] = field(default_factory=list)
    matched_on: str = "lines"  # "frames": every sighting came from a cut traceback's frames alone
    health: Trip | None = None  # a health rule's finding: the series, where it tripped, where the trend began

    def absorb(self, other: Finding) -> None:
        self.count += other.count
        whole = other.matched_on == "lines" and self.matched_on == "frames"
        # a whole match is better evidence than frames alone and replaces them; otherwise the earliest sighting stays
        if whole or (other.matched_on == self.matched_on and earlier(other.first, self.first)):
            self.first, self.captures, self.evidence = other.first, other.captures, other.evidence
            self.health = other.health
        if whole:
            self.matched_on = "lines"
        if earlier(self.last, other.last):
            self.last = other.last
        add_capped(self.ranks, other.ranks, MAX_RANKS)
        add_capped(self.hosts, other.hosts, MAX_RANKS)
        for s in other.sources:
            if s not in self.sources and len(self.sources) < MAX_SOURCES:
                self.sources.append(s)


@dataclass(slots=True)
class Unrecognized:
    """An error no signature knows, folded by type, message and frame."""

    exc_type: str
    message: str
    frame: str
    first: Location
    count: int = 1
    ranks: set[int] = field(default_factory=set)
    lone: bool = False  # an exception line with no traceback around it
    kind: str = "python"  # what printed it: python | cxx | fatal | signal (a traceback), or line (a lone line)
    echo_of: str | None = None  # the root cause this error only echoes (judge/lead.py), when it does


def fold_unrecognized(table: dict[tuple[str, str], Unrecognized], event: UnrecognizedEvent) -> int:
    """Count an unrecognised error into `table`, one entry per exception and message (numbers masked). Returns the
    occurrences left out because the table is full (MAX_UNRECOGNIZED kinds): the report says how many."""
    key = (event.exc_type, _NUMBERS.sub("N", event.message)[:200])
    where = Location.of(event.line)
    lone = event.kind == "line"
    known = table.get(key)
    if known is None:
        if len(table) >= MAX_UNRECOGNIZED:
            return event.count if lone else event.line.repeat
        known = table[key] = Unrecognized(event.exc_type, event.message, event.frame, where, 0, lone=lone,
                                           kind=event.kind)
    known.count += event.count if lone else event.line.repeat  # a lone event counted its repeats already
    if earlier(where, known.first):
        known.first, known.message, known.frame = where, event.message, event.frame
    if event.line.rank is not None and len(known.ranks) < MAX_RANKS:
        known.ranks.add(event.line.rank)
    return 0


def merge_unrecognized(table: dict[tuple[str, str], Unrecognized], key: tuple[str, str], u: Unrecognized) -> int:
    """Fold an entry of another table (another source or part) into `table`; returns the occurrences left out."""
    known = table.get(key)
    if known is None:
        if len(table) >= MAX_UNRECOGNIZED:
            return u.count
        table[key] = u
        return 0
    known.count += u.count
    if earlier(u.first, known.first):
        known.first, known.message, known.frame = u.first, u.message, u.frame
    add_capped(known.ranks, u.ranks, MAX_RANKS)
    return 0


@dataclass(slots=True)
class Moment:
    """The first failure one rank (or one file, when ranks are unknown) showed."""

    what: str  # a signature id, or "exception:<type>" for an unrecognised traceback
    where: Location


@dataclass(slots=True)
class Fact:
    """A value the logs told (a config setting, a host, a version) and where."""

    name: str
    value: str
    where: Location
    groups: dict[str, str] = field(default_factory=dict)
    mode: str = "first"

    def replaces(self, known: Fact) -> bool:
        """Whether this sighting should replace the known one (first or last, by mode)."""
        if self.mode == "last":
            return not earlier(self.where, known.where)
        return earlier(self.where, known.where)


def add_capped(target: set[T], items: set[T], cap: int) -> None:
    for item in items:
        if len(target) >= cap:
            return
        target.add(item)
