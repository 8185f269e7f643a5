"""Aggregate events into findings: one per signature, with count, ranks, hosts and first sighting; merge the
results of several sources (or parts of one) in source order."""

from __future__ import annotations

from ..match.events import (
    ActivityEvent,
    DeferredHitEvent,
    Event,
    EvidenceLine,
    FactEvent,
    FileSeenEvent,
    HitEvent,
    MarkEvent,
    MetricEvent,
    SeenEvent,
    StackEvent,
    UnrecognizedEvent,
)
from ..match.schema import Signature
from ..read.activity import who_of
from ..read.lone import LONE_KEEP
from ..safe import to_int
from .book import ForensicBook
from .deferred import Deferred
from .findings import (
    MAX_LONE,
    MAX_RANKS,
    MAX_TIMELINE,
    Fact,
    Finding,
    Location,
    Moment,
    Unrecognized,
    add_capped,
    earlier,
    fold_unrecognized,
    merge_unrecognized,
)
from .health import HealthBook, Trip
from .series import fmt


class Collector:
    """Receives one source's events (it is the scanner's `emit`); merges with other collectors."""

    def __init__(self, signatures: dict[str, Signature], recording: bool = False) -> None:
        self.signatures = signatures
        self.health = HealthBook(recording)  # metric series and health rules (health.py)
        self.health_news: list[str] = []  # ids of findings health rules made since a live session last looked
        self.findings: dict[str, Finding] = {}
        self.unrecognized: dict[tuple[str, str], Unrecognized] = {}
        self.facts: dict[str, Fact] = {}
        self.timeline: dict[str, Moment] = {}
        self.roles: dict[str, tuple[str, str | None]] = {}  # source → (role, host from its path)
        self.kernel: list[tuple[str, Location]] = []  # failure findings seen in kernel logs
        # decided in finalize(), when every part of every source has been merged
        self.deferred = Deferred()
        self.unlisted = 0  # occurrences of unrecognised errors the full table left out (see fold_unrecognized)
        self.file_seen: dict[str, set[str]] = {}
        self.lone: list[UnrecognizedEvent] = []  # lone exception lines: shown only when nothing else explains
        self.forensics = ForensicBook()  # who did what across ranks (judge/book.py)
        self.lines = 0
        self.bytes = 0
        self.sources = 0
        self.ranks_seen: set[int] = set()  # every rank the lines named (the job's shape counts what it saw)
        self.hosts_seen: set[str] = set()
        self.unreadable: list[str] = []  # why each source that could not be opened was skipped
        self.skipped_binary = 0  # sources skipped because their content is not text

    def __call__(self, event: Event) -> None:
        if isinstance(event, MarkEvent):
            self.forensics.mark(event.mark, Location.of(event.line), who_of(event.line), event.line.repeat,
                                event.line.raw)
        elif isinstance(event, MetricEvent):  # the most frequent, with marks
            for trip in self.health.feed(event, self.signatures):
                self._tripped(trip)
        elif isinstance(event, ActivityEvent):
            self.forensics.activity(event.source, event.end, event.tracks, event.dropped)
        elif isinstance(event, StackEvent):
            self.forensics.stack(event.stack, Location.of(event.line))
        elif isinstance(event, HitEvent):
            self._hit(event)
        elif isinstance(event, UnrecognizedEvent) and event.kind == "line":
            self._lone([event])
        elif isinstance(event, UnrecognizedEvent):
            if event.depends_on:
                self.deferred.add_unrecognized(event)
            else:
                self._unrecognized(event)
        elif isinstance(event, DeferredHitEvent):
            more = self.deferred.add_hit(event)
            if more is not None:
                self.deferred.fold(event.key, self._finding(more))
        elif isinstance(event, SeenEvent):
            add_capped(self.ranks_seen, set(event.ranks), MAX_RANKS)
            add_capped(self.hosts_seen, set(event.hosts), MAX_RANKS)
        elif isinstance(event, FileSeenEvent):
            self.file_seen.setdefault(event.source, set()).update(event.keys)
        elif isinstance(event, FactEvent):
            fact = Fact(event.name, event.value, Location.of(event.line), dict(event.groups), event.mode)
            known = self.facts.get(event.name)
            if known is None or fact.replaces(known):
                if known is not None and fact.mode == "last":
                    # "save checkpoint to /ckpt/5" then "... train iteration 5 done": keep the path
                    for key, value in known.groups.items():
                        if key not in fact.groups and known.groups.get("ckpt_step") == fact.groups.get("ckpt_step"):
                            fact.groups[key] = value
                self.facts[event.name] = fact

    def _own(self, where: Location) -> bool:
        """The line sits in its own node's file (not a copy another process forwarded)."""
        return where.host is not None and where.host == self.roles.get(where.source, ("", None))[1]

    def _moment(self, what: str, where: Location) -> None:
        key = f"rank {where.rank}" if where.rank is not None else f"{where.source}"
        known = self.timeline.get(key)
        if known is None:
            if len(self.timeline) < MAX_TIMELINE:
                self.timeline[key] = Moment(what, where)
        elif earlier(where, known.where) or _same_line_first(what, where, known):
            self.timeline[key] = Moment(what, where)
        elif not earlier(known.where, where) and where.ts is not None and self._own(where) \
                and not self._own(known.where):
            # the same moment twice (Ray forwards every worker line to the driver): keep the worker's copy
            self.timeline[key] = Moment(what, where)

    def _tripped(self, trip: Trip) -> None:
        """A health rule tripped: a finding like a hit's, with the series and the step its trend began."""
        s = trip.series
        captures = {"metric": s.key, "step": str(trip.step), "start_step": str(trip.start_step),
                    "value": fmt(trip.value), "start_value": fmt(trip.start_value)}
        if trip.reference is not None:
            captures["reference"] = fmt(trip.reference)
        evidence = [EvidenceLine(trip.line.lineno, trip.text, True)]
        if trip.start_line != trip.line.lineno:
            evidence.insert(0, EvidenceLine(trip.start_line, trip.start_text, False))
        self._hit(HitEvent(trip.ref[0], trip.line, captures, tuple(evidence)), trip)
        self.health_news.append(trip.ref[0])

    def _finding(self, event: HitEvent, health: Trip | None = None) -> Finding:
        line = event.line
        where = Location.of(line)
        captured = to_int(event.captures.get("rank"))
        if where.rank is None and captured is not None:
            where.rank = captured  # e.g. torchrun's "Root Cause" table names the rank that died
        f = Finding(self.signatures[event.sig_id], line.repeat, where, where, dict(event.captures), event.evidence,
                    matched_on=event.matched_on, health=health)
        if line.rank is not None:
            f.ranks.add(line.rank)
        if line.host:
            f.hosts.add(line.host)
        f.sources.append(line.source)
        return f

    def _hit(self, event: HitEvent, health: Trip | None = None) -> None:
        f = self._finding(event, health)
        self._add(f)
        sig = f.sig
        if sig.is_failure and sig.role in ("root", "cascade", "teardown") \
                and self.roles.get(event.line.source, ("worker", None))[0] != "kernel":
            self.forensics.error(f.first, who_of(event.line), sig.id, sig.role != "root")  # its own error, or an echo

    def _add(self, f: Finding) -> None:
        sig_id, where = f.sig.id, f.first
        if f.sig.is_failure:
            role = self.roles.get(where.source, ("worker", None))[0]
            if role == "kernel":
                if len(self.kernel) < MAX_TIMELINE:
                    self.kernel.append((sig_id, where))
            else:
                self._moment(sig_id, where)
        known = self.findings.get(sig_id)
        if known is None:
            self.findings[sig_id] = f
        else:
            known.absorb(f)

    def _unrecognized(self, event: UnrecognizedEvent) -> None:
        self._moment(f"exception:{event.exc_type}", Location.of(event.line))
        if self.roles.get(event.line.source, ("worker", None))[0] != "kernel":
            self.forensics.error(Location.of(event.line), who_of(event.line), f"exception:{event.exc_type}", False,
                                 event.message)
        self.unlisted += fold_unrecognized(self.unrecognized, event)

    def _lone(self, events: list[UnrecognizedEvent]) -> None:
        """Keep the last LONE_KEEP of each source, for the first sources up to MAX_LONE in all: the same whether
        a source was scanned whole or in parts (only the part that holds the file's end can have any)."""
        self.lone.extend(events)
        if len(self.lone) <= LONE_KEEP:
            return
        kept: list[UnrecognizedEvent] = []
        per_source: dict[int, int] = {}
        for e in sorted(self.lone, key=lambda e: (e.line.source_index, -e.line.lineno)):
            n = per_source.get(e.line.source_index, 0)
            if n < LONE_KEEP:
                per_source[e.line.source_index] = n + 1
                kept.append(e)
                if len(kept) >= MAX_LONE:
                    break
        self.lone = kept

    def lone_unrecognized(self) -> list[Unrecognized]:
        """The lone exception lines as unrecognised errors, deduplicated, in log order."""
        out: dict[tuple[str, str], Unrecognized] = {}
        for e in sorted(self.lone, key=lambda e: (e.line.source_index, e.line.lineno)):
            fold_unrecognized(out, e)
        return list(out.values())

    def finalize(self) -> None:
        """Decide the hits that waited for their whole source (whole-file conditions); judge the metric events
        that waited for the earlier parts of their file."""
        for trip in self.health.finalize(self.signatures):
            self._tripped(trip)
        accepted: set[str] = set()
        for key, group in self.deferred.hits.items():
            seen = self.file_seen.get(group.source, set())
            if all(k in seen for k in group.needs) and not any(k in seen for k in group.forbids):
                accepted.add(key)
                for hit in group.kept:
                    self._hit(hit)
                if group.more is not None:
                    self._add(group.more)
        for depends_on, tbs in self.deferred.tracebacks.items():
            if not any(k in accepted for k in depends_on):
                for event in tbs.kept:
                    self._unrecognized(event)
                for fold_key, u in tbs.more.items():
                    self.unlisted += merge_unrecognized(self.unrecognized, fold_key, u)
                self.unlisted += tbs.unlisted
        self.deferred = Deferred()

    def merge(self, other: Collector) -> None:
        """Fold in another source's results (called in source order, so results are stable)."""
        trips = self.health.merge(other.health, self.signatures)
        for key, event in self.deferred.merge(other.deferred):
            self.deferred.fold(key, self._finding(event))
        self._lone(other.lone)
        for source, keys in other.file_seen.items():
            self.file_seen.setdefault(source, set()).update(keys)
        for sig_id, f in other.findings.items():
            mine = self.findings.get(sig_id)
            if mine is None:
                self.findings[sig_id] = f
            else:
                mine.absorb(f)
        for fold_key, u in other.unrecognized.items():
            self.unlisted += merge_unrecognized(self.unrecognized, fold_key, u)
        self.unlisted += other.unlisted
        for name, fact in other.facts.items():
            known_fact = self.facts.get(name)
            if known_fact is None or fact.replaces(known_fact):
                self.facts[name] = fact
        for who, moment in other.timeline.items():
            known_moment = self.timeline.get(who)
            if known_moment is None:
                if len(self.timeline) < MAX_TIMELINE:
                    self.timeline[who] = moment
            elif earlier(moment.where, known_moment.where) or _same_line_first(moment.what, moment.where, known_moment):
                self.timeline[who] = moment
        self.roles.update(other.roles)
        self.forensics.merge(other.forensics)
        self.kernel.extend(other.kernel[: max(0, MAX_TIMELINE - len(self.kernel))])
        self.lines += other.lines
        self.bytes += other.bytes
        self.sources += other.sources
        for trip in trips:  # after the other's findings: a replayed part comes after what they hold
            self._tripped(trip)
        self.unreadable.extend(other.unreadable)
        add_capped(self.ranks_seen, other.ranks_seen, MAX_RANKS)
        add_capped(self.hosts_seen, other.hosts_seen, MAX_RANKS)
        self.skipped_binary += other.skipped_binary


def _same_line_first(what: str, where: Location, known: Moment) -> bool:
    """Two findings of one line (one line can match two signatures): the first by name, whichever was decided
    first (a scan that skips lines decides the hits of a line in another order than one that reads them all)."""
    return (where.source_index, where.line) == (known.where.source_index, known.where.line) and what < known.what
