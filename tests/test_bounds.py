"""Numbers and sizes a log or a signature file controls are bounded: a number with thousands of digits is kept
as text (Python's int() stops at 4300 digits), a signature file is a regular file of bounded size with no YAML
aliases, an id is one line."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest

from diagnoser.match.database import Database
from diagnoser.modes.batch import diagnose_text
from diagnoser.modes.live import LiveSession
from diagnoser.report.contract import to_json
from diagnoser.report.markdown import render_markdown
from diagnoser.report.text import render_text
from diagnoser.safe import to_int

from .conftest import SAMPLES
from .test_hardening import GOOD  # a valid user signature file

ENV = {**os.environ, "NO_COLOR": "1", "LANG": "C.UTF-8"}
DIAGNOSE = [sys.executable, "-m", "diagnoser"]
HUGE = "7" * 4400
# each holds a number the reader parses: [rankN]:, [defaultN]:, (pid=N), world size / TP facts, a checkpoint
# step, Ray's [repeated Nx across cluster]
CASES = ["host/disk-full-megatron-errno28-save.log", "multirank/ray-sigbus-torchrun-exitcode7.log",
         "chatlearn/ckpt-format-mismatch-fsdp-given-mcore-dir.log",
         "chatlearn/megatron-ckpt-convert-no-process-group.log",
         "jobs/masked-exit-dlc/dlc1b7m2x9q0ws-master-0/dlc1b7m2x9q0ws-master-0.log",
         "jobs/healthy-2nodes/dlc9p3k7w2m4qx-master-0/dlc9p3k7w2m4qx-master-0.log"]


def _huge_numbers(text: str) -> str:
    return "\n".join(re.sub(r"\d+", HUGE, line, count=3) for line in text.splitlines()) + "\n"


@pytest.mark.parametrize("case", CASES)
def test_numbers_with_thousands_of_digits(db: Database, case: str) -> None:
    text = _huge_numbers((SAMPLES / case).read_text(encoding="utf-8", errors="replace"))
    report = diagnose_text(db, text)
    render_text(report, io.StringIO(), color=False)
    render_markdown(report)
    json.dumps(to_json(report))
    session = LiveSession(db, "en", "jsonl", io.StringIO(), lambda _m: None)
    for i, line in enumerate(text.splitlines(), start=1):
        session.feed("live.log", i, line)
    json.dumps(to_json(session.finish()))


def test_a_rank_file_name_with_hundreds_of_digits(tmp_path: Path) -> None:
    log = tmp_path / f"rank{'9' * 240}.log"
    log.write_text(_huge_numbers((SAMPLES / CASES[0]).read_text(encoding="utf-8")))
    proc = subprocess.run([*DIAGNOSE, str(tmp_path), "-f", "json"], capture_output=True, env=ENV, timeout=120,
                          check=False)
    assert b"Traceback" not in proc.stderr and proc.returncode == 1, proc.stderr.decode(errors="replace")
    json.loads(proc.stdout)


def test_to_int_parses_only_what_fits() -> None:
    assert to_int("0042") == 42 and to_int("9" * 18) == int("9" * 18)
    assert to_int("9" * 19) is None and to_int(HUGE) is None
    assert to_int("0" * 5000 + "1") == 1 and to_int("0" * 5000) == 0  # leading zeros count in int()'s limit
    assert to_int("١٢") is None and to_int("") is None and to_int(None) is None and to_int("-1") is None


# 9 levels of 9 aliases each: a few hundred bytes that stand for 9^9 strings
BOMB = GOOD.replace("references: [https://example.com]\n", "references: &r0 [https://example.com, https://e.org]\n"
                    + "".join(f"falsepositives{i}: &r{i} [{', '.join(['*r' + str(i - 1)] * 9)}]\n"
                              for i in range(1, 10)))
BOMB = BOMB.replace("falsepositives9:", "falsepositives:")


def _sig_folder(tmp_path: Path) -> Path:
    folder = tmp_path / "sigs"
    folder.mkdir()
    return folder


def _run_with(folder: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run([*DIAGNOSE, "--signatures", str(folder), "--explain", "my-sig"], capture_output=True,
                          env=ENV, timeout=60, check=False)


@pytest.mark.parametrize(("kind", "needle"), [
    ("dev-zero", b"not a regular file"), ("fifo", b"not a regular file"), ("too-big", b"larger than"),
    ("alias-bomb", b"aliases are not allowed"), ("id-newline", b"must be kebab-case"),
])
def test_signature_files_that_are_not_signature_files(tmp_path: Path, kind: str, needle: bytes) -> None:
    folder = _sig_folder(tmp_path)
    if kind == "dev-zero":
        (folder / "my-sig.yaml").symlink_to("/dev/zero")
    elif kind == "fifo":
        os.mkfifo(folder / "my-sig.yaml")  # nobody ever writes to it: reading it whole waits forever
    elif kind == "too-big":
        (folder / "my-sig.yaml").write_text(GOOD + "# " + "x" * (2 << 20) + "\n")
    elif kind == "alias-bomb":
        (folder / "my-sig.yaml").write_text(BOMB)
    else:  # the file name holds the newline too, so the id agrees with it
        (folder / "my-sig\n.yaml").write_text(GOOD.replace("id: my-sig", 'id: "my-sig\\n"'))
    proc = _run_with(folder)
    err = proc.stderr.decode(errors="replace")
    assert b"Traceback" not in proc.stderr and proc.returncode == 2, err
    assert needle in proc.stderr and len(err.strip().splitlines()) == 1, err


def test_the_bomb_is_valid_yaml_and_small() -> None:
    import yaml
    assert len(BOMB) < 1500 and yaml.safe_load(BOMB)["falsepositives"]


@pytest.mark.parametrize("shape", [
    "step:{n} - actor/pg_loss:0.1", "Global step {n}: {{'loss': 1.0}}", " iteration {n}/ 100 | lm loss: 1.0 |",
    "step {n} prefix train: logging metric {{'loss': 1.0}}", "========== Step {n}/10 ==========",
])
def test_a_metric_line_with_a_step_of_thousands_of_digits(db: Database, shape: str) -> None:
    # the training-health readers parsed the step with int(): 'Exceeds the limit (4300 digits)'
    text = "".join(shape.format(n=HUGE if i == 1 else i) + "\n" for i in range(3))
    json.dumps(to_json(diagnose_text(db, text)))
