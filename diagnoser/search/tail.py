"""The last lines of an input the fast search read, lent to the scanner after the end (each writer's last line
and step are read from a file's tail; see read/activity.py)."""

from __future__ import annotations

from ..read.sources import line_text
from . import feeder as feeding
from .feeder import FastFeeder
from .split import nth_line_end


def lent_tail(feeder: FastFeeder, n: int) -> list[tuple[int, str]]:
    """The lines lent at a source's end: its last `n`, but for those of its head, which the feeder fed whole (a file
    of a few thousand lines, as most of a job's per-rank files are, was normalised twice)."""
    return tail_lines(feeder, n, feeding.HEAD_LINES)


def tail_lines(feeder: FastFeeder, n: int, after: int = 0) -> list[tuple[int, str]]:
    """The last `n` lines read (as far as the blocks the feeder still holds reach), in order; only those numbered
    above `after`."""
    first = max(1, after + 1, feeder.next_line - n)
    out: list[tuple[int, str]] = []
    for data, lo, hi in (*feeder.history, (feeder.block, feeder.block_first, feeder.block_last)):
        if hi < first or not data:
            continue
        k0 = max(0, first - lo)  # the first line wanted, counted from the block's first (0)
        lines = _lines_from(data, k0)  # not the whole block split: a 4 MiB block holds ~20,000 lines
        for k in range(k0, min(k0 + len(lines), hi - lo + 1)):
            out.append((lo + k, line_text(lines[k - k0])))
    return out


def _lines_from(data: bytes, k: int) -> list[bytes]:
    """`data.split(b"\\n")[k:]`, splitting only from the start of line `k` (found from the nearer end) on."""
    if k == 0:
        return data.split(b"\n")
    newlines = data.count(b"\n")
    if k > newlines:
        return []
    if k <= newlines - k:
        at = nth_line_end(data, 0, k) - 1
    else:  # the k-th newline is the (newlines - k + 1)-th from the end
        at = len(data)
        for _ in range(newlines - k + 1):
            at = data.rfind(b"\n", 0, at)
    return data[at + 1:].split(b"\n")
