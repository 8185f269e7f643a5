"""What runs on each node of a Ray cluster for `diagnose --ray`: the same pipeline as a local diagnosis, over
that node's Ray session logs and the paths asked for, sending back compact results (collectors, events), never
the logs themselves.

Nothing here imports Ray at module level: modes/ray.py wraps these functions into Ray tasks and actors, and
ships this package to the nodes. The driver's database comes with the call, compiled (match/portable.py), so a
node uses the same signatures (built-in and --signatures alike), needs no files of its own and compiles nothing.
"""

from __future__ import annotations

import dataclasses
import os
import re
import socket
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from ..i18n import Msg
from ..judge.collector import Collector
from ..lazyre import lazy_re
from ..match.events import Event
from ..match.observe import PROGRESS
from ..match.portable import rebuild
from ..read.follow import Follower
from ..read.sources import Source
from ..read.tail import one_by_one
from ..read.walk import describe, expand
from ..report.redact import Redactor
from .batch import scan_sources
from .bundle_parts import Parts, artifacts, excerpts, safe_sources
from .pipeline import Pipeline

MAX_QUEUE = 20_000  # events a followed node keeps for the driver; more are dropped (and counted)
MAX_BATCH = 2_000  # events sent in one poll
_PROGRESS = lazy_re(PROGRESS)


@dataclass(frozen=True, slots=True)
class NodeJob:
    """What the driver asks of one node."""

    ip: str
    index_base: int  # the node's sources are numbered from here: several nodes' collectors merge without clashes
    paths: tuple[str, ...] = ()  # --ray-paths: files or folders on the node
    log_dir: str | None = None  # the driver's guess of the node's session logs (the node's own view wins)
    fast: bool = True
    bundle: bool = False  # also gather the pieces of a bundle (excerpts, artifacts), redacted here


@dataclass(slots=True)
class NodeResult:
    """What scanning one Ray node's logs gave."""

    ip: str
    hostname: str
    log_dir: str | None
    files: int
    collector: Collector
    warnings: list[str]
    seconds: float
    parts: Parts | None = None


def own_logs_dir() -> str | None:
    """The session logs folder of the node this runs on, as Ray itself knows it (a private API, so guarded)."""
    try:
        import ray

        node = ray._private.worker._global_node
        path = node.get_logs_dir_path() if node is not None else None
        return str(path) if path else None
    except Exception:  # any change in Ray's internals: fall back to the driver's guess
        return None


def _own_files() -> Callable[[str], bool]:
    """The files this diagnosis itself writes on the node (our job's workers and driver): not the job's logs."""
    job = pid = ""
    try:
        import ray

        job = ray.get_runtime_context().get_job_id()
        pid = str(os.getpid())
    except Exception:  # not inside Ray: nothing of ours to skip
        return lambda _name: False
    ours = re.compile(rf"^(?:worker-[0-9a-f]+-{job}-\d+\.(?:out|err)|python-core-driver-{job}f*_\d+\.log|"
                      rf"worker-[0-9a-f]+-[0-9a-f]+-{pid}\.(?:out|err)|python-core-worker-[0-9a-f]+_{pid}\.log)$")
    return lambda name: ours.match(name) is not None


def _roots(job: NodeJob, warn: Callable[[str], None]) -> tuple[str | None, list[Path]]:
    log_dir = own_logs_dir() or job.log_dir
    roots = [Path(log_dir)] if log_dir and os.path.isdir(log_dir) else []
    for p in job.paths:
        if os.path.exists(p):
            roots.append(Path(p))
        else:
            warn(Msg("warn_ray_no_path", ip=job.ip, path=p))
    return log_dir, roots


def node_sources(roots: list[Path], ip: str, warn: Callable[[str], None]) -> list[Source]:
    """The log files under `roots`, named `<ip>:<path>` and placed on host `ip` (the name the driver's
    `(Actor pid=N, ip=X)` prefixes use for the same node)."""
    ours = _own_files()
    out: list[Source] = []
    for root in roots:
        found = expand(root, warn) if root.is_dir() else [Source(str(root), root, *_described(root))]
        for s in found:
            if s.path is not None and ours(s.path.name):
                continue
            out.append(dataclasses.replace(s, name=f"{ip}:{s.name}", host=ip, explicit=False))
    return out


def _described(path: Path) -> tuple[int | None, bool, str]:
    rank, role, _host = describe(path)
    return rank, False, role


