"""Scan one source's lines in order: normalise, group tracebacks, match, decide each hit.

A hit waits until what decides it has been seen (its traceback closed, the lines of a `within`
window passed), then it is emitted once as a HitEvent, with a little context as evidence. A
traceback that no signature explained is emitted as an UnrecognizedEvent.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

import regex

from ..read.normalize import FACT_LINES, HEAD_LINES, LogLine, Normalizer
from ..read.traceback import TracebackGrouper, TracebackRecord
from .database import CompiledSignature, Database, Rule
from .matcher import Matcher

CONTEXT_BEFORE = 3
CONTEXT_AFTER = 2
CONTEXT_REACH = 15  # context lines come from at most this many physical lines away
AFTER_WAIT = 12  # physical lines a hit outside a traceback waits for its after-context
RECENT = 256  # physical lines remembered for context and `within` windows
STALE_TB = 5000  # a traceback whose stream stays silent this many lines is closed
STALE_CHECK_EVERY = 512
FOREVER = 1 << 62  # a hit with whole-file conditions waits for the end of its source
# An exception line with no traceback around it ("ImportError: ...so: undefined symbol: x" as the last line
# of a paste), or a failed C++ CHECK (Ray's RAY_CHECK, glog, absl: "file.cc:NN:  Check failed: <condition>", glog's
# "F0706 ... file.cc:NN] Check failed: ..." whose prefix the normaliser strips): a failure with no Python traceback.
# It counts only near the end of its source (a recovered error mid-run is not the failure), when no signature
# matched the line, and the report shows it only when nothing else explains the log.
LONE_LITERALS = ("Error: ", "Exception: ", "Check failed: ")
_LONE = regex.compile(r"^(?P<type>(?:[A-Za-z_]\w{0,63}\.){0,8}(?:[A-Z]\w{0,79}Error|(?:[A-Z]\w{0,79})?Exception)): "
                      r"(?P<msg>\S.*)")
_CHECK = regex.compile(r"(?:\.(?:cc|cpp|cxx|h|hpp):\d+(?::|\])\s+|^)(?P<type>Check failed): (?P<msg>\S.*)")
# Ray prints this CHECK at interpreter exit of runs that went well (the core worker was already shut down)
_BENIGN_CHECK = "Check failed: core_worker_process "
LONE_TAIL = 100  # physical lines from the end of its source within which a lone line counts
LONE_KEEP = 3  # distinct lone errors kept per source


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
    at = text.find("Check failed: ")
    if at < 0 or (raw is not None and "Check failed: " not in raw) or _BENIGN_CHECK in text:
        return None
    return _CHECK.search(text, max(0, at - 40))


@dataclass(frozen=True, slots=True)
class EvidenceLine:
    lineno: int
    raw: str
    key: bool


@dataclass(frozen=True, slots=True)
class HitEvent:
    sig_id: str
    line: LogLine
    captures: dict[str, str]
    evidence: tuple[EvidenceLine, ...]


@dataclass(frozen=True, slots=True)
class UnrecognizedEvent:
    exc_type: str
    message: str
    frame: str
    line: LogLine
    kind: str  # python | cxx | fatal | signal: a traceback; "line": a lone exception line (see _LONE)
    depends_on: tuple[str, ...] = ()  # deferred hits in this traceback: it is unrecognised only if none holds
    count: int = 1  # lone lines: how many times the source's tail said it


@dataclass(frozen=True, slots=True)
class DeferredHitEvent:
    """A hit whose whole-file conditions are decided once the whole source has been seen (all its parts)."""

    key: str
    hit: HitEvent
    needs: tuple[str, ...]  # whole-file conditions that must have matched somewhere in the source
    forbids: tuple[str, ...]  # whole-file conditions that must not have


@dataclass(frozen=True, slots=True)
class FileSeenEvent:
    """The whole-file conditions that matched somewhere in this (part of a) source."""

    source: str
    keys: frozenset[str]


@dataclass(frozen=True, slots=True)
class FactEvent:
    name: str
    value: str
    line: LogLine
    groups: dict[str, str]
    mode: str = "first"


Event = HitEvent | UnrecognizedEvent | FactEvent | DeferredHitEvent | FileSeenEvent


@dataclass(slots=True)
class _Pending:
    cs: CompiledSignature
    rule: Rule
    line: LogLine
    captures: dict[str, str]
    tb: TracebackRecord | None
    wait_until: int
    before: list[LogLine]
    after: list[LogLine] = field(default_factory=list)
    window_all: list[bool] = field(default_factory=list)
    window_not: bool = False


@dataclass(slots=True)
class _TbBook:
    record: TracebackRecord
    pending: int = 0
    accepted: int = 0
    closed: bool = False
    sigs: set[str] = field(default_factory=set)
    deferred: list[str] = field(default_factory=list)


class SourceScanner:
    """One per source; `feed_raw` each physical line in order, then `finish`."""

    def __init__(self, db: Database, matcher: Matcher, source: str, source_index: int,
                 emit: Callable[[Event], None], rank: int | None = None, host: str | None = None,
                 job_year: int | None = None) -> None:
        self.db = db
        self.matcher = matcher
        self.source = source
        self.emit = emit
        self.normalizer = Normalizer(source, source_index, rank, host, job_year)
        self.grouper = TracebackGrouper(self._tb_closed)
        self.recent: deque[LogLine] = deque(maxlen=max(RECENT, db.max_window + 1))
        self.pending: list[_Pending] = []
        self.books: dict[int, _TbBook] = {}
        self.facts_seen: set[str] = set()
        self.lineno = 0
        self.lines = 0
        # conditions that look at the whole file: whether each has matched any line so far
        self.file_conds = db.file_conds
        self.file_seen: set[int] = set()
        self.cond_keys = db.cond_keys
        # The fast path feeds only some lines; it lends the lines it skipped, for context, through this.
        self.lookback: Callable[[int, int], list[tuple[int, str]]] | None = None
        self.raw = ""  # the physical line being fed, as decoded (gates must hold in it too)
        # lone exception lines (line, type, message), the last LONE_TAIL
        self.lone: deque[tuple[LogLine, str, str]] = deque(maxlen=LONE_TAIL)

    @property
    def busy(self) -> bool:
        """True while a traceback is open or a hit waits on nearby lines: the next lines must all be fed.

        Hits that wait for the end of the file do not count: whole-file conditions are tracked
        on every line that carries their literal, wherever the hit was.
        """
        return bool(self.books) or any(
            p.wait_until < FOREVER
            or (p.tb is None and len(p.after) < CONTEXT_AFTER and self.lineno - p.line.lineno < CONTEXT_REACH)
            for p in self.pending
        )

    def feed_raw(self, lineno: int, raw: str) -> None:
        self.lines += 1
        self.raw = raw
        for line in self.normalizer.lines(lineno, raw):
            self.feed(line)

    def feed(self, line: LogLine) -> None:
        self.lineno = line.lineno
        self.recent.append(line)
        tb = self.grouper.feed(line)
        if tb is not None and tb.tb_id not in self.books:
            self.books[tb.tb_id] = _TbBook(tb)
        if self.pending:
            self._advance_pending(line)
        text = line.text
        if text and self.file_conds:
            for cs, cond in self.file_conds:
                if id(cond) not in self.file_seen and self.matcher.condition(cond, text, cs.sig.id) is not None:
                    self.file_seen.add(id(cond))
        if text:
            for fact, value, groups in self.matcher.facts_for(text, self.raw):
                if fact.head_only and line.lineno > (HEAD_LINES if fact.job else FACT_LINES):
                    continue
                if fact.mode == "last":
                    self.emit(FactEvent(fact.name, value, line, groups, "last"))
                elif fact.name not in self.facts_seen:
                    self.facts_seen.add(fact.name)
                    self.emit(FactEvent(fact.name, value, line, groups))
            rules = self.matcher.rules_for(text, self.raw)
            for rule, captures in rules:
                self._hit(self.db.signatures[rule.sig_index], rule, line, captures, tb)
            if tb is None and not rules:
                m = lone_error(text, self.raw)
                if m is not None:
                    self.lone.append((line, m.group("type"), m.group("msg").strip()))
        if line.lineno % STALE_CHECK_EVERY == 0:
            self.grouper.close_stale(line.lineno, STALE_TB)
        if self.pending:
            self._resolve_ready()

    def flush(self) -> None:
        """The input went quiet (live mode): close open tracebacks, decide the hits that wait on lines."""
        self.grouper.close_all()
        for p in self.pending:
            if p.wait_until < FOREVER:
                p.wait_until = 0
        self._resolve_ready()

    def finish(self, last_line: int | None = None) -> None:
        """The source ended at physical line `last_line` (default: the last line fed)."""
        self.grouper.close_all()
        for p in list(self.pending):
            p.wait_until = 0
        self._resolve_ready(final=True)
        self._emit_lone(self.lineno if last_line is None else last_line)
        if self.file_conds:
            self.emit(FileSeenEvent(self.source, frozenset(self.cond_keys[i] for i in self.file_seen)))

    def _emit_lone(self, last_line: int) -> None:
        """The last LONE_KEEP distinct lone errors of the source's last LONE_TAIL lines, each with its count."""
        found: dict[tuple[str, str], tuple[LogLine, int]] = {}  # (type, message) -> its first line, count
        for line, exc_type, message in self.lone:
            if last_line - line.lineno >= LONE_TAIL:
                continue
            first, count = found.pop((exc_type, message), (line, 0))  # re-inserted: ordered by each key's last line
            found[(exc_type, message)] = (first, count + line.repeat)
        for (exc_type, message), (line, count) in list(found.items())[-LONE_KEEP:]:
            self.emit(UnrecognizedEvent(exc_type, message, "", line, "line", count=count))

    # -- hits ------------------------------------------------------------------------------------
    def _hit(self, cs: CompiledSignature, rule: Rule, line: LogLine, captures: dict[str, str],
             tb: TracebackRecord | None) -> None:
        sig_id = cs.sig.id
        book = self.books.get(tb.tb_id) if tb is not None else None
        if book is not None and sig_id in book.sigs:
            return  # one accepted hit per signature per traceback
        for cond in rule.not_:
            if cond.cond.scope == "line" and self.matcher.condition(cond, line.text, sig_id) is not None:
                return
        merged = dict(captures)
        for cond in rule.all:
            if cond.cond.scope == "line":
                got = self.matcher.condition(cond, line.text, sig_id)
                if got is None:
                    return
                merged = {**got, **merged}
        window = rule.window
        whole_file = rule.whole_file
        before: list[LogLine] = []
        if tb is None:
            before = [x for x in self._earlier_lines(line, CONTEXT_REACH) if x.stream == line.stream][-CONTEXT_BEFORE:]
        wait = window if tb is not None else max(window, AFTER_WAIT)
        p = _Pending(cs, rule, line, merged, tb, line.lineno + wait if not whole_file else FOREVER, before)
        if window:
            p.window_all = [False] * len(rule.all)
            for x in self._earlier_lines(line, window):
                self._window_check(p, x)
            self._window_check(p, line)  # the hit line itself is within every window
        if book is not None:
            book.pending += 1
        self.pending.append(p)

    def _earlier_lines(self, line: LogLine, reach: int) -> list[LogLine]:
        """The lines within `reach` physical lines before `line` (and earlier parts of its own line)."""
        low = line.lineno - reach
        fed = [x for x in self.recent if low <= x.lineno <= line.lineno and x is not line]
        if self.lookback is None:
            return fed
        have = {x.lineno for x in fed} | {line.lineno}
        first = max(1, low)
        missing = [n for n in range(first, line.lineno) if n not in have]
        if not missing:
            return fed
        lent: list[LogLine] = []
        for lineno, raw in self.lookback(missing[0], missing[-1]):
            if lineno not in have:
                lent.extend(self.normalizer.lines(lineno, raw))
        self.normalizer.lineno = line.lineno
        return sorted(fed + lent, key=lambda x: x.lineno)

    def _window_check(self, p: _Pending, x: LogLine) -> None:
        if not x.text:
            return
        owner = p.cs.sig.id
        for i, cond in enumerate(p.rule.all):
            if cond.cond.scope == "window" and not p.window_all[i] and abs(x.lineno - p.line.lineno) <= cond.cond.lines:
                got = self.matcher.condition(cond, x.text, owner)
                if got is not None:
                    p.window_all[i] = True
                    for k, v in got.items():
                        p.captures.setdefault(k, v)
        for cond in p.rule.not_:
            if cond.cond.scope == "window" and not p.window_not \
                    and abs(x.lineno - p.line.lineno) <= cond.cond.lines \
                    and self.matcher.condition(cond, x.text, owner) is not None:
                p.window_not = True

    def _advance_pending(self, line: LogLine) -> None:
        for p in self.pending:
            if p.rule.window and line.lineno <= p.line.lineno + p.rule.window:
                self._window_check(p, line)
            if p.tb is None and line.stream == p.line.stream and len(p.after) < CONTEXT_AFTER \
                    and line is not p.line and line.lineno - p.line.lineno <= CONTEXT_REACH:
                p.after.append(line)

    def _resolve_ready(self, final: bool = False) -> None:
        still: list[_Pending] = []
        for p in self.pending:
            tb_open = p.tb is not None and not self._tb_is_closed(p.tb)
            if not final and (tb_open or self.lineno < p.wait_until):
                still.append(p)
                continue
            self._decide(p)
        self.pending = still

    def _tb_is_closed(self, tb: TracebackRecord) -> bool:
        book = self.books.get(tb.tb_id)
        return book is None or book.closed

    def _decide(self, p: _Pending) -> None:
        cs, rule = p.cs, p.rule
        accepted = not p.window_not
        # outside any traceback (an excerpt that starts at the exception line) the hit line is its own
        tb_lines = p.tb.lines if p.tb is not None else [p.line]
        for i, cond in enumerate(rule.all):
            if not accepted:
                break
            if cond.cond.scope == "file":
                continue  # decided with the whole source (see DeferredHitEvent)
            if cond.cond.scope == "window":
                accepted = p.window_all[i]
            elif cond.cond.scope == "traceback":
                found = None
                for x in tb_lines:
                    found = self.matcher.condition(cond, x.text, cs.sig.id)
                    if found is not None:
                        break
                if found is None:
                    accepted = False
                else:
                    for k, v in found.items():
                        p.captures.setdefault(k, v)
        if accepted:
            for cond in rule.not_:
                if cond.cond.scope == "traceback" and any(
                    self.matcher.condition(cond, x.text, cs.sig.id) is not None for x in tb_lines
                ):
                    accepted = False
                    break
        book = self.books.get(p.tb.tb_id) if p.tb is not None else None
        if accepted and book is not None and cs.sig.id in book.sigs:
            accepted = False  # this traceback already gave an accepted hit for the signature
        if accepted and rule.whole_file:
            keys = self.cond_keys
            hit = HitEvent(cs.sig.id, p.line, p.captures, self._evidence(p))
            key = f"{p.line.source}:{p.line.lineno}:{cs.sig.id}:{rule.where}"
            self.emit(DeferredHitEvent(
                key, hit, tuple(keys[id(c)] for c in rule.all if c.cond.scope == "file"),
                tuple(keys[id(c)] for c in rule.not_ if c.cond.scope == "file")))
            if book is not None:
                book.deferred.append(key)
            accepted = False
        elif accepted:
            if book is not None:
                book.sigs.add(cs.sig.id)
            self.emit(HitEvent(cs.sig.id, p.line, p.captures, self._evidence(p)))
        if book is not None:
            book.pending -= 1
            if accepted:
                book.accepted += 1
            if book.closed and book.pending == 0:
                self._retire(book)

    def _evidence(self, p: _Pending) -> tuple[EvidenceLine, ...]:
        if p.tb is not None:
            lines = p.tb.lines
            try:
                i = next(k for k, x in enumerate(lines) if x is p.line)
            except StopIteration:
                i = len(lines) - 1
            before = lines[max(0, i - CONTEXT_BEFORE):i]
            after = lines[i + 1:i + 1 + CONTEXT_AFTER]
        else:
            before, after = p.before, p.after
        out = [EvidenceLine(x.lineno, x.raw, False) for x in before]
        out.append(EvidenceLine(p.line.lineno, p.line.raw, True))
        out.extend(EvidenceLine(x.lineno, x.raw, False) for x in after)
        return tuple(out)

    # -- tracebacks ------------------------------------------------------------------------------
    def _tb_closed(self, tb: TracebackRecord) -> None:
        book = self.books.get(tb.tb_id)
        if book is None:
            book = self.books[tb.tb_id] = _TbBook(tb)
        book.closed = True
        if book.pending == 0:
            self._retire(book)

    def _retire(self, book: _TbBook) -> None:
        self.books.pop(book.record.tb_id, None)
        tb = book.record
        # Ray's log dedup: "Traceback ... [repeated 7x across cluster]" with no body echoes tracebacks shown once
        echo = tb.first.repeat > 1 and tb.exc_type == "?"
        if book.accepted == 0 and not tb.ignored and not echo:
            self.emit(UnrecognizedEvent(tb.exc_type, tb.message, tb.frame, tb.first, tb.kind, tuple(book.deferred)))
