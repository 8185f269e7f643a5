"""Rebuild diagnoser/background.txt: ordinary lines of healthy runs, for the fast path's literal costs.

    python benchmarks/make_background.py

The fast path needs to know which bytes and strings ordinary log lines print often (a literal made of
them makes many lines candidates). It reads that from this sample: every line of the negative sample
logs (healthy runs of ChatLearn, ROLL, verl, Megatron, vLLM, NCCL, Ray) and lines from the benchmark
generator, de-duplicated, in a stable order.
"""

from __future__ import annotations

import random
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from benchmarks.generate import noise_lines  # noqa: E402

MAX_BYTES = 160_000


def main() -> int:
    lines: list[str] = []
    for path in sorted((ROOT / "sample_logs" / "negatives").glob("*.log")):
        lines += path.read_text(encoding="utf-8", errors="replace").splitlines()
    lines += noise_lines(random.Random(7), 600, 0)
    seen: set[str] = set()
    unique = [x for x in lines if x.strip() and not (x in seen or seen.add(x))]  # type: ignore[func-returns-value]
    random.Random(11).shuffle(unique)
    out, size = [], 0
    for line in unique:
        size += len(line.encode()) + 1
        if size > MAX_BYTES:
            break
        out.append(line)
    header = ("# Ordinary lines of healthy training runs (from sample_logs/negatives and benchmarks/generate.py),\n"
              "# used only to estimate how often log lines contain a byte or a string. Rebuild with\n"
              "# python benchmarks/make_background.py\n")
    (ROOT / "diagnoser" / "background.txt").write_text(header + "\n".join(out) + "\n", encoding="utf-8")
    print(f"{len(out)} lines, {size} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main())
