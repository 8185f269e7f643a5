"""`diagnose run -- CMD ARGS...`: run the training command, pass its output through, diagnose it live.

The child's stdout and stderr go to ours as they arrive (and to --log), never waiting for the diagnosis:
reader threads copy them and hand the lines to a queue the diagnosis reads. SIGINT and SIGTERM are
forwarded to the child; the exit status is the child's own, so `| tee` can no longer hide a failure.
"""

from __future__ import annotations

import contextlib
import os
import queue
import signal
import subprocess
import sys
import threading
from collections.abc import Callable
from types import FrameType
from typing import BinaryIO

from ..errors import InputError
from ..i18n import Msg
from ..read.sources import MAX_LINE, line_text
from .live import LiveSession, StopLive

QUEUE_LIMIT = 200_000  # lines waiting for the diagnosis; beyond it lines are counted and skipped
SOURCE = "<run>"


class _Pump(threading.Thread):
    """Copy one pipe of the child to our stream at once, and queue its lines for the diagnosis."""

    def __init__(self, fd: int, out: BinaryIO, log: BinaryIO | None, lines: queue.Queue[str | None],
                 lock: threading.Lock, dropped: list[int]) -> None:
        super().__init__(daemon=True)
        self.fd, self.out, self.log, self.lines, self.lock, self.dropped = fd, out, log, lines, lock, dropped

    def run(self) -> None:
        partial = b""
        head: bytes | None = None  # the first MAX_LINE bytes of an over-long line whose rest is dropped
        while True:
            try:
                chunk = os.read(self.fd, 1 << 16)
            except OSError:
                chunk = b""
            if not chunk:
                break
            try:
                self.out.write(chunk)
                self.out.flush()
            except (OSError, ValueError):
                pass  # our own output went away; the child keeps running and is still diagnosed
            if self.log is not None:
                with self.lock:
                    self.log.write(chunk)
                    self.log.flush()
            partial += chunk
            *complete, partial = partial.split(b"\n")
            for raw in complete:
                if head is not None:  # the end of the over-long line: it is the head, cut
                    raw, head = head, None
                    self._queue(line_text(raw, cut=True))
                else:
                    self._queue(line_text(raw))
            if head is not None:
                partial = b""  # still inside the over-long line
            elif len(partial) >= MAX_LINE:
                head, partial = partial[:MAX_LINE], b""
        if head is not None:
            self._queue(line_text(head, cut=True))
        elif partial:
            self._queue(line_text(partial))
        self.lines.put(None)

    def _queue(self, text: str) -> None:
        if self.lines.qsize() >= QUEUE_LIMIT:
            self.dropped[0] += 1
            return
        self.lines.put(text)


def exit_status(returncode: int) -> int:
    """The child's status as a shell would report it (a signal N becomes 128 + N)."""
    return 128 - returncode if returncode < 0 else returncode


def run_command(cmd: list[str], session: LiveSession, log_path: str | None,
                warn: Callable[[str], None]) -> int:
    env = dict(os.environ)
    env.setdefault("PYTHONUNBUFFERED", "1")  # a Python child would otherwise hold its output in a buffer
    try:  # the log file first: a command must not be left running when its log cannot be written
        log = open(log_path, "ab") if log_path else None  # noqa: SIM115 - closed below
    except OSError as exc:
        raise InputError(Msg("err_cannot_open", path=log_path, reason=exc.strerror or exc)) from None
    try:
        child = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env,
                                 start_new_session=True)
    except OSError as exc:
        if log is not None:
            log.close()
        key = "err_cmd_not_found" if isinstance(exc, FileNotFoundError) else "err_cannot_run"
        raise InputError(Msg(key, command=cmd[0], reason=exc.strerror or exc)) from None
    lines: queue.Queue[str | None] = queue.Queue()
    lock = threading.Lock()
    dropped = [0]
    assert child.stdout is not None and child.stderr is not None
    pumps = [_Pump(child.stdout.fileno(), sys.stdout.buffer, log, lines, lock, dropped),
             _Pump(child.stderr.fileno(), sys.stderr.buffer, log, lines, lock, dropped)]
    for p in pumps:
        p.start()

    def forward(signum: int, _frame: FrameType | None) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signum)

    previous = {sig: signal.signal(sig, forward) for sig in (signal.SIGINT, signal.SIGTERM)}
    lineno = 0
    open_pumps = len(pumps)
    stopped = False
    try:
        while open_pumps:
            try:
                text = lines.get(timeout=0.2)
            except queue.Empty:
                session.tick()
                continue
            if text is None:
                open_pumps -= 1
                continue
            lineno += 1
            try:
                session.feed(SOURCE, lineno, text)
            except StopLive:
                stopped = True
                forward(signal.SIGTERM, None)
                break
            if lineno % 512 == 0:
                session.tick()
    finally:
        code = child.wait()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        for p in pumps:
            p.join(timeout=5)
        if log is not None:
            log.close()
    if dropped[0]:
        warn(Msg("warn_fell_behind", n=dropped[0]))
    if stopped:
        raise StopLive
    return exit_status(code)
