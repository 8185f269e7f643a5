"""One row per rank: which process each writer is (global rank, host, GPU, pid), what it did last, its own
first error, and its state (failed, echo, silent, ok).

A writer is a process's lines in one file. Writers of one process are joined (a torchelastic rank's
stdout.log, stderr.log and error.json; a Ray worker's .out/.err and the driver lines with its pid), then
given a global rank from, in order: the rank the lines are tagged with (`[rank3]:`), the rank the process
printed for itself, the NCCL communicator of the whole world, the torchrun table row or rendezvous
`global_ranks=[...]` of its node's agent, and within one node folder the offset the other ranks show.
"""

from __future__ import annotations

from collections import Counter
from dataclasses import dataclass, field

from ..read.activity import Who
from ..read.layout import PathIdentity
from ..read.marks import busid_to_pci
from .book import ForensicBook, Progress, Writer
from .findings import Location

Proc = tuple[object, ...]
MAX_ROWS = 16384


@dataclass(slots=True)
class RankRow:
    """One rank (in one attempt): its host, GPU, pid and what it did."""

    rank: int | None
    attempt: int | None = None
    host: str | None = None
    gpu: str | None = None
    pid: int | None = None
    local_rank: int | None = None
    state: str = "ok"  # failed | echo | silent | ok
    step: int | None = None
    step_time: str | None = None
    last_line: str | None = None
    last_time: str | None = None
    last_ts: float | None = None
    last_where: Location | None = None
    own_last: bool = False  # the last line came from the process's own file
    first_error: tuple[str, Location] | None = None
    detail: str = ""
    first_echo: tuple[str, Location] | None = None
    progress: dict[str, Progress] = field(default_factory=dict)
    waits: int = 0
    exit_code: int | None = None
    signal: str | None = None
    killed_by: str | None = None  # "agent" (its launcher stopped it) | "outside" (a kill it did not log) | "oom-killer"
    #   | "ray-died" (Ray's ActorDiedError says its worker process died)
    waiting: bool = False  # its last line says it waits for work (vLLM)
    kernel: tuple[str, Location] | None = None  # what its host's kernel said of it (OOM kill, Xid)
    sources: list[str] = field(default_factory=list)


def _ident(book: ForensicBook, source: str) -> PathIdentity:
    return book.idents.get(source) or PathIdentity()


def proc_of(book: ForensicBook, source: str, who: Who) -> Proc:
    """Which process a writer belongs to (writers of one process share the key)."""
    task, lrank, rank, pid = who
    ident = _ident(book, source)
    attempt = ident.attempt
    if lrank is not None:
        return ("local", attempt, source, task, lrank)
    if ident.local_rank is not None:
        return ("elastic", attempt, ident.group, ident.local_rank)
    if pid is not None or ident.pid is not None:
        return ("pid", attempt, pid if pid is not None else ident.pid)
    if rank is not None:
        return ("rank", attempt, rank)
    return ("source", attempt, source)


def _shows(book: ForensicBook, source: str, w: Writer) -> bool:
    """A writer seen only between its file's head and tail has nothing to show (the fast search never fed it)."""
    line, step = book.last_seen(source, w.track)
    return line is not None or step is not None or w.first_error is not None or w.first_echo is not None \
        or bool(w.progress) or bool(w.waits) or w.nccl is not None or w.self_rank is not None


def _ranks_list(text: str) -> list[int]:
    return [int(x) for x in text.strip("[] ").split(",") if x.strip().isdigit() and len(x.strip()) < 9]


