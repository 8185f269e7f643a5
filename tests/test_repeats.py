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
    key = Repeats(frozenset({"cudaDev "})).key
    found = frozenset({"cudaDev "})
    assert key(line % (b"abc", 8), found) == key(line % (b"fed", 8), found) is not None
    assert key(line % (b"abc", 8), found) != key(line % (b"abc", 4), found)  # another size
    assert key(line % (b"abc", 8), found) != key(line % (b"ABC", 8), found)  # an address the mark does not read
    assert key(line % (b"abc", 8), found) != key(line % (b"abcd", 8), found)  # ... nor this one, past 16 digits
    assert key(line % (b"ab9", 8), found) == key(line % (b"abc", 8), found)  # a digit where a letter was
    assert key(line % (b"abU", 8), found) != key(line % (b"AB", 8), found)
    assert key(line.replace(b"pid=1", b"pid=2") % (b"abc", 8), found) != key(line % (b"abc", 8), found)
    assert key(line % (b"abc", 8), found | {"Traceback (most recent call last)"}) is None  # holds more than the mark
    assert key(line.replace(b"NCCL INFO", b"NCCL WARN") % (b"abc", 8), found) is None
    for odd in (b"\x1b[0x", b"\r", b"9%|#| ", b"[repeated 2x across cluster] ", b"\t"):  # the normaliser's business
        assert key((line % (b"abc", 8)).replace(b" rank 0", b" rank " + odd + b"0"), found) is None, odd
    assert Repeats(frozenset()).key(line % (b"abc", 8), found) is None  # a literal some rule names (a user's)


def _around(path: Path, middle: list[str], lead: str = "") -> None:
    """A first copy past the head, then `middle` with a copy in it, then the end; each copy starts with `lead`."""
    init = lead + "node-0:100:107 [0] NCCL INFO ncclCommInitRank comm 0x%s rank 0 nranks 8 cudaDev 0 nvmlDev 0 busId 1b000"
    lines = [f"step {i} warming up" for i in range(60)] + [init % "55d8c6b2a520"]
    lines += [f"noise {i}" for i in range(20)] + [init % "55d8c6b2a9f0" if x == "COPY" else x for x in middle]
    path.write_text("\n".join([*lines, *(f"noise {i}" for i in range(20))]) + "\n", encoding="utf-8")


@pytest.mark.parametrize(("middle", "lead"), [
    # the copy is the last line before a traceback on its stream: "Exception ignored in" two lines up no longer
    # makes that traceback ignored
    (["Exception ignored in: <function Foo.__del__ at 0x7f00>", "COPY", "Traceback (most recent call last):",
     '  File "/x/y.py", line 3, in __del__', "    raise ValueError('boom in del')", "ValueError: boom in del"], ""),
    # ... and a plain line there (no literal: the fast search had skipped it, so the traceback was ignored)
    (["Exception ignored in: <function Foo.__del__ at 0x7f00>", "plain text", "Traceback (most recent call last):",
     '  File "/x/y.py", line 3, in __del__', "    raise ValueError('boom in del')", "ValueError: boom in del"], ""),
    # a py-spy stack: its header and the copy, and copies that are py-spy's headers (their process is the stack's)
    (["Process 999: python train.py", "COPY", 'Thread 5 (active): "MainThread"', "    odd_wait (odd.py:1)",
      "    main (train.py:99)", ""], ""),
    (["Process 999: python train.py --note (idle)", "COPY", 'Thread 5 (active): "MainThread"',
     "    odd_wait (odd.py:1)", "    main (train.py:99)", "",
     *(x for pid in (200, 201, 202) for x in (f"Process {pid}: python train.py", "Python v3.10.12 (/usr/bin/python3)",
                                              "", f'Thread {pid} (active): "MainThread"', "    step (train.py:10)",
                                              "    main (train.py:99)", ""))], "Process 123: "),
], ids=["ignored", "ignored-plain", "py-spy", "py-spy-header"])
def test_a_copy_is_fed_where_it_changes_a_stream(db, small_blocks, tmp_path: Path, middle: list[str],  # type: ignore[no-untyped-def]  # noqa: F811
                                                 lead: str) -> None:
    log = tmp_path / "copy.log"
    _around(log, middle, lead)
    assert _json(db, [log], fast=True) == _json(db, [log], fast=False)


SIG = """id: nccl-init-seen
title: {en: "An NCCL communicator was made", zh: "建立了 NCCL 通信器"}
kind: symptom
severity: warning
layer: nccl
verdict: investigate
frameworks: [verl]
match:
  any: ['cudaDev (?P<dev>\\d+) (?:nvmlDev|busId)']
  not: [{regex: 'Init aborted here', within: 2}]
why: {en: "A communicator on GPU {dev|?}.", zh: "GPU {dev|?} 上的通信器。"}
remedy: {en: "Nothing.", zh: "无。"}
references: [https://github.com/NVIDIA/nccl/blob/master/src/init.cc]
examples:
  match: ["node-0:100:107 [0] NCCL INFO ncclCommInitRank comm 0x55d8c6b2a520 rank 0 nranks 8 cudaDev 0 busId 1b000"]
  no_match: ["hello"]
"""


def test_a_line_a_users_signature_reads_is_fed_every_time(small_blocks, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    from diagnoser.match.database import load_database

    folder = tmp_path / "sigs" / "nccl"
    folder.mkdir(parents=True)
    (folder / "nccl-init-seen.yaml").write_text(SIG, encoding="utf-8")
    db = load_database([tmp_path / "sigs"])
    assert "cudaDev " not in db.search.lean
    log = tmp_path / "user.log"
    _around(log, ["Init aborted here", "COPY"])
    fast = _json(db, [log], fast=True)
    assert fast == _json(db, [log], fast=False) and '"nccl-init-seen"' in fast
