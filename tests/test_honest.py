"""Honest verdicts (issue 14): a command that failed is a failure even when no line says why; input that holds
nothing is not "no failure found"; a missing file among several does not stop the others; the job's shape counts
what the logs showed."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from diagnoser.cli import main

from .conftest import SAMPLES

SAMPLE = SAMPLES / "chatlearn" / "cuda-oom-fsdp-packing.log"


def diagnose(*args: str) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "LANG": "C.UTF-8", "COLUMNS": "80"}
    return subprocess.run([sys.executable, "-m", "diagnoser", *args], capture_output=True, text=True, env=env,
                          timeout=120, check=False)


def run_main(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_a_command_that_exits_non_zero_is_a_failure_even_with_no_line_matched() -> None:
    proc = diagnose("run", "--format", "json", "--", sys.executable, "-c", "print('step 1'); raise SystemExit(3)")
    report = json.loads(proc.stderr)
    assert proc.returncode == 3 and report["failed"] is True and report["verdict"] == "investigate"
    assert [f["id"] for f in report["findings"]] == ["command-failed"]
    assert report["findings"][0]["captures"]["status"] == "3"
    text = diagnose("run", "--", sys.executable, "-c", "raise SystemExit(3)")
    assert "the command exited with status 3" in text.stderr and "No failure found" not in text.stderr
    summary = " ".join(line.strip() for line in text.stderr.rstrip().splitlines()[-2:])
    assert "failed: the command exited with status 3 · verdict investigate" in summary


def test_sigkill_points_at_the_oom_killer_and_where_to_confirm_it() -> None:
    proc = diagnose("run", "--", sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    assert proc.returncode == 137
    assert "killed by signal 9 (SIGKILL)" in proc.stderr and "OOM killer" in proc.stderr
    for where in ("dmesg -T", "journalctl -k", "kubectl describe pod"):
        assert where in proc.stderr


def test_the_exit_status_is_an_echo_when_the_output_says_why() -> None:
    script = ("import sys; sys.stderr.write('torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
              "GPU 0 has a total capacity of 79.15 GiB of which 1.00 GiB is free.\\n'); sys.exit(1)")
    stderr = diagnose("run", "-f", "json", "--", sys.executable, "-c", script).stderr
    report = json.loads(stderr[stderr.index('{\n  "schema"'):])  # after the command's own stderr
    assert report["root_cause"]["id"] == "cuda-oom"
    exit_status = next(f for f in report["findings"] if f["id"] == "command-failed")
    assert exit_status["symptom_of"] == ["cuda-oom"]


def test_the_schedulers_exit_code_is_a_failure_too(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    log = tmp_path / "quiet.log"
    log.write_text("step 1 loss 0.5\n")
    code, out, _ = run_main([str(log), "--exit-code", "137", "-f", "json"], capsys)
    report = json.loads(out)
    assert code == 1 and report["failed"] and [f["id"] for f in report["findings"]] == ["command-failed"]
    assert report["findings"][0]["captures"]["signal"] == "SIGKILL"


@pytest.mark.parametrize("make", ["empty file", "empty folder", "folder with no log", "binary file", "/dev/null"])
def test_input_with_nothing_to_diagnose_says_so(make: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    target = tmp_path / "in"
    if make == "empty file":
        target.write_text("")
    elif make == "empty folder":
        target.mkdir()
    elif make == "folder with no log":
        target.mkdir()
        (target / "model.safetensors").write_bytes(b"\x00\x01" * 100)
    elif make == "binary file":
        target = tmp_path / "train.log"
        target.write_bytes(Path(os.path.realpath(sys.executable)).read_bytes()[:65536])  # a program, named .log
    else:
        target = Path(os.devnull)
    code, out, err = run_main([str(target)], capsys)
    assert code == 3, (code, out, err)
    assert "Nothing to diagnose: no log line was read" in out and "No failure found" not in out
    assert out.rstrip().splitlines()[-1].startswith("nothing to diagnose")
    if make == "binary file":
        assert "binary content, not a log; skipped" in err
    code, out, _ = run_main([str(target), "-f", "json"], capsys)
    report = json.loads(out)
    assert code == 3 and report["stats"]["lines"] == 0 and report["verdict"] == "none" and not report["failed"]


def test_one_missing_file_among_several(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    missing = tmp_path / "rank9.log"
    code, out, err = run_main([str(missing), str(SAMPLE), "-f", "json"], capsys)
    assert code == 1 and json.loads(out)["root_cause"]["id"] == "cuda-oom"
    assert "rank9.log: no such file or folder; skipped" in err
    code, out, err = run_main([str(missing), str(tmp_path / "rank10.log")], capsys)
    assert code == 2 and out == "" and "no such file or folder" in err


def test_the_job_counts_the_rank_files_it_saw(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    for rank in range(4):
        (tmp_path / f"rank{rank}.log").write_text(("WORLD_SIZE=2\n" if rank == 0 else "") + f"step 1 on rank {rank}\n")
    code, out, _ = run_main([str(tmp_path), "-f", "json"], capsys)
    job = json.loads(out)["job"]
    assert code == 0 and job["ranks_seen"] == 4 and job["world_size"] == 2
    _code, out, _ = run_main([str(tmp_path)], capsys)
    assert out.startswith("Job: 4 ranks") and "1 rank" not in out.splitlines()[0]


def test_an_excerpt_of_one_file_counts_the_ranks_its_findings_name(capsys: pytest.CaptureFixture[str],
                                                                   tmp_path: Path) -> None:
    # one file holding the watchdog timeouts of eight ranks (PyTorch ProcessGroupNCCL.cpp; a line from
    # sample_logs/), and a config line that says one
    line = ("[rank{r}]:[E715 14:32:07.437000765 ProcessGroupNCCL.cpp:629] [Rank {r}] Watchdog caught collective "
            "operation timeout: WorkNCCL(SeqNum=20417, OpType=_REDUCE_SCATTER_BASE, NumelIn=136314880, "
            "NumelOut=17039360, Timeout(ms)=600000) ran for 600019 milliseconds before timing out.\n")
    log = tmp_path / "excerpt.log"
    log.write_text("world_size: 1\n" + "".join(line.format(r=r) for r in range(8)))
    _code, out, _ = run_main([str(log)], capsys)
    first = out.splitlines()[0]
    assert first.startswith("Job: 8 ranks") and "1 rank" not in first and "host" not in first
