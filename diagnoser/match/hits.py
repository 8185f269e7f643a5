"""How a scanner decides a hit: it waits until what decides it has been seen (its traceback closed, the lines of
a `within` window passed), then emits it once as a HitEvent with a little context as evidence, or defers it to
the end of the source when a whole-file condition must hold."""

from __future__ import annotations

from collections import deque
from collections.abc import Callable
from dataclasses import dataclass, field

from ..read.normalize import LogLine, Normalizer, clean_text
from ..read.traceback import TracebackRecord
from ..search.streams import Lookback, needles_of, stream_needles
from .database import CompiledSignature, Database, Rule
from .events import DeferredHitEvent, Event, EvidenceLine, HitEvent
from .matcher import Matcher
from .phase import phase_of, wants_phase

CONTEXT_BEFORE = 3
CONTEXT_AFTER = 2
CONTEXT_REACH = 15  # context lines come from at most this many physical lines away
AFTER_WAIT = 12  # physical lines a hit outside a traceback waits for its after-context
HITS_KEPT = 8  # the last hits' lines kept per signature (lone errors they explain: read/lone.py LONE_NEAR)


@dataclass(slots=True)
class Pending:
    """A hit waiting for what decides it."""

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
class TracebackBook:
    """What the hits of one traceback came to: a traceback no hit explained is an unrecognised error."""

    record: TracebackRecord
    pending: int = 0
    accepted: int = 0
    closed: bool = False
    sigs: set[str] = field(default_factory=set)
    deferred: list[str] = field(default_factory=list)


class HitDecider:
    """The hit-deciding half of a SourceScanner (scanner.py), which holds the state named here."""

    db: Database
    matcher: Matcher
    emit: Callable[[Event], None]
    normalizer: Normalizer
    recent: deque[LogLine]
    hit_lines: dict[str, deque[int]]
    pending: list[Pending]
    books: dict[int, TracebackBook]
    lineno: int
    cond_keys: dict[int, str]
    lookback: Lookback | None
    _retire: Callable[[TracebackBook], None]  # the traceback's hits are all decided

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
        before: list[LogLine] = []
        if tb is None:
            before = [x for x in self._earlier_lines(line, CONTEXT_REACH, stream=line.stream)
                      if x.stream == line.stream][-CONTEXT_BEFORE:]
        wait = window if tb is not None else max(window, AFTER_WAIT)
        # A hit with whole-file conditions is decided like any other and handed on as a DeferredHitEvent: the
        # collector judges those conditions once the whole source is seen. (It used to wait here for the end of
        # the source, so N such hits made every line walk N pending hits: 2.5k lines took 5 s, 10k 209 s.)
        p = Pending(cs, rule, line, merged, tb, line.lineno + wait, before)
        if window:
            p.window_all = [False] * len(rule.all)
            for x in self._earlier_lines(line, window, _window_literals(rule)):
                self._window_check(p, x)
            self._window_check(p, line)  # the hit line itself is within every window
        if book is not None:
            book.pending += 1
        self.pending.append(p)

    def _earlier_lines(self, line: LogLine, reach: int, wanted: tuple[str, ...] | None = None,
                       stream: str | None = None) -> list[LogLine]:
        """The lines within `reach` physical lines before `line` (and earlier parts of its own line). `wanted`: of
        the lines the fast search did not feed, only those whose cleaned text holds one of these literals are
        needed (a window's conditions: a line without their gates' literals cannot meet one), so only those
        are normalised, once the normaliser's state no longer depends on the lines it sees (read/normalize.py).
        `stream`: only the lines of that stream are needed (a hit's context): of those not fed, only the ones
        holding the text of its transport prefix once cleaned (stream_needles) are normalised, on the same terms."""
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
        normalizer = self.normalizer
        if wanted is not None and not normalizer.settled:
            wanted = None
        needles = None if wanted is None else needles_of(wanted)
        if stream is not None and normalizer.settled:
            needles = stream_needles(((stream,), ())) or None  # None: not told apart by a text (no transport prefix)
        for lineno, raw in self.lookback(missing[0], missing[-1], needles):
            if lineno not in have and (wanted is None or _holds(clean_text(raw), wanted)):
                lent.extend(normalizer.lines(lineno, raw))
        self.normalizer.lineno = line.lineno
        return sorted(fed + lent, key=lambda x: x.lineno)

    def _window_check(self, p: Pending, x: LogLine) -> None:
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
        still: list[Pending] = []
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

    def _decide(self, p: Pending) -> None:
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
        if accepted and "phase" not in p.captures and wants_phase(cs.sig):
            phase = phase_of(_upto(tb_lines, p.line))  # the frames that led to the hit line say when it happened
            if phase is not None:
                p.captures["phase"] = phase
        if accepted and rule.whole_file:
            keys = self.cond_keys
            hit = HitEvent(cs.sig.id, p.line, p.captures, self._evidence(p))
            key = f"{p.line.source}:{cs.sig.id}:{rule.where}"  # whether it holds depends on these alone
            self.emit(DeferredHitEvent(
                key, hit, tuple(keys[id(c)] for c in rule.all if c.cond.scope == "file"),
                tuple(keys[id(c)] for c in rule.not_ if c.cond.scope == "file")))
            if book is not None and key not in book.deferred:
                book.deferred.append(key)
            accepted = False
        elif accepted:
            if book is not None:
                book.sigs.add(cs.sig.id)
            self.emit(HitEvent(cs.sig.id, p.line, p.captures, self._evidence(p)))
            kept = self.hit_lines.get(cs.sig.id) or self.hit_lines.setdefault(cs.sig.id, deque(maxlen=HITS_KEPT))
            kept.append(p.line.lineno)  # a deque made for a signature's first hit only: a kept one is never empty
        if book is not None:
            book.pending -= 1
            if accepted and not _leaves_unexplained(cs, p):
                book.accepted += 1
            if book.closed and book.pending == 0:
                self._retire(book)

    def _evidence(self, p: Pending) -> tuple[EvidenceLine, ...]:
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


