"""`diagnose run -- CMD ARGS...`: run the training command, pass its output through, diagnose it live.

The child's stdout and stderr go to ours as they arrive (and to --log), never waiting for the diagnosis:
reader threads copy them and queue their whole lines, in chunks, for the diagnosis, which reads them
through the fast search's gate (the lines holding no gate literal cost it a newline count). The command runs
in a process group of its own, and every signal that would end us (SIGINT, SIGTERM, SIGHUP, SIGQUIT) and the
user signals are forwarded to that group; we wait for the command and exit with its own status, so `| tee` can
no longer hide a failure and a hang-up never orphans it. A process the command left in the background that
still holds its pipes does not hold us: GRACE seconds after the command exits, the diagnosis ends.
"""

from __future__ import annotations

import contextlib
import errno
import fcntl
import os
import queue
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from functools import lru_cache
from types import FrameType
from typing import BinaryIO

from ..errors import InputError
from ..i18n import Msg
from ..output import write_all
from ..read.sources import MAX_LINE
from ..search import LiteralSearch
from .live import LiveSession, StopLive

QUEUE_BYTES = 64 << 20  # output waiting for the diagnosis; past it, only the lines that can matter are queued
# the child's pipes hold this much (Linux: F_SETPIPE_SZ, up to /proc/sys/fs/pipe-max-size) and a pump reads as much
# at once: with the default 64 KiB the child waited on a full pipe each time a pump waited for the interpreter
PIPE_BYTES = 1 << 20
GRACE = 1.0  # seconds the pipes are read after the command exited (a background process may hold them open)
FORWARDED = tuple(getattr(signal, name) for name in ("SIGINT", "SIGTERM", "SIGHUP", "SIGQUIT", "SIGUSR1", "SIGUSR2")
                  if hasattr(signal, name))
SOURCE = "<run>"


class _Output:
    """The whole lines the pumps copied, waiting for the diagnosis, in the order they came; bounded in bytes.

    The diagnosis reads it as a file (`read`), through the fast search's gate, so it keeps up with any
    rate the pipes carry. Should it still fall behind by QUEUE_BYTES, a pump queues only the lines that
    hold a gate literal (each other line becomes an empty one, so numbering stays right) and counts the
    others as shed: no line that could name a failure is ever dropped.
    """

    def __init__(self, session: LiveSession, pumps: int, literals: frozenset[str],
                 exited: Callable[[], bool] = lambda: False) -> None:
        self.session = session
        self.exited = exited  # whether the command has exited
        self.exited_at: float | None = None
        self.left_behind = False  # the command exited and something it started still holds its pipes
        self.items: queue.SimpleQueue[bytes | None] = queue.SimpleQueue()
        self.waiting = 0  # bytes queued and not yet read
        self.lock = threading.Lock()
        self.open = pumps
        self.literals = literals
        self.shed = 0  # lines queued empty
        self.last_tick = time.monotonic()

    def put(self, data: bytes) -> None:
        if self.waiting >= QUEUE_BYTES:
            data = self._gate(data)
        with self.lock:
            self.waiting += len(data)
        self.items.put(data)

    def _gate(self, data: bytes) -> bytes:
        search = _pump_search(self.literals)
        out: list[bytes] = []
        pos = 0
        for start in search.line_starts(data):
            gap = data.count(b"\n", pos, start)
            self.shed += gap
            out.append(b"\n" * gap)
            pos = data.find(b"\n", start) + 1
            out.append(data[start:pos])
        gap = data.count(b"\n", pos)
        self.shed += gap
        out.append(b"\n" * gap)
        return b"".join(out)

    def close(self) -> None:
        self.items.put(None)

    def read(self, _size: int = -1) -> bytes:
        """The next lines (b"" once every pump closed); ticks the session while it waits."""
        session = self.session
        while self.open:
            now = time.monotonic()
            if now - self.last_tick >= TICK:
                self.last_tick = now
                session.tick()
            try:
                item = self.items.get(timeout=TICK)
            except queue.Empty:
                if self._left_behind(now):
                    self.open, self.left_behind = 0, True  # the pumps copy on; the diagnosis ends here
                    break
                continue
            if item is None:
                self.open -= 1
                continue
            with self.lock:
                self.waiting -= len(item)
            session.saw(SOURCE, item)
            return item
        return b""

    def _left_behind(self, now: float) -> bool:
        """The command exited GRACE ago and its pipes are still open: something it started holds them. `exited`
        also asks that every pump waits in read on an empty pipe: one blocked writing to a slow stdout still has
        the command's last lines to queue."""
        if self.exited_at is None:
            if self.exited():
                self.exited_at = now
            return False
        return now - self.exited_at >= GRACE


TICK = 0.2  # seconds between the session's checks (quiet streams, hangs) while output flows or not


