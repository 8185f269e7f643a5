"""Time `diagnose` against grep on the same logs, in one run, and print one table.

    python benchmarks/run.py                       # 100 MB and 1 GB of both generators, the dense log, a folder
    python benchmarks/run.py --sizes 100M --repeat 3
    python benchmarks/run.py --shared ../shared/bench --work /tmp/diagnoser-bench

The logs: the project's own generator (benchmarks/generate.py), an independent one (genlog.py in the
shared bench folder, a `tee train.log` of a Ray job: actor prefixes, colour, tqdm redraws, Transformer
Engine warnings), a dense log from it (a failure every few hundred lines), and a job's folder of per-node
logs from it (--folder: 16 files of 4 MB, and 64 per-rank files of 256 KB, `grep -r` on the folder). Each is
generated once into --work.
For each: `LC_ALL=C grep -c -F -f literals.txt` (the words a user greps a failed job's log for, from the
shared folder), `diagnose -j 1` and `diagnose` with all cores, with wall time, MB/s, lines/s, peak RSS
and the ratio to grep's time in the same run; the findings are checked against what
the generator injected. The live rows (benchmarks/live_rate.py): a child printing --live-lines lines as
fast as it can, alone and under `diagnose run` (how fast it prints, what diagnose costs, whether the
traceback after the flood is the root cause), and `--follow` on a file appended as fast (lines/s, how soon
the traceback is told). The start-up rows: a 40-line log with a warm cache, as JSON and as text, and
`--version`. Then the cost of database size: `diagnose -j 1` with ten times the signatures (synthetic
ones, each with its own literals) against the same run without them.

diagnose runs as an installed package does, with the bytecode of its modules (compiled first, into the
package's __pycache__ folders, even where PYTHONDONTWRITEBYTECODE is set: see installed_bytecode).

grep's output goes to a pipe, never to /dev/null: GNU grep notices /dev/null and stops at the first
match. Wall times are the best of --repeat runs; the spread (worst - best) is shown beside them. The
commands compared with each other (grep and diagnose on one log; the database without and with the
synthetic signatures) run in turn, round after round, so a machine whose speed drifts slows them alike.

Peak RSS is each process's own high-water mark (VmHWM in /proc/PID/status), the largest of the command's
processes (diagnose's pool workers too): not getrusage's ru_maxrss, which Linux carries across fork and exec
(every command then reported at least this script's own size: grep showed 47 MB). diagnose prints its VmHWM
as it exits (PEAK below); its workers and grep are read every 20 ms while they run.
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from benchmarks.generate import generate, parse_size  # noqa: E402
from benchmarks.live_rate import follow_rows, run_rows  # noqa: E402
from benchmarks.synthetic import write_signatures  # noqa: E402

# `python -c PEAK ARGS...` is `diagnose ARGS...`, and prints its own VmHWM (KiB) on stderr as it exits
PEAK = ("import runpy, sys\nsys.argv[0] = 'diagnose'\ntry:\n    runpy.run_module('diagnoser', run_name='__main__')\n"
        "finally:\n    hwm = [x.split()[1] for x in open('/proc/self/status') if x.startswith('VmHWM:')]\n"
        "    print('peak-kib', hwm[0] if hwm else 0, file=sys.stderr)\n")


def _hwm(pid: int) -> int:
    """VmHWM of a live process, KiB (0 when it is gone)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii", errors="replace") as fh:
            return next((int(x.split()[1]) for x in fh if x.startswith("VmHWM:")), 0)
    except (OSError, ValueError):
        return 0


def _tree(pid: int) -> list[int]:
    """The process and its live descendants."""
    out, todo = [], [pid]
    while todo:
        p = todo.pop()
        out.append(p)
        try:
            for task in os.listdir(f"/proc/{p}/task"):
                with open(f"/proc/{p}/task/{task}/children", encoding="ascii") as fh:
                    todo += [int(c) for c in fh.read().split()]
        except (OSError, ValueError):
            pass
    return out


def timed(cmd: list[str], env: dict[str, str] | None = None) -> tuple[float, int, bytes]:
    """Wall seconds, peak RSS (KiB: the largest VmHWM of the command's processes) and stdout."""
    if cmd[:2] == [sys.executable, "-m"] and cmd[2] == "diagnoser":
        cmd = [sys.executable, "-c", PEAK, *cmd[3:]]
    peaks: dict[int, int] = {}
    done = threading.Event()
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            env={**os.environ, "LC_ALL": "C", **(env or {})})

    def watch() -> None:
        while not done.is_set():
            for pid in _tree(proc.pid):
                peaks[pid] = max(peaks.get(pid, 0), _hwm(pid))
            done.wait(0.02)

    watcher = threading.Thread(target=watch, daemon=True)
    watcher.start()
    out, err = proc.communicate()
    secs = time.perf_counter() - start
    done.set()
    watcher.join()
    said = [x.split() for x in err.splitlines() if x.startswith(b"peak-kib ")]
    if said:
        peaks[proc.pid] = max(peaks.get(proc.pid, 0), int(said[-1][1]))
    return secs, max(peaks.values(), default=0), out


