"""`diagnose learn LOG --to DIR`: for each error of a log that no signature knows, a signature skeleton that already
matches it (id, title, the exception line as its `match` example, a regex built from the message with its variable
parts generalised, the literal the fast search looks for, a look-alike) and leaves why, remedy and references to a
person (`TODO`, which `diagnose check-signatures` reports until they are written).

The regex escapes the message and replaces only whole tokens (numbers, hex, paths, addresses, ids) by bounded classes
that cannot overlap their neighbours, so it never backtracks badly; the loader's nesting check runs on it too.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import regex

from ..judge.findings import Unrecognized
from ..lazyre import lazy
from ..match.database import Database
from ..match.literals import nesting_problem, required_gate
from ..match.schema import ID_RE
from ..read.sources import Source
from ..read.traceback import WATCHDOG_TYPE
from .batch import diagnose

MAX_LEARN = 8  # skeletons written for one log
MAX_MESSAGE = 160  # characters of the message the regex keeps (the rest varies more than it identifies)
PATH_CHARS = r"[^\s'\",:;()\[\]{}<>]"
_TOKEN = lazy(
    r"(?P<hex>0x[0-9a-fA-F]+)"
    r"|(?P<uuid>[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12})"
    r"|(?P<path>(?<![\w.])(?:~|\.{1,2})?/" + PATH_CHARS + r"*)"
    r"|(?P<ip>(?<![\w.])\d{1,3}(?:\.\d{1,3}){3}(?![\w.]))"
    r"|(?P<id>(?<!\w)(?=[A-Za-z_]*\d)(?=\d*[A-Za-z_])\w{8,}(?!\w))"
    r"|(?P<num>(?<!\w)\d+(?:\.\d+)?(?!\w))"
    r"|(?P<space>\s{2,})"
)
# what each kind of token becomes: bounded, and none of them can take the character that follows it
_CLASS = {
    "hex": r"0x[0-9a-fA-F]{1,32}",
    "uuid": r"[0-9a-fA-F-]{36}",
    "path": r"(?:~|\.{1,2})?/" + PATH_CHARS + "{0,400}",
    "ip": r"\d{1,3}(?:\.\d{1,3}){3}",
    "id": r"\w{1,128}",
    "num": r"\d{1,20}(?:\.\d{1,20})?",
    "space": r"\s{1,40}",
}
_SPECIAL = lazy(r"([.^$*+?{}\[\]\\|()#])")


@dataclass(frozen=True, slots=True)
class Skeleton:
    """A new signature file drafted from an error line."""

    sig_id: str
    path: Path
    example: str
    pattern: str
    literal: str
    where: str  # source:line of the error it was written from


def escape(text: str) -> str:
    """A literal piece of a regex: special characters escaped, spaces and words left readable."""
    return _SPECIAL.sub(r"\\\1", text)


def generalise(message: str) -> tuple[str, str]:
    """The regex for a message (its variable parts as classes) and its longest literal piece."""
    message = message[:MAX_MESSAGE]
    if len(message) == MAX_MESSAGE:  # do not end inside a token
        message = message.rsplit(" ", 1)[0] if " " in message[40:] else message
    parts: list[str] = []
    literal_pieces: list[str] = []
    pos = 0
    for m in _TOKEN.finditer(message):
        if m.start() > pos:
            parts.append(escape(message[pos:m.start()]))
            literal_pieces.append(message[pos:m.start()])
        kind = m.lastgroup or "num"
        parts.append(_CLASS[kind])
        literal_pieces.append("\0")
        pos = m.end()
    if pos < len(message):
        parts.append(escape(message[pos:]))
        literal_pieces.append(message[pos:])
    pieces = [p.strip() for p in "".join(literal_pieces).split("\0")]
    longest = max(pieces, key=len, default="")
    return "".join(parts), longest


def exception_line(u: Unrecognized) -> tuple[str, str, str] | None:
    """(the line to match, the regex's head, the look-alike's head) for an unrecognised error, or None when there
    is nothing to learn from (a traceback cut before its exception line, the watchdog's own record)."""
    if u.exc_type in ("?", "", WATCHDOG_TYPE) or not u.message.strip():
        return None
    message = u.message.strip()
    if u.kind == "cxx":  # a C++ exception: its message is the what() line (libstdc++'s, or Ray's one-line form)
        return f"  what():  {message}", r"what\(\):\s{1,10}", "INFO "
    if u.kind in ("fatal", "signal"):
        return None  # "Fatal Python error: Segmentation fault", "*** SIGSEGV received": the signal, not an error text
    return f"{u.exc_type}: {message}", escape(u.exc_type) + ":" + r"\s{0,10}", "INFO "


def skeleton_id(u: Unrecognized, literal: str, taken: set[str]) -> str:
    name = u.exc_type.replace("::", ".").rsplit(".", 1)[-1].lower()
    words = [w for w in regex.findall(r"[a-z0-9]+", literal.lower()) if len(w) > 1][:5]
    base = "-".join([w for w in regex.findall(r"[a-z0-9]+", name)] + words)[:60].strip("-") or "learned-error"
    if not ID_RE.match(base):
        base = "learned-error"
    sig_id, n = base, 2
    while sig_id in taken:
        sig_id, n = f"{base}-{n}", n + 1
    return sig_id


def q(text: str) -> str:
    """A YAML double-quoted scalar (a JSON string is one)."""
    return json.dumps(text, ensure_ascii=False)


def render(sig_id: str, line: str, pattern: str, literal: str, look_alike: str, origin: str) -> str:
    title = line.strip().replace("{", "{{").replace("}", "}}")
    if len(title) > 100:
        title = title[:99] + "…"
    return "\n".join([
        f"# Written by `diagnose learn` from {origin}, an error no signature knew. The pattern is the exception line",
        "# with its numbers, paths, hex and ids generalised; check it against the source that prints the message.",
        "# Write every TODO (why, remedy, references, the Chinese title), then run: diagnose check-signatures DIR",
        f"id: {sig_id}",
        "title:",
        f"  en: {q(title)}",
        f"  zh: {q('TODO（中文标题）')}",
        "kind: cause",
        "severity: error",
        "verdict: investigate",
        "match:",
        "  any:",
        f"    - regex: {q(pattern)}",
        f"      literals: [{q(literal)}]",
        "why:",
        f"  en: {q('TODO: what causes this error, in 1 to 3 sentences.')}",
        f"  zh: {q('TODO：此错误的原因（1 到 3 句）。')}",
        "remedy:",
        f"  en: {q('TODO: 1. the first thing to check or change.')}",
        f"  zh: {q('TODO：1. 首先要检查或修改的地方。')}",
        "references:",
        f"  - {q('TODO: the URL of the code that prints this message, and of the issue where it was solved')}",
        "examples:",
        "  match:",
        f"    - {q(line)}",
        "  no_match:",
        "    # a line that quotes the message without raising it",
        f"    - {q(look_alike)}",
        "",
    ])


def learn(db: Database, sources: list[Source], out_dir: Path, warn: Callable[[str], None],
          jobs: int = 1) -> list[Skeleton]:
    """Write a skeleton for each unrecognised error of `sources` into `out_dir`; return what was written."""
    report = diagnose(db, sources, "en", warn, None, jobs)
    taken = {cs.sig.id for cs in db.signatures} | {p.stem for p in out_dir.glob("*.y*ml")}
    written: list[Skeleton] = []
    seen: set[str] = set()
    for u in report.unrecognized:
        if len(written) >= MAX_LEARN:
            break
        got = exception_line(u)
        if got is None:
            continue
        line, head, look_head = got
        body, literal = generalise(u.message.strip())
        pattern = head + body
        if len(literal) < 3:  # all of the message varies: the exception's own name is what the search looks for
            literal = line.strip().split(":", 1)[0] + ":"
        if pattern in seen or nesting_problem(pattern) or required_gate(pattern) is None \
                or regex.search(pattern, line.strip()) is None:
            continue
        seen.add(pattern)
        sig_id = skeleton_id(u, literal, taken)
        taken.add(sig_id)
        origin = f"{u.first.source}:{u.first.line}"
        look_alike = look_head + u.message.strip()[:MAX_MESSAGE]
        out_dir.mkdir(parents=True, exist_ok=True)
        path = out_dir / f"{sig_id}.yaml"
        path.write_text(render(sig_id, line, pattern, literal, look_alike, origin), encoding="utf-8")
        written.append(Skeleton(sig_id, path, line, pattern, literal, origin))
    return written
