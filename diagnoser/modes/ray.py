"""`diagnose --ray ADDRESS`: diagnose a live Ray cluster from any machine that can join it.

One scan task per alive node (`num_cpus=0`, so it never waits for the job's resources; pinned to the node with
NodeAffinitySchedulingStrategy(soft=False); no retries, since a retry could only land on the same node) runs
modes/ray_node.py there: the same pipeline as a local diagnosis, over the node's Ray session logs plus
`--ray-paths`. Each returns its collector; they are merged, with any local files named on the command line, into
one report, as if every file had been local. A node that Ray reports dead, that dies during the scan, or that does
not answer in time is listed with how to fetch its logs; none of them stops the command or hangs it.

The package ships itself to the nodes (runtime_env py_modules), so a node needs only Python and the few
libraries diagnoser imports. The driver's database (built-in and --signatures alike) travels with the call in
its compiled form (match/portable.py), prepared while the driver joins the cluster, so no node compiles it again.
"""

from __future__ import annotations

import contextlib
import logging
import os
import sys
import threading
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

from ..errors import InputError, UsageError
from ..i18n import Msg
from ..judge.collector import Collector
from ..lazyre import lazy_re
from ..match.database import Database
from ..match.portable import portable
from ..read.sources import Source
from ..report.model import Report
from ..report.nodes import NodeState
from .batch import scan_sources
from .bundle_parts import Parts
from .pipeline import Pipeline, Warn, _ignore
from .ray_node import NodeJob, NodeResult, scan_node

RAY_TIMEOUT = 120.0  # seconds a node has to answer
CONNECT_TIMEOUT = 60.0  # ray.init retries an unreachable GCS for ever: give up after this
INDEX_STRIDE = 1 << 32  # node k numbers its sources from (k + 1) * INDEX_STRIDE; local files from 0
DEAD_NODES_SHOWN = 50


Scanned = tuple[list[Collector], list[NodeState], list[Parts]]


@dataclass(frozen=True, slots=True)
class RayTarget:
    """--ray ADDRESS, --ray-paths, --ray-timeout."""

    address: str
    paths: tuple[str, ...] = ()
    timeout: float = RAY_TIMEOUT


def import_ray() -> Any:
    try:
        import ray
    except ImportError:
        raise UsageError(Msg("err_ray_missing")) from None
    return ray


_ANSI = lazy_re(r"\x1b\[[0-9;]*m")


def _one_line(exc: BaseException) -> str:
    text = " ".join(_ANSI.sub("", str(exc)).split())
    return text if len(text) <= 300 else text[:300] + "…"


@contextmanager
def connected(address: str, connect_timeout: float = CONNECT_TIMEOUT) -> Iterator[Any]:
    """Join the cluster at `address` as a driver (never start one: `ray.init()` with no address would), with
    this package shipped to the nodes; leave it on the way out."""
    if not address.strip():
        raise UsageError(Msg("err_ray_address"))
    ray = import_ray()
    import diagnoser

    result: dict[str, BaseException | None] = {}

    def join() -> None:
        try:
            ray.init(address=address, runtime_env={"py_modules": [diagnoser]}, logging_level=logging.ERROR,
                     log_to_driver=False, namespace="diagnoser")
            result["error"] = None
        except BaseException as exc:  # handed to the caller's thread
            result["error"] = exc

    thread = threading.Thread(target=join, name="ray-connect", daemon=True)
    thread.start()
    thread.join(connect_timeout)
    if "error" not in result:
        raise InputError(Msg("err_ray_connect", address=address,
                             reason=Msg("node_timeout", seconds=int(connect_timeout))))
    error = result["error"]
    if error is not None:
        if isinstance(error, ValueError) and "ray[client]" in str(error):
            raise UsageError(Msg("err_ray_client")) from None
        if isinstance(error, KeyboardInterrupt):
            raise error
        raise InputError(Msg("err_ray_connect", address=address, reason=_one_line(error))) from None
    # Ray prints the cluster's messages ("(raylet) The node ... has been marked dead") on the driver's sys.stdout:
    # they go to stderr, stdout stays the report's (a JSON report must parse)
    stdout, sys.stdout = sys.stdout, sys.stderr
    try:
        yield ray
    finally:
        ray.shutdown()
        sys.stdout = stdout


def _log_dir(node: dict[str, Any]) -> str | None:
    """The node's session logs folder, from the raylet socket ray.nodes() reports (`<session>/sockets/raylet`)."""
    sock = node.get("RayletSocketName") or ""
    if not sock.startswith("/"):
        return None
    return os.path.join(os.path.dirname(os.path.dirname(sock)), "logs")


def _state(node: dict[str, Any]) -> NodeState:
    return NodeState(node_id=str(node.get("NodeID", "")), ip=str(node.get("NodeManagerAddress", "?")),
                     hostname=str(node.get("NodeManagerHostname", "")),
                     head="node:__internal_head__" in (node.get("Resources") or {}), log_dir=_log_dir(node))


