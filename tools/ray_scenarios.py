"""Make real Ray failures on this machine and keep every node's logs: the source of sample_logs/ray-cluster/.

    python tools/ray_scenarios.py OUT_DIR [SCENARIO ...]      (needs `pip install 'diagnoser[ray]'`)

Each scenario starts a head and worker nodes on this machine (ray.cluster_utils.Cluster, each node with its own
temp_dir, one CPU each), runs a driver script against it as a separate process (its stdout and stderr are
`driver.log`), optionally does something to the cluster while the driver runs (kills a node, an actor), shuts the
cluster down and copies each node's session `logs/` folder to OUT_DIR/<scenario>/<node>/logs. Then
`python tools/ray_samples.py OUT_DIR` trims the copies into sample job folders.

What it takes to run several nodes on one machine (each cost a failed run; ray 2.60):
- `<RAY_TMPDIR>/ray/` must exist: Cluster() writes `ray_current_cluster` there and does not create the folder.
- temp dirs stay short: Ray puts AF_UNIX sockets under `<temp_dir>/session_<41 chars>/sockets/`, and a path over
  107 bytes fails ("AF_UNIX path length cannot exceed 107 bytes").
- `include_log_monitor=True` on worker nodes: Cluster.add_node() leaves it off ("one log monitor per physical
  node") and the head's monitor reads only the head's folder, so the workers' prints would never reach the driver.
- workers on 127.0.0.2, 127.0.0.3, ... so that `(Actor pid=N, ip=X)` prefixes tell the nodes apart; the head stays
  on the machine's address (ray.init rewrites 127.0.0.1 to it and then cannot reach a head bound to 127.0.0.1).
"""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from typing import Any

MAX_FILE = 256 * 1024  # bigger files keep their first and last 64 KiB
SKIP_DIRS = {"export_events"}

PRELUDE = r'''
import os, time, ray
from ray.util.scheduling_strategies import NodeAffinitySchedulingStrategy
NODES = dict(kv.split("=") for kv in os.environ["NODE_IDS"].split(","))
def on(label):
    return NodeAffinitySchedulingStrategy(NODES[label], soft=False)
ray.init()
'''

HEALTHY = PRELUDE + r'''
@ray.remote(num_cpus=1)
class Trainer:
    def __init__(self, rank):
        self.rank = rank
        print(f"[rank{rank}] init on node {ray.get_runtime_context().get_node_id()[:8]} pid {os.getpid()}")
    def step(self, i):
        print(f"[rank{self.rank}] step:{i} loss={1.0/(i+1):.4f}")
        return i
trainers = [Trainer.options(scheduling_strategy=on("head")).remote(0),
            Trainer.options(scheduling_strategy=on("worker0")).remote(1)]
for i in range(3):
    ray.get([t.step.remote(i) for t in trainers])
print("training finished")
time.sleep(1)
ray.shutdown()
'''

ACTOR_EXCEPTION = PRELUDE + r'''
@ray.remote(num_cpus=1, max_restarts=0)
class Trainer:
    def __init__(self, rank):
        self.rank = rank
        print(f"[rank{rank}] init pid {os.getpid()}")
    def step(self, i):
        print(f"[rank{self.rank}] step:{i}")
        if self.rank == 1 and i == 2:
            raise RuntimeError(f"rank{self.rank}: loss is NaN at step {i} (planted failure)")
        return i
trainers = [Trainer.options(scheduling_strategy=on("head")).remote(0),
            Trainer.options(scheduling_strategy=on("worker0")).remote(1)]
for i in range(4):
    ray.get([t.step.remote(i) for t in trainers])
    time.sleep(0.5)
print("unreachable: training finished")
'''

