"""Lone exception lines: an error stated on one line with no traceback around it (the last line a paste kept,
a failed C++ CHECK), and the literals the fast search must find for them."""

from __future__ import annotations

from collections.abc import Callable, Iterable

import regex

from ..lazyre import lazy
from .normalize import LogLine

# An exception line with no traceback around it ("ImportError: ...so: undefined symbol: x" as the last line
# of a paste), or a failed C++ CHECK (Ray's RAY_CHECK, glog, absl: "file.cc:NN:  Check failed: <condition>", glog's
# "F0706 ... file.cc:NN] Check failed: ..." whose prefix the normaliser strips): a failure with no Python traceback.
# It counts only near the end of its source (a recovered error mid-run is not the failure), when no signature
# matched the line, and the report shows it only when nothing else explains the log.
LONE_LITERALS = ("Error: ", "Exception: ", "Check failed: ")
_TYPE = r"(?P<type>(?:[A-Za-z_]\w{0,63}\.){0,8}(?:[A-Z]\w{0,79}Error|(?:[A-Z]\w{0,79})?Exception)): (?P<msg>\S.*)"
_LONE = lazy("^" + _TYPE)
_LONE_AT = lazy(_TYPE)  # matched at a position: the exception after a prefix nobody listed
# A prefix the normaliser does not know (a logger's own "2024-05-01 10:00:00 | ERROR | mod:fn:12 - ", a rank tag that
# is not a number, spdlog's "[error] ") ends in a bracket, colon, bar, arrow or dash before the exception's name;
# prose ("failed with ValueError: ...") does not. An exception logged at info or warning level was handled.
_PREFIX_END = lazy(r"(?:[\]:|>)}]|\s[-|])\s*$")
_HANDLED = lazy(r"(?i)\b(?:info|debug|warn|warning|notice|trace)\b")
# prefixes are made of stamps, tags and names (digits, brackets, colons, dots); a sentence ("Failed to send exit
# request to worker : RpcError: ...") quotes an error it handled. A logger's name may be one plain word.
_WORD = lazy(r"(?<!\S)[A-Za-z]+[:,]?(?!\S)")
_LEVELS = frozenset(("ERROR", "FATAL", "CRITICAL", "ERR", "error", "fatal", "critical"))
MAX_PREFIX = 200
_CHECK = lazy(r"(?:\.(?:cc|cpp|cxx|h|hpp):\d+(?::|\])\s+|^)(?P<type>Check failed): (?P<msg>\S.*)")
# Ray prints this CHECK at interpreter exit of runs that went well (the core worker was already shut down)
_BENIGN_CHECK = "Check failed: core_worker_process "
LONE_TAIL = 100  # physical lines from the end of its source within which a lone line counts
LONE_KEEP = 3  # distinct lone errors kept per source
# a line that a signature's regex read, though its conditions left the line out, is explained when that signature
# hit within this many lines: Ray's "ActorDiedError: The actor died unexpectedly" headline is one message with the
# death cause printed a few lines below it, which ray-actor-died reads instead
LONE_NEAR = 15
Lone = tuple[LogLine, str, str, tuple[str, ...]]  # the line, its type, its message, the signatures that read it


def last_lone(entries: Iterable[Lone], last_line: int,
              hit_near: Callable[[str, int], bool]) -> list[tuple[LogLine, str, str, int]]:
    """The last LONE_KEEP distinct lone errors of a source's last LONE_TAIL lines, each with its count (of its
    first line), but those a nearby hit of a signature that read them explains (LONE_NEAR)."""
    found: dict[tuple[str, str], tuple[LogLine, int]] = {}  # (type, message) -> its first line, count
    for line, exc_type, message, sigs in entries:
        if last_line - line.lineno >= LONE_TAIL or any(hit_near(sig, line.lineno) for sig in sigs):
            continue
        first, count = found.pop((exc_type, message), (line, 0))  # re-inserted: ordered by each key's last line
        found[(exc_type, message)] = (first, count + line.repeat)
    return [(line, exc_type, message, count) for (exc_type, message), (line, count) in list(found.items())[-LONE_KEEP:]]


def lone_error(text: str, raw: str | None = None) -> regex.Match[str] | None:
    """The exception (or failed C++ CHECK) a line states on its own, if it is one.

    Like the signatures' gates, the literal must also be in the line as read (`raw`): a literal split by a
    colour code is missed by the byte-level fast path, so it is missed here too.
    """
    if ("Error: " in text or "Exception: " in text) and (
            raw is None or "Error: " in raw or "Exception: " in raw):
        m = _LONE.match(text)
        if m is not None:
            return m
        m = _behind_prefix(text)
        if m is not None:
            return m
    at = text.find("Check failed: ")
    if at < 0 or (raw is not None and "Check failed: " not in raw) or _BENIGN_CHECK in text:
        return None
    return _CHECK.search(text, max(0, at - 40))


def _behind_prefix(text: str) -> regex.Match[str] | None:
    """The exception line after a prefix nobody listed: the first `Error: ` / `Exception: ` in the line's head, read
    back to the start of the exception's name, with a prefix before it that ends like one."""
    for literal in ("Error: ", "Exception: "):
        at = text.find(literal, 0, MAX_PREFIX + 160)
        if at < 0:
            continue
        start = at
        while start > 0 and (text[start - 1].isalnum() or text[start - 1] in "._"):
            start -= 1
        if start == 0 or start > MAX_PREFIX:
            continue
        prefix = text[:start]
        if not _PREFIX_END.search(prefix) or _HANDLED.search(prefix) or _prose(prefix):
            continue
        m = _LONE_AT.match(text, start)
        if m is not None:
            return m
    return None


def _prose(prefix: str) -> bool:
    words = [w.rstrip(":,") for w in _WORD.findall(prefix)]
    return sum(1 for w in words if w not in _LEVELS) > 1
