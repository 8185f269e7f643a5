"""Which rank started it: the culprit of a collective timeout, a kill or a hang, from the per-rank table.

In order: a line that names the lagging rank (NCCL's desync report, an error propagated from a rank); a rank
with an error of its own (the earliest); the watchdog lines of the others joined by process group and
sequence number (a rank that never enqueued the collective the others waited in, or is stuck in an earlier
one); a rank that printed nothing while the others timed out (killed from outside first, then the one whose
log ended first); a rank that left no log at all. With no error anywhere and the job killed from outside it
is a hang: the ranks whose last line differs from the others' come first, with the phase they stopped in.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..lazyre import lazy
from .book import ForensicBook
from .findings import Location
from .ranks import RankRow
from .table import Table

_DIGITS = lazy(r"\S*\d\S*")
# the phase a rank stopped in, from the words of its last lines (first match wins)
PHASES = (
    ("weight sync", r"(?i)sync.{0,20}weight|weight.{0,20}sync|update_weights|broadcast.{0,20}(?:param|weight)"),
    ("checkpoint save", r"(?i)sav(?:e|ing).{0,20}checkpoint|checkpoint.{0,20}sav|save_checkpoint"),
    ("reference/old log-probs", r"(?i)ref(?:erence)?[_ ].{0,20}log.?prob|old.?log.?prob|compute_log_prob"),
    ("reward", r"(?i)\breward"),
    ("rollout/generation", r"(?i)generat|rollout|sampling|Processed prompts|vllm|sglang"),
    ("env step", r"(?i)env(?:ironment)?[ _.]step|env\.step"),
    ("data loading", r"(?i)data ?loader|loading (?:data|batch)|dataset"),
    ("update", r"(?i)backward|optimizer|update_actor|update_policy|train_step|\bupdate\b"),
    ("collective", r"(?i)all_?reduce|all_?gather|reduce_scatter|barrier|broadcast|collective"),
)
_PHASES = tuple((name, lazy(rx)) for name, rx in PHASES)
KILLED = ("outside", "oom-killer", "ray-died")  # a rank's end that no line of its own tells (RankRow.killed_by)


@dataclass(slots=True)
class Culprit:
    """The rank the judge names as the one that failed first, and why."""

    row: RankRow | None
    rank: int | None
    reason: str  # own-error | named | never-enqueued | behind | killed | silent | no-log | hang
    what: str | None = None  # its first error (a signature id or exception:<type>)
    where: Location | None = None
    waiters: int = 0  # ranks that timed out or lost their peer (plus lines Ray folded)
    collective: str | None = None  # the collective the others waited in
    others: list[int] = field(default_factory=list)  # other suspects, most likely first
    odd: list[int] = field(default_factory=list)  # hang: ranks whose last line differs from the others'
    phase: str | None = None
    silence: float | None = None  # seconds from its last line to the job's end
    artifact: str | None = None  # what a flight-recorder or py-spy dump says of it

    def machine(self) -> tuple[str | None, str | None]:
        """(host, GPU) of the culprit: the host its error was printed on when that is known. A rank's row joins
        every line that names its number, and a job of several clusters (a trainer's and a rollout engine's, each
        counting ranks from 0) has two processes per number: the row's host and GPU may be the other one's. Only a
        host the error's own line carries (Ray's `(Actor pid=…, ip=…)`) is taken over the row's, not one guessed
        from the file's name."""
        row_host, gpu = (self.row.host, self.row.gpu) if self.row is not None else (None, None)
        w = self.where
        own = w.host if w is not None and w.pid is not None and self.reason == "own-error" else None
        if own is None or own == row_host:
            return row_host, gpu
        return own, None


def canonical(line: str | None) -> str:
    """A last line without the words that hold digits (Ray's dedup key): ranks, steps, losses differ."""
    return " ".join(_DIGITS.sub("", line or "").split())


def phase_of(lines: list[str]) -> str | None:
    for name, rx in _PHASES:
        if any(rx.search(line) for line in lines):
            return name
    return None


