"""A big file is cut for several processes at quiet places; lines that only carry a mark (NCCL's communicator
init lines, retries, a job's success line) do not make a place busy, so a log that prints them every few lines
still splits, and the parts report what one scan reports."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from diagnoser.judge import book
from diagnoser.read import marks
from diagnoser.search import engine, split

from .conftest import SAMPLES
from .test_fastpath import small_split, split_report_is_one_scans

ENGINES = ["python", "hyperscan"] if engine._hs is not None else ["python"]

# NCCL src/init.cc (the INFO line of each communicator's init), behind a Ray actor prefix, as the independent
# benchmark generator and real RL jobs print them
NCCL_INIT = ("\x1b[36m(PolicyTrainer pid={pid}, ip=10.0.190.72)\x1b[0m dlc1ca3b1799d-master-0:{pid}:{tid} [{dev}] "
             "NCCL INFO ncclCommInitRank comm 0x{comm:x} rank {rank} nranks {nranks} cudaDev {dev} nvmlDev {dev} "
             "busId {bus:x}000 commId 0x{comm:x} - Init {what}\n")


def _with_marks(path: Path, every: int, seed: int) -> None:
    """Insert an NCCL init line after every `every` lines of the file."""
    rng = random.Random(seed)
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    out: list[str] = []
    for i, line in enumerate(lines, start=1):
        out.append(line)
        if i % every == 0:
            dev = rng.randrange(8)
            out.append(NCCL_INIT.format(pid=4000 + dev, tid=rng.randrange(5000, 6000), dev=dev,
                                        comm=rng.getrandbits(40), rank=dev + 8 * rng.randrange(2),
                                        nranks=rng.choice((8, 16)), bus=0x18 + dev * 0x10,
                                        what=rng.choice(("START", "COMPLETE"))))
    path.write_text("".join(out), encoding="utf-8")


@pytest.mark.parametrize("engine_name", ENGINES)
def test_a_log_full_of_mark_lines_splits_and_reports_as_one_scan(db, monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
                                                                  tmp_path: Path, engine_name: str) -> None:
    monkeypatch.setenv("DIAGNOSER_ENGINE", engine_name)
    import sys
    sys.path.insert(0, str(SAMPLES.parent))
    from benchmarks.generate import generate

    small_split(monkeypatch)
    log = tmp_path / "big.log"
    generate(str(log), 6 << 20, seed=5)
    _with_marks(log, 40, seed=5)  # one every 40 lines: never 400 lines without one
    assert split.plan_parts(log, log.stat().st_size, 3, db.search.body_search) == [
        split.Part(0, log.stat().st_size, 0)]  # busy everywhere for a search of every body literal
    parts = split.plan_parts(log, log.stat().st_size, 3, db.search.quiet_search)
    assert len(parts) == 3 and parts[1].start > 0
    one = split_report_is_one_scans(db, log, 3)
    assert one["root_cause"]["id"] == "cuda-oom"


def test_only_marks_the_book_keeps_per_line_are_split_free(db) -> None:  # type: ignore[no-untyped-def]
    """A mark whose book entry depends on the writer's earlier lines must keep its lines busy for the split: every
    kind outside WRITER_STATE_KINDS is listed per line in the book, or kept order-free (nccl_init: the widest
    communicator; rank_self; waiting: the activity tracker's last sighting, merged by line number)."""
    kinds = {k for k, _lits, _rx in marks.PROBES}
    assert kinds - marks.WRITER_STATE_KINDS <= book.LISTED | {"nccl_init", "waiting"}
    free = set(db.search.mark_only)
    assert "cudaDev " in free
    for kind, lits, _rx in marks.PROBES:
        if kind in marks.WRITER_STATE_KINDS:
            assert not free & set(lits), kind
    assert not free & db.search.quiet
