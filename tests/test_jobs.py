"""Post-mortem over a folder: file roles, parallel scan == sequential scan, timeline, verdict, checkpoint."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pytest

from diagnoser.modes.batch import diagnose
from diagnoser.read.walk import describe, expand
from diagnoser.report.contract import to_json

from .conftest import SAMPLES

OOM = SAMPLES / "chatlearn" / "cuda-oom-fsdp-packing.log"


@pytest.mark.parametrize(("rel", "rank", "role", "host"), [
    ("worker-1/log_3.txt", 3, "worker", "worker-1"),
    ("dlc1abc-master-0/train.log", None, "worker", "dlc1abc-master-0"),
    ("node-2/dmesg.txt", None, "kernel", "node-2"),
    ("kern.log", None, "kernel", None),
    ("session_latest/logs/raylet.out", None, "ray", None),
    ("logs/log_rank_actor_train-0-G0_5_8.log", 5, "worker", None),
    ("job-driver-raysubmit_1.log", None, "ray", None),
    ("10.0.0.7/rank12.log.gz", 12, "worker", "10.0.0.7"),
])
def test_describe(rel: str, rank: int | None, role: str, host: str | None) -> None:
    assert describe(Path("/job") / rel, Path("/job")) == (rank, role, host)


def test_expand_skips_binary_and_non_logs(tmp_path: Path) -> None:
    (tmp_path / "a.log").write_text("hello\n")
    (tmp_path / "model.safetensors").write_bytes(b"\x00" * 100)
    (tmp_path / "blob").write_bytes(b"abc\x00def")
    (tmp_path / "config.yaml").write_text("a: 1\n")
    (tmp_path / "worker-0").mkdir()
    (tmp_path / "worker-0" / "stdout").write_text("plain text\n")
    warnings: list[str] = []
    found = expand(tmp_path, warnings.append)
    assert [Path(s.name).relative_to(tmp_path).as_posix() for s in found] == ["a.log", "worker-0/stdout"]
    assert len(warnings) == 1 and "skipped 3 file(s)" in warnings[0]


def test_an_unreadable_folder_is_said_not_skipped_silently(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # a failed job's rank folder that cannot be listed (permissions, a stale NFS handle) made it look healthy
    (tmp_path / "a.log").write_text("hello\n")
    (tmp_path / "worker-3").mkdir()
    (tmp_path / "worker-3" / "rank3.log").write_text("torch.OutOfMemoryError: CUDA out of memory.\n")
    real = os.scandir

    def scandir(path: object = ".") -> object:
        if str(path).endswith("worker-3"):
            raise PermissionError(13, "Permission denied", str(path))
        return real(path)  # type: ignore[arg-type]

    monkeypatch.setattr(os, "scandir", scandir)  # root reads any folder: this is what a user without rights sees
    warnings: list[str] = []
    found = expand(tmp_path, warnings.append)
    assert [Path(s.name).name for s in found] == ["a.log"]
    assert len(warnings) == 1 and "1 folder(s) could not be read" in warnings[0] and "worker-3" in warnings[0]


def _report(db, paths: list[Path], jobs: int) -> dict:  # type: ignore[no-untyped-def,type-arg]
    from diagnoser.console import Warner as _Warner
    from diagnoser.console import input_sources as _sources
    report = diagnose(db, _sources(paths, _Warner("en")), "en", jobs=jobs)
    data = to_json(report)
    data["stats"]["seconds"] = 0
    return data


def test_parallel_scan_equals_sequential(db, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    for host in ("worker-0", "worker-1"):
        (tmp_path / host).mkdir()
        for rank in range(3):
            shutil.copy(OOM, tmp_path / host / f"log_{rank}.txt")
    (tmp_path / "worker-1" / "healthy.log").write_text("step 1 loss 0.5\n" * 50)
    sequential = _report(db, [tmp_path], jobs=1)
    parallel = _report(db, [tmp_path], jobs=2)
    assert json.dumps(sequential, sort_keys=True) == json.dumps(parallel, sort_keys=True)
    assert sequential["stats"]["sources"] == 7
    assert sequential["root_cause"]["id"] == "cuda-oom"


def test_a_folder_of_small_files_is_shared_among_the_workers(tmp_path: Path) -> None:
    """All of a job's 64 per-rank files went to one worker (one batch up to 64 files or 32 MB): -j 2 took as long as
    -j 1. Now each worker gets a few batches, in order, none past the old bounds; a part of a big file goes alone."""
    from diagnoser.modes.pool import BATCH_BYTES, BATCH_FILES, _batches
    from diagnoser.read.sources import Source
    from diagnoser.search import Part

    sources = []
    for i in range(64):
        path = tmp_path / f"rank{i}.log"
        path.write_bytes(b"x" * 300_000)
        sources.append(Source(str(path), path))
    tasks: list = [(i, s, None) for i, s in enumerate(sources)]
    for workers in (2, 4, 16):
        batches = _batches(tasks, workers)
        assert [t for b in batches for t in b] == tasks
        assert len(batches) >= workers * 2
        assert all(len(b) <= BATCH_FILES and sum(t[1].path.stat().st_size for t in b) <= BATCH_BYTES for b in batches)
    big = (64, Source("big", tmp_path / "big"), Part(0, 10, 0, False))
    batches = _batches([*tasks[:3], big, *tasks[3:5]], 2)
    assert [big] in batches and all(len(b) == 1 or big not in b for b in batches)


def test_job_section_verdict_and_checkpoint(db, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    log = tmp_path / "train.log"
    log.write_text(
        "------------------------ arguments ------------------------\n"
        "  tensor_model_parallel_size ...................... 2\n"
        "  pipeline_model_parallel_size .................... 4\n"
        "  world_size ...................................... 64\n"
        "-------------------- end of arguments ---------------------\n"
        "saving checkpoint at iteration     100 to /mnt/ckpt in torch_dist format\n"
        "  successfully saved checkpoint from iteration     100 to /mnt/ckpt [ t 1/2, p 1/4 ]\n"
        "  successfully saved checkpoint from iteration     200 to /mnt/ckpt [ t 1/2, p 1/4 ]\n"
        "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
        "79.15 GiB of which 1.00 GiB is free.\n"
    )
    data = _report(db, [log], jobs=1)
    assert data["job"]["framework"] == "megatron"
    assert (data["job"]["tp"], data["job"]["pp"], data["job"]["world_size"]) == (2, 4, 64)
    assert data["last_checkpoint"]["step"] == 200 and data["last_checkpoint"]["path"] == "/mnt/ckpt"
    assert data["verdict"] == "fix-then-restart"


def test_healthy_job_has_no_verdict(db, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    log = tmp_path / "ok.log"
    log.write_text("step 1\nstep 2\n")
    data = _report(db, [log], jobs=1)
    assert data["verdict"] == "none" and data["root_cause"] is None


UTF16_LOG = ("step:1 - actor/pg_loss:0.1\r\nTraceback (most recent call last):\r\n  File \"t.py\", line 1, in <module>\r\n"
             "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
             "79.15 GiB of which 1.00 GiB is free.\r\n")


@pytest.mark.parametrize("encoding", ["utf-16", "utf-16-le-bom", "utf-16-be-bom"])
def test_a_utf16_log_is_read_named_and_in_a_folder(db, tmp_path: Path, encoding: str) -> None:  # type: ignore[no-untyped-def]
    # PowerShell's `>` writes UTF-16 with a byte-order mark: it was missed when named and skipped as binary in folders
    data = {"utf-16": UTF16_LOG.encode("utf-16"), "utf-16-le-bom": b"\xff\xfe" + UTF16_LOG.encode("utf-16-le"),
            "utf-16-be-bom": b"\xfe\xff" + UTF16_LOG.encode("utf-16-be")}[encoding]
    (tmp_path / "worker-0").mkdir()
    (tmp_path / "worker-0" / "rank0.log").write_bytes(data)
    for target in (tmp_path / "worker-0" / "rank0.log", tmp_path):
        report = _report(db, [target], 1)
        assert report["root_cause"]["id"] == "cuda-oom" and report["stats"]["lines"] == 4, report