def _when(row: RankRow) -> tuple[float, int]:
    """When a rank's first error happened: its own time, else that of its last dated line."""
    if row.first_error is not None and row.first_error[1].ts is not None:
        return (row.first_error[1].ts, 0)
    return (row.last_ts if row.last_ts is not None else float("inf"), 1)


def _end_ts(table: Table, rows: list[RankRow], book: ForensicBook) -> float | None:
    """When the job ended: the last dated line of a rank, or of the launcher or scheduler stopping it."""
    ends = [r.last_ts for r in rows if r.last_ts is not None]
    for kind in ("agent_term", "agent_failed", "agent_death", "sched_kill", "srun_task"):
        ends += [where.ts for _f, where in book.items(kind) if where.ts is not None]
    if table.killed_ts is not None:
        ends.append(table.killed_ts)
    return max(ends) if ends else None


def _named(book: ForensicBook, rows: dict[int, RankRow]) -> list[int]:
    """Ranks a line names as the cause: NCCL's desync report, TORCH_NCCL_PROPAGATE_ERROR's source rank."""
    named: list[int] = []
    for f, _where in book.items("lagging"):
        named += [int(x) for x in f.get("ranks", "").split(",") if x.strip().isdigit() and len(x.strip()) < 8]
    named += [int(f["src"]) for f, _ in book.items("remote_error") if f.get("src", "").isdigit()]
    return [r for r in dict.fromkeys(named) if r in rows]


def _join(rows: list[RankRow]) -> tuple[list[tuple[str, RankRow]], str | None]:
    """Watchdog lines joined by process group and sequence number: who is behind the collective others wait in."""
    groups: dict[str, list[tuple[RankRow, int, int | None]]] = {}
    ops: dict[str, str] = {}
    for r in rows:
        named = {pg: p for pg, p in r.progress.items() if pg != "?"}
        bare = r.progress.get("?")
        for pg, p in (named or ({"0": bare} if bare is not None else {})).items():
            groups.setdefault(pg, []).append((r, p.seq, p.enq))
            op = p.op or (bare.op if bare is not None and bare.seq == p.seq else None)
            if op:
                ops.setdefault(pg, f"{op} (SeqNum {p.seq})")
    behind: list[tuple[str, RankRow]] = []
    collective = None
    for pg, items in groups.items():
        top = max(seq for _r, seq, _e in items)
        for r, seq, enq in sorted(items, key=lambda x: (x[2] if x[2] is not None else x[1], x[0].rank or 0)):
            if enq is not None and enq < top:
                behind.append(("never-enqueued", r))
            elif seq < top:
                behind.append(("behind", r))
        if collective is None and len(items) > 1:
            collective = f"{ops.get(pg, f'SeqNum {top}')} of process group {pg}"
    return behind, collective


