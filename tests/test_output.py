"""The output side: stdout closed, on a full disk, cut by a file-size limit, a pipe whose reader left, a terminal
that cannot encode every character. One line on stderr, a documented exit status, never a traceback, and a
report that was cut short never looks whole."""

from __future__ import annotations

import json
import os
import resource
import subprocess
import sys
from pathlib import Path

import pytest

from .conftest import SAMPLES

SAMPLE = SAMPLES / "chatlearn" / "cuda-oom-fsdp-packing.log"
ENV = {**os.environ, "NO_COLOR": "1", "LANG": "C.UTF-8"}
DIAGNOSE = [sys.executable, "-m", "diagnoser"]
EXIT_OUTPUT = 74


def _one_line_no_traceback(err: bytes) -> None:
    assert b"Traceback" not in err and b"Exception ignored" not in err, err.decode(errors="replace")


def test_stdout_closed() -> None:
    proc = subprocess.run(["sh", "-c", 'exec "$@" >&-', "sh", *DIAGNOSE, str(SAMPLE)], capture_output=True,
                          env=ENV, timeout=120, check=False)
    _one_line_no_traceback(proc.stderr)
    assert proc.returncode == EXIT_OUTPUT
    assert proc.stderr.decode().count("\n") == 1 and b"standard output is closed" in proc.stderr


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_stdout_on_a_full_disk(fmt: str) -> None:
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([*DIAGNOSE, str(SAMPLE), "-f", fmt], stdout=full, stderr=subprocess.PIPE, env=ENV,
                              timeout=120, check=False)
    _one_line_no_traceback(proc.stderr)
    assert proc.returncode == EXIT_OUTPUT
    assert b"No space left on device" in proc.stderr and b"incomplete" in proc.stderr


def test_a_report_cut_by_a_nearly_full_disk_says_so(tmp_path: Path) -> None:
    # RLIMIT_FSIZE stands in for a disk with 8 KiB left: the write past it fails (EFBIG; Python ignores SIGXFSZ)
    def limit() -> None:
        resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))

    out = tmp_path / "report.json"
    with open(out, "wb") as fh:
        proc = subprocess.run([*DIAGNOSE, str(SAMPLE), "-f", "json"], stdout=fh, stderr=subprocess.PIPE, env=ENV,
                              timeout=120, check=False, preexec_fn=limit)
    _one_line_no_traceback(proc.stderr)
    assert out.stat().st_size <= 8192
    assert proc.returncode == EXIT_OUTPUT and b"incomplete" in proc.stderr
    with pytest.raises(json.JSONDecodeError):
        json.loads(out.read_bytes())  # cut: and the exit status and stderr said so


@pytest.mark.parametrize("env", [{"PYTHONUTF8": "0", "LC_ALL": "C", "LANG": "C"}, {"PYTHONIOENCODING": "ascii"},
                                 {"PYTHONIOENCODING": "latin-1"}])
def test_a_terminal_that_cannot_encode_every_character(env: dict[str, str]) -> None:
    base = {k: v for k, v in ENV.items() if k not in ("PYTHONIOENCODING", "LC_ALL", "LANG", "PYTHONUTF8")}
    for args in ([str(SAMPLE)], [str(SAMPLE), "-f", "markdown"], [str(SAMPLE), "--lang", "zh"], ["--list"],
                 ["--explain", "cuda-oom"]):
        proc = subprocess.run([*DIAGNOSE, *args], capture_output=True, env={**base, **env}, timeout=120, check=False)
        _one_line_no_traceback(proc.stderr)
        assert proc.returncode in (0, 1), (args, proc.stderr)
        assert b"cuda-oom" in proc.stdout


def test_a_reader_that_left_is_not_an_error(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([*DIAGNOSE, "--list"], stdout=write_end, stderr=subprocess.PIPE, env=ENV, timeout=120,
                              check=False)
    finally:
        os.close(write_end)
    assert proc.stderr == b"" and proc.returncode == 0  # `diagnose --list | head -3`


def test_run_with_stdout_closed_keeps_the_commands_status() -> None:
    proc = subprocess.run(["sh", "-c", 'exec "$@" >&-', "sh", *DIAGNOSE, "run", "--", "sh", "-c", "echo hi; exit 3"],
                          capture_output=True, env=ENV, timeout=120, check=False)
    _one_line_no_traceback(proc.stderr)
    assert proc.returncode == 3 and b"cannot pass the command's output on" in proc.stderr


def test_run_with_stdout_on_a_full_disk() -> None:
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([*DIAGNOSE, "run", "--", "sh", "-c", "echo hi; echo ho >&2; exit 4"], stdout=full,
                              stderr=subprocess.PIPE, env=ENV, timeout=120, check=False)
    _one_line_no_traceback(proc.stderr)
    assert proc.returncode == 4 and b"No space left on device" in proc.stderr


def test_follow_with_stdout_on_a_full_disk_stops(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_bytes(SAMPLE.read_bytes())
    with open("/dev/full", "wb") as full:
        proc = subprocess.run([*DIAGNOSE, "-F", str(log), "--from-start"], stdout=full, stderr=subprocess.PIPE,
                              env=ENV, timeout=120, check=False)
    _one_line_no_traceback(proc.stderr)
    assert proc.returncode == EXIT_OUTPUT and b"incomplete" in proc.stderr
