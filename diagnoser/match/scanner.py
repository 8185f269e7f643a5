"""Scan one source's lines in order: normalise, group tracebacks, match, decide each hit.

A hit waits until what decides it has been seen (its traceback closed, the lines of a `within`
window passed), then it is emitted once as a HitEvent, with a little context as evidence. A
traceback that no signature explained is emitted as an UnrecognizedEvent.
"""

from __future__ import annotations

import copy
from collections import deque
from collections.abc import Callable

from ..read.activity import ActivityTracker
from ..read.grouper import STALE_TB, TracebackGrouper
from ..read.lone import LONE_NEAR, LONE_TAIL, Lone, last_lone, lone_error
from ..read.marks import probe
from ..read.normalize import FACT_LINES, HEAD_LINES, LogLine, Normalizer
from ..read.pyspy import PySpyReader
from ..read.traceback import IGNORED, TracebackRecord
from ..search.streams import Lookback, Want
from .database import Database
from .events import (
    ActivityEvent,
    Event,
    FactEvent,
    FileSeenEvent,
    MarkEvent,
    MetricEvent,
    SeenEvent,
    StackEvent,
    UnrecognizedEvent,
)
from .framehits import frame_hits
from .head import head_events
from .hits import CONTEXT_AFTER, CONTEXT_REACH, HitDecider, Pending, TracebackBook, window_needs
from .matcher import Matcher
from .metrics import ReaderState, read_record
from .metricwatch import read_values

RECENT = 256  # physical lines remembered for context and `within` windows
STALE_CHECK_EVERY = 512


