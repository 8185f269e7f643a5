"""The per-rank table: one RankRow per rank (and per attempt when the launcher restarted the job)."""

from __future__ import annotations

import time
from dataclasses import dataclass, field

from ..lazyre import lazy
from ..safe import to_int
from .book import ForensicBook
from .findings import Location, earlier
from .ranks import MAX_ROWS, Proc, RankRow, Resolver

MAX_WORLD = 1 << 20
KERNEL_WINDOW = 600.0  # a kernel line with no pid or GPU to go by: the rank on its host that stopped this long before

# an IPv4 or IPv6 address, as Ray prints a node's
_ADDRESS = lazy(r"\d{1,3}(?:\.\d{1,3}){3}|[0-9A-Fa-f]{0,4}(?::[0-9A-Fa-f]{0,4}){2,7}")


@dataclass(slots=True)
class Table:
    """The job's ranks, those missing, its attempts, and whether it was killed from outside."""

    rows: list[RankRow]
    world: int | None = None
    missing: list[int] = field(default_factory=list)  # ranks the job had that left no line at all
    attempts: list[int] = field(default_factory=list)
    killed: tuple[str, Location] | None = None  # the job was ended from outside: what said so
    killed_line: str = ""  # that line as printed
    killed_ts: float | None = None  # when (a scheduler prints the time in the line itself)
    success: Location | None = None  # the job's own success line
    hidden: int = 0  # echo lines Ray folded into "[repeated Nx]" from writers it did not name
    dropped: int = 0
    dead_actors: int = 0  # actors Ray's ActorDiedError named (by pid) that are no rank of these logs

    def ranked(self) -> list[RankRow]:
        return [r for r in self.rows if r.rank is not None]


def _world(book: ForensicBook, facts: dict[str, str], resolver: Resolver) -> int | None:
    sizes = []
    sizes += [n for n in [to_int(facts.get("job_world_size"))] if n is not None]  # a size too long stays text
    for _src, _who, w in (x for ws in resolver.procs.values() for x in ws):
        n = to_int(w.nccl.get("nranks")) if w.nccl is not None else None
        if n is not None:
            sizes.append(n)
    for f, _where in book.items("rdzv"):
        if f.get("key") == "global_ranks":
            ranks = [to_int(x) for x in f["val"].strip("[] ").split(",")]  # a number too long stays text
            sizes.append(max((r for r in ranks if r is not None), default=-1) + 1)
    world = max(sizes, default=0)
    return world if 0 < world <= MAX_WORLD else None


def _attempt(proc: Proc) -> int | None:
    return proc[1] if isinstance(proc[1], int) else None


def build_table(book: ForensicBook, facts: dict[str, str]) -> Table:
    resolver = Resolver(book, None)
    resolver.world = _world(book, facts, resolver)
    resolver.resolve()
    attempts = sorted({a for p in resolver.procs if (a := _attempt(p)) is not None})
    multi = len(attempts) > 1
    rows: dict[tuple[object, ...], RankRow] = {}
    for proc, writers in resolver.procs.items():
        writers = [x for x in writers if x[0] not in book.stack_sources]
        if not writers:
            continue
        rank = resolver.rank.get(proc)
        attempt = _attempt(proc) if multi else None
        if multi and attempt is None:
            continue  # a console spanning attempts: it told who is who, the attempts' own files tell the rest
        key = (attempt, rank) if rank is not None else (attempt, None, proc)
        row = rows.get(key)
        if row is None:
            if len(rows) >= MAX_ROWS:
                continue
            host, pid, gpu = resolver.host_pid_gpu(proc, rank, not multi or attempt == attempts[-1])
            row = rows[key] = RankRow(rank, attempt, host, gpu, pid)
        if proc[0] in ("elastic", "local"):
            row.local_rank = proc[-1] if isinstance(proc[-1], int) else row.local_rank
        for source, _who, w in writers:
            if source not in row.sources and len(row.sources) < 8:
                row.sources.append(source)
            line, step = book.last_seen(source, w.track)
            own = _own(book, source, proc)
            if line is not None and (row.last_where is None or _later(line.ts, line.lineno, source, own, row)):
                row.last_line, row.last_time, row.last_ts = line.text, line.time, line.ts
                row.last_where = Location(source, line.lineno, rank, line.time, line.ts)
                row.own_last = own
            if step is not None and (row.step is None or step[0] > row.step):
                row.step, row.step_time = step[0], step[1].time
            if w.track.waiting is not None and (line is None or w.track.waiting.lineno > line.lineno):
                row.waiting = True
            for slot in ("first_error", "first_echo"):
                theirs = getattr(w, slot)
                mine = getattr(row, slot)
                if theirs is not None and (mine is None or earlier(theirs[1], mine[1])):
                    setattr(row, slot, theirs)
                    if slot == "first_error":
                        row.detail = w.detail
            for pg, p in w.progress.items():
                if pg not in row.progress or earlier(row.progress[pg].where, p.where):
                    row.progress[pg] = p
            row.waits += w.waits
            row.host = row.host or w.host
    table = Table(sorted(rows.values(), key=lambda r: (r.attempt or 0, r.rank is None, r.rank or 0)),
                  resolver.world, attempts=attempts, hidden=book.hidden_echoes, dropped=book.dropped)
    _ray_errors(book, resolver, table)
    _ray_died(book, table)
    _exits(book, resolver, table)
    unjoined = _kernel(book, table)
    _end(book, table)
    _states(table)
    for what, where in unjoined:  # by host and time, once the states tell who only echoed
        for r in _by_host_and_time(table, where):
            r.kernel = r.kernel or (what, where)
    return table


