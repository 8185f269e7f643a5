"""`diagnose run -- CMD`: output passed through, live findings, the child's exit status, signals forwarded."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

CHILD_FAILS = (
    "import sys\n"
    "print('step:1 - actor/pg_loss:0.1', flush=True)\n"
    "sys.stderr.write('Traceback (most recent call last):\\n  File \"t.py\", line 1, in <module>\\n"
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of "
    "79.15 GiB of which 1.00 GiB is free.\\n')\n"
    "sys.exit(3)\n"
)


def diagnose(*args: str, **kw: object) -> subprocess.CompletedProcess[str]:
    env = {**os.environ, "NO_COLOR": "1", "LANG": "C.UTF-8"}
    return subprocess.run([sys.executable, "-m", "diagnoser", *args], capture_output=True, text=True, env=env,
                          timeout=120, check=False)


def test_failing_child(tmp_path: Path) -> None:
    log = tmp_path / "job.log"
    proc = diagnose("run", "--log", str(log), "--", sys.executable, "-c", CHILD_FAILS)
    assert proc.returncode == 3  # the child's own status, not the diagnosis's
    assert proc.stdout == "step:1 - actor/pg_loss:0.1\n"  # stdout is the child's, unchanged
    assert "torch.OutOfMemoryError" in proc.stderr and "Root cause" in proc.stderr and "cuda-oom" in proc.stderr
    assert "step:1" in log.read_text() and "OutOfMemoryError" in log.read_text()


def test_succeeding_child() -> None:
    proc = diagnose("run", "--", sys.executable, "-c", "print('hello')")
    assert proc.returncode == 0 and proc.stdout == "hello\n" and "No failure found" in proc.stderr


def test_a_child_that_succeeds_has_no_lone_error() -> None:
    # a lone exception line is a failure only if the command failed: here it exited 0
    script = "print('KeyError: optional field, default used'); print('done')"
    proc = diagnose("run", "--", sys.executable, "-c", script)
    assert proc.returncode == 0 and "No failure found" in proc.stderr and "KeyError" not in proc.stderr
    failing = "import sys; print('KeyError: optional field, default used'); sys.exit(4)"
    proc = diagnose("run", "--", sys.executable, "-c", failing)
    assert proc.returncode == 4 and "First unrecognised error: KeyError" in proc.stderr


def test_an_over_long_line_is_cut_and_its_rest_dropped() -> None:
    # the rest of a line past 64 KiB is not a line of its own: the OOM text at its end is not matched
    script = ("import sys; sys.stdout.write('x' * 200000 + ' CUDA out of memory. Tried to allocate 2.00 GiB\\n'); "
              "print('after'); sys.exit(1)")
    proc = diagnose("run", "--format", "json", "--", sys.executable, "-c", script)
    report = json.loads(proc.stderr)
    assert proc.returncode == 1 and report["stats"]["lines"] == 2
    assert [f["id"] for f in report["findings"]] == ["command-failed"]  # only the exit status: no OOM matched


def test_missing_command_is_a_usage_error() -> None:
    proc = diagnose("run", "--", "no-such-command-xyz")
    assert proc.returncode == 2 and "command not found" in proc.stderr and "Traceback" not in proc.stderr


def test_child_killed_by_a_signal_gives_128_plus_n() -> None:
    proc = diagnose("run", "--", sys.executable, "-c", "import os, signal; os.kill(os.getpid(), signal.SIGKILL)")
    assert proc.returncode == 128 + 9


def test_a_burst_of_output_is_diagnosed_whole() -> None:
    # 300,000 lines in one burst, the traceback at the end: every line counted, the finding there
    child = ("import sys\n"
             "sys.stdout.write(''.join(f'(WorkerDict pid=31, ip=10.0.0.7) step:{i} - actor/pg_loss:0.1\\n' "
             "for i in range(300000)))\n"
             "sys.stdout.flush()\n" + CHILD_FAILS.split("\n", 1)[1])
    proc = diagnose("run", "--format", "json", "--", sys.executable, "-c", child)
    report = json.loads(proc.stderr[proc.stderr.index("\n{") + 1:])  # after the child's own stderr
    assert proc.returncode == 3 and report["root_cause"]["id"] == "cuda-oom"
    assert report["stats"]["lines"] == 300000 + 4 and proc.stdout.count("\n") == 300001


def test_a_diagnosis_that_falls_behind_sheds_only_lines_without_a_gate_literal() -> None:
    from diagnoser.match.database import load_database
    from diagnoser.modes import run

    out = run._Output(None, 1, load_database().search.body)  # type: ignore[arg-type]
    chunk = b"step 1\nstep 2\n[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB\nstep 3\n"
    kept = out._gate(chunk)
    assert kept == b"\n\n[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2 GiB\n\n"
    assert out.shed == 3


@pytest.mark.parametrize("signame", ["SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1"])
def test_signals_are_forwarded_to_the_child_not_fatal(signame: str) -> None:
    # SIGTERM reaches the command; a hang-up (the terminal or ssh went away) and the others used to kill diagnose
    # and orphan the command. The command handles each and exits 5: run exits with its status.
    signum = getattr(signal, signame)
    child = ("import signal, sys, time\n"
             f"signal.signal({int(signum)}, lambda *a: (print('child got it', flush=True), sys.exit(5)))\n"
             "print('ready', flush=True)\n"
             "time.sleep(60)\n")
    proc = subprocess.Popen([sys.executable, "-m", "diagnoser", "run", "--", sys.executable, "-c", child],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    deadline = time.time() + 60
    while time.time() < deadline and proc.stdout.readline().strip() != "ready":
        pass
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    assert "child got it" in out and proc.returncode == 5, err


def test_a_background_process_holding_the_pipes_does_not_hold_run() -> None:
    # `sh -c 'sleep 60 & exit 3'`: the shell exits at once, its background sleep keeps the pipes open
    proc = subprocess.Popen([sys.executable, "-m", "diagnoser", "run", "--", "sh", "-c",
                             "echo started; sleep 60 & echo $!; exit 3"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        out, err = proc.communicate(timeout=45)  # it used to wait for the sleep, 60 s
    finally:
        proc.kill()
    lines = out.split()
    assert proc.returncode == 3 and lines[0] == "started", err
    with contextlib.suppress(ProcessLookupError, ValueError):
        os.kill(int(lines[1]), signal.SIGKILL)
