"""Cross-rank forensics for one job: the per-rank table, the culprit, noise that is not a failure, hangs and
restarts; what the report leads with.

Noise: an error whose every sighting came after the job's own success line (teardown), and an error whose
last sighting was followed by a retry line (caught and tried again) are set aside, as is the torchrun
agent's own SignalException when the job was killed from outside. A hang (no error, killed from outside)
becomes a `job-hang` finding; a culprit that stopped without an error of its own a `rank-stalled` one.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..i18n import msg
from ..match.events import EvidenceLine
from ..match.schema import Signature
from .artifacts import Note, flight_recorder, stacks
from .book import ForensicBook
from .culprit import Culprit, find_culprit
from .findings import Finding, Location, Unrecognized
from .restarts import Restarts, judge_restarts
from .table import Table, build_table

RETRY_WITHIN = 6  # lines after an error within which a retry line means it was caught and tried again


@dataclass(slots=True)
class Forensics:
    """What the ranks' own lines say: the rank table, the culprit, restarts and dumps."""

    table: Table
    culprit: Culprit | None = None
    ignored: list[tuple[str, str, Location]] = field(default_factory=list)  # (id or exception, why, where)
    restarts: Restarts | None = None
    notes: list[Note] = field(default_factory=list)  # what flight-recorder and py-spy dumps say


def _after_success(book: ForensicBook, where: Location) -> bool:
    """Printed after the job's own success line: by time when both have one, else later in the same file."""
    for _f, ok in book.items("success"):
        if ok.ts is not None and where.ts is not None:
            if where.ts >= ok.ts:
                return True
        elif ok.source == where.source and where.line > ok.line:
            return True
    return False


def _retried(book: ForensicBook, where: Location) -> bool:
    return any(r.source == where.source and 0 < r.line - where.line <= RETRY_WITHIN for _f, r in book.items("retry"))


def set_aside(book: ForensicBook, found: dict[str, Finding], unrecognized: list[Unrecognized],
              killed: bool) -> tuple[list[Unrecognized], list[tuple[str, str, Location]]]:
    """Remove what is not a failure from `found` (in place) and from the unrecognised errors."""
    ignored: list[tuple[str, str, Location]] = []
    for sig_id in list(found):
        f = found[sig_id]
        if not f.sig.is_failure:
            continue
        if _after_success(book, f.first):
            ignored.append((sig_id, "after-success", f.first))
            del found[sig_id]
        elif _retried(book, f.last):
            ignored.append((sig_id, "retried", f.last))
            del found[sig_id]
    kept: list[Unrecognized] = []
    for u in unrecognized:
        if _after_success(book, u.first):
            ignored.append((f"exception:{u.exc_type}", "after-success", u.first))
        elif _retried(book, u.first) and u.count == 1:
            ignored.append((f"exception:{u.exc_type}", "retried", u.first))
        elif killed and u.exc_type.endswith("SignalException"):
            ignored.append((f"exception:{u.exc_type}", "killed-from-outside", u.first))
        else:
            kept.append(u)
    return kept, ignored


def _evidence(rows: list[tuple[Location | None, str]]) -> tuple[EvidenceLine, ...]:
    out = []
    for i, (where, text) in enumerate(rows[:8]):
        if where is None:
            continue
        name = where.source.rsplit("/", 1)[-1]
        out.append(EvidenceLine(where.line, f"[{name}] {text}", i == 0))
    return tuple(out)