@lru_cache(maxsize=4)
def _pump_search(literals: frozenset[str]) -> LiteralSearch:
    return LiteralSearch(literals)  # its own instance: a search's scratch space is not shared across threads


class _Pump(threading.Thread):
    """Copy one pipe of the child to our stream at once, and queue its whole lines for the diagnosis.

    Nothing stops the copy but the pipe's end: our stream or the --log file failing (closed, disk full)
    is warned about once and that copy stops; the lines still reach the diagnosis, and the end of the pipe
    is always told (the diagnosis would otherwise wait for it forever).
    """

    def __init__(self, fd: int, out: BinaryIO | None, log: BinaryIO | None, output: _Output, lock: threading.Lock,
                 warn: Callable[[str], None], log_path: str | None) -> None:
        super().__init__(daemon=True)
        self.fd, self.out, self.log, self.output, self.lock = fd, out, log, output, lock
        self.warn, self.log_path = warn, log_path
        self.reading = False  # waiting in os.read: nothing of the pipe's is held here

    def run(self) -> None:
        try:
            self._copy()
        finally:
            self.output.close()

    def _pass_on(self, chunk: bytes) -> None:
        if self.out is not None:
            try:
                write_all(self.out, chunk)
            except (OSError, ValueError) as exc:
                self.out = None  # our own output went away; the child keeps running and is still diagnosed
                self.warn(Msg("warn_passthrough", reason=_reason(exc)))
        with self.lock:  # the log is closed under this lock (a background process may still be writing)
            if self.log is None:
                return
            try:
                write_all(self.log, chunk)
            except (OSError, ValueError) as exc:
                self.log = None
                self.warn(Msg("warn_log_failed", path=self.log_path, reason=_reason(exc)))

    def _copy(self) -> None:
        partial = b""
        skipping = False  # inside an over-long line whose head was queued: the rest is dropped
        while True:
            self.reading = True
            try:
                chunk = os.read(self.fd, PIPE_BYTES)
            except OSError:
                chunk = b""
            self.reading = False
            if not chunk:
                break
            self._pass_on(chunk)
            if skipping:
                nl = chunk.find(b"\n")
                if nl < 0:
                    continue
                skipping, chunk = False, chunk[nl + 1:]
            partial += chunk
            end = partial.rfind(b"\n")
            if end >= 0:
                self.output.put(partial[: end + 1])
                partial = partial[end + 1:]
            if len(partial) >= MAX_LINE:  # the head of an over-long line, cut (see line_text)
                self.output.put(partial[:MAX_LINE] + b"\n")
                partial, skipping = b"", True
        if partial:
            self.output.put(partial + b"\n")


def _reason(exc: Exception) -> str:
    return (exc.strerror if isinstance(exc, OSError) else None) or str(exc) or type(exc).__name__


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
    lock = threading.Lock()
    pumps: list[_Pump] = []
    output = _Output(session, 2, session.db.search.body,
                     lambda: child.poll() is not None and all(p.reading or not p.is_alive() for p in pumps))
    assert child.stdout is not None and child.stderr is not None
    for pipe in (child.stdout, child.stderr):
        with contextlib.suppress(OSError, AttributeError):  # not Linux, or a lower limit: the default size
            fcntl.fcntl(pipe.fileno(), fcntl.F_SETPIPE_SZ, PIPE_BYTES)  # type: ignore[attr-defined]
    out = getattr(sys.stdout, "buffer", None)
    if out is None:
        warn(Msg("warn_passthrough", reason=os.strerror(errno.EBADF)))  # our stdout is closed
    pumps += [_Pump(child.stdout.fileno(), out, log, output, lock, warn, log_path),
              _Pump(child.stderr.fileno(), getattr(sys.stderr, "buffer", None), log, output, lock, warn, log_path)]
    for p in pumps:
        p.start()

    def forward(signum: int, _frame: FrameType | None) -> None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(child.pid, signum)

    previous = {sig: signal.signal(sig, forward) for sig in FORWARDED}
    stopped = False
    try:
        session.read_stream(SOURCE, output)  # type: ignore[arg-type]
    except StopLive:
        stopped = True
        forward(signal.SIGTERM, None)
    finally:
        code = child.wait()
        for sig, handler in previous.items():
            signal.signal(sig, handler)
        # pumps whose pipe a background process holds are not waited for (they copy on while we live)
        deadline = time.monotonic() + (0.1 if output.left_behind else 5.0)
        for p in pumps:
            p.join(timeout=max(0.0, deadline - time.monotonic()))
        if log is not None:
            with lock:
                for p in pumps:
                    p.log = None
                log.close()
    if output.shed:
        warn(Msg("warn_shed", n=output.shed))
    if stopped:
        raise StopLive
    return exit_status(code)
