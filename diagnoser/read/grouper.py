"""Group multi-line tracebacks per stream, so interleaved processes never mix two of them.

A table maps (state, kind of line) to an action; buffers are bounded so a runaway traceback cannot grow
memory, and a traceback whose stream stays silent for STALE_TB lines is closed.
"""

from __future__ import annotations

from collections.abc import Callable

from .cxx import RAY_UNHANDLED_CXX, demangle
from .frames import CXX_FRAME, RICH_FRAME, is_frame_start
from .normalize import LogLine
from .traceback import (
    AFTER_FRAME,
    BLANK,
    CHAIN,
    CXX_START,
    EXC,
    EXC_LINE,
    EXC_NAME,
    FATAL_START,
    FRAME,
    FRAMES,
    IDLE,
    IGNORED,
    MAX_BLANKS,
    MAX_CONTINUATION,
    NEW_RECORD,
    OPENS,
    RAY_TASK_ERROR,
    RAY_UNHANDLED,
    SIGNAL_START,
    WATCHDOG_EXC,
    WATCHDOG_TYPE,
    WHAT,
    StreamState,
    TracebackRecord,
    classify,
    head_of,
    shifted_exception,
    ungroup,
)

MAX_STREAMS = 4096  # idle streams beyond this are forgotten (a log with endless new pids)
STALE_TB = 5000  # a traceback whose stream stays silent this many lines is closed