def cluster_nodes(ray: Any) -> tuple[list[NodeState], list[NodeState]]:
    """(alive, dead) nodes; the head first, then by address."""
    alive: list[NodeState] = []
    dead: list[NodeState] = []
    for node in ray.nodes():
        state = _state(node)
        if node.get("Alive"):
            alive.append(state)
        else:
            state.state = "dead"
            state.reason = str(node.get("DeathReasonMessage") or "")
            dead.append(state)
    order = lambda n: (not n.head, n.ip, n.node_id)  # noqa: E731
    return sorted(alive, key=order), sorted(dead, key=order)[:DEAD_NODES_SHOWN]


def pinned(node_id: str) -> dict[str, Any]:
    """Options that put a task or actor on one node and nowhere else, without taking any of its CPUs."""
    from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy

    return {"num_cpus": 0, "scheduling_strategy": NodeAffinitySchedulingStrategy(node_id, soft=False)}


def node_failure(node: NodeState, exc: BaseException) -> None:
    """What a node's task raising `exc` says about the node."""
    name = type(exc).__name__
    if name in ("NodeDiedError", "TaskUnschedulableError", "ActorDiedError", "ActorUnavailableError"):
        node.state, node.reason = "dead", str(Msg("node_died_during", reason=_one_line(exc)))
    else:
        node.state, node.reason = "failed", f"{name}: {_one_line(exc)}"
        if "OwnerDiedError" in node.reason:
            node.reason += " — " + str(Msg("node_auth_hint"))


def scan_cluster(ray: Any, db: Database, ray_paths: list[str], timeout: float, fast: bool = True,
                 warn: Warn = _ignore, with_parts: bool = False, compiled: dict[str, object] | None = None) -> Scanned:
    """Scan every alive node at once; the collectors of those that answered in time, every node's state, and
    (with_parts) their bundle pieces."""
    alive, dead = cluster_nodes(ray)
    database = ray.put(portable(db) if compiled is None else compiled)
    task = ray.remote(max_retries=0)(scan_node)
    refs: dict[Any, NodeState] = {}
    for k, node in enumerate(alive):
        job = NodeJob(node.ip, (k + 1) * INDEX_STRIDE, tuple(ray_paths), node.log_dir, fast, with_parts)
        refs[task.options(**pinned(node.node_id)).remote(job, database)] = node
    ready, late = ray.wait(list(refs), num_returns=len(refs), timeout=timeout) if refs else ([], [])
    answered: dict[int, Collector] = {}
    parts: list[Parts] = []
    position = {ref: k for k, ref in enumerate(refs)}
    for ref in ready:
        node = refs[ref]
        try:
            result: NodeResult = ray.get(ref)
        except Exception as exc:  # whatever a node did, the others are still reported
            node_failure(node, exc)
            continue
        node.files, node.seconds, node.log_dir = result.files, result.seconds, result.log_dir or node.log_dir
        node.hostname = node.hostname or result.hostname
        result.collector.signatures = db.by_id()
        answered[position[ref]] = result.collector
        if result.parts is not None:
            parts.append(result.parts)
        for w in result.warnings:
            warn(w)
    for ref in late:
        node = refs[ref]
        node.state, node.reason = "unreachable", str(Msg("node_timeout", seconds=f"{timeout:g}"))
        with contextlib.suppress(Exception):  # best effort: the node may be gone
            ray.cancel(ref, force=True)
    collectors = [answered[k] for k in sorted(answered)]  # node order: the report does not depend on who was first
    return collectors, alive + dead, parts


def cluster_report(db: Database, target: RayTarget, local: list[Source], lang: str = "en", warn: Warn = _ignore,
                   job_status: str | None = None, jobs: int = 1, fast: bool = True,
                   with_parts: bool = False) -> tuple[Report, list[Parts]]:
    """The report of a whole cluster: every node's logs, plus the local files named on the command line; with
    `with_parts`, each node's pieces for a bundle (modes/bundle_parts.py)."""
    pipeline = Pipeline(db, warn)
    with ThreadPoolExecutor(1) as pool:
        compiled = pool.submit(portable, db)  # while the driver joins the cluster
        with connected(target.address, target.timeout) as ray:
            collectors, nodes, parts = scan_cluster(ray, db, list(target.paths), target.timeout, fast, warn,
                                                    with_parts, compiled.result())
    scan_sources(pipeline, local, jobs, fast)
    for collector in collectors:
        pipeline.add(collector)
    report = pipeline.report(lang, job_status)
    report.nodes = nodes
    return report, parts


def diagnose_cluster(db: Database, target: RayTarget, local: list[Source], lang: str = "en", warn: Warn = _ignore,
                     job_status: str | None = None, jobs: int = 1, fast: bool = True) -> Report:
    return cluster_report(db, target, local, lang, warn, job_status, jobs, fast)[0]
