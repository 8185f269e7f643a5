"""What reading a log's metric records costs at the least, beside grep and diagnose, in one run.

    python benchmarks/metric_floor.py /tmp/diagnoser-bench/own-100M.log --shared ../shared/bench

Issue 13 asks `diagnose` to take at most 2x (`-j 1`) and 1x (all cores) the time of
`LC_ALL=C grep -c -F -f literals.txt` on the project's own generated log. That log is a third metric
records (verl's `step:N - key:value - ...`, 150,000 in 100 MB), and the health rules must read every
one of them. This script times, in turn, round after round:

- grep, as benchmarks/run.py does;
- `diagnose -j 1` with the built-in signatures;
- `diagnose -j 1` with the same signatures less those holding a `metric:` clause (nothing reads a record);
- the least a CPython program can do to read the records' values: each record, from its `step:` to its line's
  end, found by one regex search per 4 MiB block (`findall`), then its step, its `key:value` pieces split, each key
  looked up in the set of keys some health rule reads (found once, before timing, among the keys of the log's
  first 4 MiB by the product's own MetricWatch), and those values made
  floats. No normalising, no series, no judging: a floor, not a reader.

The ratio of the floor to grep says whether any CPython reader of every record could meet the goal.
"""

from __future__ import annotations

import argparse
import re
import shutil
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
sys.path.insert(0, str(ROOT))

from benchmarks.run import best_in_turn  # noqa: E402

BLOCK = 4 << 20
_RECORD = re.compile(rb"step:\d{1,18} - [^\n]*")


def watched_keys(log: Path) -> set[str]:
    """The keys of the verl records in the log's first block that some health rule reads (the product's own
    MetricWatch): a key first printed later is not counted, which can only make the floor lower."""
    from diagnoser.match.database import load_database
    from diagnoser.match.metricwatch import metric_watch

    db = load_database()
    watch = metric_watch(s.sig for s in db.signatures)
    keys: set[str] = set()
    if watch is None:
        return keys
    with log.open("rb") as fh:
        for record in _RECORD.findall(fh.read(BLOCK)):
            for item in record.decode("utf-8", "replace").split(" - ")[1:]:
                key = item.rpartition(":")[0]
                direct, ratio = watch.refs(key)
                if direct or ratio:
                    keys.add(key)
    return keys


def floor_read(log: Path, keys: set[str]) -> tuple[float, int, int]:
    """Seconds to read every record's watched values (the least a reader does), records, values read."""
    records = values = 0
    start = time.perf_counter()
    with log.open("rb") as fh:
        rest = b""
        while True:
            chunk = fh.read(BLOCK)
            if not chunk:
                break
            data = rest + chunk
            cut = data.rfind(b"\n") + 1
            data, rest = data[:cut], data[cut:]
            for record in _RECORD.findall(data):
                items = record.decode("utf-8", "replace").split(" - ")
                int(items[0][5:])
                records += 1
                for item in items[1:]:
                    key, _, value = item.rpartition(":")
                    if key in keys:
                        try:
                            float(value)
                        except ValueError:
                            continue
                        values += 1
    return time.perf_counter() - start, records, values


def without_metric_signatures(into: Path) -> Path:
    """A copy of the built-in signatures less those that read metric records."""
    src = ROOT / "signatures"
    dst = into / "signatures"
    shutil.copytree(src, dst)
    for path in dst.rglob("*.yaml"):
        if re.search(r"(?m)^metric:", path.read_text(encoding="utf-8")):
            path.unlink()
    return dst


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("log", type=Path, help="a generated log (benchmarks/generate.py)")
    ap.add_argument("--shared", default=str(ROOT.parent / "shared" / "bench"), help="the bench folder")
    ap.add_argument("--repeat", type=int, default=3)
    a = ap.parse_args(argv)
    literals = Path(a.shared) / "literals.txt"
    grep = ["grep", "-c", "-F", "-f", str(literals), str(a.log)]
    diagnose = [sys.executable, "-m", "diagnoser", "-j", "1", "--format", "json", str(a.log)]
    keys = watched_keys(a.log)
    with tempfile.TemporaryDirectory() as tmp:
        sigs = without_metric_signatures(Path(tmp))
        (g, gs, _, _), (d, ds, _, _) = best_in_turn([grep, diagnose], a.repeat)
        ((n, ns, _, _),) = best_in_turn([diagnose], a.repeat, {"DIAGNOSER_BUILTIN_SIGNATURES": str(sigs)})
    floors = [floor_read(a.log, keys) for _ in range(a.repeat)]
    f, records, values = min(floors)
    size = a.log.stat().st_size / 1e6
    print(f"{a.log.name}: {size:.0f} MB, {records:,} metric records, {values:,} values of {len(keys)} watched keys")
    print("| command | wall | to grep |\n|---|---:|---:|")
    for name, secs in (("grep", g), ("diagnose -j 1", d), ("diagnose -j 1, no metric signatures", n),
                       ("the floor: reading the records' watched values, nothing else", f)):
        print(f"| {name} | {secs:.2f} s | {secs / g:.2f}x |")
    print(f"(spreads: grep {gs:.2f} s, diagnose {ds:.2f} s, without metric signatures {ns:.2f} s, "
          f"floor {max(x[0] for x in floors) - f:.2f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