def best_in_turn(cmds: list[list[str]], repeat: int,
                 env: dict[str, str] | None = None) -> list[tuple[float, float, int, bytes]]:
    """For each command: its best wall time, the spread, its peak RSS and its stdout; the commands run in turn in each round (the first, the second, ..., then again):
    a machine whose speed drifts over minutes slows them alike, so the ratios between them hold."""
    rounds = [[timed(cmd, env) for cmd in cmds] for _ in range(repeat)]
    out = []
    for k in range(len(cmds)):
        runs = [r[k] for r in rounds]
        best = min(runs, key=lambda r: r[0])
        out.append((best[0], max(r[0] for r in runs) - best[0], max(r[1] for r in runs), best[2]))
    return out


def startup_rows(diagnose: list[str], sample: Path, work: Path, repeat: int) -> list[str]:
    """A 40-line log (the first 40 lines of a shipped sample) with a warm cache, as JSON and as text (to a pipe),
    and `--version`: the best and the median of `repeat` rounds, the commands in turn."""
    log = work / "forty-lines.log"
    log.write_bytes(b"\n".join(sample.read_bytes().split(b"\n")[:40]) + b"\n")
    plain = [x for x in diagnose if x not in ("--format", "json")]
    cmds = {"40-line log, JSON": [*diagnose, str(log)], "40-line log, text": [*plain, "--format", "text", str(log)],
            "`--version`": [*plain, "--version"]}
    rounds = [[timed(cmd)[0] for cmd in cmds.values()] for _ in range(repeat)]
    rows = []
    for k, what in enumerate(cmds):
        times = sorted(r[k] for r in rounds)
        rows.append(f"| start-up | {what} | {times[0]:.2f} (median {times[len(times) // 2]:.2f}) | | | | | |")
    return rows


def installed_bytecode() -> None:
    """Time diagnose as installed: with the bytecode of its modules (pip compiles it when it installs the package),
    written next to them (__pycache__, ignored by git). A machine that sets PYTHONDONTWRITEBYTECODE would otherwise
    compile the package from source on every run (about 0.2 s of each here)."""
    os.environ.pop("PYTHONDONTWRITEBYTECODE", None)
    subprocess.run([sys.executable, "-m", "compileall", "-q", str(ROOT / "diagnoser")], check=True)


def make_logs(work: Path, shared: Path, sizes: list[str], folder: str = "") -> list[tuple[str, Path, list[str]]]:
    """(name, path, the signature ids injected) for each log, generated once."""
    work.mkdir(parents=True, exist_ok=True)
    logs = []
    for size in sizes:
        own = work / f"own-{size}.log"
        meta = own.with_suffix(".json")
        if not own.exists() or not meta.exists():
            print(f"generating {own} ...", file=sys.stderr)
            meta.write_text(json.dumps(generate(str(own), parse_size(size), seed=1)))
        logs.append((f"own {size}", own, json.loads(meta.read_text())["expected_ids"]))
        logs.append(_genlog(work, shared, f"independent {size}", f"ind-{size}.log", parse_size(size), 20))
    # dense: a failure every few hundred lines (about 540 lines per MB: one per ~270 lines)
    logs.append(_genlog(work, shared, "dense 100M", "dense-100M.log", parse_size("100M"), 2000))
    logs += [_folder(work, shared, spec.strip()) for spec in folder.split(",") if spec.strip()]
    return logs


def _folder(work: Path, shared: Path, spec: str) -> tuple[str, Path, list[str]]:
    """A job's folder of per-node or per-rank logs (post-mortem): N files of SIZE each (`--folder NxSIZE`), each
    from the independent generator with a seed of its own and one failure injected."""
    count, _x, size = spec.partition("x")
    n, each = int(count), parse_size(size)
    path = work / f"folder-{n}x{size}"
    path.mkdir(parents=True, exist_ok=True)
    kinds: set[str] = set()
    for i in range(n):
        log = path / f"node-{i}.log"
        truth = work / f"folder-{n}x{size}-node-{i}.truth.json"  # beside the folder: not one of its logs
        if not log.exists() or not truth.exists():
            print(f"generating {log} ...", file=sys.stderr)
            subprocess.run([sys.executable, str(shared / "genlog.py"), "--size-mb", str(each / (1 << 20)), "--seed",
                            str(100 + i), "--inject", "1", "--out", str(log)], check=True, stdout=subprocess.DEVNULL)
            Path(str(log) + ".truth.json").replace(truth)
        kinds |= {x["kind"] for x in json.loads(truth.read_text())["injections"]}
    return f"independent, a folder of {n} × {size}", path, sorted(kinds)


def _files(path: Path) -> list[Path]:
    return sorted(p for p in path.iterdir() if p.is_file()) if path.is_dir() else [path]


def _genlog(work: Path, shared: Path, name: str, file: str, size: int, inject: int) -> tuple[str, Path, list[str]]:
    path = work / file
    truth = Path(str(path) + ".truth.json")
    if not path.exists() or not truth.exists():
        print(f"generating {path} ...", file=sys.stderr)
        subprocess.run([sys.executable, str(shared / "genlog.py"), "--size-mb", str(size >> 20), "--seed", "42",
                        "--inject", str(inject), "--out", str(path)], check=True, stdout=subprocess.DEVNULL)
    kinds = sorted({i["kind"] for i in json.loads(truth.read_text())["injections"]})
    return name, path, kinds


