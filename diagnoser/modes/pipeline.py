"""The pipeline every mode drives: sources in, events out, judged into a report at the end.

A Pipeline owns the matcher and the collector. Each source gets a scanner (normalise → tracebacks →
match, match/scanner.py) whose events go to a collector, and to a listener when a live mode wants each
event as it happens. Batch mode scans whole files (the fast search for big ones) or parts of one, each
into a collector of its own that is merged in source order; the live modes feed lines as they come. A
feature added to the scanner, the collector or the judge works in every mode.
"""

from __future__ import annotations

import contextlib
import gzip
import shlex
import signal
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path

from .. import search
from ..errors import InputError
from ..i18n import Msg
from ..judge.collector import Collector
from ..judge.lead import COMMAND_ID
from ..match.database import Database
from ..match.events import Event, EvidenceLine
from ..match.matcher import Matcher
from ..match.scanner import RECENT, SourceScanner
from ..read.flightrec import MAX_DUMP, DumpError, read_dump
from ..read.layout import PathIdentity, identify
from ..read.sources import SalvagingReader, Source, iter_lines, lines_before, looks_binary, open_binary
from ..report.model import Report, build_report

Warn = Callable[[str], None]

EXIT_SOURCE = "<exit status>"  # where the command's (or the scheduler's) exit status is told
# With the pure-Python search (no Hyperscan), a file below this size is read line by line: the same result, and
# no search plan to make (a plan costs about what it saves on half a megabyte). Hyperscan's compiled search comes
# from the database cache, so every file takes the fast path: a 5 MB log read line by line took three times as
# long as a 10 MB one searched (1.7 s against 0.6 s; the old limit was 8 MiB for both engines).
PYTHON_FAST_MIN_BYTES = 512 << 10


def fast_min_bytes() -> int:
    """The size from which a file takes the fast path (search.scan) rather than being read line by line."""
    return 0 if search.engine_name() == "hyperscan" else PYTHON_FAST_MIN_BYTES


def _ignore(_message: str) -> None:
    return None


def _identify(collector: Collector, source: Source) -> None:
    collector.roles[source.name] = (source.role, source.host)
    collector.forensics.idents[source.name] = PathIdentity(source.rank, source.role, source.host, source.local_rank,
                                                           source.group, source.attempt, source.pid, source.kind)


def source_size(source: Source) -> int:
    try:
        return source.path.stat().st_size if source.path is not None else 0
    except OSError:
        return 0


