"""Log text is data, never markup: make untrusted text (log lines, captured values, file names, signature
fields) safe for the place it is shown.

- `printable`: for a terminal (and any text a person reads): control characters, escape sequences,
  bidirectional overrides and undecodable bytes of a file name are shown as visible escapes (`\\x1b`).
- `md_text`, `md_cell`, `md_code`, `md_fence`: for Markdown (a table cell's pipe, a backtick, `*`, `[`…).
- `shown_path`: a file name as a person should read it (bytes that are not UTF-8 escaped, `\\xff`).

rich renderers take `rich.text.Text(printable(s))`, never a `str` (a `str` is parsed as rich markup:
`[/…/gloo/…/pair.cc:561]` is a closing tag to rich).
"""

from __future__ import annotations

import json
import os
import re

from .lazyre import lazy, lazy_re

# C0 controls but tab and newline, DEL, C1 controls, bidirectional embeddings/overrides/isolates, lone
# surrogates (a file name's undecodable bytes, as os.fsdecode leaves them).
_UNSAFE = lazy_re("[\x00-\x08\x0b-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
_UNSAFE_LINE = lazy_re("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
# always: backslash, backtick, emphasis, links, HTML, table pipes, headings, strikethrough; `_` unless inside a
# word (GFM never reads an intraword underscore as emphasis, and config keys are full of them); `&` before an
# entity name; `>` (a quote) and a list marker only at the start of the text.
_MD_SPECIAL = lazy(r"[\\`*\[\]<|#~]|(?<!\w)_|_(?!\w)|&(?=#|\w)|^>|^[-+](?=\s)|(?<=^\d{1,9})[.)](?=\s)")


def _escape(m: re.Match[str]) -> str:
    c = m.group(0)
    code = ord(c)
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape: the byte the file name really held
        return f"\\x{code - 0xDC00:02x}"
    if code == 0x09:
        return "\\t"
    if code == 0x0A:
        return "\\n"
    if code < 0x100:
        return f"\\x{code:02x}"
    return f"\\u{code:04x}"


def printable(text: str, *, one_line: bool = False) -> str:
    """`text` with every character a terminal would act on, rather than show, made visible.

    Newlines and tabs stay unless `one_line` (then they are escaped too, so one value is one line).
    """
    rx = _UNSAFE_LINE if one_line else _UNSAFE
    return rx.sub(_escape, text) if rx.search(text) else text


MAX_DIGITS = 18  # a rank, pid, step, count or size with more digits than this is kept as text, not parsed


def to_int(text: str | None, max_digits: int = MAX_DIGITS) -> int | None:
    """A number a log printed, when it is one of sane width; else None (the text stays in the line).

    Thousands of digits would otherwise cost quadratic time or fail (Python's int() stops at 4300 digits).
    """
    if not text:
        return None
    text = text.strip()
    if not text or not text.isascii() or not text.isdigit():
        return None
    digits = text.lstrip("0") or "0"  # leading zeros count toward int()'s limit too
    return int(digits) if len(digits) <= max_digits else None


def shown_path(path: str | os.PathLike[str]) -> str:
    """A file name for display and for the report: undecodable bytes as `\\xNN`, controls escaped."""
    return printable(os.fspath(path), one_line=True)


_JSON_ODD = lazy_re("[\ud800-\udfff\x7f-\x9f\u2028\u2029]")


def _json_odd(m: re.Match[str]) -> str:
    c = m.group(0)
    if "\ud800" <= c <= "\udfff":  # a lone surrogate: the visible escape \\xff, as text inside the string
        return _escape(m).replace("\\", "\\\\")
    return f"\\u{ord(c):04x}"  # DEL, C1 controls and the Unicode line separators: JSON's own escape


def json_dumps(obj: object, indent: int | None = None) -> str:
    """JSON that UTF-8 can carry and that stays one line per object (JSON lines): a lone surrogate (an
    undecodable byte of a file name) becomes the visible escape `\\xff` inside its string; NEL, U+2028 and
    U+2029, which some readers take for line ends, and the other controls json leaves raw, are escaped."""
    text = json.dumps(obj, ensure_ascii=False, indent=indent)
    return _JSON_ODD.sub(_json_odd, text) if _JSON_ODD.search(text) else text


def md_text(text: str) -> str:
    """Plain Markdown text: every character Markdown could read as syntax is backslash-escaped; one line."""
    flat = text.replace("\r\n", " ").replace("\n", " ")
    return _MD_SPECIAL.sub(lambda m: "\\" + m.group(0), printable(flat, one_line=True))


_LIST_ITEM = lazy(r"^\s{0,3}(?:\d{1,9}[.)]|[-*+])\s+")


def md_block(text: str) -> str:
    """A paragraph of prose (a why or a remedy, with its values filled in): each line escaped as md_text,
    except a list marker the signature's author put at the start of a line."""
    out = []
    for line in text.splitlines():
        m = _LIST_ITEM.match(line)
        head = m.group(0) if m is not None else ""
        out.append(head + md_text(line[len(head):]))
    return "\n".join(out)


def md_cell(text: str) -> str:
    """A Markdown table cell: as md_text (a pipe would end the cell)."""
    return md_text(text)


def md_code(text: str) -> str:
    """An inline code span that holds `text` whatever backticks it has (and no pipe to end a table cell)."""
    body = printable(text, one_line=True).replace("|", "\\|")
    longest = max((len(run) for run in re.findall("`+", body)), default=0)
    fence = "`" * (longest + 1)
    pad = " " if body.startswith("`") or body.endswith("`") or not body.strip() else ""
    return f"{fence}{pad}{body}{pad}{fence}"


def md_fence(lines: list[str]) -> list[str]:
    """A fenced code block that no line inside can close: the fence is longer than any backtick run."""
    body = [printable(line, one_line=True) for line in lines]
    longest = max((len(run) for line in body for run in re.findall("`{3,}", line)), default=0)
    fence = "`" * max(3, longest + 1)
    return [fence, *body, fence]

