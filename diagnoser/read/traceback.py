"""Tracebacks as records: what starts one (Python, chained, Ray, C++ `terminate called`, `Fatal Python error`,
a signal dump), what a frame and an exception line look like, and the record a traceback is assembled in.

The grouper (grouper.py) feeds lines to these records, one per stream.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace

from ..lazyre import lazy
from .frames import RICH_END, RICH_FRAME, RICH_START
from .normalize import LogLine

MAX_TB_LINES = 400  # lines kept per traceback (head and tail survive)
MAX_CONTINUATION = 48  # message lines after the exception line (torchrun's ChildFailedError table is long)
MAX_BLANKS = 2

TB_START = lazy(r"^\s*(?:\+\s*)?(?:Traceback \(most recent call last\):|Exception Group Traceback)")
# a logger that puts the formatted traceback after its own words: vLLM's "EngineCore hit an exception: Traceback
# (most recent call last):", "Error executing method x. Traceback (most recent call last):"
TB_START_TAIL = lazy(r"[:.]\s+Traceback \(most recent call last\):\s*$")
# Ray prints an error no one waited for as "Unhandled error (suppress with ...): ray::W.f() (pid=..)" and
# then the remote frames and the exception line, with no "Traceback" header.
RAY_UNHANDLED = lazy(r"Unhandled error \(suppress with '?RAY_IGNORE_UNHANDLED_ERRORS=1'?\)")
CXX_START = lazy(r"terminate called after throwing an instance of '(?P<type>[^']+)'")
# Ray's RayTaskError / RayActorError headline ("ray.exceptions.RayTaskError(RuntimeError): ray::W.f() (pid=..)"), which
# Ray prints before the remote frames and the remote exception line: a paste cut inside the frames still names it
RAY_TASK_ERROR = lazy(r"^(?P<type>(?:ray\.exceptions\.)?Ray(?:Task|Actor)Error\([\w.]{1,100}\)): "
                               r"(?P<msg>ray::.*)")
FATAL_START = lazy(r"^Fatal Python error: (?P<msg>.*)")
SIGNAL_START = lazy(r"^\*\*\* (?P<sig>SIG[A-Z]+) received at time=")
FRAME = lazy(r'^\s*(?:\|\s*)?File "(?P<file>[^"]+)", line (?P<line>\d+)(?:, in (?P<func>.+))?')
# (torch.multiprocessing's ProcessRaisedException quotes its child's traceback: "-- Process N terminated with the
# following error:", then the child's traceback, whose exception is the one to read)
CHAIN_RE = lazy(
    r"^\s*(?:During handling of the above exception, another exception occurred:"
    r"|The above exception was the direct cause of the following exception:"
    r"|-- Process \d+ terminated with the following error:)"
)
# ("RayTaskError(ValueError): ..." names its cause in parentheses, always before a colon; "trainer.fit()" or
# "train(args)" is a frame's source line whose indent a timestamp prefix took)
EXC_LINE = lazy(r"^(?P<type>[A-Za-z_][\w.]*(?:\[[\w.]*\]|\([\w.]+\)(?=:))?)(?::\s?(?P<msg>.*))?$")
# ... an exception line another writer's text split from its colon ("AssertionError    : hook_result = ...: FSDP
# assumes ...", ranks printing to one console): a name that ends as exception classes do, then spaces
SPLIT_EXC_LINE = lazy(r"^(?P<type>[A-Za-z_][\w.]*(?:Error|Exception))\s+(?::\s?)?(?P<msg>\S.*)$")
# An exception's name: module-qualified (socket.gaierror, http.client.RemoteDisconnected,
# torch._dynamo.exc.BackendCompilerFailed) or a builtin-style name; not "Epoch: 3" from the next log record.
EXC_NAME = lazy(r"\.|(?i:error|exception|exit|interrupt|stopiteration|timeout|failure|failed|fault|warning)")
# the innermost source line of a traceback cut before its exception line, when it names what it raises
RAISES = lazy(r"^\s*(?:raise (?P<type>(?:[A-Za-z_]\w*\.)*[A-Z]\w*)\(|(?P<assert>assert)\s)")
WHAT = lazy(r"^\s*what\(\):\s*(?P<msg>.*)")
IGNORED = lazy(r"^Exception ignored in")
# PyTorch's ProcessGroupNCCL logs the exception that ended its watchdog on one line, and rethrows it
# (`terminate called ... what(): ` the same text); the text after the colon is the real error.
WATCHDOG_EXC = lazy(r"(?:NCCL|Process group) watchdog thread terminated with exception: (?P<msg>.+)")
WATCHDOG_TYPE = "ProcessGroupNCCL watchdog"
# lines that open a record of their own (grouper.py _idle), never an exception message's continuation
OPENS = lazy(r"^(?:Fatal Python error: |\*\*\* SIG[A-Z]+ received)|terminate called after throwing|"
             r"Unhandled error \(suppress with|terminated with exception: ")
NEW_RECORD = lazy(r"^(?:\[?[IWEF]\d{4} |\[?\d{4}-\d\d-\d\d[ T]|INFO|WARNING|ERROR|DEBUG)")


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
    at_exit: bool = False  # "Exception ignored in ...": printed at interpreter exit, never a failure
    cut: bool = False  # closed with no exception line (cut off, or frames alone): only its frames can tell
    ends_input: bool = False  # the input ended in its frames: cut there, not a stack printed before the next line
    group: bool = False  # an exception group's traceback (Python 3.11+), its lines behind the group's margin

    def __post_init__(self) -> None:
        self.group = "Exception Group Traceback" in self.first.text

    def raised(self) -> str | None:
        """What the last source line shown raises (`raise ValueError(`, `assert`): a traceback cut there."""
        for line in reversed(self.lines[-3:]):
            if line.text.strip(" ^~"):
                m = RAISES.match(line.text)
                return None if m is None else m.group("type") or "AssertionError"
        return None

    def add(self, line: LogLine) -> None:
        self.last_lineno = line.lineno
        if len(self.lines) < MAX_TB_LINES:
            self.lines.append(line)
        else:
            # keep the head (where it started) and the tail (the exception lines)
            del self.lines[MAX_TB_LINES // 2]
            self.lines.append(line)
            self.dropped += 1

    def late_exception(self, text: str) -> bool:
        """After an "exception line" that was none ("?": another writer's line, or a message printed apart from its
        type, as ranks writing to one console interleave them), a proper one ("IndexError: list index out of range")
        is this traceback's: it is taken (True)."""
        if self.exc_type != "?" or text.startswith((" ", "\t")):
            return False
        m = EXC_LINE.match(text)
        if m is None or m.group("msg") is None or EXC_NAME.search(m.group("type")) is None:
            return False
        self.exc_type, self.message = m.group("type"), m.group("msg").strip()
        return True

    def set_exception(self, text: str) -> None:
        m = EXC_LINE.match(text.strip())
        if self.exc_type:
            self.chained.append((self.exc_type, self.message))
        if m is None and not text.startswith((" ", "\t")):
            m = SPLIT_EXC_LINE.match(text)
        if m is not None and not text.startswith((" ", "\t")):
            self.exc_type = m.group("type")
            self.message = (m.group("msg") or "").strip()
        else:
            self.exc_type = "?"
            self.message = text.strip()


