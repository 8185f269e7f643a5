"""NCCL's communicator-init lines, repeated for every communicator of every rank, are fed to the scanner once each
(search/repeats.py): the report is the one feeding every line gives, and the copies are skipped."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from diagnoser.search.repeats import Repeats

from .test_fastpath import _json, count_fed, small_blocks  # noqa: F401  (small_blocks: a fixture)


def _init(rng: random.Random, host: str, pid: int, dev: int, rank: int, nranks: int, bus: str,
          addr: str | None = None) -> str:
    """A line as NCCL's init.cc prints it (NCCL_DEBUG=INFO), with a fresh communicator address and id."""
    addr = addr or f"{rng.getrandbits(44):x}"
    return (f"{host}:{pid}:{pid + 7} [{dev}] NCCL INFO ncclCommInitRank comm 0x{addr} rank {rank} nranks {nranks} "
            f"cudaDev {dev} nvmlDev {dev} busId {bus} commId 0x{rng.getrandbits(64):x} - Init COMPLETE")


def _log(rng: random.Random) -> list[str]:
    lines = [f"step {i} warming up" for i in range(30)]
    for rep in range(40):
        for r in range(4):
            ray = f"\x1b[36m(WorkerDict pid={1000 + r}, ip=10.0.0.1)\x1b[0m "
            # a bigger communicator later, of the job's size: the book keeps the biggest (its line must be fed)
            lines.append(ray + _init(rng, "node-0", 1000 + r, r, r, 4 if rep < 30 else 12, f"{r + 1}b000"))
            lines.append(f"[rank{r + 4}]:" + _init(rng, "node-1", 2000 + r, r, r + 4, 12, f"{r + 5}b000"))
            # first (the normaliser settled) an address NCCL's mark does not read (upper case, too long): its copies
            # with a plain one are read
            odd = None if rep > 5 else ("ABCDEF12" if r % 2 else "abcdef12" * 3)
            if rep >= 5:
                lines.append(_init(rng, "node-2", 3000 + r, r, r + 8, 12, f"{r + 9}b000", odd))
        lines.append(f"noise line {rep}")
    lines.append("\x1b[36m(WorkerDict pid=1001, ip=10.0.0.1)\x1b[0m torch.OutOfMemoryError: CUDA out of memory. Tried to "
                 "allocate 2.00 GiB. GPU 1 has a total capacity of 79.15 GiB of which 1.00 GiB is free.")
    for r in range(4):  # copies after the hit, within its after-context on its stream too
        lines.append(f"\x1b[36m(WorkerDict pid={1000 + r}, ip=10.0.0.1)\x1b[0m "
                     + _init(rng, "node-0", 1000 + r, r, r, 12, f"{r + 1}b000"))
    return lines


def test_copies_of_nccl_init_lines_are_fed_once(db, small_blocks, monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]  # noqa: F811
                                                tmp_path: Path) -> None:
    lines = _log(random.Random(5))
    log = tmp_path / "nccl.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fed = count_fed(monkeypatch)
    fast = _json(db, [log], fast=True)
    inits = [n for n, x in enumerate(lines, 1) if "cudaDev" in x]
    fed_inits = [n for n in fed if n in set(inits)]
    fed.clear()
    assert fast == _json(db, [log], fast=False)
    assert len(fed_inits) < len(inits) // 3, (len(fed_inits), len(inits))
    # each writer's rank is told by its communicator of the job's size (12), its GPU by that line's bus id
    gpus = {r["rank"]: r["gpu"] for r in json.loads(fast)["ranks"]}
    assert gpus == {r: f"0001:{r - 9}b:00" if r > 8 else f"0000:{r + 1}b:00" for r in range(12)}, gpus


def test_a_copy_is_the_same_line_but_for_its_addresses() -> None:
    line = b"\x1b[36m(A pid=1)\x1b[0m h:1:8 [0] NCCL INFO ncclCommInitRank comm 0x%s rank 0 nranks %d cudaDev 0 busId 1b000"
    key = Repeats.key
    found = frozenset({"cudaDev "})
    assert key(line % (b"abc", 8), found) == key(line % (b"f00", 8), found) is not None
    assert key(line % (b"abc", 8), found) != key(line % (b"abc", 4), found)  # another size
    assert key(line % (b"abc", 8), found) != key(line % (b"ABC", 8), found)  # an address the mark does not read
    assert key(line % (b"abc", 8), found) != key(line % (b"abcd", 8), found)
    assert key(line.replace(b"pid=1", b"pid=2") % (b"abc", 8), found) != key(line % (b"abc", 8), found)
    assert key(line % (b"abc", 8), found | {"Traceback (most recent call last)"}) is None  # holds more than the mark
    assert key(line.replace(b"NCCL INFO", b"NCCL WARN") % (b"abc", 8), found) is None
    assert key(b"x\r" + line % (b"abc", 8), found) is None
