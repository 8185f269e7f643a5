"""Wrapping for the terminal: by display width (a Chinese character takes two cells and a line may break between
any two of them, not only at a space), never inside a word that fits on a line, with a hanging indent under a
numbered step; and a file name shortened in its middle so that `name:line` stays whole in a narrow column."""

from __future__ import annotations

import unicodedata
from collections.abc import Iterator

from rich.cells import cell_len
from rich.console import Console, ConsoleOptions, RenderResult
from rich.text import Text

from ..lazyre import lazy_re
from ..safe import printable

# no line starts with these (closing punctuation) and none ends with the opening ones
_NO_START = set("，。、；：！？）」』】》〉”’…,.;:!?)]}%")
_NO_END = set("（「『【《〈“‘([{")
NBSP = "\u00a0"  # a space no line breaks at (shown as a plain space)
_STEP = lazy_re(r"^(\s*(?:\d{1,2}[.)]|[-*•])\s+)")


def _wide(ch: str) -> bool:
    return unicodedata.east_asian_width(ch) in ("W", "F")


def _tokens(text: str) -> Iterator[str]:
    """Spaces, words of narrow characters, and each wide character on its own (a break may follow it)."""
    word = ""
    for ch in text:
        if (ch.isspace() and ch != NBSP) or _wide(ch):
            if word:
                yield word
                word = ""
            yield ch
        else:
            word += ch
    if word:
        yield word


def _width(tokens: list[str]) -> int:
    return sum(cell_len(t) for t in tokens)


def _split_long(token: str, room: int) -> tuple[str, str]:
    """A word longer than the line is split where it fits; a path after its last `/` that fits, so that a file
    name stays whole."""
    cut = 0
    while cut < len(token) and cell_len(token[:cut + 1]) <= room:
        cut += 1
    slash = token.rfind("/", 0, cut)
    if slash > 0 and cut < len(token):
        cut = slash + 1
    cut = max(cut, 1)
    return token[:cut], token[cut:]


def wrap_line(text: str, width: int, hang: int = 0) -> list[str]:
    """One paragraph line wrapped to `width` cells; continuation lines are indented by `hang`, or under the text
    of a numbered step."""
    width = max(8, width)
    if cell_len(text) <= width:
        return [text]
    lead = text[:len(text) - len(text.lstrip(" "))]
    if lead and len(lead) < width // 2:  # an indented line keeps its indent on its first line
        rest = wrap_line(text[len(lead):], width - len(lead), hang)
        return [lead + rest[0], *(lead + line for line in rest[1:])]
    m = _STEP.match(text)
    indent = " " * (min(hang, width // 2) if hang else min(cell_len(m.group(1)) if m else 0, width // 3))
    lines: list[str] = []
    line: list[str] = []

    def close(carry: list[str]) -> list[str]:
        lines.append("".join(line).rstrip())
        return [indent, *carry] if indent else list(carry)

    for token in _tokens(text):
        if token.isspace():
            if line and "".join(line).strip() and _width(line) + cell_len(token) <= width:
                line.append(token)
            elif line and "".join(line).strip():
                line = close([])
            continue
        if _width(line) + cell_len(token) <= width:
            line.append(token)
            continue
        carry: list[str] = []
        if token[0] in _NO_START and line and not line[-1].isspace():
            carry = [line.pop()]  # closing punctuation never starts a line: the word before it goes down too
        while line and line[-1] and line[-1][-1] in _NO_END:
            carry.insert(0, line.pop())  # an opening bracket never ends a line
        if "".join(line).strip():
            line = close(carry)
        else:  # the carried words fill the line by themselves: break before the token after all
            line = [*line, *carry]
            if "".join(line).strip():
                line = close([])
        while _width(line) + cell_len(token) > width:  # a word longer than the line: split it
            head, token = _split_long(token, width - _width(line))
            line.append(head)
            line = close([])
        line.append(token)
    if "".join(line).strip():
        lines.append("".join(line).rstrip())
    return lines or [""]


def wrap(text: str, width: int) -> list[str]:
    out: list[str] = []
    for line in text.splitlines() or [""]:
        out.extend(wrap_line(line, width))
    return out


class Wrapped:
    """A block of text wrapped by `wrap` to whatever width it is given (a panel's inside, the terminal)."""

    def __init__(self, text: str, style: str = "", indent: int = 0, hang: int = 0) -> None:
        # log text, file names, signature fields: controls and escape sequences shown, never acted on
        self.text, self.style, self.indent, self.hang = printable(text), style, indent, hang

    def __rich_console__(self, console: Console, options: ConsoleOptions) -> RenderResult:
        pad = " " * self.indent
        width = options.max_width - self.indent
        for paragraph in self.text.splitlines() or [""]:
            for line in wrap_line(paragraph, width, self.hang):
                yield Text(pad + line.replace(NBSP, " "), style=self.style, no_wrap=True, overflow="ignore")


def units(text: str, sep: str = " · ", longest: int = 40) -> str:
    """Each ` · `-separated part of `text` kept on one line when it wraps (unless the part is long)."""
    return sep.join(p.replace(" ", NBSP) if len(p) <= longest else p for p in text.split(sep))


def fit_name(name: str, width: int) -> str:
    """`a-very-long-file-name.log:56` in at most `width` cells: the middle of the name gives way, the line stays."""
    if cell_len(name) <= width or width < 8:
        return name
    head, sep, tail = name.rpartition(":")
    if not sep or not tail.isdigit():
        head, tail = name, ""
    suffix = (":" + tail) if tail else ""
    room = width - cell_len(suffix) - 1
    left = (room + 1) // 2
    right = room - left
    return head[:left] + "…" + (head[-right:] if right > 0 else "") + suffix
