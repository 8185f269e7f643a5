"""`diagnose --ray` on a real multi-node Ray cluster started on this machine (tests/raycluster.py): failures put in
different nodes' logs come back as one merged report with each on its own node; a killed node and a frozen one are
listed, never a crash or a hang; --follow --ray tells a finding written on a worker node while it runs.

One cluster (head + 2 workers, one CPU each) serves the whole module; the tests that break a node add a node of
their own. The command runs as a subprocess from a folder outside the checkout, as a user runs it. Skipped only
when Ray is not installed (`pip install -e '.[test,ray]'`, which CI does).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tarfile
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("ray", reason="Ray is not installed: pip install -e '.[test,ray]'")

from .raycluster import RayCluster, ray_cluster  # only with Ray

pytestmark = pytest.mark.slow

# Real text (the examples of signatures/cuda/cuda-oom.yaml and nccl/nccl-watchdog-timeout.yaml, which cite where
# each was printed): a rank's CUDA out-of-memory traceback on worker0, the others' watchdog timeouts on worker1.
OOM = """[rank5]: Traceback (most recent call last):
[rank5]:   File "/workspace/train.py", line 67, in <module>
[rank5]:     trainer.train()
[rank5]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 5 has a total capacity of 23.43 GiB of which 210.06 MiB is free. Including non-PyTorch memory, this process has 0 bytes memory in use. Of the allocated memory 20.12 GiB is allocated by PyTorch, and 1.21 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)
"""
WATCHDOG = """[rank0]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=131072000, NumelOut=131072000, Timeout(ms)=600000) ran for 600081 milliseconds before timing out.
[rank1]:[E1218 20:27:21.433063423 ProcessGroupNCCL.cpp:629] [Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=131072000, NumelOut=131072000, Timeout(ms)=600000) ran for 600088 milliseconds before timing out.
"""
WORKER_FILE = "worker-" + "ab" * 28 + "-ffffffff-{pid}.err"  # a worker started before its job had an id


@pytest.fixture(scope="module")
def cluster() -> Iterator[RayCluster]:
    with ray_cluster(workers=2) as tc:
        yield tc


@pytest.fixture(scope="module")
def planted(cluster: RayCluster) -> RayCluster:
    Path(cluster.logs_dir("worker0"), WORKER_FILE.format(pid=4242)).write_text(OOM, encoding="utf-8")
    Path(cluster.logs_dir("worker1"), WORKER_FILE.format(pid=4343)).write_text(WATCHDOG, encoding="utf-8")
    return cluster


def diagnose(cluster: RayCluster, *args: str, cwd: Path, timeout: float = 240) -> tuple[int, str, str]:
    proc = subprocess.run([sys.executable, "-m", "diagnoser", *args], capture_output=True, text=True,
                          env=cluster.env, cwd=cwd, timeout=timeout, check=False)
    return proc.returncode, proc.stdout, proc.stderr


def report_of(out: str, err: str) -> dict[str, Any]:
    assert out.strip(), err
    report: dict[str, Any] = json.loads(out)
    return report


def test_one_merged_report_from_every_node(planted: RayCluster, tmp_path: Path) -> None:
    code, out, err = diagnose(planted, "--ray", "auto", "--format", "json", "--lang", "en", cwd=tmp_path)
    assert code == 1, err
    report = report_of(out, err)
    root = report["root_cause"]
    assert root["id"] == "cuda-oom"
    assert root["first"]["host"] == planted.ip("worker0") and root["first"]["rank"] == 5
    assert root["first"]["source"].startswith(planted.ip("worker0") + ":" + planted.logs_dir("worker0"))
    watchdog = next(f for f in report["findings"] if f["id"] == "nccl-watchdog-timeout")
    assert watchdog["hosts"] == [planted.ip("worker1")] and watchdog["ranks"] == [0, 1]
    nodes = {n["ip"]: n for n in report["nodes"]}
    assert set(nodes) == {planted.ip(label) for label in ("head", "worker0", "worker1")}
    assert all(n["state"] == "scanned" and n["files"] > 0 for n in nodes.values()), nodes
    assert nodes[planted.ip("head")]["head"] and nodes[planted.ip("worker0")]["log_dir"] == planted.logs_dir("worker0")


def test_local_files_and_node_paths_join_the_report(planted: RayCluster, tmp_path: Path) -> None:
    driver = tmp_path / "driver.log"
    driver.write_text("ray.exceptions.ActorUnavailableError: The actor 32dbf807f07bf1553bdc84d101000000 is "
                      "unavailable: The actor is temporarily unavailable: RpcError: RPC error: Socket closed "
                      "rpc_code: 14. The task may or may not have been executed on the actor.\n", encoding="utf-8")
    extra = tmp_path / "job-logs"
    extra.mkdir()
    (extra / "rank7.log").write_text(OOM.replace("[rank5]", "[rank7]"), encoding="utf-8")
    code, out, err = diagnose(planted, "--ray", planted.address, str(driver), "--ray-paths", str(extra),
                              "--ray-paths", "/no/such/folder", "--format", "json", cwd=tmp_path)
    assert code == 1, err
    report = report_of(out, err)
    ids = [f["id"] for f in report["findings"]]
    assert "ray-actor-unavailable" in ids  # the local driver log
    oom = next(f for f in report["findings"] if f["id"] == "cuda-oom")
    assert 7 in oom["ranks"]  # the --ray-paths folder, read on every node (one machine here)
    assert {s.split(":", 1)[0] for s in oom["sources"] if s.endswith("rank7.log")} == \
        {planted.ip(label) for label in ("head", "worker0", "worker1")}
    assert "/no/such/folder: no such file or folder on that node" in err


def test_a_killed_node_and_a_frozen_one_are_listed_and_the_rest_is_reported(planted: RayCluster,
                                                                           tmp_path: Path) -> None:
    # one run for both (each run costs a Ray driver and a worker per node): a node whose processes were all killed
    # (Ray reports it dead), and one whose raylet is stopped (SIGSTOP: Ray says it is alive until its health
    # checks fail, so its task is sent and never answers)
    planted.add("doomed", "127.0.0.9")
    planted.kill("doomed")
    planted.add("frozen", "127.0.0.8")
    planted.freeze("frozen")
    try:
        started = time.monotonic()
        code, out, err = diagnose(planted, "--ray", "auto", "--ray-timeout", "30", "--format", "json", cwd=tmp_path,
                                  timeout=240)
        elapsed = time.monotonic() - started
    finally:
        planted.thaw("frozen")
        planted.kill("frozen")
    report = report_of(out, err)
    states = [(n["ip"], n["state"], n["reason"][:300]) for n in report["nodes"]]
    assert code == 1 and report["root_cause"]["id"] == "cuda-oom", states  # the other nodes' report
    assert report["root_cause"]["first"]["host"] == planted.ip("worker0")
    doomed = [n for n in report["nodes"] if n["ip"] == "127.0.0.9"]
    assert len(doomed) == 1 and doomed[0]["state"] == "dead", states
    assert doomed[0]["log_dir"] and doomed[0]["log_dir"].endswith("/logs")  # where its logs are, to fetch them
    frozen = next(n for n in report["nodes"] if n["ip"] == "127.0.0.8")
    assert frozen["state"] in ("unreachable", "dead"), frozen  # which one: when the GCS gave up on it
    assert frozen["log_dir"] and frozen["log_dir"].endswith("/logs")
    alive = {n["ip"]: n["state"] for n in report["nodes"] if n["ip"] not in ("127.0.0.8", "127.0.0.9")}
    assert set(alive.values()) == {"scanned"}, states
    assert elapsed < 200


def test_a_node_stuck_on_a_path_is_unreachable_after_the_timeout(planted: RayCluster, tmp_path: Path) -> None:
    # a --ray-paths entry that never answers (a hung network mount; here a FIFO nobody writes) on every node
    stuck = tmp_path / "stuck.log"
    os.mkfifo(stuck)
    local = tmp_path / "driver.log"
    local.write_text(OOM, encoding="utf-8")
    started = time.monotonic()
    code, out, err = diagnose(planted, "--ray", "auto", str(local), "--ray-paths", str(stuck), "--ray-timeout", "10",
                              "--format", "json", cwd=tmp_path, timeout=240)
    elapsed = time.monotonic() - started
    report = report_of(out, err)
    assert code == 1 and report["root_cause"]["id"] == "cuda-oom"  # the local file is still diagnosed
    planted_nodes = [n for n in report["nodes"] if n["ip"] in {planted.ip(x) for x in ("head", "worker0", "worker1")}]
    assert [n["state"] for n in planted_nodes] == ["unreachable"] * 3, report["nodes"]
    assert all(n["reason"] == "did not answer within 10 s" for n in planted_nodes)
    assert elapsed < 200


def test_follow_tells_a_finding_written_on_a_worker_node(planted: RayCluster, tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-m", "diagnoser", "--follow", "--ray", "auto", "--format", "jsonl"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=planted.env, cwd=tmp_path)
    watchdog = threading.Timer(240, proc.kill)  # a hang fails the test instead of stalling the suite
    watchdog.start()
    try:
        assert proc.stdout is not None
        following: set[str] = set()
        while len(following) < 3:  # every node says when its follower is up (its files' ends are known)
            line = proc.stdout.readline()
            assert line, proc.stderr.read() if proc.stderr else ""
            event = json.loads(line)
            if event["event"] == "node" and event["state"] == "followed":
                following.add(event["ip"])
        target = Path(planted.logs_dir("worker1"), WORKER_FILE.format(pid=5151))
        target.write_text(OOM.replace("[rank5]", "[rank3]"), encoding="utf-8")
        finding = None
        while finding is None:
            line = proc.stdout.readline()
            if not line:
                break
            event = json.loads(line)
            if event["event"] == "finding" and event["finding"]["id"] == "cuda-oom":
                finding = event["finding"]
        assert finding is not None, proc.stderr.read() if proc.poll() is not None else "no finding"
        assert finding["first"]["host"] == planted.ip("worker1") and finding["first"]["rank"] == 3
        proc.send_signal(signal.SIGINT)
        rest, err = proc.communicate(timeout=60)
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    summary = json.loads(rest.strip().splitlines()[-1])
    assert summary["event"] == "summary", rest
    report = summary["report"]
    assert report["root_cause"]["id"] == "cuda-oom"
    states = {n["ip"]: n["state"] for n in report["nodes"]}
    assert states[planted.ip("worker1")] == "followed", states
    assert proc.returncode == 130, err


def test_unknown_address_is_one_line_and_exit_2(planted: RayCluster, tmp_path: Path) -> None:
    code, out, err = diagnose(planted, "--ray", "127.0.0.1:1", "--ray-timeout", "3", "--lang", "en", cwd=tmp_path,
                              timeout=120)
    assert code == 2 and out == ""
    assert "cannot connect to the Ray cluster at 127.0.0.1:1" in err and "Traceback" not in err


def test_ray_paths_without_ray_is_a_usage_error(tmp_path: Path) -> None:
    proc = subprocess.run([sys.executable, "-m", "diagnoser", "--ray-paths", "/x", str(tmp_path)],
                          capture_output=True, text=True, env={**os.environ, "LANG": "C.UTF-8"}, check=False)
    assert proc.returncode == 2 and "--ray-paths and --ray-timeout go with --ray" in proc.stderr


def test_bundle_from_every_node_has_no_planted_secret(planted: RayCluster, tmp_path: Path) -> None:
    from .test_bundle import SECRETS

    secret_lines = [f"HF_TOKEN={SECRETS['hf']}", f"'AWS_SECRET_ACCESS_KEY': '{SECRETS['aws_secret']}'",
                    f"{{'Authorization': 'Bearer {SECRETS['bearer']}'}}"]
    Path(planted.logs_dir("worker1"), WORKER_FILE.format(pid=6161)).write_text(
        "\n".join(secret_lines) + "\n" + OOM.replace("[rank5]", "[rank6]"), encoding="utf-8")
    (tmp_path / "py-spy-rank6.txt").write_text(
        "Process 6161: python train.py\nPython v3.11.7 (/usr/bin/python3.11)\n\nThread 6161 (active): \"MainThread\"\n"
        f"    login (wandb/sdk/wandb_login.py:89)\n        key: \"{SECRETS['wandb_hex']}\"\n", encoding="utf-8")
    code, out, err = diagnose(planted, "bundle", "--ray", "auto", "--ray-paths", str(tmp_path), "-o", "b.tar.gz",
                              cwd=tmp_path)
    assert code == 1, err
    with tarfile.open(tmp_path / "b.tar.gz") as tar:
        files = {m.name: tar.extractfile(m).read() for m in tar.getmembers() if m.isreg()}  # type: ignore[union-attr]
    everything = b"".join(files.values())
    for value in (SECRETS["hf"], SECRETS["aws_secret"], SECRETS["bearer"], SECRETS["wandb_hex"]):
        assert value.encode() not in everything
    report = json.loads(files["job-report/report.json"])
    assert {n["state"] for n in report["nodes"] if n["ip"] == planted.ip("worker1")} == {"scanned"}
    first_errors = files["job-report/first-errors.md"].decode()
    assert planted.ip("worker1") + ":" in first_errors and "[REDACTED:huggingface-token]" in first_errors
    assert any(name.startswith("job-report/artifacts/") and "py-spy-rank6" in name for name in files)
    assert "huggingface-token" in files["job-report/README.txt"].decode() and "redacted:" in out
