"""One story across files: the job's shape, the per-rank timeline, echoes, the verdict, the resume point.

A kernel-log event (OOM killer, Xid, ECC) on the same host shortly before a rank failed explains that
rank's failure; the timeline joins them.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass, field
from pathlib import Path

from ..i18n import msg
from ..match.observe import framework_of
from ..read.layout import identify
from ..safe import to_int
from .collector import Collector
from .findings import Finding, Location, Moment, Unrecognized

KERNEL_BEFORE = 600.0  # a kernel event explains a failure up to this many seconds later
KERNEL_AFTER = 60.0  # ... or this many seconds earlier (clocks and buffering disagree a little)
MAX_SHOWN = 12


@dataclass(slots=True)
class Entry:
    """One moment of the timeline, and what explains it."""

    key: str
    moment: Moment
    explained_by: tuple[str, Location] | None = None


@dataclass(slots=True)
class Echo:
    """A finding that echoes the root cause, on how many ranks, how long after it."""

    finding: Finding
    ranks: int
    delay: float | None  # seconds after the root cause was first seen


@dataclass(slots=True)
class Story:
    """The job's story: the timeline, the echoes and the verdict."""

    job: dict[str, object]
    timeline: list[Entry]
    echoes: list[Echo]
    verdict: str  # restart | fix-then-restart | investigate | none
    verdict_reason: str
    checkpoint: dict[str, object] | None
    folded: list[Unrecognized]  # unrecognised errors that are the root cause seen again
    precursors: list[Finding] = field(default_factory=list)  # health findings that began before the root cause


def _host_of(where: Location, roles: dict[str, tuple[str, str | None]]) -> set[str]:
    # The line's own host: a Ray `ip=` when the line was forwarded, else the host of the file that holds it
    # (lines inherit it). Not both: the driver's console collects every node's lines.
    host = where.host or roles.get(where.source, ("", None))[1]
    return {host} if host else set()


def _explain(entry: Entry, kernel: list[tuple[str, Location]], roles: dict[str, tuple[str, str | None]]) -> None:
    hosts = _host_of(entry.moment.where, roles)
    if not hosts:
        return
    best: tuple[str, Location] | None = None
    for sig_id, where in kernel:
        if not hosts & _host_of(where, roles):
            continue
        t_rank, t_kernel = entry.moment.where.ts, where.ts
        if t_rank is not None and t_kernel is not None:
            if not -KERNEL_AFTER <= t_rank - t_kernel <= KERNEL_BEFORE:
                continue
            if best is None or (best[1].ts is not None and abs(t_rank - t_kernel) < abs(t_rank - best[1].ts)):
                best = (sig_id, where)
        elif where.time is None and best is None:
            # a kernel line with no wall time at all (dmesg's seconds since boot): the same host's kernel
            # event is the best lead there is; a dated one outside the window never is
            best = (sig_id, where)
    entry.explained_by = best


def _job(collector: Collector, findings: list[Finding], table_ranks: set[int]) -> dict[str, object]:
    """The job's shape: what the lines named (ranks and hosts seen) beside what the config said (world size,
    nnodes, parallel sizes); only what the logs told. `table_ranks`: the ranks the per-rank table resolved (a
    torchrun log folder's local-rank files, a console's [defaultN]: prefixes), which the lines need not name."""
    facts = {name: f.value for name, f in collector.facts.items()}
    framework = framework_of(facts)
    ranks: set[int] = set(collector.ranks_seen) | table_ranks
    for name, ident in collector.forensics.idents.items():  # the rank files read (rank3.log: rank 3)
        rank = ident.rank if ident.rank is not None or name.startswith("<") else identify(Path(name)).rank
        if rank is not None:
            ranks.add(rank)
    hosts: set[str] = set(collector.hosts_seen)  # as the lines name them (Ray's ip=)
    for f in findings:
        ranks |= f.ranks
        hosts |= f.hosts
    for moment in collector.timeline.values():
        if moment.where.rank is not None:
            ranks.add(moment.where.rank)
    # as the folders name them (dlc-job-worker-1/): the same nodes named another way, so the larger count stands
    by_path = {host for _role, host in collector.roles.values() if host}
    if len(by_path) > len(hosts):
        hosts = by_path
    model = facts.get("job_model")
    job: dict[str, object] = {}
    if framework:
        job["framework"] = framework
    if model and posixpath.basename(model.rstrip("/")):
        job["model"] = posixpath.basename(model.rstrip("/"))
    if ranks:
        job["ranks_seen"] = len(ranks)
    if hosts:
        job["hosts_seen"] = len(hosts)
    for key in ("world_size", "nnodes", "gpus_per_node", "tp", "pp", "cp", "ep", "dp", "global_batch_size",
                "micro_batch_size", "rollout_batch_size"):
        value = facts.get(f"job_{key}")
        if value is not None:
            number = to_int(value)
            job[key] = number if number is not None else value  # a number too long to be one stays text
    return job


