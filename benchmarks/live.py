"""Measure the live mode: how soon a finding is told, and what following a busy log costs.

    python benchmarks/live.py

1. Detection latency: `diagnose --follow DIR --format jsonl` runs; a writer appends a CUDA OOM traceback
   to a rank's log; the time from the write to the finding on diagnose's stdout (several rounds).
2. CPU cost: a writer appends ordinary training lines at a steady rate for a while; diagnose's CPU time
   (from /proc) over the wall time, as a share of one core.
"""

from __future__ import annotations

import json
import os
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

OOM = ("[rank3]: Traceback (most recent call last):\n"
       "[rank3]:   File \"/workspace/train.py\", line 67, in <module>\n"
       "[rank3]:     trainer.train()\n"
       "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 3 has a total "
       "capacity of 23.43 GiB of which 210.06 MiB is free.\n")


def cpu_seconds(pid: int) -> float:
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def start(folder: Path, *extra: str) -> subprocess.Popen[str]:
    return subprocess.Popen([sys.executable, "-m", "diagnoser", "--follow", str(folder), "--format", "jsonl",
                             "--hang-after", "off", *extra], stdout=subprocess.PIPE, text=True)


def latency(rounds: int) -> list[float]:
    out = []
    for _ in range(rounds):
        with tempfile.TemporaryDirectory() as tmp:
            folder = Path(tmp)
            log = folder / "rank3.log"
            log.write_text("step:1 - actor/pg_loss:0.1\n")
            proc = start(folder)
            time.sleep(1.5)  # let it start and reach the end of the file
            t0 = time.monotonic()
            with open(log, "a") as fh:
                fh.write(OOM)
            assert proc.stdout is not None
            for line in proc.stdout:
                if json.loads(line).get("event") == "finding":
                    out.append(time.monotonic() - t0)
                    break
            proc.terminate()
            proc.communicate(timeout=30)
    return out


def busy_cost(seconds: float, lines_per_second: int) -> tuple[float, int]:
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        log = folder / "rank0.log"
        log.write_text("")
        proc = start(folder)
        time.sleep(1.0)
        written = 0
        stop = time.monotonic() + seconds
        line = ("(WorkerDict pid=3100, ip=10.0.0.7) step:{n} - actor/pg_loss:0.0213 - actor/grad_norm:0.311 - "
                "critic/score/mean:0.47 - response_length/mean:1811.2 - perf/throughput:2590.3\n")
        c0, w0 = cpu_seconds(proc.pid), time.monotonic()

        def write() -> None:
            nonlocal written
            with open(log, "a") as fh:
                while time.monotonic() < stop:
                    batch = "".join(line.format(n=written + i) for i in range(lines_per_second // 10))
                    fh.write(batch)
                    fh.flush()
                    written += lines_per_second // 10
                    time.sleep(0.1)

        t = threading.Thread(target=write)
        t.start()
        t.join()
        time.sleep(1.0)
        share = (cpu_seconds(proc.pid) - c0) / (time.monotonic() - w0)
        proc.terminate()
        proc.communicate(timeout=30)
        return share, written


def main() -> int:
    lat = latency(5)
    share, written = busy_cost(20, 5000)
    print("| what | figure |")
    print("|---|---|")
    print(f"| detection latency (write of a traceback → finding printed), median of {len(lat)} | "
          f"{statistics.median(lat):.2f} s (min {min(lat):.2f}, max {max(lat):.2f}) |")
    print(f"| CPU to follow a busy log (5,000 lines/s, {written:,} lines in 20 s) | {share * 100:.0f}% of one core |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