class Resolver:
    """Gives every process a global rank, host, pid and GPU from everything the book holds."""

    def __init__(self, book: ForensicBook, world: int | None) -> None:
        self.book = book
        self.world = world
        self.procs: dict[Proc, list[tuple[str, Who, Writer]]] = {}
        for (source, who), w in book.writers.items():
            if _shows(book, source, w):
                self.procs.setdefault(proc_of(book, source, who), []).append((source, who, w))
        self.rank: dict[Proc, int] = {}
        self.cfe = self._cfe_rows()

    def _cfe_rows(self) -> list[dict[str, str]]:
        """ChildFailedError table rows, assembled from their lines in order (one row per rank entry)."""
        rows: list[dict[str, str]] = []
        pending: dict[str, str] = {}
        events = []
        for kind in ("cfe_time", "cfe_host", "cfe_rank", "cfe_exit", "cfe_file"):
            events += [(where.source_index, where.line, kind, f, where) for f, where in self.book.items(kind)]
        for _si, _line, kind, f, where in sorted(events, key=lambda e: (e[0], e[1])):
            if kind == "cfe_time" and pending:  # "time" is the first line of each entry
                if "rank" in pending:
                    rows.append(pending)
                pending = {}
            pending.update(f)
            pending["_source"] = where.source
        if "rank" in pending:
            rows.append(pending)
        return rows

    def resolve(self) -> None:
        for proc, writers in self.procs.items():
            votes: Counter[int] = Counter()
            for source, who, w in writers:
                if who[2] is not None:
                    votes[who[2]] += 2
                if w.self_rank is not None:
                    votes[w.self_rank] += 1
                for r in self.book.tags(source, w.track):
                    votes[r] += 2
                if w.nccl is not None and self.world is not None and w.nccl.get("nranks") == str(self.world):
                    votes[int(w.nccl["rank"])] += 1
            if votes:
                self.rank[proc] = votes.most_common(1)[0][0]
        self._from_tables()
        self._by_offset()

    def _from_tables(self) -> None:
        """Console writers by local rank, and torchelastic folders: the agent's table and rendezvous lines."""
        for proc in self.procs:
            if proc in self.rank:
                continue
            if proc[0] == "local":
                _, _attempt, source, task, lrank = proc
                for row in self.cfe:
                    if row.get("_source") == source and row.get("_task") == (str(task) if task is not None
                                                                            else None) \
                            and row.get("local") == str(lrank):
                        self.rank[proc] = int(row["rank"])
                for f, where in self.book.items("rdzv"):
                    if where.source == source and f.get("key") == "global_ranks" \
                            and f.get("_task") == (str(task) if task is not None else None):
                        ranks = _ranks_list(f.get("val", ""))
                        if isinstance(lrank, int) and lrank < len(ranks):
                            self.rank[proc] = ranks[lrank]
            elif proc[0] == "elastic":
                _, attempt, group, lrank = proc
                tail = f"{str(group).rsplit('/', 1)[-1]}/attempt_{attempt}/{lrank}/"
                for row in self.cfe:
                    if tail in row.get("file", "").replace("\\", "/"):
                        self.rank[proc] = int(row["rank"])

    def _by_offset(self) -> None:
        """Within one agent's folder (or console) ranks are consecutive: global = base + local."""
        bases: dict[tuple[object, ...], set[int]] = {}
        for proc, rank in self.rank.items():
            if proc[0] in ("elastic", "local"):
                bases.setdefault(self._scope(proc), set()).add(rank - int(proc[-1]))  # type: ignore[call-overload]
        scopes = {self._scope(p) for p in self.procs if p[0] in ("elastic", "local")}
        for proc in self.procs:
            if proc in self.rank or proc[0] not in ("elastic", "local"):
                continue
            scope = self._scope(proc)
            known = bases.get(scope, set())
            if len(known) == 1:
                self.rank[proc] = next(iter(known)) + int(proc[-1])  # type: ignore[call-overload]
            elif not known and len({s for s in scopes if s[:2] == scope[:2]}) == 1 and not self._multi_node():
                self.rank[proc] = int(proc[-1])  # type: ignore[call-overload]  # one node: local == global

    @staticmethod
    def _scope(proc: Proc) -> tuple[object, ...]:
        """The agent a local rank counts in: (kind, attempt, its folder or console (and srun task))."""
        return proc[:-1]

    def _multi_node(self) -> bool:
        groups = {_ident(self.book, s).group for s in self.book.idents} - {None}
        return len(groups) > 1 or any(f.get("key") == "group_world_size" and f.get("val") not in ("1", None)
                                      for f, _ in self.book.items("rdzv"))

    # -- the rest of a process's identity -------------------------------------------------------------------
    def host_pid_gpu(self, proc: Proc, rank: int | None,
                     table_rows: bool = True) -> tuple[str | None, int | None, str | None]:
        """`table_rows`: the torchrun table may describe this process (it describes the last attempt only)."""
        host = pid = gpu = None
        for source, who, w in self.procs.get(proc, []):
            ident = _ident(self.book, source)
            # a line's own prefix (Ray's ip=, NCCL's host:pid) names where that process ran; the folder holding a
            # driver's console (which carries every node's lines) does not
            line_host = w.track.host or w.host  # the head's first (the same whatever the parts of a split scan)
            host = host or (line_host if who[3] is not None else None) or ident.host or line_host
            pid = pid or ident.pid or who[3] or w.self_pid
            if w.nccl is not None:
                gpu = gpu or busid_to_pci(w.nccl.get("busid", ""))
                host = host or w.nccl.get("host")
                pid = pid or (int(w.nccl["pid"]) if w.nccl.get("pid", "").isdigit() else None)
        if rank is not None and table_rows:
            for row in self.cfe:
                if row.get("rank") == str(rank):
                    host = host or (row.get("host") if row.get("host") not in ("localhost", None) else None)
                    pid = pid or (int(row["pid"]) if row.get("pid", "").isdigit() else None)
        return host, pid, gpu