def _upto(lines: list[LogLine], line: LogLine) -> list[LogLine]:
    """A traceback's lines up to and with `line` (all of them when it is not one of them)."""
    for i, x in enumerate(lines):
        if x is line:
            return lines[:i + 1]
    return lines


def _window_literals(rule: Rule) -> tuple[str, ...] | None:
    """Every literal of the gates of a rule's window conditions (None when one has no gate: any line may meet it)."""
    out: list[str] = []
    for c in (*rule.all, *rule.not_):
        if c.cond.scope == "window":
            if c.gate is None:
                return None
            out += c.gate.literals
    return tuple(out)


def window_needs(p: Pending, lineno: int) -> tuple[str, ...] | None:
    """The literals of which a line at `lineno` must hold one to decide one of `p`'s window conditions still open
    (None when such a condition has no gate: any line may decide it; () when none is open there)."""
    rule = p.rule
    if not rule.window:
        return ()
    out: list[str] = []
    reach = lineno - p.line.lineno
    for i, c in enumerate(rule.all):
        if c.cond.scope == "window" and not p.window_all[i] and reach <= c.cond.lines:
            if c.gate is None:
                return None
            out += c.gate.literals
    if not p.window_not:
        for c in rule.not_:
            if c.cond.scope == "window" and reach <= c.cond.lines:
                if c.gate is None:
                    return None
                out += c.gate.literals
    return tuple(out)


def _leaves_unexplained(cs: CompiledSignature, p: Pending) -> bool:
    """A teardown or advice finding never explains an error: a C++ `terminate called ...` whose `what():` message no
    signature knows is still an unrecognised error with that message, beside the finding that the process aborted."""
    tb = p.tb
    return tb is not None and cs.sig.role in ("teardown", "advice") and tb.kind == "cxx" and bool(tb.message)


def _holds(text: str, literals: tuple[str, ...]) -> bool:
    return any(lit in text for lit in literals)