def find_culprit(table: Table, book: ForensicBook, root_rank: int | None, root_id: str | None = None,
                 suspects: list[tuple[int, str, str]] | None = None) -> Culprit | None:
    """`suspects`: (rank, why, what the dump says) from the artifacts (flight recorder, py-spy), strongest first."""
    # the launcher's own lines (its table, its traceback) are no rank's
    rows = [r for r in _attempt_rows(table) if r.rank is not None]
    if len(rows) < 2 and not table.missing:
        return None
    by_rank = {r.rank: r for r in rows if r.rank is not None}
    failed = [r for r in rows if r.state == "failed"]
    echo = [r for r in rows if r.state == "echo"]
    silent = [r for r in rows if r.state == "silent"]
    waiters = len(echo) + table.hidden
    behind, collective = _join(rows)
    end = _end_ts(table, rows, book)

    def make(row: RankRow, reason: str, others: list[RankRow]) -> Culprit:
        what, where = row.first_error if row.first_error is not None else (None, row.last_where)
        silence = end - row.last_ts if end is not None and row.last_ts is not None else None
        return Culprit(row, row.rank, reason, what, where, waiters, collective,
                       [o.rank for o in others if o is not row and o.rank is not None][:16], silence=silence)

    named = _named(book, by_rank)
    if named:
        return make(by_rank[named[0]], "named", [by_rank[r] for r in named[1:]])
    rooted = by_rank.get(root_rank) if root_rank is not None else None
    if rooted is not None and rooted.state != "failed":  # the root cause was read about it, not from it
        c = make(rooted, "killed" if rooted.killed_by in KILLED else "silent", failed)
        c.what = root_id
        return c
    if failed:
        lead = next((r for r in failed if r.rank is not None and r.rank == root_rank), None)
        if lead is None:
            lead = min(failed, key=lambda r: (_when(r), (r.first_error[1].source_index, r.first_error[1].line)
                                              if r.first_error else (0, 0)))
        return make(lead, "own-error", sorted(failed, key=_when))
    named_rows = [(by_rank[r], why, text) for r, why, text in suspects or [] if r in by_rank]
    if named_rows:
        lead, why, text = named_rows[0]
        others = [row for row, _, _ in named_rows[1:]]
        c = _hang(table, silent, end, lead) if not echo and table.killed is not None and silent \
            else make(lead, why, others)
        c.artifact = text
        return c
    if behind:
        reason, lead = behind[0]
        return make(lead, reason, [r for _, r in behind])
    # a death Ray told of is an echo of it, also when the driver's ActorDiedError belongs to no rank
    if (echo or any(r.killed_by == "ray-died" for r in silent)) and silent:
        killed = [r for r in silent if r.killed_by in KILLED]
        if not killed and table.dead_actors:
            return None  # Ray named the process that died, and it is no rank of these logs: no silent rank is guessed
        pool = killed or silent
        odd = _odd(rows)
        pool = sorted(pool, key=lambda r: (r not in odd, r.last_ts if r.last_ts is not None else float("inf"),
                                           r.rank or 0))
        lead_odd = pool[0] in odd
        c = make(pool[0], "killed" if killed else "silent", [r for r in pool if (r in odd) == lead_odd])
        if pool[0].kernel is not None and root_id is not None:
            c.what = root_id  # its host's kernel killed it: the root cause was read from there
        return c
    if echo and table.missing:
        c = Culprit(None, table.missing[0], "no-log", waiters=waiters, collective=collective,
                    others=table.missing[1:16])
        return c
    if not failed and not echo and table.killed is not None and silent:
        return _hang(table, silent, end)
    return None


def _attempt_rows(table: Table) -> list[RankRow]:
    """The rows of the attempt that failed first (a restarted job is judged by its first failure)."""
    if len(table.attempts) < 2:
        return table.rows
    for attempt in table.attempts:
        rows = [r for r in table.rows if r.attempt == attempt]
        if any(r.state in ("failed", "echo") for r in rows):
            return rows
    return [r for r in table.rows if r.attempt == table.attempts[-1]]


def _odd(rows: list[RankRow]) -> list[RankRow]:
    """The ranks whose last line differs from what most ranks printed last (numbers aside)."""
    shapes = Counter(canonical(r.last_line) for r in rows)
    top, n = shapes.most_common(1)[0]
    return [r for r in rows if canonical(r.last_line) != top] if n * 2 > len(rows) else []


def _hang(table: Table, rows: list[RankRow], end: float | None, lead: RankRow | None = None) -> Culprit:
    odd = _odd(rows)
    odd.sort(key=lambda r: (r.last_ts if r.last_ts is not None else float("inf"), r.rank or 0))
    by_time = sorted(rows, key=lambda r: (r.last_ts if r.last_ts is not None else float("inf"), r.rank or 0))
    lead = lead or (odd[0] if odd else by_time[0])
    phase = phase_of([r.last_line or "" for r in (odd or rows)])
    silence = end - lead.last_ts if end is not None and lead.last_ts is not None else None
    return Culprit(lead, lead.rank, "hang", None, lead.last_where, 0, None,
                   [r.rank for r in (odd or by_time) if r is not lead and r.rank is not None][:16],
                   [r.rank for r in odd if r.rank is not None][:64], phase, silence)