def _own(book: ForensicBook, source: str, proc: Proc) -> bool:
    """The process's own file (not a console or a driver that forwarded its lines)."""
    ident = book.idents.get(source)
    return ident is not None and (ident.local_rank is not None or ident.pid is not None or ident.rank is not None) \
        and proc[0] != "local"


def _later(ts: float | None, lineno: int, source: str, own: bool, row: RankRow) -> bool:
    """Whether a writer's last line is later than the row's: by time, else its own file over a copy."""
    if ts is not None and row.last_ts is not None:
        return ts > row.last_ts
    if row.last_where is not None and source == row.last_where.source:
        return lineno > row.last_where.line
    return own and not row.own_last


def _ray_errors(book: ForensicBook, resolver: Resolver, table: Table) -> None:
    """A Ray actor's exception reaches the driver as `RayTaskError(...) (pid=P, ip=I)`: it is that actor's."""
    by_pid = {r.pid: r for r in table.rows if r.pid is not None and r.rank is not None}
    unranked = [r for r in table.rows if r.rank is None]
    for f, where in book.items("ray_task_error"):
        actor = by_pid.get(int(f["pid"])) if f.get("pid", "").isdigit() and len(f["pid"]) < 10 else None
        if actor is None:
            continue
        actor.host = actor.host or f.get("ip")
        for r in unranked:
            for slot in ("first_error", "first_echo"):
                mine = getattr(r, slot)
                if mine is not None and mine[1].source == where.source and 0 <= mine[1].line - where.line <= 60:
                    if getattr(actor, slot) is None:
                        setattr(actor, slot, mine)
                    setattr(r, slot, None)


def _ray_died(book: ForensicBook, table: Table) -> None:
    """Ray's ActorDiedError names the actor whose worker process died by its pid (and its node's address), on lines
    of their own under the headline: that process stopped with no error of its own (killed, or crashed)."""
    heads = [(where.source, where.line) for _f, where in book.items("ray_actor_died")]
    if not heads:
        return
    ips = book.items("ray_died_ip")
    for f, where in book.items("ray_died_pid"):
        if not any(src == where.source and 0 < where.line - line <= 8 for src, line in heads):
            continue
        ip = next((g.get("ip") for g, w in ips if w.source == where.source and 0 < w.line - where.line <= 4), None)
        # the same pid on another node is another process; a row known by its host name may be that node
        rows = [r for r in table.ranked() if r.pid is not None and str(r.pid) == f.get("pid")
                and (ip is None or r.host in (None, ip) or not _ADDRESS.fullmatch(r.host))]
        for r in rows:
            r.killed_by = r.killed_by or "ray-died"
            r.signal = r.signal or "Ray ActorDiedError"
        table.dead_actors += not rows


def _exits(book: ForensicBook, resolver: Resolver, table: Table) -> None:
    """How each rank ended, as its launcher told: the torchrun table, the agent's SIGTERMs, srun's task lines."""
    terminated = {f.get("pid") for f, _ in book.items("agent_term")}
    by_rank = {(r.attempt, r.rank): r for r in table.ranked()}
    last_attempt = table.attempts[-1] if table.attempts else None
    for row in resolver.cfe:
        r = by_rank.get((last_attempt if table.attempts[1:] else None, int(row["rank"])))
        if r is None or "code" not in row:
            continue
        r.exit_code = int(row["code"])
        r.signal = row.get("sig")
        if row.get("pid") in terminated:
            r.killed_by = "agent"
        elif r.exit_code in (-9, 137) or r.signal == "SIGKILL":
            r.killed_by = "outside"
    for f, _where in book.items("srun_task"):
        how = f.get("how", "")
        for part in f.get("tasks", "").split(","):
            lo, _, hi = part.partition("-")
            if not lo.isdigit() or len(lo) > 7 or (hi and (not hi.isdigit() or len(hi) > 7)):
                continue
            for task in range(int(lo), int(hi or lo) + 1):
                r = by_rank.get((None, task))
                if r is not None:
                    r.host = r.host or f.get("host")
                    r.signal = r.signal or how
                    if how.startswith(("Killed", "Out Of Memory")):
                        r.killed_by = r.killed_by or "outside"


