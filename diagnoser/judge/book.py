"""The forensic book: what every writer (a process's lines in one file) showed, in bounded memory.

The collector hands it marks (read/marks.py), each source's activity, py-spy stacks, flight-recorder dumps
and the first error of each writer; books of several sources (or parts of one) merge in source order, so a
merged book is the same however the files were split among processes. judge/ranks.py turns it into one
row per rank, judge/culprit.py into the culprit.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from ..read import activity
from ..read.activity import Seen, Track, Who
from ..read.flightrec import Dump
from ..read.layout import PathIdentity
from ..read.marks import Mark
from ..read.pyspy import Stack
from .findings import Location, earlier

MAX_WRITERS = 16384  # writers kept (a log of 100,000 ranks keeps the first ones and counts the rest)
MAX_ITEMS = 4096  # each list of marks (kills, table rows, kernel lines, stacks)
MAX_PGS = 16  # watchdog progress kept per writer
# what the book keeps of each kind of mark, as a list of (values, where)
LISTED = frozenset({"cfe_root", "cfe_failures", "cfe_time", "cfe_host", "cfe_rank", "cfe_exit", "cfe_file",
                    "agent_term", "agent_failed", "agent_death", "rdzv", "restart", "sched_kill", "srun_task",
                    "sched_oom", "xid", "oom_kill", "lagging", "remote_error", "success", "retry",
                    "ray_task_error", "ray_actor_died", "ray_died_pid", "ray_died_ip"})
WKey = tuple[str, Who]  # (source, writer)
QUOTED = frozenset({"sched_kill", "agent_death", "success", "srun_task"})  # kept with their line, for evidence


@dataclass(slots=True)
class Progress:
    """A writer's watchdog line for one process group: the collective it timed out in, how far the group got."""

    seq: int
    enq: int | None
    done: int | None
    pg_rank: int | None
    where: Location
    op: str | None = None
    numel: str | None = None
    timeout_ms: int | None = None


@dataclass(slots=True)
class Writer:
    """What one writer (a rank, an actor, a file) did: its own first error, echoes, progress."""

    track: Track = field(default_factory=Track)
    first_error: tuple[str, Location] | None = None  # its own error: a cause, or an unrecognised exception
    detail: str = ""  # the first error's message (an unrecognised exception's), for comparing attempts
    first_echo: tuple[str, Location] | None = None  # an error that echoes another rank's failure
    progress: dict[str, Progress] = field(default_factory=dict)  # process group -> watchdog progress
    self_rank: int | None = None  # the rank the process says it is (head of its file)
    self_pid: int | None = None  # and its pid, when it said both on one line
    nccl: dict[str, str] | None = None  # NCCL init of its largest communicator: rank, nranks, host, pid, busid
    waits: int = 0  # watchdog / gloo echo lines (Ray's "[repeated Nx]" counted N times)
    host: str | None = None  # the host its error or mark lines named


def _int(text: str | None) -> int | None:
    if text is None or len(text) > 18:
        return None
    try:
        return int(text)
    except ValueError:
        return None