class Pipeline:
    """One diagnosis: a matcher, a collector, and a scanner per source."""

    def __init__(self, db: Database, warn: Warn = _ignore, listener: Callable[[Event], None] | None = None,
                 matcher: Matcher | None = None) -> None:
        self.db = db
        self.warn = warn
        self.matcher = matcher or Matcher(db, warn)
        self.collector = Collector(db.by_id())
        self.listener = listener
        self.streams: dict[str, SourceScanner] = {}
        self.started = time.perf_counter()
        self.on_bytes: Callable[[int], None] | None = None  # told the bytes read as a scan goes (a progress line)

    def emit(self, event: Event) -> None:
        self.collector(event)
        if self.listener is not None:
            self.listener(event)

    # -- live: lines as they come --------------------------------------------------------------------
    def stream(self, name: str, rank: int | None = None, host: str | None = None,
               role: str = "worker", first_index: int = 0) -> SourceScanner:
        """The scanner of a named source, made when its first line comes (numbered from `first_index`)."""
        sc = self.streams.get(name)
        if sc is None:
            sc = SourceScanner(self.db, self.matcher, name, first_index + len(self.streams), self.emit, rank, host)
            self.streams[name] = sc
            self.collector.sources += 1
            self.collector.roles[name] = (role, host)
            # a followed file's path says more (a torchelastic rank folder, a Ray worker's pid)
            ident = identify(Path(name)) if not name.startswith("<") else PathIdentity()
            self.collector.forensics.idents[name] = replace(ident, rank=rank, role=role, host=host or ident.host)
        return sc

    def finish_streams(self, last_lines: dict[str, int] | None = None) -> None:
        """End every stream; `last_lines`: the last line of a stream the fast search read (it fed only some)."""
        for name, sc in self.streams.items():
            sc.finish((last_lines or {}).get(name))

    # -- batch: a whole source, or a part of a big file, each into a collector of its own ----------------
    def scan(self, source: Source, index: int, fast: bool | str = True, year: int | None = None) -> Collector:
        """Scan one source from start to end (the fast search for a big one, unless told otherwise)."""
        collector = Collector(self.db.by_id())
        collector.sources = 1
        _identify(collector, source)
        if source.kind == "flight-recorder":
            self._dump(collector, source)
            return collector
        scanner = SourceScanner(self.db, self.matcher, source.name, index, collector, source.rank, source.host, year)

        def count(n: int) -> None:
            collector.bytes += n
            if self.on_bytes is not None:
                self.on_bytes(n)

        try:
            fh = open_binary(source)
        except InputError as exc:
            # one unreadable file among others does not stop the post-mortem (batch.diagnose fails only when
            # no source could be read at all)
            problem = exc.args[0] if exc.args else str(exc)
            self.warn(Msg("warn_skipped", problem=problem))
            collector.unreadable.append(problem)
            collector.sources = 0
            return collector
        if looks_binary(fh):
            self.warn(Msg("warn_binary", path=source.name))
            collector.skipped_binary = 1
            collector.sources = 0
            if not source.is_stdin:
                fh.close()
            return collector
        try:
            # a compressed file is judged by what it holds: a 2 MB .gz may be a 30 MB log
            big = source.path is None or isinstance(fh, gzip.GzipFile) or source_size(source) >= fast_min_bytes()
            if fast and (big or fast == "always") and self.db.search.complete:
                reader = SalvagingReader(fh) if isinstance(fh, gzip.GzipFile) else fh
                lines = search.scan(scanner, self.db.search, reader, count, memory=RECENT,  # type: ignore[arg-type]
                                    name=source.name, warn=self.warn)
            else:
                for lineno, text in iter_lines(fh, count, self.warn, source.name):
                    scanner.feed_raw(lineno, text)
                lines = scanner.lines
        finally:
            if not source.is_stdin:
                fh.close()
        scanner.finish(lines)
        collector.lines = lines
        return collector

    def scan_part(self, source: Source, index: int, part: search.Part, year: int | None = None) -> Collector:
        """Scan one part of a big file (see search/split.py); part 0 also holds the file's head."""
        assert source.path is not None
        path: Path = source.path
        # a part after the first records its metric events; the collector of the earlier parts judges them
        collector = Collector(self.db.by_id(), recording=part.start > 0)
        collector.sources = 1 if part.start == 0 else 0
        _identify(collector, source)
        scanner = SourceScanner(self.db, self.matcher, source.name, index, collector, source.rank, source.host, year)
        try:
            before_lead = lines_before(path, part.lead) if part.lead else 0
            before_start = before_lead
            if part.start:
                scanner.normalizer.year = search.head_year(path)
                with open(path, "rb") as fh:
                    fh.seek(part.lead)
                    before_start += fh.read(part.start - part.lead).count(b"\n")
            reader = search.LimitedReader(path, part.lead, part.end)
        except OSError as exc:  # deleted (or made unreadable) since the scan began: the other parts hold what was read
            self.warn(Msg("warn_part_failed", name=source.name, start=part.start, reason=exc.strerror or exc))
            return collector
        scanner.metrics_from = before_start + 1  # the earlier part told the metric records of the lead
        try:
            last = search.scan(scanner, self.db.search, reader, lambda _n: None, memory=RECENT,  # type: ignore[arg-type]
                               name=source.name, warn=self.warn, first_line=before_lead + 1,
                               ends_source=part.last)
        finally:
            reader.close()
        scanner.finish(last)
        collector.lines = last - before_start
        collector.bytes = part.end - part.start
        return collector

    def _dump(self, collector: Collector, source: Source) -> None:
        """A flight-recorder dump: read safely (read/flightrec.py) into the book; one that cannot is skipped."""
        try:
            with open_binary(source) as fh:
                data = fh.read(MAX_DUMP + 1)
            collector.bytes = len(data)
            collector.forensics.dumps.append(read_dump(data, source.rank if source.rank is not None else -1,
                                                       source.name))
        except (OSError, InputError, DumpError) as exc:
            self.warn(Msg("warn_dump", name=source.name, reason=exc))

    def scan_lines(self, lines: Iterable[str], name: str = "<text>") -> Collector:
        """Scan text already in memory (signature examples, tests)."""
        collector = Collector(self.db.by_id())
        collector.sources = 1
        scanner = SourceScanner(self.db, self.matcher, name, 0, collector)
        for lineno, text in enumerate(lines, start=1):
            collector.bytes += len(text) + 1
            scanner.feed_raw(lineno, text)
        scanner.finish()
        collector.lines = scanner.lines
        collector.finalize()
        return collector

    def tell_exit(self, status: int, command: list[str] | None = None) -> None:
        """The command (or, with no command, the job as its scheduler recorded) ended with a non-zero status: a
        failure even when no line says why. Told as the `command-failed` finding, whose line says the status and
        the signal (a status above 128 is 128 + the signal's number, as a shell reports it)."""
        if status == 0:
            return
        # worded so that no other signature reads it ("exit code 137" is a host OOM's container status)
        who = "the command exited" if command is not None else "the job ended"
        text = f"diagnose: {who} with status {status}"
        if 128 < status < 128 + 65:
            with contextlib.suppress(ValueError):
                text += f" (killed by signal {status - 128}, {signal.Signals(status - 128).name})"
        if command is None:
            text += ", as its scheduler recorded"
        scanner = SourceScanner(self.db, self.matcher, EXIT_SOURCE, len(self.streams) + self.collector.sources,
                                self.collector)
        scanner.feed_raw(1, text)
        scanner.finish()
        found = self.collector.findings.get(COMMAND_ID)
        if command and found is not None:  # the command is shown, never scanned: its own words could match
            shown = shlex.join(command)[:300]
            found.captures["command"] = shown
            found.evidence = (EvidenceLine(1, f"{text}: {shown}", True),)

    def add(self, collector: Collector) -> None:
        """Fold in a source's (or a part's) results; called in source order, so the report is stable."""
        self.collector.merge(collector)

    def report(self, lang: str, job_status: str | None = None) -> Report:
        return build_report(self.collector, lang, time.perf_counter() - self.started, job_status)
