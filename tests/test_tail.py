"""The tail the fast search lends the scanner after a source's end (search/tail.py): found from the end of the blocks
it still holds, the same lines as splitting every block whole (as it did: 12-20 ms of each run on a 100 MB log)."""

from __future__ import annotations

import random
from collections import deque
from types import SimpleNamespace
from typing import Any

from diagnoser.read.sources import line_text
from diagnoser.search.tail import _lines_from, tail_lines


def _split_whole(feeder: Any, n: int) -> list[tuple[int, str]]:
    """tail_lines as it was: every block held split whole."""
    first = max(1, feeder.next_line - n)
    out: list[tuple[int, str]] = []
    for data, lo, hi in (*feeder.history, (feeder.block, feeder.block_first, feeder.block_last)):
        if hi < first or not data:
            continue
        lines = data.split(b"\n")
        for k in range(max(0, first - lo), min(len(lines), hi - lo + 1)):
            out.append((lo + k, line_text(lines[k])))
    return out


def test_lines_from_a_line_are_the_split_s() -> None:
    rng = random.Random(3)
    for _ in range(3000):
        data = bytes(rng.choice(b"ab\n") for _ in range(rng.randint(0, 30)))
        for k in range(data.count(b"\n") + 3):
            assert _lines_from(data, k) == data.split(b"\n")[k:], (data, k)


def test_the_tail_is_the_same_as_splitting_every_block() -> None:
    rng = random.Random(7)
    for _ in range(400):
        blocks, line = [], 1
        for _b in range(rng.randint(1, 4)):
            lines = [f"{line + i} " + "x" * rng.randint(0, 9) for i in range(rng.randint(0, 60))]
            data = "".join(x + "\n" for x in lines).encode()
            blocks.append((data, line, line + len(lines) - 1))
            line += len(lines)
        *history, (block, first, last) = blocks
        feeder = SimpleNamespace(history=deque(history), block=block, block_first=first, block_last=last,
                                 next_line=line)
        for n in (0, 1, 2, 5, 17, 59, 60, 61, 150, 2000):
            got = tail_lines(feeder, n)  # type: ignore[arg-type]
            assert got == _split_whole(feeder, n)
            assert all(text.startswith(f"{no} ") for no, text in got)  # each line under its own number


def test_the_heads_lines_are_not_lent_again(db, tmp_path, monkeypatch) -> None:  # type: ignore[no-untyped-def]
    """The feeder feeds a file's head whole, so the tail lent after its end starts past the head: a per-rank file of
    a few thousand lines was normalised twice. The report is the same as the line-by-line scan's."""
    from diagnoser.console import Warner, input_sources
    from diagnoser.match import scanner
    from diagnoser.modes.batch import diagnose
    from diagnoser.read.activity import TAIL_LINES
    from diagnoser.read.normalize import HEAD_LINES
    from diagnoser.report.contract import to_json

    lent: list[int] = []
    real = scanner.SourceScanner.lend

    def lend(self: scanner.SourceScanner, lines: list[tuple[int, str]]) -> None:
        lent.extend(n for n, _text in lines)
        real(self, lines)

    monkeypatch.setattr(scanner.SourceScanner, "lend", lend)
    for total in (HEAD_LINES // 2, HEAD_LINES + 300, HEAD_LINES + TAIL_LINES + 300):
        log = tmp_path / f"rank-{total}.log"
        log.write_text("".join(f"[rank{i % 4}]: step {i} loss 0.{i % 97}\n" for i in range(1, total + 1)))
        lent.clear()
        fast = to_json(diagnose(db, input_sources([log], Warner("en")), "en", fast="always"))
        assert lent == list(range(max(HEAD_LINES, total - TAIL_LINES) + 1, total + 1))
        slow = to_json(diagnose(db, input_sources([log], Warner("en")), "en", fast=False))
        fast["stats"].pop("seconds", None)
        slow["stats"].pop("seconds", None)
        assert fast == slow
