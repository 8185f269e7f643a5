"""Live throughput (issue 13): how many lines a second `diagnose run` passes through and `--follow` keeps up
with, what that costs, and how soon the failure at the end of the flood is told. benchmarks/run.py prints
these rows (`--live-lines N`; 0 skips them).

- `diagnose run`: a child prints N training lines as fast as it can, then a CUDA OOM traceback, and exits 1.
  Against the same child alone (into the same pipe): the wall time (does diagnose slow the child?), the
  lines/s, diagnose's own CPU (its user+sys minus the child's) as a share of its wall time (a core = 100%),
  and the findings (the traceback after the flood must be the root cause: nothing dropped).
- `--follow`: a writer appends the same N lines to a followed file in large writes, then the traceback;
  lines/s is N over the time from the first write to the finding on diagnose's stdout, and the latency is
  the time from the traceback's write to its finding.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

# what a busy RL job prints between steps: vLLM's throughput lines, progress bars, Megatron's iteration
# lines, NCCL warnings, and one verl metric line (a health reader's candidate) per 1,000 lines
LINES = (
    "(VLLMPolicyInference pid=2211) INFO 12-01 10:00:01 [metrics.py:455] Avg prompt throughput: 0.0 tokens/s, "
    "Avg generation throughput: 1811.2 tokens/s, Running: 12 reqs\n",
    "Processed prompts:  45%|####      | {n}/512 [00:01<00:02, 3.1it/s, est. speed input: 1234.5 toks/s]\n",
    "2024-12-01 10:00:01,000 INFO iteration {n} consumed samples 96 elapsed time per iteration (ms): 812.4\n",
    "[rank3]:[W1201 10:00:01.000000000 ProcessGroupNCCL.cpp:4115] Warning: a benign warning {n}\n",
)
METRIC = ("(WorkerDict pid=3100, ip=10.0.0.7) step:{n} - actor/pg_loss:0.0213 - actor/grad_norm:0.311 - "
          "critic/score/mean:0.47 - response_length/mean:1811.2 - perf/throughput:2590.3\n")


def text(first: int, count: int) -> str:
    """`count` lines of the flood, from line `first` on."""
    return "".join(METRIC.format(n=i // 1000) if i % 1000 == 999 else LINES[i % 4].format(n=i)
                   for i in range(first, first + count))


OOM = ("[rank3]: Traceback (most recent call last):\n"
       "[rank3]:   File \"/workspace/train.py\", line 67, in <module>\n"
       "[rank3]:     trainer.train()\n"
       "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 3 has a total "
       "capacity of 23.43 GiB of which 210.06 MiB is free.\n")
CHILD = ("import sys, time\nsys.path.insert(0, {here!r})\nfrom live_rate import OOM, text\nn = int(sys.argv[1])\n"
         "t0 = time.monotonic()\nout = sys.stdout.buffer\n"
         "for i in range(0, n, 1000):\n    out.write(text(i, min(1000, n - i)).encode())\n"
         "out.write(OOM.encode())\nout.flush()\nsys.stderr.write(f'FLOOD {{time.monotonic() - t0:.4f}}\\n')\n"
         "sys.stderr.flush()\nsys.exit(1)\n")


def _cpu(usage: os.struct_rusage) -> float:  # type: ignore[name-defined]
    return float(usage.ru_utime + usage.ru_stime)


def _run(cmd: list[str]) -> tuple[float, float, bytes, bytes]:
    """Wall seconds, CPU seconds (with the children it waited for), stdout drained as a pipe, stderr."""
    start = time.perf_counter()
    with tempfile.TemporaryFile() as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=err)
        assert proc.stdout is not None
        size = 0
        for chunk in iter(lambda: proc.stdout.read(1 << 20), b""):  # type: ignore[union-attr]
            size += len(chunk)
        _pid, _status, usage = os.wait4(proc.pid, 0)
        wall = time.perf_counter() - start
        err.seek(0)
        return wall, _cpu(usage), str(size).encode(), err.read()


def _flood(err: bytes) -> float:
    """The seconds the child spent printing (it says so on stderr)."""
    at = err.rfind(b"FLOOD ")
    return float(err[at + 6:err.find(b"\n", at)])


def run_rows(n: int, work: Path, repeat: int = 2) -> list[str]:
    child = work / "flood.py"
    child.write_text(CHILD.format(here=str(Path(__file__).resolve().parent)), encoding="utf-8")
    mb = len(text(0, n).encode()) / 1e6
    alone = min((_run([sys.executable, str(child), str(n)]) for _ in range(repeat)), key=lambda r: _flood(r[3]))
    wall, cpu, _out, err = min((_run([sys.executable, "-m", "diagnoser", "run", "--format", "json", "--",
                                      sys.executable, str(child), str(n)]) for _ in range(repeat)),
                               key=lambda r: _flood(r[3]))
    report = json.loads(err[err.find(b"{"):].decode("utf-8", "replace"))
    root = (report.get("root_cause") or {}).get("id")
    own = max(0.0, cpu - alone[1])
    printing, printing_alone = _flood(err), _flood(alone[3])
    return [f"| live: {n:,} lines | a child printing them alone (into a pipe) | {printing_alone:.2f} | "
            f"{mb / printing_alone:,.0f} | {n / printing_alone:,.0f} | | | |",
            f"| live: {n:,} lines | the same child under `diagnose run` (whole command: {wall:.2f} s) | "
            f"{printing:.2f} | {mb / printing:,.0f} | {n / printing:,.0f} | | {printing / printing_alone:.2f}× alone | "
            f"root cause {root}; diagnose's own CPU {own:.2f} s (start-up included) |"]


def follow_rows(n: int, work: Path) -> list[str]:
    folder = work / "follow"
    folder.mkdir(parents=True, exist_ok=True)
    log = folder / "rank3.log"
    log.write_bytes(b"")
    proc = subprocess.Popen([sys.executable, "-m", "diagnoser", "--follow", str(folder), "--format", "jsonl",
                             "--hang-after", "off"], stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    time.sleep(2.0)  # started, at the end of the (empty) file
    c0 = _proc_cpu(proc.pid)
    start = time.perf_counter()
    with open(log, "ab") as fh:
        for i in range(0, n, 10000):
            fh.write(text(i, min(10000, n - i)).encode())
            fh.flush()
        wrote = time.perf_counter()
        fh.write(OOM.encode())
        fh.flush()
        told = time.perf_counter()
    found = None
    for line in proc.stdout:
        event = json.loads(line)
        if event.get("event") == "finding":
            found = (time.perf_counter(), event["finding"]["id"])
            break
    cpu = _proc_cpu(proc.pid) - c0
    proc.terminate()
    proc.communicate(timeout=60)
    if found is None:
        return [f"| live: {n:,} lines | `diagnose --follow` | | | | | | no finding |"]
    span = found[0] - start
    mb = len(text(0, n).encode()) / 1e6
    return [f"| live: {n:,} lines | `diagnose --follow` (writer: {wrote - start:.2f} s) | {span:.2f} | {mb / span:,.0f} | "
            f"{n / span:,.0f} | | | {found[1]} told {found[0] - told:.2f} s after its write; CPU {cpu:.2f} s = "
            f"{100 * cpu / span:.0f}% of a core |"]


def _proc_cpu(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def main() -> int:
    n = int(sys.argv[1]) if len(sys.argv) > 1 else 1_000_000
    with tempfile.TemporaryDirectory() as tmp:
        for row in run_rows(n, Path(tmp)) + follow_rows(n, Path(tmp)):
            print(row, flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