def scan_node(job: NodeJob, database: dict[str, object]) -> NodeResult:
    """A Ray task body: scan this node's logs with the pipeline, return its collector."""
    started = time.monotonic()
    warnings: list[str] = []
    log_dir, roots = _roots(job, warnings.append)
    sources = node_sources(roots, job.ip, warnings.append)
    if job.bundle:
        sources = safe_sources(sources, roots)  # no credentials file, no link out of the folders
    pipeline = Pipeline(rebuild(database), warnings.append)
    scan_sources(pipeline, sources, jobs=1, fast=job.fast, first_index=job.index_base)
    collector = pipeline.collector
    parts = None
    if job.bundle:
        collector.finalize()  # every source is whole on this node: its deferred hits can be decided here
        redactor = Redactor()
        parts = Parts(excerpts([m.where for m in collector.timeline.values()], sources, redactor))
        parts.artifacts, parts.left_out = artifacts(roots, f"{job.ip}:", redactor)
        parts.redacted.update(redactor.counts)
    collector.signatures = {}  # the driver has them; findings keep their own
    return NodeResult(job.ip, socket.gethostname(), log_dir, len(sources), collector, warnings,
                      time.monotonic() - started, parts)


@dataclass(slots=True)
class LiveBatch:
    """What a followed node sends back in one poll: new events, the streams they come from, and activity."""

    events: list[Event] = field(default_factory=list)
    streams: list[tuple[str, str, str | None]] = field(default_factory=list)  # (name, role, host) of new files
    lines: int = 0
    bytes: int = 0
    progress: str | None = None  # the last training-progress line seen
    dropped: int = 0
    warnings: list[str] = field(default_factory=list)
    files: int = 0  # files followed on the node now


class NodeFollower:
    """A Ray actor body: follows one node's logs (tail -F) and scans each new line with the pipeline; the
    driver polls it for the events."""

    def __init__(self, job: NodeJob, database: dict[str, object], from_start: bool) -> None:
        self.job = job
        self.queue: deque[Event] = deque()
        self.dropped = 0
        self.warnings: list[str] = []
        self.log_dir, roots = _roots(job, self.warnings.append)
        self.ours = _own_files()
        self.follower = Follower(roots, from_start, self.warnings.append)
        self.pipeline = Pipeline(rebuild(database), self.warnings.append, self._event)
        self.batch = LiveBatch()
        self.last_feed: dict[str, float] = {}
        self.quiet: set[str] = set()

    def _event(self, event: Event) -> None:
        if len(self.queue) >= MAX_QUEUE:
            self.dropped += 1
            return
        self.queue.append(event)

    def info(self) -> tuple[str, str | None]:
        return socket.gethostname(), self.log_dir

    def poll(self, wait: float = 1.0, idle: float = 1.0) -> LiveBatch:
        """New events since the last poll; waits up to `wait` seconds for some."""
        deadline = time.monotonic() + wait
        while True:
            self._read(idle)
            if self.queue or self.batch.streams or time.monotonic() >= deadline:
                return self._take()
            time.sleep(0.2)

    def finish(self) -> LiveBatch:
        self._read(0.0)
        self.pipeline.finish_streams()
        return self._take(everything=True)

    def _read(self, idle: float) -> None:
        now = time.monotonic()
        for tail, lineno, text in one_by_one(self.follower.poll()):
            if self.ours(tail.path.name):
                continue
            name = f"{self.job.ip}:{tail.name}"
            if name not in self.pipeline.streams:
                self.batch.streams.append((name, tail.role, self.job.ip))
            sc = self.pipeline.stream(name, tail.rank, self.job.ip, tail.role, self.job.index_base)
            self.last_feed[name] = now
            self.quiet.discard(name)
            self.batch.lines += 1
            self.batch.bytes += len(text) + 1
            sc.feed_raw(lineno, text)
            if _PROGRESS.search(text):
                self.batch.progress = text.strip()[-160:]
        for name, sc in self.pipeline.streams.items():
            if name not in self.quiet and now - self.last_feed.get(name, now) >= idle:
                self.quiet.add(name)  # a file that went quiet: close its open tracebacks, decide waiting hits
                sc.flush()

    def _take(self, everything: bool = False) -> LiveBatch:
        batch, self.batch = self.batch, LiveBatch()
        batch.files = len(self.follower.tails)
        n = len(self.queue) if everything else min(len(self.queue), MAX_BATCH)
        batch.events = [self.queue.popleft() for _ in range(n)]
        batch.dropped, self.dropped = self.dropped, 0
        batch.warnings, self.warnings = self.warnings, []
        return batch

    def close(self) -> None:
        self.follower.close()
