"""`diagnose --follow --ray ADDRESS`: follow every node's logs at once, one merged live stream.

Each alive node gets a follower actor (modes/ray_node.py: `num_cpus=0`, pinned to the node, never restarted)
that tails the node's session logs and `--ray-paths` and runs the scanner on every new line. The driver polls all
of them at once (each poll waits up to a second for news, so an idle cluster costs one round trip per node per
second) and feeds the events they send into one live session, which tells each finding as it happens, exactly as
`--follow` does with local files. Only events travel (a hit with its evidence lines, a fact), never raw logs, and
each node keeps at most a bounded queue of them. Nodes that join later are followed from their first line; a
node that dies is told in the stream and listed in the final report; one that stops answering is listed as
unreachable. Local files named on the command line are followed beside them.
"""

from __future__ import annotations

import contextlib
import json
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..i18n import Msg, localized
from ..match.portable import portable
from ..read.follow import Follower
from ..report.nodes import NodeState
from .live import LiveSession
from .pipeline import Warn
from .ray import INDEX_STRIDE, RayTarget, cluster_nodes, connected, node_failure, pinned
from .ray_node import LiveBatch, NodeFollower, NodeJob

POLL_WAIT = 1.0  # a node's poll returns after this long without news
RESCAN_NODES = 10.0  # seconds between looks for nodes that joined
FINISH_WAIT = 15.0  # at the end, how long the nodes have to send their last events


@dataclass(slots=True)
class _Followed:
    """A Ray node whose logs are being followed."""

    node: NodeState
    actor: Any
    ref: Any  # the poll in flight
    since: float  # when it was sent
    ready: bool = False  # its first poll came back: the node's files are followed from here on


def _apply(session: LiveSession, followed: _Followed, batch: LiveBatch, warn: Warn) -> None:
    """A node's news into the live session, as if its lines had been fed here."""
    now = time.monotonic()
    collector = session.collector
    for name, role, host in batch.streams:
        collector.sources += 1
        collector.roles[name] = (role, host)
    followed.node.files = batch.files
    if batch.lines:
        session.last_line = now
        session.rank_last[followed.node.ip] = now
        collector.lines += batch.lines
        collector.bytes += batch.bytes
    if batch.progress is not None:
        session.last_progress = (now, batch.progress)
    for w in batch.warnings:
        warn(w)
    if batch.dropped:
        warn(Msg("warn_ray_dropped", ip=followed.node.ip, n=batch.dropped))
    for event in batch.events:
        session.pipeline.emit(event)


def _tell(session: LiveSession, node: NodeState, what: Msg) -> None:
    """A node joined, died or stopped answering: a line in the stream (an event in JSONL)."""
    if session.fmt == "jsonl":
        session.out.write(json.dumps({"event": "node", **node.to_json()}, ensure_ascii=False) + "\n")
    elif session.fmt == "text":
        session.out.write(f"! {localized(what, session.lang)}\n")
    else:
        return
    session.out.flush()


