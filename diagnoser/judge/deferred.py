"""What waits for the whole source to be seen, held in bounded form: the hits of signatures with whole-file
conditions and the unrecognised tracebacks whose fate depends on them.

Whether such a hit holds depends only on its source, signature and rule (the whole-file conditions are the
rule's), so hits are grouped by that key (DeferredHitEvent.key): the first MAX_KEPT of a group are kept whole
(their evidence, ranks and moments), the rest folded into one Finding by the collector. A traceback that
depends on deferred hits is kept the same way, per set of groups it depends on. A million repeated lines of
such a signature cost a few hundred records, and none is dropped uncounted.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..match.events import DeferredHitEvent, HitEvent, UnrecognizedEvent
from .findings import Finding, Unrecognized, fold_unrecognized, merge_unrecognized

MAX_KEPT = 64  # records of one group kept whole


@dataclass(slots=True)
class HitGroup:
    """The hits of one signature in one source that wait on whole-file conditions."""

    source: str
    needs: tuple[str, ...]
    forbids: tuple[str, ...]
    kept: list[HitEvent] = field(default_factory=list)
    more: Finding | None = None  # the hits past MAX_KEPT, folded


@dataclass(slots=True)
class TracebackGroup:
    """Unrecognised tracebacks that wait on the deferred hits in them."""

    kept: list[UnrecognizedEvent] = field(default_factory=list)
    more: dict[tuple[str, str], Unrecognized] = field(default_factory=dict)  # past MAX_KEPT, folded
    unlisted: int = 0  # occurrences `more` had no room for


@dataclass(slots=True)
class Deferred:
    """Everything decided only once a source has been read whole."""

    hits: dict[str, HitGroup] = field(default_factory=dict)
    tracebacks: dict[tuple[str, ...], TracebackGroup] = field(default_factory=dict)

    def add_hit(self, event: DeferredHitEvent) -> HitEvent | None:
        """Keep the hit; or return it, when its group is full, for the caller to fold (see fold)."""
        group = self.hits.get(event.key)
        if group is None:
            group = self.hits[event.key] = HitGroup(event.hit.line.source, event.needs, event.forbids)
        if len(group.kept) < MAX_KEPT:
            group.kept.append(event.hit)
            return None
        return event.hit

    def fold(self, key: str, finding: Finding) -> None:
        group = self.hits[key]
        if group.more is None:
            group.more = finding
        else:
            group.more.absorb(finding)

    def add_unrecognized(self, event: UnrecognizedEvent) -> None:
        group = self.tracebacks.setdefault(tuple(sorted(set(event.depends_on))), TracebackGroup())
        if len(group.kept) < MAX_KEPT:
            group.kept.append(event)
        else:
            group.unlisted += fold_unrecognized(group.more, event)

    def merge(self, other: Deferred) -> list[tuple[str, HitEvent]]:
        """Take in another part's records; the hits past a group's limit are returned for the caller to fold."""
        overflow: list[tuple[str, HitEvent]] = []
        for key, theirs in other.hits.items():
            mine = self.hits.get(key)
            if mine is None:
                self.hits[key] = theirs
                continue
            room = MAX_KEPT - len(mine.kept)
            mine.kept.extend(theirs.kept[:max(0, room)])
            overflow.extend((key, hit) for hit in theirs.kept[max(0, room):])
            if theirs.more is not None:
                self.fold(key, theirs.more)
        for deps, tbs in other.tracebacks.items():
            group = self.tracebacks.setdefault(deps, TracebackGroup())
            for event in tbs.kept:
                if len(group.kept) < MAX_KEPT:
                    group.kept.append(event)
                else:
                    group.unlisted += fold_unrecognized(group.more, event)
            for fold_key, u in tbs.more.items():
                group.unlisted += merge_unrecognized(group.more, fold_key, u)
            group.unlisted += tbs.unlisted
        return overflow