ACTOR_INIT_EXCEPTION = PRELUDE + r'''
@ray.remote(num_cpus=1, max_restarts=0)
class RolloutWorker:
    def __init__(self, rank):
        print(f"[rank{rank}] loading model")
        if rank == 1:
            raise ValueError("rank1: model path /models/does-not-exist not found (planted failure)")
    def generate(self):
        return "ok"
workers = [RolloutWorker.options(scheduling_strategy=on("head")).remote(0),
           RolloutWorker.options(scheduling_strategy=on("worker1")).remote(1)]
time.sleep(3)
print(ray.get([w.generate.remote() for w in workers]))
'''

NODE_DIED = PRELUDE + r'''
@ray.remote(num_cpus=1, max_restarts=0)
class Trainer:
    def __init__(self, rank):
        self.rank = rank
        print(f"[rank{rank}] init pid {os.getpid()} node {ray.get_runtime_context().get_node_id()[:8]}")
    def step(self, i):
        print(f"[rank{self.rank}] step:{i}")
        time.sleep(1)
        return i
trainers = [Trainer.options(scheduling_strategy=on("head")).remote(0),
            Trainer.options(scheduling_strategy=on("worker0")).remote(1),
            Trainer.options(scheduling_strategy=on("worker1")).remote(2)]
for i in range(60):
    ray.get([t.step.remote(i) for t in trainers])
'''

OOM = PRELUDE + r'''
@ray.remote(num_cpus=1, max_retries=0)
def rollout(rank):
    blocks = []
    for i in range(40):
        blocks.append(bytearray(256 * 2**20))
        print(f"[rank{rank}] allocated {(i + 1) * 256} MiB", flush=True)
        time.sleep(0.3)
    return len(blocks)
print(ray.get(rollout.options(scheduling_strategy=on("worker0")).remote(1)))
'''


def _kill_worker1_at_step3(out_dir: str) -> Callable[[Any, dict[str, Any], subprocess.Popen[bytes]], None]:
    """SIGKILL every process of worker1 (its raylet and workers) once rank 2 printed step 3."""
    def during(cluster: Any, nodes: dict[str, Any], _proc: subprocess.Popen[bytes]) -> None:
        driver_log = os.path.join(out_dir, "driver.log")
        for _ in range(600):
            if os.path.exists(driver_log):
                with open(driver_log, "rb") as fh:
                    if b"[rank2] step:3" in fh.read():
                        break
            time.sleep(0.1)
        cluster.remove_node(nodes["worker1"], allow_graceful=False)
    return during


def _memory_threshold(margin_gb: float = 2.5) -> str:
    """RAY_memory_usage_threshold just above what the machine uses now: the memory monitor kills the task after a
    few GB, not after exhausting the machine."""
    info = {}
    with open("/proc/meminfo") as fh:
        for line in fh:
            info[line.split(":")[0]] = int(line.split()[1]) * 1024
    used = info["MemTotal"] - info["MemAvailable"]
    return str(round(min(0.9, (used + margin_gb * 2**30) / info["MemTotal"]), 3))


def _trim_copy(src: str, dst: str) -> None:
    for root, dirs, files in os.walk(src):
        dirs[:] = [d for d in dirs if d not in SKIP_DIRS]
        rel = os.path.relpath(root, src)
        os.makedirs(os.path.join(dst, rel), exist_ok=True)
        for name in files:
            path = os.path.join(root, name)
            if os.path.islink(path) or not os.path.isfile(path):
                continue
            with open(path, "rb") as fh:
                data = fh.read()
            if b"\0" in data[:4096]:
                continue
            if len(data) > MAX_FILE:
                data = data[:65536] + b"\n[... trimmed ...]\n" + data[-65536:]
            with open(os.path.join(dst, rel, name), "wb") as fh:
                fh.write(data)


def run(name: str, driver: str, out_root: str, workers: int = 2, during: Any = None,
        env: dict[str, str] | None = None) -> int:
    import ray
    from ray.cluster_utils import Cluster

    base = tempfile.mkdtemp(prefix="rs", dir="/tmp")  # short: AF_UNIX paths
    os.makedirs(ray._common.utils.get_default_ray_temp_dir(), exist_ok=True)
    cluster = Cluster(initialize_head=True, head_node_args={"num_cpus": 1, "temp_dir": f"{base}/head"})
    try:
        return _run_on(cluster, base, name, driver, out_root, workers, during, env)
    finally:
        cluster.shutdown()
        shutil.rmtree(base, ignore_errors=True)