class ClusterFollow:
    """The driver's side: a follower per node, polled together."""

    def __init__(self, ray: Any, target: RayTarget, session: LiveSession, from_start: bool, warn: Warn) -> None:
        self.ray = ray
        self.target = target
        self.session = session
        self.warn = warn
        self.database = ray.put(portable(session.db))
        self.actor_class = ray.remote(max_restarts=0, max_task_retries=0)(NodeFollower)
        self.followed: dict[str, _Followed] = {}
        self.nodes: dict[str, NodeState] = {}
        self.count = 0
        self.last_rescan = 0.0
        self.rescan(from_start)

    def rescan(self, from_start: bool) -> None:
        self.last_rescan = time.monotonic()
        alive, dead = cluster_nodes(self.ray)
        for node in dead:
            known = self.nodes.get(node.node_id)
            if known is not None and known.state != "dead":
                self._lost(known, node.reason)
            self.nodes.setdefault(node.node_id, node)
        for node in alive:
            if node.node_id in self.nodes:
                continue
            self.nodes[node.node_id] = node
            self.count += 1
            node.state = "followed"
            job = NodeJob(node.ip, self.count * INDEX_STRIDE, tuple(self.target.paths), node.log_dir)
            actor = self.actor_class.options(**pinned(node.node_id)).remote(job, self.database, from_start)
            self.followed[node.node_id] = _Followed(node, actor, actor.poll.remote(POLL_WAIT), time.monotonic())

    def _lost(self, node: NodeState, reason: str) -> None:
        followed = self.followed.pop(node.node_id, None)
        node.state, node.reason = "dead", reason
        if followed is not None:
            with contextlib.suppress(Exception):
                self.ray.kill(followed.actor)
        _tell(self.session, node, Msg("node_lost", ip=node.ip, reason=reason))

    def step(self) -> None:
        """Take whatever the nodes sent; ask again; notice the nodes that stopped answering."""
        by_ref = {f.ref: f for f in self.followed.values()}
        ready, _ = self.ray.wait(list(by_ref), num_returns=1, timeout=0.25) if by_ref else ([], [])
        if not by_ref:
            time.sleep(0.25)
        now = time.monotonic()
        for ref in ready:
            followed = by_ref[ref]
            try:
                batch = self.ray.get(ref)
            except Exception as exc:  # the node (or its actor) is gone: tell it, follow the others
                state = NodeState(followed.node.node_id, followed.node.ip)
                node_failure(state, exc)
                self._lost(followed.node, state.reason)
                continue
            if followed.node.state == "unreachable":
                followed.node.state, followed.node.reason = "followed", ""
            _apply(self.session, followed, batch, self.warn)
            if not followed.ready:
                followed.ready = True
                _tell(self.session, followed.node, Msg("node_following", ip=followed.node.ip,
                                                       files=batch.files))
            followed.ref, followed.since = followed.actor.poll.remote(POLL_WAIT), now
        for followed in self.followed.values():
            if followed.node.state == "followed" and now - followed.since > self.target.timeout:
                followed.node.state = "unreachable"
                followed.node.reason = str(Msg("node_timeout", seconds=f"{self.target.timeout:g}"))
                _tell(self.session, followed.node, Msg("node_lost", ip=followed.node.ip,
                                                       reason=followed.node.reason))
        if now - self.last_rescan >= RESCAN_NODES:
            self.rescan(from_start=True)  # a node that joined now: all it has is new

    def finish(self) -> list[NodeState]:
        """Each node closes its open tracebacks and sends what it still holds; then the followers go."""
        refs = {}
        for followed in self.followed.values():
            if followed.node.state == "followed":
                refs[followed.actor.finish.remote()] = followed
        ready, _ = self.ray.wait(list(refs), num_returns=len(refs), timeout=FINISH_WAIT) if refs else ([], [])
        for ref in ready:
            with contextlib.suppress(Exception):
                _apply(self.session, refs[ref], self.ray.get(ref), self.warn)
        for followed in self.followed.values():
            with contextlib.suppress(Exception):
                self.ray.kill(followed.actor)
        return sorted(self.nodes.values(), key=lambda n: (n.state == "dead", not n.head, n.ip))


def follow_cluster(target: RayTarget, paths: list[Path], session: LiveSession, from_start: bool, warn: Warn,
                   nodes: list[NodeState]) -> None:
    """Follow until interrupted (KeyboardInterrupt) or told to stop (StopLive); `nodes` gets the nodes' states,
    for the final report."""
    with connected(target.address, target.timeout) as ray:
        cluster = ClusterFollow(ray, target, session, from_start, warn)
        local = Follower(paths, from_start, warn) if paths else None
        try:
            while True:
                cluster.step()
                if local is not None:
                    for tail, first, got in local.poll():  # through the gate, as --follow reads local files
                        session.feed_piece(tail.name, first, got, tail.rank, tail.host, tail.role)
                session.tick()
        finally:
            if local is not None:
                local.close()
            nodes[:] = cluster.finish()
