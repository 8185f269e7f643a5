"""Where the fact region of a file to split ends (search/split.py _facts_end: no part begins before it), read a
chunk at a time: the same offset as walking every newline from the file's start."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from diagnoser.search import split


def _walked(data: bytes, lines: int) -> int | None:
    """The offset just past line `lines`, walking each newline from the start; None when there are fewer."""
    pos = -1
    for _ in range(lines):
        pos = data.find(b"\n", pos + 1)
        if pos < 0:
            return None
    return pos + 1


@pytest.mark.parametrize("chunk", [1, 3, 7, 64, 1 << 20])
def test_the_fact_region_ends_where_walking_every_newline_says(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                               chunk: int) -> None:
    rng = random.Random(chunk)
    monkeypatch.setattr(split, "FACTS_CHUNK", chunk)
    path = tmp_path / "x.log"
    for case in range(60):
        lines = rng.randint(1, 40)
        monkeypatch.setattr(split, "FACT_LINES", lines)
        text = "".join(rng.choice(["", "a", "bb", "ccc\r", "é" * rng.randint(1, 5)]) + "\n"
                       for _ in range(rng.randint(0, 60)))
        data = text.encode() + (b"tail without newline" if case % 3 == 0 else b"")
        path.write_bytes(data)
        assert split._facts_end(path) == _walked(data, lines), (chunk, lines, data)


@pytest.mark.parametrize("offset", [0, 1, 9, 10, (1 << 20) - 1, 1 << 20, (1 << 20) + 1, 3_000_000, 10**9])
def test_lines_before_counts_the_line_ends_before_an_offset(tmp_path: Path, offset: int) -> None:
    """lines_before (a split part's first line number) reads through one reused buffer: the same count as counting
    the bytes before the offset, at and across the buffer's size, past the end of the file."""
    from diagnoser.read.sources import lines_before

    rng = random.Random(offset)
    data = b"".join(b"x" * rng.randrange(0, 300) + b"\n" for _ in range(20_000))
    path = tmp_path / "log"
    path.write_bytes(data)
    assert lines_before(path, offset) == data[:offset].count(b"\n")