class TracebackGrouper:
    """Feed lines in order; get back the tracebacks each line closed and the one it joined."""

    def __init__(self, on_close: Callable[[TracebackRecord], None]) -> None:
        self._streams: dict[str, StreamState] = {}
        self._on_close = on_close
        self._next_id = 0

    def plain(self, stream: str) -> bool:
        """Whether `stream` holds no traceback and its last line would not make one starting next ignored (_start)."""
        return (st := self._streams.get(stream)) is None or (st.tb is None and not IGNORED.match(st.prev_text))

    def feed(self, line: LogLine) -> TracebackRecord | None:
        """Advance the line's stream; return the traceback the line belongs to, if any."""
        st = self._streams.get(line.stream)
        if st is None:
            if len(self._streams) >= MAX_STREAMS:
                self._forget_idle()
            st = self._streams[line.stream] = StreamState()
        if st.tb is not None and st.tb.group and line.text[:1] in " |+":
            line, kind = ungroup(line)
        else:
            kind = classify(line.text)
        text = line.text
        handler = _TABLE[st.state]
        result = handler(self, st, line, kind)
        st.prev_text = text
        st.prev_raw = line.raw
        return result

    def _forget_idle(self) -> None:
        for key in [k for k, st in self._streams.items() if st.tb is None][: MAX_STREAMS // 2]:
            del self._streams[key]

    def close_all(self, at_end: bool = False) -> None:
        """Close every traceback; `at_end`: the input ended (it did not only go quiet)."""
        for st in self._streams.values():
            if at_end and st.tb is not None and st.state in (FRAMES, AFTER_FRAME):
                st.tb.ends_input = True
            self._close(st)

    def close_stale(self, lineno: int, limit: int) -> None:
        """Close tracebacks whose stream has been silent for more than `limit` lines."""
        for st in self._streams.values():
            if st.tb is not None and lineno - st.tb.last_lineno > limit:
                self._close(st)

    # -- helpers -----------------------------------------------------------------------------
    def _open(self, st: StreamState, line: LogLine, kind: str, exc_type: str, message: str = "") -> TracebackRecord:
        """A record whose first line names its error (a C++ terminate, a watchdog, a signal): its message follows."""
        tb = self._start(st, line, kind)
        tb.exc_type, tb.message = exc_type, message
        st.state = EXC
        return tb

    def _start(self, st: StreamState, line: LogLine, kind: str = "python") -> TracebackRecord:
        self._close(st)
        self._next_id += 1
        tb = TracebackRecord(self._next_id, line, kind)
        tb.ignored = tb.at_exit = bool(IGNORED.match(st.prev_text))
        tb.add(line)
        st.tb = tb
        st.cont = st.blanks = 0
        st.frame_indent = -1
        return tb

    def _close(self, st: StreamState) -> None:
        if st.tb is not None:
            tb = st.tb
            st.tb = None
            st.state = IDLE
            # no exception line: cut off, or frames alone; only a signature's `match.frames` can still read it
            tb.cut = tb.kind in ("python", "cxx") and (not tb.exc_type or tb.exc_type == "?"
                                                       or not EXC_NAME.search(tb.exc_type))
            # frames with neither header nor an exception line (a printed stack, `logging` stack_info, then
            # the next log line): not a failure; frames the input ends in were cut (a paste, a killed writer)
            if tb.headless and not EXC_NAME.search(tb.exc_type) and not tb.ends_input:
                tb.ignored = True
            if not tb.exc_type and tb.kind == "python" and (raised := tb.raised()) is not None:
                tb.exc_type, tb.message = raised, "(traceback cut off before its message: its last line raises it)"
            if not tb.exc_type:
                tb.exc_type = "?"
                tb.message = "(traceback cut off before its exception line)"
            self._on_close(tb)
        st.state = IDLE

    def _idle(self, st: StreamState, line: LogLine, kind: str) -> TracebackRecord | None:
        text = line.text
        if kind == "tb_start":
            tb = self._start(st, line)
            st.state = FRAMES
            return tb
        if kind == "frame" and is_frame_start(text):  # faulthandler's "line N in f" (no comma) is a stack dump
            tb = self._start(st, line)
            tb.headless = True
            st.state = FRAMES
            return self._frames(st, line, kind, added=True)
        if text.startswith("frame #") and CXX_FRAME.match(text):
            # a C++ backtrace whose exception line was cut off above it (c10's "frame #6: c10d::TCPStore::...")
            tb = self._start(st, line, "cxx")
            tb.headless = True
            st.state = EXC
            return tb
        if "terminated with exception: " in text:
            m = WATCHDOG_EXC.search(text)
            if m is not None:
                return self._open(st, line, "cxx", WATCHDOG_TYPE, m.group("msg").strip())
        if "Unhandled error" in text and RAY_UNHANDLED.search(text):
            tb = self._start(st, line)
            st.state = FRAMES
            return tb
        if "terminate called" in text:
            m = CXX_START.search(text)
            if m is not None:
                return self._open(st, line, "cxx", m.group("type"))
        if "Unhandled exception: " in text:
            m = RAY_UNHANDLED_CXX.search(text)
            if m is not None:  # Ray's C++ terminate handler: the type and what() on one line, a stack trace after
                return self._open(st, line, "cxx", demangle(m.group("type")), m.group("msg").strip())
        if "Error(" in text:
            m = RAY_TASK_ERROR.match(text)
            if m is not None:  # the remote frames and the remote exception line follow (see _exc: frames)
                return self._open(st, line, "python", m.group("type"), m.group("msg").strip())
        if text.startswith("Fatal Python error: "):
            m = FATAL_START.match(text)
            if m is not None:
                return self._open(st, line, "fatal", "Fatal Python error", m.group("msg").strip())
        if text.startswith("*** SIG"):
            m = SIGNAL_START.match(text)
            if m is not None:
                return self._open(st, line, "signal", m.group("sig"), text.strip("* "))
        return None

    def _frames(self, st: StreamState, line: LogLine, kind: str, added: bool = False) -> TracebackRecord | None:
        tb = st.tb
        assert tb is not None
        if kind == "tb_start":
            return self._idle(st, line, kind)
        if kind == "frame":
            if not added:
                tb.add(line)
            m = FRAME.match(line.text)
            st.frame_indent = len(line.text) - len(line.text.lstrip(" ")) if m is not None else -1
            m = m or RICH_FRAME.match(line.text)
            if m is not None:
                func = (m.group("func") or "").strip()
                tb.frame = f"{m.group('file') or ''}:{m.group('line')}" + (f" in {func}" if func else "")
            st.state = AFTER_FRAME
            return tb
        if kind == "indented" and shifted_exception(line.text, st.frame_indent):
            kind = "text"  # a whole traceback indented (a paste, a logger's block): its exception line too
        elif kind in ("indented", "blank"):
            tb.add(line)
            return tb
        # the first unindented line after the frames is the exception line
        tb.add(line)
        tb.set_exception(line.text.lstrip(" ") if kind == "text" else line.text)
        st.state = EXC
        st.cont = 0
        return tb

    def _after_frame(self, st: StreamState, line: LogLine, kind: str) -> TracebackRecord | None:
        # The source line under a frame; some shippers strip its indentation.
        tb = st.tb
        assert tb is not None
        # (a bare "raise" whose indent a timestamp took is a source line too)
        if kind == "text" and ((m := EXC_LINE.match(line.text.strip())) is None
                               or (m.group("msg") is None and not EXC_NAME.search(m.group("type")))):
            tb.add(line)
            st.state = FRAMES
            return tb
        st.state = FRAMES
        return self._frames(st, line, kind)

    def _exc(self, st: StreamState, line: LogLine, kind: str) -> TracebackRecord | None:
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
            m = WHAT.match(text)
            if m is not None:
                tb.add(line)
                tb.message = m.group("msg").strip()
                w = WATCHDOG_EXC.search(tb.message)
                if w is not None:  # the same error as the watchdog's own log line: one entry for both
                    tb.exc_type, tb.message = WATCHDOG_TYPE, w.group("msg").strip()
                return tb
        if kind == "text" and tb.late_exception(text):
            tb.add(line)
            return tb
        # a new record: a prefix time unless the last line had the same prefixes (a console stamping every line alike)
        if st.cont >= MAX_CONTINUATION or NEW_RECORD.match(text) or OPENS.search(text) or (
                line.has_prefix_time and head_of(line.raw, text) != head_of(st.prev_raw, st.prev_text)):
            self._close(st)
            return self._idle(st, line, kind)
        if not (text.startswith("frame #") and CXX_FRAME.match(text)):  # a C++ backtrace runs as long as it is
            st.cont += 1
        tb.add(line)
        return tb

    def _blank(self, st: StreamState, line: LogLine, kind: str) -> TracebackRecord | None:
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

    def _chain(self, st: StreamState, line: LogLine, kind: str) -> TracebackRecord | None:
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


_Handler = Callable[[TracebackGrouper, StreamState, LogLine, str], "TracebackRecord | None"]
_TABLE: dict[str, _Handler] = {
    IDLE: TracebackGrouper._idle,
    FRAMES: TracebackGrouper._frames,
    AFTER_FRAME: TracebackGrouper._after_frame,
    EXC: TracebackGrouper._exc,
    BLANK: TracebackGrouper._blank,
    CHAIN: TracebackGrouper._chain,
}
