"""The progress line on stderr (issue 14): shown while a scan runs and while --follow watches, when stderr is a
terminal (a real pseudo-terminal here), and never when stderr is a pipe or a file. `diagnose run` shows none: the
wrapped command's own output is on that terminal, and a line rewritten under it would garble it."""

from __future__ import annotations

import os
import pty
import select
import signal
import subprocess
import sys
import time
from pathlib import Path

SAMPLE = Path(__file__).resolve().parent.parent / "sample_logs" / "verl" / "vllm-kv-cache-v1-colocated.log"
CLEAR = "\r\x1b[K"
# the scan's line waits a second before it shows (a quick scan shows nothing): the test makes it show at once
FAST_PROGRESS = ("import sys, diagnoser.console as c; c.TerminalProgress.DELAY = 0; c.TerminalProgress.EVERY = 0; "
                 "from diagnoser.__main__ import main; sys.exit(main())")


def _run(args: list[str], tty: bool, after: str | None = None, seconds: float = 0.0) -> str:
    """Run `python ARGS` with stderr on a pseudo-terminal (or a pipe) and return what reached stderr. With `after`,
    interrupt it `seconds` after that text first reached stderr (--follow runs until then)."""
    env = {**os.environ, "PYTHONIOENCODING": "utf-8", "COLUMNS": "100"}
    if tty:
        master, slave = pty.openpty()
    else:
        master, slave = os.pipe()
    proc = subprocess.Popen([sys.executable, *args], stdout=subprocess.DEVNULL, stdin=subprocess.DEVNULL,
                            stderr=slave, env=env)
    os.close(slave)
    got = b""
    deadline = time.monotonic() + 240  # a loaded machine starts slowly
    stop_at: float | None = None
    try:
        while time.monotonic() < deadline:
            if stop_at is None and after is not None and after.encode() in got:
                stop_at = time.monotonic() + seconds
            if stop_at is not None and time.monotonic() >= stop_at:
                proc.send_signal(signal.SIGINT)
                stop_at, after = None, None
            ready, _, _ = select.select([master], [], [], 0.1)
            if not ready:
                continue
            try:
                chunk = os.read(master, 65536)
            except OSError:  # the terminal closed with the process
                break
            if not chunk:
                break
            got += chunk
        proc.wait(timeout=60)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    return got.decode("utf-8", "replace")


def test_a_scan_shows_its_progress_line_in_a_terminal_only() -> None:
    shown = _run(["-c", FAST_PROGRESS, str(SAMPLE)], tty=True)
    assert "diagnose: scanning 1/1 file(s)" in shown and CLEAR in shown, shown
    piped = _run(["-c", FAST_PROGRESS, str(SAMPLE)], tty=False)
    assert "scanning" not in piped and CLEAR not in piped, piped


def test_follow_keeps_its_watching_line_up_to_date_in_a_terminal_only(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_bytes(SAMPLE.read_bytes())
    args = ["-m", "diagnoser", "--follow", str(log), "--from-start"]
    shown = _run(args, tty=True, after="watching", seconds=3)
    assert "diagnose: watching 1 file(s)" in shown, shown  # said once, in a terminal or not
    assert CLEAR + "diagnose: watching 1 file(s) · " in shown, shown  # then kept up to date on one line
    piped = _run(args, tty=False, after="watching", seconds=3)
    assert "diagnose: watching 1 file(s)" in piped and CLEAR not in piped, piped