class SourceScanner(HitDecider):
    """One per source; `feed_raw` each physical line in order, then `finish`."""

    def __init__(self, db: Database, matcher: Matcher, source: str, source_index: int,
                 emit: Callable[[Event], None], rank: int | None = None, host: str | None = None,
                 job_year: int | None = None) -> None:
        self.db = db
        self.matcher = matcher
        self.source = source
        self.source_index = source_index
        self.emit = emit
        self.normalizer = Normalizer(source, source_index, rank, host, job_year)
        self.grouper = TracebackGrouper(self._tb_closed)
        self.recent: deque[LogLine] = deque(maxlen=max(RECENT, db.max_window + 1))
        self.pending: list[Pending] = []
        self.books: dict[int, TracebackBook] = {}
        self.facts_seen: set[str] = set()
        self.lineno = 0
        self.lines = 0
        # conditions that look at the whole file: whether each has matched any line so far
        self.file_conds = db.file_conds
        self.file_seen: set[int] = set()
        self.cond_keys = db.cond_keys
        self.lookback: Lookback | None = None  # the fast path lends the lines it skipped (for context) through this
        self.raw, self.made = "", 0  # the physical line being fed, as decoded (gates hold in it too); its logical lines
        self.found: frozenset[str] = frozenset()  # the gate literals it holds
        search = db.search
        self.line_search = search.line_search  # what line_literals searches with
        self.gateless = bool(search.rules.always or search.facts.always or search.files.always)
        self.lean, self.metric_lean = search.lean, search.metric_lean  # lines holding only these: see feed
        # ... past the head (job facts no longer read): with their literals too, unless a metric reader reads every line
        job = frozenset() if search.metrics.always else search.job_only
        self.lean_late, self.metric_late = search.lean | job, search.metric_lean | job
        # lone exception lines (line, type, message, the signatures whose regex read it), the last LONE_TAIL
        self.lone: deque[Lone] = deque(maxlen=LONE_TAIL)
        self.hit_lines: dict[str, deque[int]] = {}  # signature -> the lines of its last hits (HITS_KEPT)
        self.ignoring: set[str] = set()  # streams whose last line makes a traceback starting next ignored (IGNORED)
        self.metrics = ReaderState()  # what the metric readers remember in this source (match/metrics.py)
        self.metrics_from = 0  # a part of a split file: lines before its start (its look-back lead) are read, not told
        # who did what across ranks: marks (read/marks.py), each writer's last line and step, py-spy stacks
        self.activity = ActivityTracker()
        self.pyspy = PySpyReader()
        # the rank and host its file (or folder) names: the job's shape counts the files it saw; the ranks a line
        # names are not counted (the fast search never decodes most lines, and both paths must agree)
        self.ranks_seen: set[int] = set() if rank is None else {rank}
        self.hosts_seen: set[str] = set() if not host else {host}

    def wants(self) -> bool | Want:
        """Which of the next lines must be fed (the fast search skips the others): True for every line
        while a hit waits on its after-context; else (streams, literals): the lines of the streams of the open
        tracebacks (a traceback on a `[rankN]:` or Ray actor stream is continued and closed only by lines of
        its own stream) and of those whose last line was "Exception ignored in" (the next decides), and the lines
        holding a literal of the `within` window conditions still undecided (a line without one cannot meet
        them); False when only lines holding a gate literal matter. No hit waits for the end of the file:
        whole-file conditions are tracked on every line that carries their literal, and judged by the collector.
        """
        lineno = self.lineno
        if self.pyspy.reading:
            return True  # a py-spy stack's frames hold no literal
        literals: list[str] = []
        for p in self.pending:
            if p.tb is None and len(p.after) < CONTEXT_AFTER and lineno - p.line.lineno < CONTEXT_REACH:
                return True
            if lineno < p.wait_until:
                needed = window_needs(p, lineno)
                if needed is None or not self.normalizer.settled:
                    return True
                literals += needed
        streams = {b.record.first.stream for b in self.books.values() if not b.closed} | self.ignoring
        if "" in streams and not self.normalizer.settled:
            return True  # lines without a transport prefix: any line may be one (the feeder skips those of a Ray
            # prefix the normaliser knows, see known_stream, once its state no longer depends on the lines it sees)
        if not streams and not literals:
            return False
        return tuple(streams), tuple(dict.fromkeys(literals))

    def known_stream(self, head: str) -> bool:
        """Whether a line whose cleaned text starts with the Ray prefix `head` certainly belongs to a transport
        stream (read/normalize.py), not to the lines without one."""
        return self.normalizer.known_stream(head)

    def tick(self, lineno: int) -> None:
        """Physical line `lineno` was skipped: what the scanner does on every line whatever it holds (close
        the tracebacks of streams silent for too long, decide the hits that waited on them)."""
        self.lineno = lineno
        if lineno % STALE_CHECK_EVERY == 0:
            self.grouper.close_stale(lineno, STALE_TB)
            if self.pending:
                self._resolve_ready()

    def feed_raw(self, lineno: int, raw: str, found: frozenset[str] | None = None) -> None:
        """Feed one physical line; `found`: the gate literals it holds, when the caller searched it already
        (SearchIndex.line_literals)."""
        self.lines += 1
        self.raw = raw
        self.found = self.line_search.found_in(raw.encode("utf-8", "replace")) if found is None else found
        lines = self.normalizer.lines(lineno, raw)
        self.made = len(lines)
        for line in lines:
            self.feed(line)

    def repeat_free(self) -> str | None:
        """The stream of the physical line just fed when its copies change nothing (search/repeats.py): it made one
        logical line, of NCCL's chatter (each writer's activity ignores it), read by a settled normaliser, which
        started no traceback, no py-spy stack and no lone error; else None."""
        line = self.recent[-1]
        if self.made != 1 or not self.normalizer.settled or " NCCL INFO " not in line.text or self.pyspy.reading \
                or line.text.startswith(("Process ", "Thread ")) or not self.grouper.plain(line.stream) \
                or (self.lone and self.lone[-1][0] is line):
            return None
        return line.stream

    def plain(self, stream: str) -> bool:
        """Whether a line of `stream` starting no traceback changes no traceback to come (read/grouper.py plain)."""
        return self.grouper.plain(stream)

    def feed(self, line: LogLine) -> None:
        self.lineno = line.lineno
        self.recent.append(line)
        tb = self.grouper.feed(line)
        ignored = IGNORED.match(line.text) is not None  # its next line decides (grouper.py _start): it is fed (wants)
        if ignored or self.ignoring:
            (self.ignoring.add if ignored else self.ignoring.discard)(line.stream)
        if tb is not None and tb.tb_id not in self.books:
            self.books[tb.tb_id] = TracebackBook(tb)
        if self.pending:
            self._advance_pending(line)
        text = line.text
        marks = probe(text, self.found) if text else []
        for mark in marks:
            self.emit(MarkEvent(mark, line))
        if line.lineno <= HEAD_LINES:
            for event in head_events(line, text, self.facts_seen):
                self.emit(event)
        self.activity.feed(line, marks)
        if self.pyspy.reading or text.startswith(("Process ", "Thread ")):
            stack = self.pyspy.feed(text)
            if stack is not None:
                self.emit(StackEvent(stack, line))
        found = self.found
        if text and (found or self.gateless):
            # holding only literals no lookup names (SearchIndex.lean, metric_lean): read for marks and metrics alone
            late = line.lineno > HEAD_LINES
            lean = self.lean_late if late else self.lean
            if self.gateless or not (found <= lean or (found <= self.metric_late and line.lineno > FACT_LINES)):
                self._match(line, text, found, tb)
            if self.matcher.metrics is not None and (self.gateless or not found <= lean):
                self._metric(line)
        if line.lineno % STALE_CHECK_EVERY == 0:
            self.grouper.close_stale(line.lineno, STALE_TB)
        if self.pending:
            self._resolve_ready()

    def _match(self, line: LogLine, text: str, found: frozenset[str], tb: TracebackRecord | None) -> None:
        """The whole-file conditions, facts, rules and lone errors a line holding `found` may meet."""
        if self.file_conds:
            for i in self.db.search.files.candidates(text, found):
                cs, cond = self.file_conds[i]
                if id(cond) not in self.file_seen and self.matcher.condition(cond, text, cs.sig.id) is not None:
                    self.file_seen.add(id(cond))
        late = line.lineno > FACT_LINES
        for fact, value, groups in self.matcher.facts_for(text, found, late):
            if fact.head_only and line.lineno > (HEAD_LINES if fact.job else FACT_LINES):
                continue
            if fact.mode == "last":
                self.emit(FactEvent(fact.name, value, line, groups, "last"))
            elif fact.name not in self.facts_seen:
                self.facts_seen.add(fact.name)
                self.emit(FactEvent(fact.name, value, line, groups))
        rules = self.matcher.rules_for(text, found)
        for rule, captures in rules:
            self._hit(self.db.signatures[rule.sig_index], rule, line, captures, tb)
        # a lone error counts unless a rule took the line for sure: a rule with conditions may still let it go
        if tb is None and all(rule.all or rule.not_ for rule, _captures in rules):
            m = lone_error(text, self.raw)
            if m is not None:
                sigs = tuple(self.db.signatures[rule.sig_index].sig.id for rule, _captures in rules)
                self.lone.append((line, m.group("type"), m.group("msg").strip(), sigs))

    def _metric(self, line: LogLine) -> None:
        """A metric record on this line: its values that a health rule reads, as one event."""
        watch = self.matcher.metrics
        readers = self.db.search.metrics.candidates(line.text, self.found)
        if not readers or watch is None:
            return
        record = read_record(line.text, readers, self.metrics)
        if record is None:
            return
        values, excused = read_values(record, watch)
        if (values or watch.vanishing) and line.lineno >= self.metrics_from:
            self.emit(MetricEvent(record.reader, record.step, tuple(values), record.head, line, excused))

    def lend(self, lines: list[tuple[int, str]]) -> None:
        """The last lines of the source, lent by the fast search after its end (it fed only some of them):
        each writer's last line and step are read from them (read/activity.py)."""
        normalizer = copy.copy(self.normalizer)
        founds = self.line_search.found_in_each([raw.encode("utf-8", "replace") for _n, raw in lines])
        for (lineno, raw), found in zip(lines, founds, strict=True):
            for line in normalizer.lines(lineno, raw):
                self.activity.feed(line, probe(line.text, found) if line.text else [])

    def flush(self) -> None:
        """The input went quiet (live mode): close open tracebacks, decide the hits that wait on lines."""
        self.grouper.close_all()
        for p in self.pending:
            p.wait_until = 0
        self._resolve_ready()

    def finish(self, last_line: int | None = None) -> None:
        """The source ended at physical line `last_line` (default: the last line fed)."""
        self.grouper.close_all(at_end=True)
        for p in list(self.pending):
            p.wait_until = 0
        self._resolve_ready(final=True)
        end = self.lineno if last_line is None else last_line
        self._emit_lone(end)
        stack = self.pyspy.close()
        if stack is not None and self.recent:
            self.emit(StackEvent(stack, self.recent[-1]))
        self.emit(ActivityEvent(self.source, self.source_index, end, self.activity.tracks, self.activity.dropped))
        if self.ranks_seen or self.hosts_seen:
            self.emit(SeenEvent(self.source, frozenset(self.ranks_seen), frozenset(self.hosts_seen)))
        if self.file_conds:
            self.emit(FileSeenEvent(self.source, frozenset(self.cond_keys[i] for i in self.file_seen)))

    def _emit_lone(self, last_line: int) -> None:
        """The source's last lone errors (read/lone.py last_lone), but those a hit nearby explains."""
        def hit_near(sig: str, lineno: int) -> bool:
            return any(abs(n - lineno) <= LONE_NEAR for n in self.hit_lines.get(sig, ()))

        for line, exc_type, message, count in last_lone(self.lone, last_line, hit_near):
            self.emit(UnrecognizedEvent(exc_type, message, "", line, "line", count=count))

    # -- tracebacks ------------------------------------------------------------------------------
    def _tb_closed(self, tb: TracebackRecord) -> None:
        book = self.books.get(tb.tb_id)
        if book is None:
            book = self.books[tb.tb_id] = TracebackBook(tb)
        book.closed = True
        if book.pending == 0:
            self._retire(book)

    def _retire(self, book: TracebackBook) -> None:
        self.books.pop(book.record.tb_id, None)
        tb = book.record
        if book.accepted == 0 and tb.cut and not tb.at_exit and not book.deferred:
            hits = frame_hits(self.db, self.matcher, tb)
            for hit in hits:
                self.emit(hit)
            if hits:
                return
        # Ray's log dedup: "Traceback ... [repeated 7x across cluster]" with no body echoes tracebacks shown once
        echo = tb.first.repeat > 1 and tb.exc_type == "?"
        if book.accepted == 0 and not tb.ignored and not echo:
            self.emit(UnrecognizedEvent(tb.exc_type, tb.message, tb.frame, tb.first, tb.kind, tuple(book.deferred)))
