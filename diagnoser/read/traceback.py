"""Group multi-line tracebacks per stream, so interleaved processes never mix two of them.

Python tracebacks (chained ones too, and Ray's nested ones), C++ `terminate called after throwing`
blocks and `Fatal Python error` dumps. A table maps (state, kind of line) to an action; buffers
are bounded so a runaway traceback cannot grow memory.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import regex

from .normalize import LogLine

MAX_TB_LINES = 400  # lines kept per traceback (head and tail survive)
MAX_CONTINUATION = 48  # message lines after the exception line (torchrun's ChildFailedError table is long)
MAX_BLANKS = 2
MAX_STREAMS = 4096  # idle streams beyond this are forgotten (a log with endless new pids)

_TB_START = regex.compile(r"^\s*(?:\+\s*)?(?:Traceback \(most recent call last\):|Exception Group Traceback)")
# a logger that puts the formatted traceback after its own words: vLLM's "EngineCore hit an exception: Traceback
# (most recent call last):", "Error executing method x. Traceback (most recent call last):"
_TB_START_TAIL = regex.compile(r"[:.]\s+Traceback \(most recent call last\):\s*$")
# Ray prints an error no one waited for as "Unhandled error (suppress with ...): ray::W.f() (pid=..)" and
# then the remote frames and the exception line, with no "Traceback" header.
_RAY_UNHANDLED = regex.compile(r"Unhandled error \(suppress with '?RAY_IGNORE_UNHANDLED_ERRORS=1'?\)")
_CXX_START = regex.compile(r"terminate called after throwing an instance of '(?P<type>[^']+)'")
_FATAL_START = regex.compile(r"^Fatal Python error: (?P<msg>.*)")
_SIGNAL_START = regex.compile(r"^\*\*\* (?P<sig>SIG[A-Z]+) received at time=")
_FRAME = regex.compile(r'^\s*(?:\|\s*)?File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.+))?')
_CHAIN = regex.compile(
    r"^\s*(?:During handling of the above exception, another exception occurred:"
    r"|The above exception was the direct cause of the following exception:)"
)
_EXC_LINE = regex.compile(r"^(?P<type>[A-Za-z_][\w.]*(?:\[[\w.]*\]|\([\w.]*\))?)(?::\s?(?P<msg>.*))?$")
# An exception's name: module-qualified (socket.gaierror, http.client.RemoteDisconnected,
# torch._dynamo.exc.BackendCompilerFailed) or a builtin-style name; not "Epoch: 3" from the next log record.
_EXC_NAME = regex.compile(r"\.|(?i:error|exception|exit|interrupt|stopiteration|timeout|failure|failed|fault|warning)")
_WHAT = regex.compile(r"^\s*what\(\):\s*(?P<msg>.*)")
_IGNORED = regex.compile(r"^Exception ignored in")
# PyTorch's ProcessGroupNCCL logs the exception that ended its watchdog on one line, and rethrows it
# (`terminate called ... what(): ` the same text); the text after the colon is the real error.
_WATCHDOG_EXC = regex.compile(r"(?:NCCL|Process group) watchdog thread terminated with exception: (?P<msg>.+)")
WATCHDOG_TYPE = "ProcessGroupNCCL watchdog"
_NEW_RECORD = regex.compile(r"^(?:\[?[IWEF]\d{4} |\[?\d{4}-\d\d-\d\d[ T]|INFO|WARNING|ERROR|DEBUG)")


@dataclass(slots=True)
class TracebackRecord:
    """A traceback as it is being assembled; `closed` once its stream moved on."""

    tb_id: int
    first: LogLine
    kind: str = "python"  # python | cxx | fatal | signal
    lines: list[LogLine] = field(default_factory=list)
    dropped: int = 0
    exc_type: str = ""
    message: str = ""
    frame: str = ""  # innermost frame: "file:line in func"
    chained: list[tuple[str, str]] = field(default_factory=list)
    last_lineno: int = 0
    ignored: bool = False  # "Exception ignored in ..." at interpreter exit: not a failure
    headless: bool = False  # began at a frame (the "Traceback" header was cut off or never printed)

    def add(self, line: LogLine) -> None:
        self.last_lineno = line.lineno
        if len(self.lines) < MAX_TB_LINES:
            self.lines.append(line)
        else:
            # keep the head (where it started) and the tail (the exception lines)
            del self.lines[MAX_TB_LINES // 2]
            self.lines.append(line)
            self.dropped += 1

    def set_exception(self, text: str) -> None:
        m = _EXC_LINE.match(text.strip())
        if self.exc_type:
            self.chained.append((self.exc_type, self.message))
        if m is not None and not text.startswith((" ", "\t")):
            self.exc_type = m.group("type")
            self.message = (m.group("msg") or "").strip()
        else:
            self.exc_type = "?"
            self.message = text.strip()


# states
IDLE, FRAMES, AFTER_FRAME, EXC, BLANK, CHAIN = "idle", "frames", "after_frame", "exc", "blank", "chain"


@dataclass(slots=True)
class _Stream:
    state: str = IDLE
    tb: TracebackRecord | None = None
    cont: int = 0
    blanks: int = 0
    prev_text: str = ""


def classify(text: str) -> str:
    """The kind of line, as the transition table sees it."""
    if not text.strip():
        return "blank"
    if _TB_START.match(text):
        return "tb_start"
    if "Traceback (most" in text and _TB_START_TAIL.search(text):
        return "tb_start"
    if _FRAME.match(text):
        return "frame"
    if _CHAIN.match(text):
        return "chain"
    if text[0] in " \t":
        return "indented"
    return "text"


class TracebackGrouper:
    """Feed lines in order; get back the tracebacks each line closed and the one it joined."""

    def __init__(self, on_close: Callable[[TracebackRecord], None]) -> None:
        self._streams: dict[str, _Stream] = {}
        self._on_close = on_close
        self._next_id = 0

    @property
    def open_count(self) -> int:
        return sum(1 for s in self._streams.values() if s.tb is not None)

    def feed(self, line: LogLine) -> TracebackRecord | None:
        """Advance the line's stream; return the traceback the line belongs to, if any."""
        st = self._streams.get(line.stream)
        if st is None:
            if len(self._streams) >= MAX_STREAMS:
                self._forget_idle()
            st = self._streams[line.stream] = _Stream()
        text = line.text
        kind = classify(text)
        handler = _TABLE[st.state]
        result = handler(self, st, line, kind)
        st.prev_text = text
        return result

    def _forget_idle(self) -> None:
        for key in [k for k, st in self._streams.items() if st.tb is None][: MAX_STREAMS // 2]:
            del self._streams[key]

    def close_all(self) -> None:
        for st in self._streams.values():
            self._close(st)

    def close_stale(self, lineno: int, limit: int) -> None:
        """Close tracebacks whose stream has been silent for more than `limit` lines."""
        for st in self._streams.values():
            if st.tb is not None and lineno - st.tb.last_lineno > limit:
                self._close(st)

    # -- helpers -----------------------------------------------------------------------------
    def _start(self, st: _Stream, line: LogLine, kind: str = "python") -> TracebackRecord:
        self._close(st)
        self._next_id += 1
        tb = TracebackRecord(self._next_id, line, kind)
        tb.ignored = bool(_IGNORED.match(st.prev_text))
        tb.add(line)
        st.tb = tb
        st.cont = 0
        st.blanks = 0
        return tb

    def _close(self, st: _Stream) -> None:
        if st.tb is not None:
            tb = st.tb
            st.tb = None
            st.state = IDLE
            # frames with neither header nor an exception line (a printed stack, `logging` stack_info, then
            # the next log line): not a failure
            if tb.headless and not _EXC_NAME.search(tb.exc_type):
                tb.ignored = True
            if not tb.exc_type:
                tb.exc_type = "?"
                tb.message = "(traceback cut off before its exception line)"
            self._on_close(tb)
        st.state = IDLE

    def _idle(self, st: _Stream, line: LogLine, kind: str) -> TracebackRecord | None:
        text = line.text
        if kind == "tb_start":
            tb = self._start(st, line)
            st.state = FRAMES
            return tb
        if kind == "frame":
            m = _FRAME.match(text)
            if m is not None and m.group("func") is not None:  # faulthandler's "line N in f" is a stack dump
                tb = self._start(st, line)
                tb.headless = True
                st.state = FRAMES
                return self._frames(st, line, kind, added=True)
        if "terminated with exception: " in text:
            m = _WATCHDOG_EXC.search(text)
            if m is not None:
                tb = self._start(st, line, "cxx")
                tb.exc_type, tb.message = WATCHDOG_TYPE, m.group("msg").strip()
                st.state = EXC
                return tb
        if "Unhandled error" in text and _RAY_UNHANDLED.search(text):
            tb = self._start(st, line)
            st.state = FRAMES
            return tb
        if "terminate called" in text:
            m = _CXX_START.search(text)
            if m is not None:
                tb = self._start(st, line, "cxx")
                tb.exc_type = m.group("type")
                st.state = EXC
                return tb
        if text.startswith("Fatal Python error: "):
            m = _FATAL_START.match(text)
            if m is not None:
                tb = self._start(st, line, "fatal")
                tb.exc_type = "Fatal Python error"
                tb.message = m.group("msg").strip()
                st.state = EXC
                return tb
        if text.startswith("*** SIG"):
            m = _SIGNAL_START.match(text)
            if m is not None:
                tb = self._start(st, line, "signal")
                tb.exc_type = m.group("sig")
                tb.message = text.strip("* ")
                st.state = EXC
                return tb
        return None

    def _frames(self, st: _Stream, line: LogLine, kind: str, added: bool = False) -> TracebackRecord | None:
        tb = st.tb
        assert tb is not None
        if kind == "tb_start":
            return self._idle(st, line, kind)
        if kind == "frame":
            if not added:
                tb.add(line)
            m = _FRAME.match(line.text)
            if m is not None:
                func = (m.group("func") or "").strip()
                tb.frame = f"{m.group('file')}:{m.group('line')}" + (f" in {func}" if func else "")
            st.state = AFTER_FRAME
            return tb
        if kind in ("indented", "blank"):
            tb.add(line)
            return tb
        # the first unindented line after the frames is the exception line
        tb.add(line)
        tb.set_exception(line.text)
        st.state = EXC
        st.cont = 0
        return tb

    def _after_frame(self, st: _Stream, line: LogLine, kind: str) -> TracebackRecord | None:
        # The source line under a frame; some shippers strip its indentation.
        tb = st.tb
        assert tb is not None
        if kind == "text" and not _EXC_LINE.match(line.text.strip()):
            tb.add(line)
            st.state = FRAMES
            return tb
        st.state = FRAMES
        return self._frames(st, line, kind)

    def _exc(self, st: _Stream, line: LogLine, kind: str) -> TracebackRecord | None:
        tb = st.tb
        assert tb is not None
        text = line.text
        if kind == "frame":  # Ray's RayTaskError carries the remote traceback after its line
            st.state = FRAMES
            return self._frames(st, line, kind)
        if kind == "tb_start":
            return self._idle(st, line, kind)
        if kind == "chain":
            tb.add(line)
            st.state = CHAIN
            return tb
        if kind == "blank":
            st.state = BLANK
            st.blanks = 1
            return tb
        if tb.kind == "cxx" and not tb.message:
            m = _WHAT.match(text)
            if m is not None:
                tb.add(line)
                tb.message = m.group("msg").strip()
                w = _WATCHDOG_EXC.search(tb.message)
                if w is not None:  # the same error as the watchdog's own log line: one entry for both
                    tb.exc_type, tb.message = WATCHDOG_TYPE, w.group("msg").strip()
                return tb
        if st.cont >= MAX_CONTINUATION or line.has_prefix_time or _NEW_RECORD.match(text):
            self._close(st)
            return self._idle(st, line, kind)
        st.cont += 1
        tb.add(line)
        return tb

    def _blank(self, st: _Stream, line: LogLine, kind: str) -> TracebackRecord | None:
        tb = st.tb
        assert tb is not None
        if kind == "blank":
            st.blanks += 1
            if st.blanks > MAX_BLANKS:
                self._close(st)
            return None
        if kind == "chain":
            tb.add(line)
            st.state = CHAIN
            return tb
        self._close(st)
        return self._idle(st, line, kind)

    def _chain(self, st: _Stream, line: LogLine, kind: str) -> TracebackRecord | None:
        tb = st.tb
        assert tb is not None
        if kind == "blank":
            return tb
        if kind == "tb_start":
            tb.add(line)
            st.state = FRAMES
            return tb
        self._close(st)
        return self._idle(st, line, kind)


_Handler = Callable[[TracebackGrouper, _Stream, LogLine, str], "TracebackRecord | None"]
_TABLE: dict[str, _Handler] = {
    IDLE: TracebackGrouper._idle,
    FRAMES: TracebackGrouper._frames,
    AFTER_FRAME: TracebackGrouper._after_frame,
    EXC: TracebackGrouper._exc,
    BLANK: TracebackGrouper._blank,
    CHAIN: TracebackGrouper._chain,
}
