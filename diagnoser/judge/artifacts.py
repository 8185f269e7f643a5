"""What the artifacts users already have say about the culprit: flight-recorder dumps (one per rank) and py-spy
dumps (one stack per process).

Flight recorder, as torch's own fr_trace reads it (torch/distributed/flight_recorder/components/utils.py): a
group's `pg_status` shows a rank whose last enqueued collective is behind the others'; the oldest collective
each rank has not finished, joined by group and sequence number, shows the ranks that never joined it
("missing ranks") and the ranks that joined with another operation, size or dtype (a mismatch); a rank with no
dump at all is a suspect too. py-spy: processes whose main-thread stack differs from the majority's.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..read.flightrec import Dump, Entry
from ..read.pyspy import Stack
from .findings import Location

MAX_NOTES = 16


@dataclass(slots=True)
class Note:
    """What a flight-recorder or py-spy dump says about some ranks."""

    kind: str  # fr-behind | fr-missing | fr-mismatch | fr-no-dump | stack-odd
    ranks: list[int]  # the suspects (py-spy: ranks where the pid is known)
    text: str  # the facts, in the dump's own words (group, sequence number, operation, frame)
    pids: list[int] = field(default_factory=list)
    where: Location | None = None


def _oldest_pending(d: Dump) -> dict[str, Entry]:
    out: dict[str, Entry] = {}
    for e in d.entries:
        if e.pending and not e.p2p and (e.pg not in out or e.seq < out[e.pg].seq):
            out[e.pg] = e
    return out


def flight_recorder(dumps: list[Dump], world: int | None) -> list[Note]:
    if not dumps:
        return []
    by_rank = {d.rank: d for d in sorted(dumps, key=lambda d: (d.rank, d.source)) if d.rank >= 0}
    notes: list[Note] = []
    # 1. pg_status: a rank whose last enqueued collective is behind the group's
    groups = sorted({pg for d in by_rank.values() for pg in d.status}, key=lambda g: (len(g), g))
    for pg in groups:
        enq = {r: d.status[pg][0] for r, d in by_rank.items() if pg in d.status}
        top = max(enq.values())
        behind = sorted(r for r, v in enq.items() if v < top)
        if behind and len(behind) < len(enq):
            notes.append(Note("fr-behind", behind, f"process group {pg}: last enqueued collective "
                              + ", ".join(f"rank {r}: {enq[r]}" for r in behind[:8]) + f" (the others: {top})"))
    # 2. the oldest unfinished collective of each rank, by group
    pending = {r: _oldest_pending(d) for r, d in by_rank.items()}
    for pg in sorted({pg for p in pending.values() for pg in p}):
        waiting = {r: p[pg] for r, p in pending.items() if pg in p}
        seq = max(e.seq for e in waiting.values())
        members = _members(by_rank, pg)
        joined = {r for r, d in by_rank.items() if any(e.pg == pg and e.seq == seq and not e.p2p for e in d.entries)}
        missing = sorted(members - joined)
        if missing:
            sample = next(e for e in waiting.values() if e.seq == seq)
            notes.append(Note("fr-missing", missing, f"process group {pg} ({sample.desc or '?'}) collective {seq} "
                              f"{sample.op}: ranks {sorted(joined)} joined, missing ranks {missing}"
                              + (f"; waiting at {sample.frame}" if sample.frame else "")))
        entries = [e for d in by_rank.values() for e in d.entries if e.pg == pg and e.seq == seq and not e.p2p]
        for what, key in (("operation", lambda e: e.op), ("sizes", lambda e: (e.in_sizes, e.out_sizes)),
                          ("dtypes", lambda e: e.dtypes)):
            shapes = Counter(key(e) for e in entries)
            if len(shapes) > 1:
                common = shapes.most_common(1)[0][0]
                odd = sorted(r for r, d in by_rank.items()
                             for e in d.entries if e.pg == pg and e.seq == seq and not e.p2p and key(e) != common)
                notes.append(Note("fr-mismatch", odd, f"process group {pg} collective {seq}: {what} differ "
                                  f"(most ranks: {common}; ranks {odd} differ)"))
                break
    # 3. ranks of the job that left no dump
    if world is not None and world <= 4096:
        absent = sorted(set(range(world)) - set(by_rank))
        if absent and len(absent) < world:
            notes.append(Note("fr-no-dump", absent, f"no flight-recorder dump from ranks {absent[:32]}"))
    return notes[:MAX_NOTES]


def _members(by_rank: dict[int, Dump], pg: str) -> set[int]:
    """A group's ranks from its pg_config; gloo records none, then every rank that has an entry for the group
    (for the default group, every rank that dumped)."""
    for d in by_rank.values():
        _desc, ranks = d.groups.get(pg, ("", None))
        if ranks:
            return set(ranks)
    if any(e.pg == pg and e.desc == "default_pg" for d in by_rank.values() for e in d.entries) or pg == "0":
        return set(by_rank)
    return {r for r, d in by_rank.items() if any(e.pg == pg for e in d.entries)}


def stacks(items: list[tuple[Stack, Location]], pid_rank: dict[int, int]) -> list[Note]:
    """py-spy: the processes whose main-thread stack differs from most processes' (by function and file, then
    also by line)."""
    # a --native dump interleaves C frames (and raw addresses, which differ per process): compare Python frames
    procs = {s.pid: (s, where) for s, where in items if s.pid is not None and _py(s)}
    if len(procs) < 3:
        return []
    for with_line in (False, True):
        shapes = Counter(_shape(s, with_line) for s, _ in procs.values())
        if len(shapes) > 1:
            common, n = shapes.most_common(1)[0]
            if n * 2 <= len(procs):
                return []
            odd = [(pid, s, where) for pid, (s, where) in sorted(procs.items()) if _shape(s, with_line) != common]
            top = ", ".join(f"pid {pid}: {_py(s)[0][0]} ({_py(s)[0][1]}:{_py(s)[0][2]})" for pid, s, _ in odd[:4])
            usual = _py(procs[next(p for p, (s, _) in procs.items() if _shape(s, with_line) == common)][0])[0]
            return [Note("stack-odd", sorted(pid_rank[p] for p, _, _ in odd if p in pid_rank),
                         f"{top}; the other {n} processes are in {usual[0]} ({usual[1]}:{usual[2]})",
                         [p for p, _, _ in odd], odd[0][2])]
    return []


def _py(s: Stack) -> tuple[tuple[str, str, int | None], ...]:
    return tuple(f for f in s.frames if f[1].endswith(".py"))


def _shape(s: Stack, with_line: bool) -> tuple[tuple[str, str, int | None], ...]:
    return tuple((f, file, line if with_line else None) for f, file, line in _py(s))
