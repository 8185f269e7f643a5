"""Bounded whatever the cardinality (issue 19), scaled down so each case takes seconds: many files, many distinct
errors, many ranks, many hits with distinct captures, odd folders, a sparse file and a gzip bomb. Each finishes
with one answer, no traceback, and the report stays readable; the README's Reliability section gives the
full-size figures (20,000 files, a million distinct tracebacks, 100,000 ranks, 2 GB sparse, a 2 GiB gzip bomb)."""

from __future__ import annotations

import gzip
import json
import os
import socket
from pathlib import Path

import pytest

from .test_hardening import OOM_LINE, no_traceback, run, run_measured

MIB = 1024


def report(proc: object) -> dict:  # type: ignore[type-arg]
    return json.loads(proc.stdout)  # type: ignore[attr-defined,no-any-return]


def test_thousands_of_files_the_failing_one_is_found(tmp_path: Path) -> None:
    for i in range(2000):
        (tmp_path / f"worker-{i:05d}.log").write_text(f"step 1 loss 0.5 worker {i}\n")
    (tmp_path / "worker-01234.log").write_text("step 1\n" + OOM_LINE + "\n")
    proc, peak = run_measured(str(tmp_path), "-f", "json")
    no_traceback(proc)
    assert proc.returncode == 1, proc.stderr
    r = report(proc)
    assert r["root_cause"]["id"] == "cuda-oom" and r["stats"]["sources"] == 2000
    assert peak < 200 * MIB


def test_ten_thousand_distinct_unrecognised_errors_are_summarised(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    with log.open("w") as fh:
        for i in range(10000):
            fh.write(f"Traceback (most recent call last):\n  File \"/job/m{i}.py\", line {i}, in f{i}\n"
                     f"    g{i}()\nKind{i}Error: distinct message number {i}\n")
    proc, peak = run_measured(str(log), "-f", "json")
    no_traceback(proc)
    assert proc.returncode == 1, proc.stderr  # a failure: unrecognised, but not "no failure found"
    r = report(proc)
    assert 0 < len(r["unrecognized"]) <= 500
    assert r["stats"]["unlisted"] > 0  # the kinds past the list are counted, not dropped silently
    assert len(proc.stdout) < 2 * 1024 * 1024
    assert peak < 200 * MIB
    text = run(str(log))
    no_traceback(text)
    assert len(text.stdout) < 256 * 1024


def test_thousands_of_ranks_and_hits_with_distinct_captures(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    with log.open("w") as fh:
        for rank in range(5000):
            fh.write(f"[rank{rank}]:torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {rank + 1}.00 MiB. "
                     f"GPU 0 has a total capacity of 79.15 GiB of which {rank % 97}.00 MiB is free.\n")
    proc, peak = run_measured(str(log), "-f", "json")
    no_traceback(proc)
    assert proc.returncode == 1, proc.stderr
    r = report(proc)
    oom = r["root_cause"]
    assert oom["id"] == "cuda-oom" and oom["count"] == 5000
    assert 0 < len(oom["ranks"]) <= 4096
    assert len(proc.stdout) < 8 * 1024 * 1024
    assert peak < 200 * MIB


@pytest.mark.skipif(not hasattr(os, "mkfifo"), reason="needs FIFOs and Unix sockets")
def test_deep_folders_loops_and_special_files(tmp_path: Path) -> None:
    deep = tmp_path
    for i in range(40):
        deep = deep / f"d{i}"
    deep.mkdir(parents=True)
    (deep / "rank3.log").write_text(OOM_LINE + "\n")
    (tmp_path / "d0" / "loop").symlink_to(tmp_path)  # a symlink loop
    (tmp_path / "self").symlink_to("self")  # a link to itself
    os.mkfifo(tmp_path / "pipe.log")  # a FIFO nobody writes: never waited on inside a folder
    sock = socket.socket(socket.AF_UNIX)
    try:
        sock.bind(str(tmp_path / "s.sock"))
        proc = run(str(tmp_path), "-f", "json", timeout=60)
    finally:
        sock.close()
    no_traceback(proc)
    assert proc.returncode == 1, proc.stderr
    assert report(proc)["root_cause"]["id"] == "cuda-oom"


def test_a_sparse_file_is_skipped_in_one_line(tmp_path: Path) -> None:
    sparse = tmp_path / "core.log"
    with sparse.open("wb") as fh:
        fh.truncate(256 << 20)  # 256 MiB of holes: NUL bytes when read
    proc, peak = run_measured(str(sparse))
    no_traceback(proc)
    assert proc.returncode == 3, proc.stderr  # nothing to diagnose, not "no failure found"
    assert len(proc.stderr.strip().splitlines()) <= 3
    assert peak < 200 * MIB


def test_a_gzip_bomb_is_bounded(tmp_path: Path) -> None:
    bomb = tmp_path / "train.log.gz"
    with gzip.open(bomb, "wb", compresslevel=1) as fh:
        block = b"\0" * (1 << 20)
        for _ in range(256):  # 256 MiB of zeros in about 1 MB
            fh.write(block)
    proc, peak = run_measured(str(bomb))
    no_traceback(proc)
    assert proc.returncode == 3, proc.stderr
    assert peak < 200 * MIB
