"""`py-spy dump` output read line by line: each process's main-thread stack.

The format (benfred/py-spy src/dump.rs, py-spy 0.3-0.4): `Process <pid>: <command line>`, `Python v<version>
(<exe>)`, a blank line, then per thread `Thread <tid> (idle|active|active+gil): "<name>"` followed by its frames,
innermost first, `    <function> (<file>:<line>)`; `--native` adds C frames `    <symbol> (<library>)`,
`--locals` adds indented `Arguments:` / `Locals:` blocks. A dump of several processes repeats the block.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..lazyre import lazy

PROCESS_RE = lazy(r"^Process (?P<pid>\d{1,9}): (?P<cmd>.{0,2000})$")
THREAD_RE = lazy(r'^Thread (?P<tid>0[xX][0-9a-fA-F]{1,16}|\d{1,9}) \((?P<status>idle|active\+gil|active)\)'
                          r'(?:: "(?P<name>[^"]{0,200})")?\s*$')
THREAD_LITERALS = ("(idle)", "(active)", "(active+gil)")
MAX_FRAMES = 64
MAX_NAME = 300


@dataclass(frozen=True, slots=True)
class Stack:
    """The main thread of one process in a py-spy dump."""

    pid: int | None
    command: str
    status: str
    frames: tuple[tuple[str, str, int | None], ...]  # (function, file, line), innermost first


def _frame(text: str) -> tuple[str, str, int | None] | None:
    """`    <function> (<file>:<line>)`; a C++ symbol may hold parentheses itself, so the location is the last ones."""
    body = text.rstrip()
    if not body.startswith("    ") or body[4:5].isspace() or not body.endswith(")") or " (" not in body:
        return None
    func, _, where = body[4:-1].rpartition(" (")
    file, _, line = where.rpartition(":")
    if not line.isdigit() or len(line) > 9:
        file, line = where, ""
    return func[:MAX_NAME], file[:MAX_NAME], int(line) if line else None


class PySpyReader:
    """Fed cleaned lines in order; `feed` returns a Stack when a process's main thread is complete."""

    def __init__(self) -> None:
        self.pid: int | None = None
        self.command = ""
        self.thread: str | None = None  # status of the main thread being read, None outside it
        self.frames: list[tuple[str, str, int | None]] = []
        self.tid: int | None = None

    @property
    def reading(self) -> bool:
        """Inside a main thread's frames: the next lines must all be seen."""
        return self.thread is not None

    def feed(self, text: str) -> Stack | None:
        if self.thread is not None:
            if text.startswith("        "):  # --locals blocks under a frame
                return None
            frame = _frame(text)
            if frame is not None:
                if len(self.frames) < MAX_FRAMES:
                    self.frames.append(frame)
                return None
            done = self.close()
            self._start(text)
            return done
        self._start(text)
        return None

    def _start(self, text: str) -> None:
        if text.startswith("Process "):
            m = PROCESS_RE.match(text)
            if m is not None:
                self.pid, self.command = int(m.group("pid")), m.group("cmd")
            return
        if text.startswith("Thread "):
            m = THREAD_RE.match(text)
            if m is not None and (m.group("name") or "") == "MainThread":
                self.thread, self.frames = m.group("status"), []
                tid = m.group("tid")
                self.tid = int(tid) if tid.isdigit() else None

    def close(self) -> Stack | None:
        """The main thread being read, complete (at a line that is not a frame, or the end of the source)."""
        if self.thread is None:
            return None
        # on Linux py-spy shows the native thread id, which is the pid for the main thread
        pid = self.pid if self.pid is not None else self.tid
        stack = Stack(pid, self.command, self.thread, tuple(self.frames))
        self.thread, self.frames, self.pid, self.command = None, [], None, ""
        return stack