IDLE, FRAMES, AFTER_FRAME, EXC, BLANK, CHAIN = "idle", "frames", "after_frame", "exc", "blank", "chain"  # its states


@dataclass(slots=True)
class StreamState:
    """The traceback state of one stream (grouper.py)."""
    state: str = IDLE
    tb: TracebackRecord | None = None
    cont: int = 0
    blanks: int = 0
    prev_text: str = ""
    frame_indent: int = -1  # the indent of the last Python frame line (2 as Python prints it)
    prev_raw: str = ""  # the stream's last line as read (its prefixes: see head_of)


# Python 3.11's exception groups: each line of a group behind a margin ("  | ", "    | " nested), its sub-exceptions
# between rules ("  +-+---------------- 1 ----------------", the last "  +------------------------------------")
GROUP_RULE = lazy(r"^\s*\+[-+]*(?:\s+(?P<n>\d+|\.\.\.)\s+-+)?\s*$")
GROUP_BAR = lazy(r"^\s*\|\s?")


def ungroup(line: LogLine) -> tuple[LogLine, str]:
    """A line inside an exception group, its margin taken off, and its kind: a numbered rule begins a sub-exception
    (read as a chaining line: the traceback goes on), the last rule ends the group (read as a blank line)."""
    m = GROUP_RULE.match(line.text)
    if m is not None:
        return line, "chain" if m.group("n") else "blank"
    m = GROUP_BAR.match(line.text)
    if m is not None:
        line = replace(line, text=line.text[m.end():])
    return line, classify(line.text)


def head_of(raw: str, text: str) -> str:
    """The prefixes of a line: what is read before its text."""
    at = raw.find(text) if text else len(raw)
    return raw[:at] if at >= 0 else raw


def classify(text: str) -> str:
    """The kind of line, as the transition table sees it. Each regex runs only on a line holding a literal every
    one of its matches holds (most lines hold none: no regex runs)."""
    if not text.strip():
        return "blank"
    if "Traceback" in text:
        if TB_START.match(text):
            return "tb_start"
        if "Traceback (most" in text and (TB_START_TAIL.search(text) or RICH_START.match(text)):
            return "tb_start"
    if 'File "' in text and FRAME.match(text):
        return "frame"
    if text[0] in "│╰":  # rich.traceback's box: a frame's own line, or the code and frame around it
        if RICH_FRAME.match(text):
            return "frame"
        if text[0] == "│" or RICH_END.match(text):
            return "indented"
    if ("above exception" in text or "-- Process" in text) and CHAIN_RE.match(text):
        return "chain"
    if text[0] in " \t" or (text[0] in "^~" and not text.strip("^~ ")):
        return "indented"  # (Python 3.11's "^^^^" under a frame's code, its indent lost in a paste: not an exception)
    return "text"

def shifted_exception(text: str, frame_indent: int) -> bool:
    """An exception line two columns left of its frames, as Python lays them out, with the whole traceback indented."""
    if frame_indent < 4 or len(text) - len(text.lstrip(" ")) != frame_indent - 2:
        return False
    m = EXC_LINE.match(text.strip())
    return m is not None and EXC_NAME.search(m.group("type")) is not None


# What starts a traceback record, or changes how one is read: the fast search must find every such line.
GROUPER_LITERALS = (
    "Traceback (most recent call last)", "Exception Group Traceback", "terminate called after throwing",
    "Fatal Python error: ", "*** SIG", "Exception ignored in", "Unhandled error (suppress with",
    'File "', "terminated with exception: ", "frame #", "│", "╰─", "Error(", "Unhandled exception: ",
)
