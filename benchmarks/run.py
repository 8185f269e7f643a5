"""Time `diagnose` against grep on the same generated log, in one run.

    python benchmarks/run.py --size 1G            # generates /tmp/diagnoser-bench-1G.log once

Prints wall time, MB/s, lines/s and peak RSS for: cat (the floor), `LC_ALL=C grep -c -F -f` with the
database's literals, and `diagnose` with one and with all processes, each with grep finding its
candidate lines (the default, see diagnoser/grepscan.py) and in pure Python (DIAGNOSER_GREP=0); checks
that diagnose found the injected root cause; reports diagnose's time as a ratio of grep's.

grep's output goes to a pipe, never to /dev/null: GNU grep notices /dev/null and stops at the first
match, which on this log would time half of the file.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))

from benchmarks.generate import generate, parse_size  # noqa: E402
from diagnoser.match.database import load_database  # noqa: E402


def timed(cmd: list[str], stdout: int | None = subprocess.DEVNULL,
          env: dict[str, str] | None = None) -> tuple[float, int, bytes]:
    """Wall seconds, peak RSS (KiB, the largest of the command and its children) and stdout."""
    start = time.perf_counter()
    proc = subprocess.Popen(cmd, stdout=subprocess.PIPE if stdout is None else stdout, stderr=subprocess.DEVNULL,
                            env={**os.environ, "LC_ALL": "C", **(env or {})})
    out = proc.stdout.read() if proc.stdout is not None else b""
    _pid, _status, usage = os.wait4(proc.pid, 0)
    return time.perf_counter() - start, usage.ru_maxrss, out


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="1G")
    ap.add_argument("--log", help="use this log instead of generating one")
    ap.add_argument("--repeat", type=int, default=1, help="runs of each command; the best is kept")
    args = ap.parse_args(argv)

    size = parse_size(args.size)
    log = Path(args.log) if args.log else Path(tempfile.gettempdir()) / f"diagnoser-bench-{args.size}.log"
    meta = log.with_suffix(".json")
    if not log.exists() or not meta.exists():
        print(f"generating {log} ({args.size}) ...", file=sys.stderr)
        meta.write_text(json.dumps(generate(str(log), size, seed=1)))
    info = json.loads(meta.read_text())
    mb = log.stat().st_size / 1e6
    lines = int(info["lines"])

    db = load_database()
    # what the database looks for on every line (config facts are read only near the top of a file)
    literals = sorted(db.search.body)
    lits = Path(tempfile.mkdtemp()) / "literals.txt"
    lits.write_text("\n".join(literals) + "\n", encoding="utf-8")

    subprocess.run(["cat", str(log)], stdout=subprocess.DEVNULL, check=True)  # warm the page cache
    diagnose = [sys.executable, "-m", "diagnoser", str(log), "--format", "json"]
    cores = os.cpu_count() or 1
    python_only = {"DIAGNOSER_GREP": "0"}
    runs: list[tuple[str, list[str], dict[str, str] | None]] = [
        ("cat (the floor)", ["cat", str(log)], None),
        (f"LC_ALL=C grep -c -F -f ({len(literals)} literals)", ["grep", "-c", "-F", "-f", str(lits), str(log)], None),
        ("diagnose -j 1 (+ its grep)", [*diagnose, "--jobs", "1"], None),
        (f"diagnose -j {cores} (+ their greps)", [*diagnose, "--jobs", str(cores)], None),
        ("diagnose -j 1, pure Python", [*diagnose, "--jobs", "1"], python_only),
        (f"diagnose -j {cores}, pure Python", [*diagnose, "--jobs", str(cores)], python_only),
    ]
    results = []
    for name, cmd, env in runs:
        if shutil.which(cmd[0]) is None and not cmd[0].startswith("/"):
            continue
        best = None
        for _ in range(args.repeat):
            # only cat writes to /dev/null: grep and diagnose write to a pipe (see the docstring)
            secs, rss, out = timed(cmd, subprocess.DEVNULL if name.startswith("cat") else None, env)
            if best is None or secs < best[0]:
                best = (secs, rss, out)
        assert best is not None
        secs, rss, out = best
        note = ""
        if name.startswith("diagnose"):
            report = json.loads(out)
            root = (report.get("root_cause") or {}).get("id")
            ids = [f["id"] for f in report["findings"]]
            ok = root == info["expected_root_cause"] and all(i in ids for i in info["expected_ids"])
            note = f"root cause {root}, {'OK' if ok else 'WRONG: ' + ', '.join(ids)}"
            if not ok:
                print(f"{name}: wrong findings: {root} {ids}", file=sys.stderr)
        results.append((name, secs, rss, note))

    grep = next((secs for name, secs, _, _ in results if name.startswith("LC_ALL")), None)
    print(f"log: {log} — {mb:.0f} MB, {lines:,} lines; machine: {os.cpu_count()} cores")
    print("| what | wall s | MB/s | lines/s | peak RSS MB | vs grep | note |")
    print("|---|---:|---:|---:|---:|---:|---|")
    for name, secs, rss, note in results:
        ratio = f"{secs / grep:.2f}×" if grep else ""
        print(f"| {name} | {secs:.2f} | {mb / secs:,.0f} | {lines / secs:,.0f} | {rss / 1024:.0f} | {ratio} | {note} |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
