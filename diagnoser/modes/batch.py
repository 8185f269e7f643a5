"""Wire the pipeline: sources → scanner (normalise, tracebacks, match) → collector → report."""

from __future__ import annotations

import multiprocessing
import os
import re
import signal
import stat
import time
import zlib
from collections.abc import Callable, Iterable
from concurrent.futures import ProcessPoolExecutor

from ..errors import InputError
from ..i18n import Msg
from ..judge.findings import Collector
from ..match.database import Database, build_database
from ..match.matcher import Matcher
from ..match.scanner import SourceScanner
from ..match.schema import Signature
from ..read.sources import Source, iter_lines, lines_before, open_binary, read_guarded
from ..report.model import Report, build_report
from ..search import grep as grepscan
from ..search.feeder import FastFeeder, body_plan, gate_literals
from ..search.split import LimitedReader, Part, head_year, plan_parts

Warn = Callable[[str], None]


def _ignore(_message: str) -> None:
    return None



# Below this size a file is read line by line: the same result, and no search plan to make.
FAST_MIN_BYTES = 8 << 20


def fast_path_possible(db: Database) -> bool:
    """A gate-less rule could match any line, so then every line must be fed."""
    return gate_literals(db) is not None


def _size(source: Source) -> int:
    try:
        return source.path.stat().st_size if source.path is not None else 0
    except OSError:
        return 0


_YEAR = re.compile(rb"\b(20\d\d)[-/](?:0[1-9]|1[0-2])[-/](?:[0-2]\d|3[01])[T ]\d\d:\d\d"
                   rb"|\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) \w{3} +\d+ \d\d:\d\d:\d\d (20\d\d)\b")
YEAR_FILES = 256  # files sampled for the job's year
YEAR_BYTES = 1 << 16


def job_year(sources: list[Source]) -> int | None:
    """The year the job's logs print (most often, in the head of its first files): kernel logs in syslog
    form and glog lines print none, and take this one."""
    counts: dict[int, int] = {}
    for source in [s for s in sources if s.path is not None][:YEAR_FILES]:
        try:
            if not stat.S_ISREG(os.stat(source.path).st_mode):  # type: ignore[arg-type]
                continue  # a FIFO or device is read once, by the scan
            with open_binary(source) as fh:  # gzip heads are read decompressed
                head = fh.read(YEAR_BYTES)
        except (OSError, InputError, EOFError, zlib.error):
            continue
        for m in _YEAR.finditer(head):
            year = int(m.group(1) or m.group(2))
            counts[year] = counts.get(year, 0) + 1
    return max(counts, key=lambda y: (counts[y], -y)) if counts else None


def scan_source(db: Database, matcher: Matcher, source: Source, index: int, warn: Warn = _ignore,
                fast: bool | str = True, year: int | None = None) -> Collector:
    """Scan one source from start to end into a fresh collector (the fast path unless told otherwise)."""
    collector = Collector(db.by_id())
    collector.sources = 1
    collector.roles[source.name] = (source.role, source.host)
    scanner = SourceScanner(db, matcher, source.name, index, collector, source.rank, source.host, year)

    def count(n: int) -> None:
        collector.bytes += n

    try:
        fh = open_binary(source)
    except InputError as exc:
        if source.explicit:
            raise
        # one unreadable file in a job's folder does not stop the post-mortem
        warn(Msg("warn_skipped", problem=exc.args[0] if exc.args else str(exc)))
        return collector
    try:
        big = source.path is None or _size(source) >= FAST_MIN_BYTES or fast == "always"
        if fast and big and fast_path_possible(db):
            feeder = FastFeeder(scanner, count)
            if source.path is None or _size(source) >= grepscan.GREP_MIN_BYTES:
                feeder.finder = grepscan.start(feeder.body_literals)
            try:
                read_guarded(lambda: feeder.run(fh), warn, source.name)
            finally:
                if feeder.finder is not None:
                    feeder.finder.close()
            lines = feeder.next_line - 1
        else:
            for _lineno, text in iter_lines(fh, count, warn, source.name):
                scanner.feed_raw(_lineno, text)
            lines = scanner.lines
    finally:
        if not source.is_stdin:
            fh.close()
    scanner.finish(lines)
    collector.lines = lines
    return collector