def warm_cache(diagnose: list[str], work: Path) -> None:
    """One untimed run on a one-line log: the database cache (and the code cache) of this signature set is built
    before anything is timed, as a user's every run after the first finds it (a changed package is a new key)."""
    tiny = work / "warm.log"
    tiny.write_text("warming the database cache\n", encoding="utf-8")
    subprocess.run([*diagnose, str(tiny)], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, check=False)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--sizes", default="100M,1G", help="comma-separated sizes of the generated logs")
    ap.add_argument("--shared", default=str(ROOT.parent / "shared" / "bench"),
                    help="the shared bench folder (genlog.py, literals.txt)")
    ap.add_argument("--work", default="/tmp/diagnoser-bench", help="where the logs are generated")
    ap.add_argument("--repeat", type=int, default=2, help="runs of each command; the best is shown")
    ap.add_argument("--folder", default="16x4M,64x256K",
                    help="folders of per-node or per-rank logs, N files of SIZE each (NxSIZE, comma-separated); "
                         "empty: none")
    ap.add_argument("--no-db-growth", action="store_true", help="skip the ten-times-the-signatures run")
    ap.add_argument("--live-lines", type=int, default=1_000_000,
                    help="lines of the live rows (diagnose run, --follow; benchmarks/live_rate.py); 0 skips them")
    args = ap.parse_args(argv)

    shared, work = Path(args.shared), Path(args.work)
    literals = shared / "literals.txt"
    installed_bytecode()
    logs = make_logs(work, shared, [s.strip() for s in args.sizes.split(",") if s.strip()], args.folder)
    cores = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    diagnose = [sys.executable, "-m", "diagnoser", "--format", "json"]
    warm_cache(diagnose, work)
    print(f"machine: {platform.machine()}, {cores} cores, Python {platform.python_version()}, "
          f"{time.strftime('%Y-%m-%d')}; wall: best of {args.repeat} (spread = worst - best)")
    print("| log | what | wall s (spread) | MB/s | lines/s | peak RSS MB | vs grep | findings |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for name, path, expected in logs:
        files = _files(path)
        subprocess.run(["cat", *map(str, files)], stdout=subprocess.DEVNULL, check=True)  # warm the page cache
        mb = sum(f.stat().st_size for f in files) / 1e6
        lines = 0
        for f in files:
            with open(f, "rb") as fh:
                lines += sum(chunk.count(b"\n") for chunk in iter(lambda: fh.read(1 << 24), b""))
        recurse = ["-r"] if path.is_dir() else []
        grep = ["grep", *recurse, "-c", "-F", "-f", str(literals), str(path)]
        rows = [("`LC_ALL=C grep -c -F -f literals.txt`", grep),
                ("diagnose -j 1", [*diagnose, "-j", "1", str(path)]), (f"diagnose (-j {cores})", [*diagnose, str(path)])]
        results = best_in_turn([cmd for _what, cmd in rows], args.repeat)
        grep_s = results[0][0]
        for (what, _cmd), (secs, spread, rss, out) in zip(rows, results, strict=True):
            note = ""
            if what.startswith("diagnose"):
                found = {f["id"] for f in json.loads(out)["findings"]}
                note = f"{len(set(expected) & found)} of {len(set(expected))} injected kinds"
            print(f"| {name} | {what} | {secs:.2f} ({spread:.2f}) | {mb / secs:,.0f} | {lines / secs:,.0f} | "
                  f"{rss / 1024:.0f} | {secs / grep_s:.2f}× | {note} |", flush=True)
    for row in startup_rows(diagnose, ROOT / "sample_logs" / "chatlearn" / "cuda-oom-fsdp-packing.log", work,
                            max(5, args.repeat)):
        print(row, flush=True)
    if args.live_lines > 0:
        live = work / "live"
        live.mkdir(parents=True, exist_ok=True)
        for row in run_rows(args.live_lines, live, args.repeat) + follow_rows(args.live_lines, live):
            print(row, flush=True)
    if not args.no_db_growth:
        name, path, _expected = next(x for x in logs if x[0].startswith("independent"))
        extra = work / "synthetic-signatures"
        count = write_signatures(extra, 9)
        warm_cache([*diagnose, "--signatures", str(extra)], work)
        (base, spread_b, _rss, _out), (more, spread_m, _rss, _out) = best_in_turn(
            [[*diagnose, "-j", "1", str(path)], [*diagnose, "-j", "1", "--signatures", str(extra), str(path)]],
            args.repeat)
        print(f"\nten times the signatures ({count} synthetic ones added), {name}, -j 1: {base:.2f} s ({spread_b:.2f}) → "
              f"{more:.2f} s ({spread_m:.2f}), {100 * (more / base - 1):+.0f}%")
    return 0


if __name__ == "__main__":
    sys.exit(main())
