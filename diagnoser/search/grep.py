"""Let grep find the candidate lines of a big input, beside the Python scan.

CPython has no multi-string search: the fast path's trie regex and `bytes.find` passes (plan.py) read
a gigabyte in 15-20 s on one core. `grep -F` searches for many strings at once, in C. So the fast
path hands each block it reads to a `LC_ALL=C grep -a -b -o -F` child process holding the literals of
its body plan, and takes the byte offsets grep prints as the candidate lines of that block. The Python
side then only counts newlines and handles the candidates; the two run on different cores, and a scan
takes about as long as grep alone.

The candidates are the lines the Python plan would confirm (both are exactly the lines holding one of
the literals), so the report is the same; the tests run the fast path both ways. grep is optional: when
it is missing, fails its self-test or fails midway, or DIAGNOSER_GREP=0 is set, the Python plan does
the work (from the block where grep stopped on).
"""

from __future__ import annotations

import contextlib
import ctypes
import os
import queue
import resource
import shutil
import signal
import subprocess
import threading
from collections import deque
from collections.abc import Iterable
from functools import lru_cache
from typing import IO

GREP_MIN_BYTES = 8 << 20  # smaller files: starting grep costs more than it saves
GREP_MEMORY = 1 << 30  # address-space cap for grep (a huge line makes grep hold it whole)
MAX_ARGS_BYTES = 256 << 10
_FLAGS = ("-a", "-b", "-o", "-F")


def enabled() -> bool:
    return os.environ.get("DIAGNOSER_GREP", "1").strip().lower() not in ("0", "off", "no", "false")


@lru_cache(maxsize=1)
def grep_path() -> str | None:
    """A grep that prints what we parse (GNU and BSD grep do; BusyBox's lacks -b), or None."""
    path = shutil.which("grep")
    if path is None:
        return None
    try:
        out = subprocess.run([path, *_FLAGS, "-e", "foo", "-e", "-x"], input=b"ab foo\nfoo\n-x\n",
                             capture_output=True, timeout=10, env=_env(), check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    return path if out.returncode == 0 and out.stdout == b"3:foo\n7:foo\n11:-x\n" else None


def _env() -> dict[str, str]:
    env = dict(os.environ)
    env["LC_ALL"] = "C"  # bytes, not characters; no locale-dependent case folding
    env.pop("GREP_OPTIONS", None)
    env.pop("GREP_COLORS", None)
    return env


def die_with_parent() -> None:
    """Linux: this process gets SIGKILL when its parent dies (a stopped scan leaves nothing running)."""
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL(None).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG


def _limit_child() -> None:  # runs in the child between fork and exec
    with contextlib.suppress(ValueError, OSError):
        resource.setrlimit(resource.RLIMIT_AS, (GREP_MEMORY, GREP_MEMORY))
    die_with_parent()
    signal.signal(signal.SIGINT, signal.SIG_DFL)
    signal.signal(signal.SIGPIPE, signal.SIG_DFL)


SYNC = b"\x01\x02diagnoser-sync\x02\x01"  # a line written after each block: grep echoes it when done with it
_SYNC_LINE = SYNC + b"\n"


class GrepFinder:
    """A grep process that is fed the blocks the fast path reads and hands back, block by block and in
    order, the starts of the lines holding a literal.

    A thread writes each block to grep's stdin followed by a SYNC line; grep (line-buffered) prints the
    offsets of its matches and then the SYNC line's, so the reader knows a block is complete without
    waiting for the end of the input. The caller feeds block k+1 before it asks for block k, so grep
    searches one block while Python handles the one before.
    """

    def __init__(self, proc: subprocess.Popen[bytes]) -> None:
        self.proc = proc
        assert proc.stdin is not None and proc.stdout is not None
        self.stdin: IO[bytes] = proc.stdin
        self.out: IO[bytes] = proc.stdout
        self.fed: deque[tuple[int, int]] = deque()  # (offset of the block, offset of its SYNC line)
        self.written = 0  # bytes of stream handed to the writer so far
        self.failed = False
        self.queue: queue.Queue[bytes | None] = queue.Queue(maxsize=4)
        self.writer = threading.Thread(target=self._write, name="grep-writer", daemon=True)
        self.writer.start()

    def _write(self) -> None:
        try:
            while (block := self.queue.get()) is not None:
                self.stdin.write(block)
                self.stdin.write(_SYNC_LINE)
                self.stdin.flush()
        except (OSError, ValueError):
            pass  # grep is gone: the reader sees its end and the caller searches for itself
        finally:
            with contextlib.suppress(OSError, ValueError):
                self.stdin.close()

    def feed(self, block: bytes) -> None:
        """Queue a block (whole lines, ending in a newline) for grep."""
        if self.failed:
            return
        self.fed.append((self.written, self.written + len(block)))
        self.written += len(block) + len(_SYNC_LINE)
        self.queue.put(block)

    def end(self) -> None:
        """No more blocks: grep may finish."""
        if not self.failed:
            self.queue.put(None)

    def candidates(self, block: bytes) -> list[int] | None:
        """Starts (in `block`) of its lines holding a literal; `block` is the oldest block fed and not yet
        asked for. None when grep failed: the caller searches this block (and the next ones) itself."""
        if self.failed or not self.fed:
            return None
        start, sync = self.fed.popleft()
        found: set[int] = set()
        while True:
            line = self.out.readline()
            try:
                offset = int(line[: line.index(b":")])
            except ValueError:  # the end of grep's output (it died) or a line we cannot read
                self._fail()
                return None
            if offset == sync:
                return sorted(found)
            if start <= offset < sync:
                found.add(block.rfind(b"\n", 0, offset - start) + 1)

    def _fail(self) -> None:
        self.failed = True
        self.close()

    def close(self) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
        with contextlib.suppress(queue.Full):
            self.queue.put_nowait(None)  # the writer stops at its next write (EPIPE) or here
        self.writer.join(timeout=5)
        with contextlib.suppress(OSError, ValueError):
            self.out.close()
        self.proc.wait()


def start(literals: Iterable[str]) -> GrepFinder | None:
    """A grep ready to be fed blocks, or None when grep cannot be used."""
    if not enabled():
        return None
    grep = grep_path()
    lits = sorted({lit.encode("utf-8") for lit in literals})
    if grep is None or not lits or any(b"\n" in lit or b"\0" in lit or not lit for lit in lits):
        return None
    if sum(len(lit) + 4 for lit in lits) > MAX_ARGS_BYTES:
        return None  # a database this large would not fit on a command line
    args: list[bytes | str] = [grep, "--line-buffered", *_FLAGS, b"-e", SYNC]
    for lit in lits:
        args += [b"-e", lit]
    try:
        proc = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
                                env=_env(), preexec_fn=_limit_child, bufsize=1 << 16)
    except (OSError, ValueError, subprocess.SubprocessError):
        return None
    return GrepFinder(proc)
