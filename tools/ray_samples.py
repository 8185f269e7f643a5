"""Trim the node log folders tools/ray_scenarios.py made into small sample job folders.

    python tools/ray_samples.py FIXTURES_DIR [OUT_DIR]      (OUT_DIR: sample_logs/ray-cluster)

Each scenario becomes OUT_DIR/<scenario>/: `driver.log` and one folder per node named by its IP
(`<ip>/logs/...`), the way a user would collect a cluster's logs, so that a file's host and the `ip=` of the
driver's `(Actor pid=N, ip=X)` prefixes name the same node. Only the files that say something about the job are
kept (raylet, GCS, core-worker and worker output, events, the agents' errors), empty files are dropped, the
raylet's periodic state dumps are cut to their first lines, and this
machine's paths are rewritten: the virtualenv to /opt/venv, the Python install to /usr, every node's temp dir to
/tmp/ray (as on a real cluster), the driver's folder to /home/user/job. The expected files are written by hand.
"""

from __future__ import annotations

import os
import re
import shutil
import sys

KEEP = re.compile(r"^(?:raylet\.(?:out|err)|gcs_server\.(?:out|err)|python-core-(?:worker|driver)-.*\.log|"
                  r"worker-.*\.(?:out|err)|event_.*\.log|dashboard_agent\.log|runtime_env_agent\.err|"
                  r"job-driver-.*\.log)$")
MAX_BYTES = 48 * 1024  # a bigger file keeps its first and last 24 KiB


def _scenario_facts(folder: str) -> dict[str, str]:
    facts: dict[str, str] = {}
    ips: dict[str, str] = {}
    with open(os.path.join(folder, "SCENARIO.txt"), encoding="utf-8") as fh:
        for line in fh:
            key, _, value = line.strip().partition(": ")
            if key in ("temp", "ray_tmpdir", "prefix", "base_prefix", "ray", "driver exit code"):
                facts[key] = value
            m = re.match(r"(\w+): ip=(\S+)", line.strip())
            if m:
                ips[m.group(1)] = m.group(2)
    facts.update({f"ip:{k}": v for k, v in ips.items()})
    return facts


def _rewrite(data: bytes, facts: dict[str, str]) -> bytes:
    temp = facts.get("temp", "")
    pairs = [(f"{temp}/{node}/", "/tmp/ray/") for node in ("head", "worker0", "worker1", "worker2")] if temp else []
    pairs += [(f"{temp}/", "/home/user/job/")] if temp else []
    pairs += [(facts[k] + "/", v) for k, v in (("ray_tmpdir", "/tmp/"), ("prefix", "/opt/venv/"),
                                               ("base_prefix", "/usr/")) if facts.get(k)]
    for old, new in pairs:
        data = data.replace(old.encode(), new.encode())
    # other programs on this machine, listed in Ray's top-memory-users table
    return re.sub(rb"/work/[\w./-]*?/bin/python|/tmp/tmp\.\w+/venv/bin/python", b"/opt/venv/bin/python", data)


def _short_state_dumps(data: bytes, keep: int = 12) -> bytes:
    """The raylet prints a `[state-dump]` block of ~160 lines every 10 s: keep the first lines of each."""
    out: list[bytes] = []
    run = 0
    for line in data.splitlines(keepends=True):
        run = run + 1 if b"[state-dump]" in line else 0
        if run <= keep:
            out.append(line)
        elif run == keep + 1:
            out.append(b"[... rest of the state dump trimmed ...]\n")
    return b"".join(out)


def _trim(data: bytes) -> bytes:
    data = _short_state_dumps(data)
    if len(data) <= MAX_BYTES:
        return data
    head, tail = data[: MAX_BYTES // 2], data[-MAX_BYTES // 2:]
    head = head[: head.rfind(b"\n") + 1]
    tail = tail[tail.find(b"\n") + 1:]
    return head + b"[... trimmed ...]\n" + tail


def convert(src: str, dst: str) -> None:
    facts = _scenario_facts(src)
    shutil.rmtree(dst, ignore_errors=True)
    os.makedirs(dst)
    with open(os.path.join(src, "driver.log"), "rb") as fh:
        driver = _rewrite(fh.read(), facts)
    with open(os.path.join(dst, "driver.log"), "wb") as fh:
        fh.write(driver)
    for node in sorted(os.listdir(src)):
        ip = facts.get(f"ip:{node}")
        if ip is None:
            continue
        root = os.path.join(src, node, "logs")
        for dirpath, dirnames, filenames in os.walk(root):
            dirnames.sort()
            for name in sorted(filenames):
                path = os.path.join(dirpath, name)
                if not KEEP.match(name) or os.path.getsize(path) == 0:
                    continue
                with open(path, "rb") as fh:
                    data = _trim(_rewrite(fh.read(), facts))
                if name == "dashboard_agent.log" and not re.search(rb"\t(?:ERROR|WARNING) ", data):
                    continue  # start-up INFO lines only
                out = os.path.join(dst, ip, "logs", os.path.relpath(path, root))
                os.makedirs(os.path.dirname(out), exist_ok=True)
                with open(out, "wb") as fh:
                    fh.write(data)


def main(argv: list[str]) -> int:
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__)
        return 2
    src_root = argv[0]
    dst_root = argv[1] if len(argv) > 1 else os.path.join(os.path.dirname(__file__), "..", "sample_logs", "ray-cluster")
    for name in sorted(os.listdir(src_root)):
        if os.path.isfile(os.path.join(src_root, name, "SCENARIO.txt")):
            convert(os.path.join(src_root, name), os.path.join(dst_root, name))
            print(f"{name} -> {os.path.join(dst_root, name)}")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