class ForensicBook:
    def __init__(self) -> None:
        self.writers: dict[WKey, Writer] = {}
        self.dropped = 0  # writers past MAX_WRITERS, and their lines past activity.MAX_KEYS
        self.lists: dict[str, list[tuple[dict[str, str], Location]]] = {}
        self.ends: dict[str, int] = {}  # source -> its last physical line
        self.idents: dict[str, PathIdentity] = {}  # source -> what its path told
        self.stacks: list[tuple[Stack, Location]] = []
        self.dumps: list[Dump] = []
        self.stack_sources: set[str] = set()  # py-spy dumps: read for their stacks, not as ranks' logs
        self.hidden_echoes = 0  # echo lines Ray folded into "[repeated Nx]" from writers it did not name

    # -- feeding --------------------------------------------------------------------------------------------
    def writer(self, source: str, who: Who) -> Writer | None:
        key = (source, who)
        w = self.writers.get(key)
        if w is None:
            if len(self.writers) >= MAX_WRITERS:
                self.dropped += 1
                return None
            w = self.writers[key] = Writer()
        return w

    def mark(self, mark: Mark, where: Location, who: Who, repeat: int, raw: str = "") -> None:
        kind, f = mark.kind, mark.fields
        if kind in LISTED:
            items = self.lists.setdefault(kind, [])
            if len(items) < MAX_ITEMS:
                if who[0] is not None:
                    f = {**f, "_task": str(who[0])}
                if kind in QUOTED:
                    f = {**f, "_raw": raw[:300]}
                items.append((f, where))
            return
        w = self.writer(where.source, who)
        if w is None:
            return
        w.host = w.host or where.host
        if kind == "rank_self":
            if w.self_rank is None:
                w.self_rank, w.self_pid = _int(f.get("rank")), _int(f.get("pid"))
        elif kind == "nccl_init":
            if w.nccl is None or (_int(f.get("nranks")) or 0) > (_int(w.nccl.get("nranks")) or 0):
                w.nccl = dict(f)
        elif kind in ("wd_timeout", "wd_progress", "gloo_timeout", "gloo_peer", "gloo_mesh"):
            w.waits += 1
            self.hidden_echoes += repeat - 1
            if kind in ("wd_timeout", "wd_progress"):
                self._progress(w, kind, f, where)

    def _progress(self, w: Writer, kind: str, f: dict[str, str], where: Location) -> None:
        seq = _int(f.get("seq"))
        if seq is None:
            return
        # "[Rank N] Watchdog caught ..." names no group ("?", joined with the group of the same sequence number)
        pg = "?" if kind == "wd_timeout" else f.get("pg_guid") or f.get("pg_uid") or "0"
        known = w.progress.get(pg)
        if known is None:
            if len(w.progress) >= MAX_PGS:
                return
            known = w.progress[pg] = Progress(seq, None, None, _int(f.get("pg_rank")), where)
        if kind == "wd_timeout":
            known.op, known.timeout_ms = f.get("op"), _int(f.get("timeout_ms"))
            if f.get("numel_in"):
                known.numel = f"{f['numel_in']}/{f.get('numel_out', '?')}"
        else:
            enq, done = _int(f.get("enq")), _int(f.get("done"))
            known.enq = enq
            # 2.3 printed an uninitialised "last completed" when nothing completed yet
            known.done = done if done is not None and done < (1 << 40) else -1
        known.seq = seq

    def error(self, where: Location, who: Who, what: str, echo: bool, detail: str = "") -> None:
        w = self.writer(where.source, who)
        if w is None:
            return
        w.host = w.host or where.host
        slot = "first_echo" if echo else "first_error"
        known = getattr(w, slot)
        if known is None or earlier(where, known[1]):
            setattr(w, slot, (what, where))
            if not echo:
                w.detail = detail[:300]

    def activity(self, source: str, end: int, tracks: dict[Who, Track], dropped: int) -> None:
        self.ends[source] = max(self.ends.get(source, 0), end)
        self.dropped += dropped
        for who, track in tracks.items():
            w = self.writer(source, who)
            if w is not None:
                w.track.absorb(track)

    def stack(self, stack: Stack, where: Location) -> None:
        if len(self.stack_sources) < MAX_ITEMS:
            self.stack_sources.add(where.source)
        if len(self.stacks) < MAX_ITEMS:
            self.stacks.append((stack, where))

    # -- merging --------------------------------------------------------------------------------------------
    def merge(self, other: ForensicBook) -> None:
        for key, w in other.writers.items():
            mine = self.writers.get(key)
            if mine is None:
                if len(self.writers) < MAX_WRITERS:
                    self.writers[key] = w
                else:
                    self.dropped += 1
                continue
            who = key[1]
            mine.track.absorb(w.track)
            for slot in ("first_error", "first_echo"):
                theirs = getattr(w, slot)
                if theirs is not None:
                    self.error(theirs[1], who, theirs[0], slot == "first_echo", w.detail)
            for pg, p in w.progress.items():
                known = mine.progress.get(pg)
                if (known is None and len(mine.progress) < MAX_PGS) or (known is not None
                                                                          and earlier(known.where, p.where)):
                    mine.progress[pg] = p
            if mine.self_rank is None:
                mine.self_rank, mine.self_pid = w.self_rank, w.self_pid
            if w.nccl is not None and (mine.nccl is None or (_int(w.nccl.get("nranks")) or 0)
                                       > (_int(mine.nccl.get("nranks")) or 0)):
                mine.nccl = w.nccl
            mine.waits += w.waits
            mine.host = mine.host or w.host
        self.dropped += other.dropped
        self.hidden_echoes += other.hidden_echoes
        for kind, items in other.lists.items():
            mine_items = self.lists.setdefault(kind, [])
            mine_items.extend(items[: max(0, MAX_ITEMS - len(mine_items))])
        for source, end in other.ends.items():
            self.ends[source] = max(self.ends.get(source, 0), end)
        self.idents.update(other.idents)
        self.stacks.extend(other.stacks[: max(0, MAX_ITEMS - len(self.stacks))])
        self.stack_sources.update(list(other.stack_sources)[: max(0, MAX_ITEMS - len(self.stack_sources))])
        self.dumps.extend(other.dumps[: max(0, MAX_ITEMS - len(self.dumps))])

    # -- reading --------------------------------------------------------------------------------------------
    def last_seen(self, source: str, track: Track) -> tuple[Seen | None, tuple[int, Seen] | None]:
        """A writer's last line and last step, counted in its source's head and tail only (read/activity.py)."""
        start = self.ends.get(source, 0) - activity.TAIL_LINES
        line = track.line if track.line is not None and track.line.lineno > start else track.head_line
        step = track.step if track.step is not None and track.step[1].lineno > start else track.head_step
        return line, step

    def tags(self, source: str, track: Track) -> list[int]:
        """The global ranks a local writer's lines were tagged with (head and tail only)."""
        start = self.ends.get(source, 0) - activity.TAIL_LINES
        return sorted(r for r, (lineno, head) in track.ranks.items() if head or lineno > start)

    def items(self, kind: str) -> list[tuple[dict[str, str], Location]]:
        return self.lists.get(kind, [])
