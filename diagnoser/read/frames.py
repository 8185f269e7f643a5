"""The frames of a traceback as (file, function) pairs in call order (outermost first), from the formats that print
them: Python's `File "f", line N, in func`, rich's boxed `│ f:N in func │`, and a C++ backtrace (c10's
`frame #N: func + 0x.. (0x.. in lib.so)`, innermost first, so reversed here).

A traceback cut before its exception line still has these; a signature's `match.frames` reads them.
"""

from __future__ import annotations

from dataclasses import dataclass

from ..lazyre import lazy
from .normalize import LogLine

# Python (traceback.py); faulthandler's stack dump ("line N in f", no comma) is not a failure and is not read
PY_FRAME = lazy(r'^\s*(?:\|\s*)?File "(?P<file>[^"]+)", line (?P<line>\d+), in (?P<func>\S[^\n]{0,200})$')
# rich.traceback: "│ /path/file.py:204 in setup_distributed │" (a long path is wrapped: the last line of it holds
# the frame), or "│ in <name>:12 │" for a file that does not exist
RICH_FRAME = lazy(r"^[│|] ?(?:(?P<file>\S{1,400}?):(?P<line>\d+) in (?P<func>[\w<>.]{1,200})"
                           r"|in (?P<func>[\w<>.]{1,200}):(?P<line>\d+))\s*[│|]?\s*$")
RICH_START = lazy(r"^╭─+ Traceback \(most recent call last\) ─+╮\s*$")
RICH_END = lazy(r"^╰─+╯\s*$")
# c10/util/Backtrace.cpp: "frame #6: c10d::TCPStore::TCPStore(std::string, ...) + 0x20c (0x7fcd in /x/libtorch_cpu.so)";
# a frame with no symbol is "frame #9: /usr/bin/python3() [0x528b17]" or "frame #7: <unknown function> + 0xe48 (...)"
# (macOS prints the offset in decimal: "+ 1212 (0x11b4f44dc in libtorch_cpu.dylib)")
CXX_FRAME = lazy(r"^\s*frame #(?P<n>\d{1,4}): (?P<func>[^\n]{1,600}?)"
                          r"(?: \+ (?:0x[0-9a-f]+|\d+) \(0x[0-9a-f]+ in (?P<file>[^()\n]{1,400})\)"
                          r"| \[0x[0-9a-f]+\])?\s*$")
MAX_FRAMES = 256


@dataclass(frozen=True, slots=True)
class Frame:
    """One frame of a traceback."""

    file: str
    function: str
    line: LogLine


def is_frame_start(text: str) -> bool:
    """A line that can open a traceback with no header: a Python, rich or C++ frame naming its function."""
    if "File \"" in text:
        return PY_FRAME.match(text) is not None
    if text.startswith(("│", "|")) and " in " in text:
        return RICH_FRAME.match(text) is not None
    return "frame #" in text and CXX_FRAME.match(text) is not None


def frames_of(lines: list[LogLine]) -> list[Frame]:
    """The frames these lines print, outermost call first. A C++ backtrace (innermost first) is reversed; when a
    traceback prints both, the Python frames (the callers) come before the C++ ones."""
    py: list[Frame] = []
    cxx: list[Frame] = []
    for ln in lines:
        text = ln.text
        if "File \"" in text:
            m = PY_FRAME.match(text)
            if m is not None:
                py.append(Frame(m.group("file"), m.group("func").strip(), ln))
        elif text.startswith(("│", "|")) and " in " in text:
            m = RICH_FRAME.match(text)
            if m is not None:
                py.append(Frame(m.group("file") or "", m.group("func"), ln))
        elif "frame #" in text:
            m = CXX_FRAME.match(text)
            if m is not None:
                func = m.group("func")
                if func.startswith("<unknown function>") or (func.endswith("()") and "/" in func):  # a bare binary
                    func = ""
                cxx.append(Frame(m.group("file") or "", func, ln))
        if len(py) + len(cxx) >= MAX_FRAMES:
            break
    return py + cxx[::-1]
