"""Wire the pipeline: sources → scanner (normalise, tracebacks, match) → collector → report."""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable

from .database import Database
from .findings import Collector
from .matcher import Matcher
from .report import Report, build_report
from .scanner import SourceScanner
from .sources import Source, iter_lines, open_binary

Warn = Callable[[str], None]


def _ignore(_message: str) -> None:
    return None


def signature_map(db: Database) -> dict[str, object]:
    return {cs.sig.id: cs.sig for cs in db.signatures}


def scan_source(db: Database, matcher: Matcher, source: Source, index: int, warn: Warn = _ignore) -> Collector:
    """Scan one source from start to end into a fresh collector."""
    collector = Collector({cs.sig.id: cs.sig for cs in db.signatures})
    collector.sources = 1
    scanner = SourceScanner(db, matcher, source.name, index, collector)

    def count(n: int) -> None:
        collector.bytes += n

    fh = open_binary(source)
    try:
        for lineno, text in iter_lines(fh, count, warn, source.name):
            scanner.feed_raw(lineno, text)
    finally:
        if not source.is_stdin:
            fh.close()
    scanner.finish()
    collector.lines = scanner.lines
    return collector


def scan_lines(db: Database, lines: Iterable[str], name: str = "<text>", matcher: Matcher | None = None) -> Collector:
    """Scan text already in memory (signature examples, tests)."""
    collector = Collector({cs.sig.id: cs.sig for cs in db.signatures})
    collector.sources = 1
    scanner = SourceScanner(db, matcher or Matcher(db), name, 0, collector)
    for lineno, text in enumerate(lines, start=1):
        collector.bytes += len(text) + 1
        scanner.feed_raw(lineno, text)
    scanner.finish()
    collector.lines = scanner.lines
    return collector


def diagnose(db: Database, sources: list[Source], lang: str = "en", warn: Warn = _ignore,
             job_status: str | None = None) -> Report:
    """Scan every source in order and build the ranked report."""
    started = time.perf_counter()
    matcher = Matcher(db, warn)
    total = Collector({cs.sig.id: cs.sig for cs in db.signatures})
    for index, source in enumerate(sources):
        total.merge(scan_source(db, matcher, source, index, warn))
    return build_report(total, lang, time.perf_counter() - started, job_status)


def diagnose_text(db: Database, text: str, lang: str = "en") -> Report:
    started = time.perf_counter()
    collector = scan_lines(db, text.splitlines())
    return build_report(collector, lang, time.perf_counter() - started)