def _checkpoint(collector: Collector) -> dict[str, object] | None:
    fact = collector.facts.get("last_checkpoint")
    if fact is None:
        return None
    step = fact.groups.get("ckpt_step")
    return {"step": to_int(step), "path": fact.groups.get("ckpt_path"),
            "source": fact.where.source, "line": fact.where.line, "time": fact.where.time,
            # verl says where it saves before it saves: a failure right after may have left it incomplete
            "confirmed": "ckpt_started" not in fact.groups}


def _explain_echo(entry: Entry, root: Finding, symptoms: set[str], folded: list[Unrecognized]) -> None:
    """A rank whose first failure is an echo of the root cause (a symptom, or an error folded into it) is explained
    by the root cause, when no kernel event explains it already."""
    if entry.explained_by is not None or entry.moment.what == root.sig.id:
        return
    what, where = entry.moment.what, entry.moment.where
    if what in symptoms or (what.startswith("exception:") and any(
            u.exc_type == what.split(":", 1)[1] and (u.first.rank == where.rank or u.first.source == where.source)
            for u in folded)):
        entry.explained_by = (root.sig.id, root.first)


def build_story(collector: Collector, ranked: list[Finding], root: Finding | None, failed: bool,
                lang: str, unrecognized: list[Unrecognized] | None = None, empty: bool = False,
                root_verdict: str | None = None, table_ranks: set[int] | None = None) -> Story:
    entries = [Entry(key, m) for key, m in collector.timeline.items()]
    for e in entries:
        _explain(e, collector.kernel, collector.roles)
    folded = [u for u in unrecognized or [] if u.echo_of is not None]
    if root is not None:
        symptoms = {f.sig.id for f in ranked if f.sig.kind == "symptom"}
        for e in entries:
            _explain_echo(e, root, symptoms, folded)
    entries.sort(key=lambda e: (e.moment.where.ts if e.moment.where.ts is not None else float("inf"),
                                e.moment.where.source_index, e.moment.where.line))
    echoes: list[Echo] = []
    if root is not None:
        for f in ranked:
            if f is root or not f.sig.is_failure or f.health is not None:
                continue
            delay = None
            if f.first.ts is not None and root.first.ts is not None:
                delay = f.first.ts - root.first.ts
            echoes.append(Echo(f, len(f.ranks) or len(f.hosts), delay))
    if root is not None:
        verdict = root_verdict or root.sig.verdict
    elif failed:
        verdict = "investigate"
    else:
        verdict = "none"
    key = f"verdict_{verdict}"
    if verdict == "investigate" and root is not None:
        key = "verdict_investigate_known"
    elif verdict == "none" and empty:
        key = "verdict_empty"
    reason = msg(key, lang)
    return Story(_job(collector, ranked, table_ranks or set()), entries, echoes, verdict, reason,
                 _checkpoint(collector), folded, precursors(ranked, root))


def _before(f: Finding, root: Finding) -> bool:
    """`f` tripped before the root cause was seen, as far as the logs tell: the same file, or both dated."""
    a, b = f.first, root.first
    if a.source == b.source:
        return a.line < b.line
    return a.ts is not None and b.ts is not None and a.ts <= b.ts


def precursors(ranked: list[Finding], root: Finding | None) -> list[Finding]:
    """The health findings that tripped before the root cause and whose rule names it in `leads_to`: the run was
    going bad before it failed (a grad norm exploding before the NaN), so the earliest of them is where the failure
    began. A trend that cannot cause this failure (slow steps before a CUDA OOM) is not tied to it."""
    if root is None:
        return []
    found = [f for f in ranked if f.health is not None and f is not root and root.sig.id in f.sig.leads_to
             and _before(f, root)]
    return sorted(found, key=lambda f: (f.first.source_index, f.health.start_line if f.health else f.first.line))


def describe_moment(moment: Moment, titles: dict[str, str]) -> str:
    if moment.what.startswith("exception:"):
        return moment.what.split(":", 1)[1]
    return titles.get(moment.what, moment.what)

