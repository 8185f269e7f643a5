"""A file deleted, truncated or replaced while a post-mortem reads it (issue 19): the scan finishes with what was
read and says so in one line, never a traceback. The change is made at a set point of the reading (after its first
piece), so each test is deterministic."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path
from typing import BinaryIO

import pytest

from diagnoser.match.database import Database
from diagnoser.modes import pipeline as pipeline_mod
from diagnoser.modes.batch import diagnose
from diagnoser.modes.pipeline import Pipeline
from diagnoser.read.sources import Source
from diagnoser.search import Part

OOM = ("[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity "
       "of 79.15 GiB of which 1.00 GiB is free.\n")
NOISE = "step:1 - actor/pg_loss:0.1 - critic/score/mean:0.4\n"
SIZE = len(OOM) + 5_000 * len(NOISE)


class _Hooked:
    """A reader that runs `change` once, after its first piece was read."""

    def __init__(self, inner: BinaryIO, change: Callable[[], None]) -> None:
        self.inner, self.change, self.done = inner, change, False

    def _after(self, data: bytes) -> bytes:
        if not self.done:
            self.done = True
            self.change()
        return data

    def read(self, n: int = -1) -> bytes:
        return self._after(self.inner.read(n))

    def readline(self, n: int = -1) -> bytes:
        return self._after(self.inner.readline(n))

    def __getattr__(self, name: str) -> object:
        return getattr(self.inner, name)

    def __enter__(self) -> _Hooked:
        return self

    def __exit__(self, *exc: object) -> None:
        self.inner.close()


def _log(tmp_path: Path) -> Path:
    log = tmp_path / "rank3.log"
    log.write_text(OOM + NOISE * 5_000)  # 250 KB: more than one read's buffer (64 KiB)
    return log


def _truncate(log: Path) -> None:
    os.truncate(log, 1000)


def _delete(log: Path) -> None:
    log.unlink()


def _replace(log: Path) -> None:
    other = log.with_name("new.tmp")
    other.write_text("another file\n")
    os.replace(other, log)


@pytest.mark.parametrize(("change", "said"), [(_truncate, f"truncated while it was read (from {SIZE} to 1000 bytes)"),
                                              (_delete, "deleted while it was read"),
                                              (_replace, "replaced by another file while it was read")])
@pytest.mark.parametrize("fast", [False, "always"])
def test_a_file_changed_while_it_is_read(db: Database, tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                         change: Callable[[Path], None], said: str, fast: bool | str) -> None:
    log = _log(tmp_path)
    real_open = pipeline_mod.open_binary
    monkeypatch.setattr(pipeline_mod, "open_binary", lambda source: _Hooked(real_open(source), lambda: change(log)))
    warnings: list[str] = []
    report = diagnose(db, [Source(str(log), log)], warn=warnings.append, fast=fast)
    assert report.root_cause is not None and report.root_cause.sig.id == "cuda-oom"  # what was read before the change
    assert len(warnings) == 1 and str(warnings[0]).startswith(f"{log}: {said}; the report holds ")


def test_a_part_of_a_big_file_deleted_before_it_is_read(db: Database, tmp_path: Path) -> None:
    # -j: a part opens the file by its path; a file deleted since the scan began raised FileNotFoundError in a worker
    log = _log(tmp_path)
    source = Source(str(log), log)
    log.unlink()
    warnings: list[str] = []
    collector = Pipeline(db, warnings.append).scan_part(source, 0, Part(1 << 20, 2 << 20, 1 << 19))
    assert collector.lines == 0 and len(warnings) == 1
    assert "could not be read from byte 1048576 (No such file or directory)" in str(warnings[0])