def scan_lines(db: Database, lines: Iterable[str], name: str = "<text>", matcher: Matcher | None = None) -> Collector:
    """Scan text already in memory (signature examples, tests)."""
    collector = Collector(db.by_id())
    collector.sources = 1
    scanner = SourceScanner(db, matcher or Matcher(db), name, 0, collector)
    for lineno, text in enumerate(lines, start=1):
        collector.bytes += len(text) + 1
        scanner.feed_raw(lineno, text)
    scanner.finish()
    collector.lines = scanner.lines
    collector.finalize()
    return collector


def scan_part(db: Database, matcher: Matcher, source: Source, index: int, part: Part,
              warn: Warn = _ignore, year: int | None = None) -> Collector:
    """Scan one part of a big file (see split.py); part 0 also holds the file's head."""
    assert source.path is not None
    path = source.path
    collector = Collector(db.by_id())
    collector.sources = 1 if part.start == 0 else 0
    collector.roles[source.name] = (source.role, source.host)
    scanner = SourceScanner(db, matcher, source.name, index, collector, source.rank, source.host, year)
    feeder = FastFeeder(scanner, lambda _n: None)
    before_lead = lines_before(path, part.lead) if part.lead else 0
    before_start = before_lead
    if part.start:
        scanner.normalizer.year = head_year(path)
        feeder.next_line = before_lead + 1
        with open(path, "rb") as fh:
            fh.seek(part.lead)
            before_start += fh.read(part.start - part.lead).count(b"\n")
    reader = LimitedReader(path, part.lead, part.end)
    if part.end - part.lead >= grepscan.GREP_MIN_BYTES:
        feeder.finder = grepscan.start(feeder.body_literals)
    try:
        read_guarded(lambda: feeder.run(reader), warn, source.name)  # type: ignore[arg-type]
    finally:
        reader.close()
        if feeder.finder is not None:
            feeder.finder.close()
    scanner.finish(feeder.next_line - 1)
    collector.lines = feeder.next_line - 1 - before_start
    collector.bytes = part.end - part.start
    return collector


_WORKER_DB: Database | None = None
_WORKER_MATCHER: Matcher | None = None
_WORKER_WARNINGS: list[str] = []
BATCH_FILES = 64  # small files sent to a worker together (one round trip, merged in order there)
BATCH_BYTES = 32 << 20


def _init_worker(signatures: list[Signature]) -> None:
    global _WORKER_DB, _WORKER_MATCHER
    # Ctrl-C reaches the whole process group: the parent stops the workers, they must not print tracebacks
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the parent's handler (cli.py) is not for workers
    grepscan.die_with_parent()  # however the parent ends, its workers end with it
    _WORKER_DB = build_database(signatures)
    _WORKER_MATCHER = Matcher(_WORKER_DB, _WORKER_WARNINGS.append)


def _scan_in_worker(batch: list[tuple[int, Source, Part | None]], fast: bool | str,
                    year: int | None) -> tuple[Collector, list[str]]:
    assert _WORKER_DB is not None and _WORKER_MATCHER is not None
    warnings: list[str] = []
    total = Collector({})
    for index, source, part in batch:
        if part is not None:
            collector = scan_part(_WORKER_DB, _WORKER_MATCHER, source, index, part, warnings.append, year)
        else:
            collector = scan_source(_WORKER_DB, _WORKER_MATCHER, source, index, warnings.append, fast, year)
        total.merge(collector)
    warnings += _WORKER_WARNINGS
    _WORKER_WARNINGS.clear()
    return total, warnings  # signatures stay out of it: the parent has them


