"""The last lines of an input the fast search read, lent to the scanner after the end (each writer's last line
and step are read from a file's tail; see read/activity.py)."""

from __future__ import annotations

from ..read.sources import line_text
from .feeder import FastFeeder


def tail_lines(feeder: FastFeeder, n: int) -> list[tuple[int, str]]:
    """The last `n` lines read (as far as the blocks the feeder still holds reach), in order."""
    first = max(1, feeder.next_line - n)
    out: list[tuple[int, str]] = []
    for data, lo, hi in (*feeder.history, (feeder.block, feeder.block_first, feeder.block_last)):
        if hi < first or not data:
            continue
        lines = data.split(b"\n")
        for k in range(max(0, first - lo), min(len(lines), hi - lo + 1)):
            out.append((lo + k, line_text(lines[k])))
    return out
