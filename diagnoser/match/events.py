"""What a scanner tells: a hit of a signature, an unrecognised error, a fact, and the records whole-file
conditions need. Each carries the LogLine it came from; the collector (judge/) folds them into findings."""

from __future__ import annotations

from dataclasses import dataclass

from ..read.activity import Track, Who
from ..read.marks import Mark
from ..read.normalize import LogLine
from ..read.pyspy import Stack


@dataclass(frozen=True, slots=True)
class EvidenceLine:
    """A line shown as evidence of a hit."""

    lineno: int
    raw: str
    key: bool


@dataclass(frozen=True, slots=True)
class HitEvent:
    """A signature matched: on which line, what it captured, and the evidence."""

    sig_id: str
    line: LogLine
    captures: dict[str, str]
    evidence: tuple[EvidenceLine, ...]
    matched_on: str = "lines"  # "frames": recognised from a cut traceback's frames alone (see match.frames)


@dataclass(frozen=True, slots=True)
class UnrecognizedEvent:
    """An error no signature matched: a traceback or a lone exception line."""

    exc_type: str
    message: str
    frame: str
    line: LogLine
    kind: str  # python | cxx | fatal | signal: a traceback; "line": a lone exception line (see _LONE)
    depends_on: tuple[str, ...] = ()  # deferred hits in this traceback: it is unrecognised only if none holds
    count: int = 1  # lone lines: how many times the source's tail said it


@dataclass(frozen=True, slots=True)
class DeferredHitEvent:
    """A hit whose whole-file conditions are decided once the whole source has been seen (all its parts)."""

    key: str
    hit: HitEvent
    needs: tuple[str, ...]  # whole-file conditions that must have matched somewhere in the source
    forbids: tuple[str, ...]  # whole-file conditions that must not have


@dataclass(frozen=True, slots=True)
class FileSeenEvent:
    """The whole-file conditions that matched somewhere in this (part of a) source."""

    source: str
    keys: frozenset[str]


@dataclass(frozen=True, slots=True)
class SeenEvent:
    """The ranks and hosts this (part of a) source's lines named (the job's shape counts what it saw)."""

    source: str
    ranks: frozenset[int]
    hosts: frozenset[str]


@dataclass(frozen=True, slots=True)
class FactEvent:
    """A fact read from a line."""

    name: str
    value: str
    line: LogLine
    groups: dict[str, str]
    mode: str = "first"


@dataclass(slots=True, unsafe_hash=True)  # never changed once made: not frozen, made for every metric line
class MetricEvent:
    """A metric record (one step of one print format) with the values some health rule reads.

    `values`: (key, value, the text that printed it, the (signature id, clause) pairs that read it); `step` is
    None when the format prints none (HF/TRL dicts: the series counts its records); `head`: the start of the line.
    """

    reader: str
    step: int | None
    values: tuple[tuple[str, float, str, tuple[tuple[str, int], ...]], ...]
    head: str
    line: LogLine
    excused: tuple[tuple[str, int], ...] = ()  # the `vanished` clauses this record excuses (MetricClause.excused_by)


@dataclass(slots=True, unsafe_hash=True)  # never changed once made: not frozen, made for every mark
class MarkEvent:
    """A line that tells who did what across ranks (read/marks.py)."""

    mark: Mark
    line: LogLine


@dataclass(frozen=True, slots=True)
class ActivityEvent:
    """At the end of a source (or a part of one): what each writer in it did last (read/activity.py)."""

    source: str
    source_index: int
    end: int  # the physical line the source (part) ended at
    tracks: dict[Who, Track]
    dropped: int = 0


@dataclass(frozen=True, slots=True)
class StackEvent:
    """A process's main-thread stack from a py-spy dump (read/pyspy.py)."""

    stack: Stack
    line: LogLine


Event = (HitEvent | UnrecognizedEvent | FactEvent | DeferredHitEvent | FileSeenEvent | MetricEvent | MarkEvent
         | ActivityEvent | StackEvent | SeenEvent)