def _batches(tasks: list[tuple[int, Source, Part | None]]) -> list[list[tuple[int, Source, Part | None]]]:
    """Consecutive small files go together; a part of a big file goes alone."""
    out: list[list[tuple[int, Source, Part | None]]] = []
    size = 0
    for task in tasks:
        _index, source, part = task
        weight = (part.end - part.start) if part is not None else _size(source)
        if (part is not None or not out or len(out[-1]) >= BATCH_FILES or size + weight > BATCH_BYTES
                or out[-1][0][2] is not None):
            out.append([task])
            size = weight
        else:
            out[-1].append(task)
            size += weight
    return out


def _stop(pool: ProcessPoolExecutor) -> None:
    """Interrupted or failed: drop what is queued and end the workers now."""
    procs = list((getattr(pool, "_processes", None) or {}).values())  # shutdown() forgets them
    manager = getattr(pool, "_executor_manager_thread", None)  # and this thread too
    pool.shutdown(wait=False, cancel_futures=True)
    for proc in procs:
        proc.terminate()
    # Wait until the pool's manager thread has closed its wake-up pipe. Otherwise the interpreter's exit
    # hook for the pool (Python 3.11) may write to that pipe while it is being closed and print
    # "Exception ignored ... Bad file descriptor".
    if manager is not None and manager.is_alive():
        manager.join(timeout=10)


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _pool_context() -> multiprocessing.context.BaseContext:
    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def _tasks(db: Database, sources: list[Source], jobs: int,
           fast: bool | str) -> list[tuple[int, Source, Part | None]]:
    """What the pool scans: whole files, and the quiet parts of files too big for one process."""
    tasks: list[tuple[int, Source, Part | None]] = []
    plan = body_plan(db) if fast and fast_path_possible(db) else None
    for i, s in enumerate(sources):
        if s.is_stdin:
            continue
        parts = plan_parts(s.path, _size(s), jobs, plan) if plan is not None and s.path else []  # type: ignore[arg-type]
        if len(parts) > 1:
            tasks.extend((i, s, part) for part in parts)
        else:
            tasks.append((i, s, None))
    return tasks


def diagnose(db: Database, sources: list[Source], lang: str = "en", warn: Warn = _ignore,
             job_status: str | None = None, jobs: int = 1, fast: bool | str = True) -> Report:
    """Scan every source and build the ranked report.

    With jobs > 1, files (and the quiet parts of a file too big for one process) are scanned in a
    process pool; results are merged in source order, so the report is the same as a sequential
    scan's. Standard input is always read here.
    """
    started = time.perf_counter()
    signatures = db.by_id()
    total = Collector(signatures)
    year = job_year(sources)
    tasks = _tasks(db, sources, jobs, fast) if jobs > 1 else []
    if len(tasks) > 1:
        results: dict[tuple[int, int], Collector] = {}
        pool = ProcessPoolExecutor(min(jobs, len(tasks)), mp_context=_pool_context(), initializer=_init_worker,
                                   initargs=(list(signatures.values()),))
        try:
            futures = {(batch[0][0], batch[0][2].start if batch[0][2] else 0):
                       pool.submit(_scan_in_worker, batch, fast, year) for batch in _batches(tasks)}
            matcher = Matcher(db, warn)
            for i, s in enumerate(sources):
                if s.is_stdin:
                    results[(i, 0)] = scan_source(db, matcher, s, i, warn, fast, year)
            for key, future in futures.items():
                collector, warnings = future.result()
                for w in warnings:
                    warn(w)
                collector.signatures = signatures
                results[key] = collector
        except BaseException:
            _stop(pool)
            raise
        pool.shutdown()
        for key in sorted(results):
            total.merge(results[key])
    else:
        matcher = Matcher(db, warn)
        for index, source in enumerate(sources):
            total.merge(scan_source(db, matcher, source, index, warn, fast, year))
    return build_report(total, lang, time.perf_counter() - started, job_status)


def diagnose_text(db: Database, text: str, lang: str = "en") -> Report:
    started = time.perf_counter()
    collector = scan_lines(db, text.splitlines())
    return build_report(collector, lang, time.perf_counter() - started)