def _run_on(cluster: Any, base: str, name: str, driver: str, out_root: str, workers: int, during: Any,
            env: dict[str, str] | None) -> int:
    import ray

    nodes = {"head": cluster.head_node}
    for i in range(workers):
        nodes[f"worker{i}"] = cluster.add_node(num_cpus=1, temp_dir=f"{base}/worker{i}", include_log_monitor=True,
                                               node_ip_address=f"127.0.0.{i + 2}")
    cluster.wait_for_nodes()
    out_dir = os.path.join(out_root, name)
    shutil.rmtree(out_dir, ignore_errors=True)
    os.makedirs(out_dir)
    driver_path = os.path.join(base, "driver.py")
    with open(driver_path, "w") as fh:
        fh.write(driver)
    proc_env = dict(os.environ, RAY_ADDRESS=cluster.address, PYTHONUNBUFFERED="1", **(env or {}))
    proc_env["NODE_IDS"] = ",".join(f"{k}={n.node_id}" for k, n in nodes.items())
    with open(os.path.join(out_dir, "driver.log"), "wb") as log:
        proc = subprocess.Popen([sys.executable, driver_path], stdout=log, stderr=subprocess.STDOUT, env=proc_env,
                                cwd=base)
        if during is not None:
            during(cluster, nodes, proc)
        try:
            rc = proc.wait(timeout=300)
        except subprocess.TimeoutExpired:
            proc.send_signal(signal.SIGKILL)
            rc = proc.wait()
    time.sleep(2)  # let the log monitors and raylets flush
    cluster.shutdown()  # the raylets write their last lines; the copy below comes after
    for label in nodes:
        session = os.path.join(base, label, "session_latest")
        if os.path.isdir(session):
            _trim_copy(os.path.join(session, "logs"), os.path.join(out_dir, label, "logs"))
    with open(os.path.join(out_dir, "SCENARIO.txt"), "w") as fh:
        # the machine's own paths, for tools/ray_samples.py to rewrite
        fh.write(f"scenario: {name}\nray: {ray.__version__}\ndriver exit code: {rc}\ntemp: {base}\n"
                 f"ray_tmpdir: {os.environ.get('RAY_TMPDIR', '')}\nprefix: {sys.prefix}\n"
                 f"base_prefix: {sys.base_prefix}\nnodes:\n"
                 + "".join(f"  {k}: ip={n.node_ip_address} logs={k}/logs\n" for k, n in nodes.items()))
    print(f"[{name}] driver exit code {rc}", flush=True)
    return rc


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 2
    out_root = os.path.abspath(argv[0])
    # a private RAY_TMPDIR: never touch (or read the address file of) the machine's own /tmp/ray
    os.environ.setdefault("RAY_TMPDIR", tempfile.mkdtemp(prefix="rt", dir="/tmp"))
    scenarios = {
        "healthy": lambda: run("healthy", HEALTHY, out_root),
        "actor_exception": lambda: run("actor_exception", ACTOR_EXCEPTION, out_root),
        "actor_init_exception": lambda: run("actor_init_exception", ACTOR_INIT_EXCEPTION, out_root),
        "node_died": lambda: run("node_died", NODE_DIED, out_root,
                                 during=_kill_worker1_at_step3(os.path.join(out_root, "node_died"))),
        "oom_memory_monitor": lambda: _oom(out_root),
    }
    for name in argv[1:] or list(scenarios):
        scenarios[name]()
    return 0


def _oom(out_root: str) -> int:
    threshold = _memory_threshold()
    os.environ["RAY_memory_usage_threshold"] = threshold  # noqa: SIM112 - Ray's name; each raylet reads it
    return run("oom_memory_monitor", OOM, out_root, env={"RAY_memory_usage_threshold": threshold})


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