def hang_finding(sig: Signature, table: Table, c: Culprit, lang: str) -> Finding:
    rows = [r for r in table.ranked() if r.state == "silent"]
    steps = sorted({r.step for r in rows if r.step is not None})
    killed_what, killed_where = table.killed if table.killed is not None else ("", None)
    captures = {"what": "training progress" if steps else "output", "files": str(len({s for r in rows
                                                                                       for s in r.sources})),
                "ended": killed_what.split(":", 1)[-1], "ranks_stopped": str(len(rows))}
    if c.silence is not None:
        captures["silence"] = str(int(c.silence))
    if steps:
        captures["step"] = str(steps[-1] if len(steps) == 1 else f"{steps[0]}-{steps[-1]}")
        captures["step_text"] = msg("hang_step", lang, step=captures["step"])
    first = c.odd or ([c.rank] if c.rank is not None else [])
    if first:
        captures["silent_first"] = ", ".join(str(r) for r in first[:8])
    if c.phase:
        captures["phase"] = c.phase
        captures["phase_text"] = msg("hang_phase", lang, phase=c.phase)
    if c.row is not None and c.row.last_line:
        captures["last_progress"] = c.row.last_line[:160]
    lead = c.row.last_where if c.row is not None else None
    others = sorted((r for r in rows if r is not c.row and r.last_where is not None),
                    key=lambda r: (r.last_where.source_index, r.last_where.line))  # type: ignore[union-attr]
    evidence = _evidence([(lead, c.row.last_line or "" if c.row else ""),
                          *[(r.last_where, r.last_line or "") for r in others[:5]],
                          (killed_where, table.killed_line or killed_what.split(":", 1)[-1])])
    where = lead or killed_where or Location("<job>", 0)
    f = Finding(sig, 1, where, killed_where or where, captures, evidence)
    f.ranks = {r.rank for r in rows if r.rank is not None}
    f.hosts = {r.host for r in rows if r.host}
    f.sources = sorted({s for r in rows for s in r.sources})[:64]
    return f


def stalled_finding(sig: Signature, c: Culprit, lang: str) -> Finding:
    row = c.row
    how = msg(f"stall_{c.reason.replace('-', '_')}", lang, step=row.step if row and row.step is not None else "?",
              signal=(row.signal or str(row.exit_code)) if row else "?")
    captures = {"stall_rank": str(c.rank), "stall_how": how, "stall_waiters": str(c.waiters)}
    if row is not None and row.host:
        captures["stall_where"] = msg("stall_where", lang, host=row.host)
    if row is not None and row.last_line:
        captures["stall_last"] = row.last_line[:200]
    if c.collective:
        captures["stall_collective"] = msg("stall_collective", lang, what=c.collective)
    where = (row.last_where if row is not None else None) or Location("<job>", 0, c.rank)
    where.rank = c.rank
    evidence = _evidence([(where, row.last_line or "" if row else "")])
    f = Finding(sig, 1, where, where, captures, evidence)
    if c.rank is not None:
        f.ranks = {c.rank}
    if row is not None and row.host:
        f.hosts = {row.host}
    f.sources = list(row.sources[:4]) if row is not None else []
    return f


def judge_forensics(book: ForensicBook, facts: dict[str, str], found: dict[str, Finding],
                    signatures: dict[str, Signature], root: Finding | None, lang: str) -> Forensics:
    """The table, the culprit, and the findings a hang or a stalled rank adds to `found` (in place)."""
    table = build_table(book, facts)
    result = Forensics(table)
    pid_rank = {r.pid: r.rank for r in table.ranked() if r.pid is not None and r.rank is not None}
    result.notes = flight_recorder(book.dumps, table.world) + stacks(book.stacks, pid_rank)
    strength = {"fr-behind": 0, "fr-missing": 1, "fr-mismatch": 2, "stack-odd": 3, "fr-no-dump": 4}
    suspects = [(r, "flight-recorder" if n.kind.startswith("fr-") else "stack", n.text)
                for n in sorted(result.notes, key=lambda n: strength.get(n.kind, 9)) for r in n.ranks]
    culprit = find_culprit(table, book, root.first.rank if root is not None else None,
                           root.sig.id if root is not None else None, suspects)
    result.culprit = culprit
    if culprit is not None and culprit.reason == "hang" and "job-hang" in signatures:
        found["job-hang"] = hang_finding(signatures["job-hang"], table, culprit, lang)
    elif culprit is not None and root is None and culprit.what is None and "rank-stalled" in signatures \
            and culprit.reason in ("never-enqueued", "behind", "silent", "killed", "no-log", "named",
                                   "flight-recorder", "stack") \
            and not (culprit.waiters == 0 and culprit.row is not None and culprit.row.killed_by == "ray-died"):
        # (a rank only Ray's ActorDiedError told of, with no rank waiting for it: the ActorDiedError says it all)
        found.setdefault("rank-stalled", stalled_finding(signatures["rank-stalled"], culprit, lang))
    result.restarts = judge_restarts(table, book)
    return result