def _kernel(book: ForensicBook, table: Table) -> list[tuple[str, Location]]:
    """Kernel lines joined to ranks: the OOM killer's victim by pid, an Xid by the GPU's PCI address (NCCL's busId).
    Returns the lines neither joined (see _by_host_and_time)."""
    by_pid = {r.pid: r for r in table.ranked() if r.pid is not None}
    unjoined: list[tuple[str, Location]] = []
    for f, where in book.items("oom_kill"):
        r = by_pid.get(int(f["pid"])) if f.get("pid", "").isdigit() and len(f["pid"]) < 10 else None
        what = f"OOM killer: Killed process {f.get('pid', '?')} ({f.get('comm', '?')})"
        if r is not None and (r.host is None or where.host is None or r.host == where.host):
            r.kernel = r.kernel or (what, where)
            r.host = r.host or where.host
            r.killed_by = "oom-killer"
        else:
            unjoined.append((what, where))
    for f, where in book.items("xid"):
        pci = f.get("pci", "").lower()
        pid = f.get("pid", "")
        what = f"NVRM: Xid {f.get('xid', '?')} on PCI:{pci}"
        joined = False
        for r in table.ranked():
            same_gpu = r.gpu is not None and r.gpu.lower() == pci and (r.host is None or where.host in (None, r.host))
            if same_gpu or (pid.isdigit() and r.pid == int(pid)):
                r.kernel = r.kernel or (what, where)
                r.host = r.host or where.host
                joined = True
        if not joined:
            unjoined.append((what, where))
    return unjoined


def _by_host_and_time(table: Table, where: Location) -> list[RankRow]:
    """The ranks of a kernel line's host whose logs ended last before it, within KERNEL_WINDOW: a rank the kernel
    killed or whose GPU failed stops there; ranks that only echo another's failure are not it."""
    if where.host is None or where.ts is None:
        return []
    ts = where.ts
    near = [r for r in table.ranked() if r.host == where.host and r.state != "echo" and r.last_ts is not None
            and ts - KERNEL_WINDOW <= r.last_ts <= ts + 1.0]
    if not near:
        return []
    last = max(r.last_ts for r in near if r.last_ts is not None)
    return [r for r in near if r.last_ts is not None and r.last_ts >= last - 1.0]


def _end(book: ForensicBook, table: Table) -> None:
    """Whether the job ended from outside (scheduler kill, time limit, a signal to the launcher), or succeeded."""
    for kind in ("sched_kill", "agent_death"):
        for f, where in book.items(kind):
            what = f.get("reason") or (f"signal {f['sig']}" if f.get("sig") else "cancelled")
            if table.killed is None or earlier(where, table.killed[1]):
                table.killed = (f"{kind}:{what}", where)
                table.killed_line = f.get("_raw", "")
                table.killed_ts = where.ts if where.ts is not None else _iso_ts(f.get("time", ""))
    for _f, where in book.items("success"):
        if table.success is None or earlier(table.success, where):
            table.success = where
    if table.world is not None and table.world <= 4096:
        seen = {r.rank for r in table.ranked()}
        table.missing = [r for r in range(table.world) if r not in seen]


def _iso_ts(text: str) -> float | None:
    """Slurm's `CANCELLED AT 2024-05-01T12:00:00` (its default time format), as seconds."""
    import calendar  # here: a start-up that never reads a Slurm time does not import it (strptime does anyway)

    try:
        return calendar.timegm(time.strptime(text[:19], "%Y-%m-%dT%H:%M:%S"))
    except ValueError:
        return None


def _states(table: Table) -> None:
    noisy = table.success
    failed_job = table.killed is not None
    for r in table.rows:
        if r.first_error is not None and noisy is not None and earlier(noisy, r.first_error[1]):
            r.first_error = None  # printed after the job's own success line: teardown
        if r.first_echo is not None and noisy is not None and earlier(noisy, r.first_echo[1]):
            r.first_echo = None
        if r.first_error is not None:
            r.state = "failed"
        elif r.first_echo is not None or r.waits:
            r.state = "echo"
        failed_job = failed_job or r.state != "ok" or r.exit_code not in (None, 0)
    for r in table.rows:
        if r.state == "ok" and failed_job:
            r.state = "silent"
