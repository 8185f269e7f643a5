"""A real multi-node Ray cluster on this machine, for the `--ray` tests (and by hand:
`python -m tests.raycluster` starts one and prints its address until Ctrl-C).

Each node has its own temp dir (so its own session logs folder, as on a real cluster) and one CPU; the workers
listen on 127.0.0.2, 127.0.0.3, ... so that each node has an address of its own. What it takes (ray 2.60):
`<RAY_TMPDIR>/ray/` must exist before Cluster() writes its address file there; temp dirs stay short, because
Ray's AF_UNIX socket paths under `<temp_dir>/session_<41 chars>/sockets/` may not pass 107 bytes (pytest's
tmp_path is too long); RAY_TMPDIR is private, so `--ray auto` finds this cluster and never the machine's own;
token authentication is off (RAY_AUTH_MODE=disabled) whatever ~/.ray/auth_token this machine has.
"""

from __future__ import annotations

import os
import shutil
import signal
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from typing import Any


@dataclass
class RayCluster:
    cluster: Any
    base: str
    env: dict[str, str]
    nodes: dict[str, Any] = field(default_factory=dict)  # label -> ray node object

    @property
    def address(self) -> str:
        return str(self.cluster.address)

    def logs_dir(self, label: str) -> str:
        return str(self.nodes[label].get_logs_dir_path())

    def ip(self, label: str) -> str:
        return str(self.nodes[label].node_ip_address)

    def add(self, label: str, ip: str) -> Any:
        node = self.cluster.add_node(num_cpus=1, temp_dir=os.path.join(self.base, label), node_ip_address=ip)
        self.cluster.wait_for_nodes()
        self.nodes[label] = node
        return node

    def kill(self, label: str) -> None:
        """SIGKILL every process of the node (its raylet and workers), as a lost machine."""
        self.cluster.remove_node(self.nodes.pop(label), allow_graceful=False)

    def raylet_pid(self, label: str) -> int:
        return int(self.nodes[label].all_processes["raylet"][0].process.pid)

    def freeze(self, label: str) -> None:
        os.kill(self.raylet_pid(label), signal.SIGSTOP)

    def thaw(self, label: str) -> None:
        os.kill(self.raylet_pid(label), signal.SIGCONT)


@contextmanager
def ray_cluster(workers: int = 2) -> Iterator[RayCluster]:
    base = tempfile.mkdtemp(prefix="rd", dir="/tmp")
    saved = {k: os.environ.get(k) for k in ("RAY_TMPDIR", "RAY_ADDRESS", "RAY_AUTH_MODE")}
    os.environ["RAY_TMPDIR"] = os.path.join(base, "t")
    os.environ.pop("RAY_ADDRESS", None)
    # Ray 2.60 reads ~/.ray/auth_token (any plain ray.init() on the machine writes one) and then talks with token
    # authentication, which a cluster started without it rejects: object transfers between nodes fail
    # ("InvalidAuthToken" in raylet.out, OwnerDiedError at the task). This cluster and its clients run without.
    os.environ["RAY_AUTH_MODE"] = "disabled"
    os.makedirs(os.path.join(base, "t", "ray"), exist_ok=True)
    from ray.cluster_utils import Cluster

    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "temp_dir": os.path.join(base, "head")})
    tc = RayCluster(cluster, base, {**os.environ, "NO_COLOR": "1", "LANG": "C.UTF-8"})
    tc.nodes["head"] = cluster.head_node
    try:
        for i in range(workers):
            tc.add(f"worker{i}", f"127.0.0.{i + 2}")
        yield tc
    finally:
        cluster.shutdown()
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value
        shutil.rmtree(base, ignore_errors=True)


def _stop(_signum: int, _frame: object) -> None:
    raise KeyboardInterrupt


if __name__ == "__main__":
    signal.signal(signal.SIGTERM, _stop)  # `kill PID` shuts the cluster down too
    with ray_cluster() as tc:
        print(f"RAY_TMPDIR={tc.env['RAY_TMPDIR']} address {tc.address}", flush=True)
        for label in tc.nodes:
            print(f"  {label}: {tc.ip(label)} {tc.logs_dir(label)}", flush=True)
        try:
            while True:
                time.sleep(1)
        except KeyboardInterrupt:
            pass
