"""Batch mode: every source of a finished job, scanned by the pipeline (in a process pool when there are
many files, or a file too big for one process), merged in source order into one report."""

from __future__ import annotations

import os
import signal
import stat
import zlib
from typing import TYPE_CHECKING

from .. import search
from ..errors import InputError
from ..i18n import Msg
from ..judge.collector import Collector
from ..lazyre import lazy_re
from ..match.database import Database, build_database
from ..match.schema import Signature
from ..read.sources import Source, open_binary
from ..report.model import Report
from ..search import Part
from .pipeline import Pipeline, Warn, _ignore, source_size

if TYPE_CHECKING:  # a pool only when a scan uses more than one process
    import multiprocessing.context
    from concurrent.futures import ProcessPoolExecutor

_YEAR = lazy_re(rb"\b(20\d\d)[-/](?:0[1-9]|1[0-2])[-/](?:[0-2]\d|3[01])[T ]\d\d:\d\d"
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


_WORKER: Pipeline | None = None
_WORKER_WARNINGS: list[str] = []
BATCH_FILES = 64  # small files sent to a worker together (one round trip, merged in order there)
BATCH_BYTES = 32 << 20
BATCH_MIN = 1 << 20  # ... at least this much together, unless the files run out
BATCH_SHARES = 4  # batches per worker, when the files allow: the last to finish keeps the others waiting less


_FORKED_DB: Database | None = None  # the parent's database, which a forked worker inherits


def _init_worker(signatures: list[Signature] | None) -> None:
    global _WORKER
    # Ctrl-C reaches the whole process group: the parent stops the workers, they must not print tracebacks
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_DFL)  # the parent's handler (cli.py) is not for workers
    search.die_with_parent()  # however the parent ends, its workers end with it
    db = _FORKED_DB if signatures is None else build_database(signatures)
    assert db is not None
    _WORKER = Pipeline(db, _WORKER_WARNINGS.append)


def _scan_in_worker(batch: list[tuple[int, Source, Part | None]], fast: bool | str,
                    year: int | None) -> tuple[Collector, list[str]]:
    assert _WORKER is not None
    warnings: list[str] = []
    total = Collector({})
    _WORKER.warn = warnings.append
    for index, source, part in batch:
        if part is not None:
            collector = _WORKER.scan_part(source, index, part, year)
        else:
            collector = _WORKER.scan(source, index, fast, year)
        total.merge(collector)
    warnings += _WORKER_WARNINGS
    _WORKER_WARNINGS.clear()
    return total, warnings  # signatures stay out of it: the parent has them


def _batches(tasks: list[tuple[int, Source, Part | None]],
             workers: int) -> list[list[tuple[int, Source, Part | None]]]:
    """Consecutive small files go together, a few batches for each worker (all of a job's 64 per-rank files in one
    batch kept one worker busy while the others waited); a part of a big file goes alone."""
    weights = [(part.end - part.start) if part is not None else source_size(source) for _i, source, part in tasks]
    whole = [w for w, (_i, _source, part) in zip(weights, tasks, strict=True) if part is None]
    share = max(1, workers * BATCH_SHARES)
    most_bytes = min(BATCH_BYTES, max(BATCH_MIN, sum(whole) // share))
    most_files = min(BATCH_FILES, max(1, -(-len(whole) // share)))
    out: list[list[tuple[int, Source, Part | None]]] = []
    size = 0
    for task, weight in zip(tasks, weights, strict=True):
        part = task[2]
        if (part is not None or not out or len(out[-1]) >= most_files or size + weight > most_bytes
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
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def _tasks(db: Database, sources: list[Source], jobs: int, fast: bool | str,
           first_index: int = 0) -> list[tuple[int, Source, Part | None]]:
    """What the pool scans: whole files, and the quiet parts of files too big for one process."""
    tasks: list[tuple[int, Source, Part | None]] = []
    body = db.search.quiet_search if fast and db.search.complete else None
    for i, s in enumerate(sources, start=first_index):
        if s.is_stdin:
            continue
        parts = search.plan_parts(s.path, source_size(s), jobs, body) if body is not None and s.path else []
        if len(parts) > 1:
            tasks.extend((i, s, part) for part in parts)
        else:
            tasks.append((i, s, None))
    return tasks


class Progress:
    """Told how far a scan is (sources done, bytes read); the console shows it on stderr in a terminal."""

    def source_done(self, n: int = 1) -> None:
        return None

    def add_bytes(self, n: int) -> None:
        return None

    def close(self) -> None:
        return None


def diagnose(db: Database, sources: list[Source], lang: str = "en", warn: Warn = _ignore,
             job_status: str | None = None, jobs: int = 1, fast: bool | str = True,
             exit_code: int | None = None, progress: Progress | None = None) -> Report:
    """Scan every source and build the ranked report; `exit_code`: the job's non-zero status (--exit-code) is a
    failure even when no line says why."""
    pipeline = Pipeline(db, warn)
    progress = progress or Progress()
    try:
        scan_sources(pipeline, sources, jobs, fast, progress=progress)
    finally:
        progress.close()
    collector = pipeline.collector
    if sources and len(collector.unreadable) == len(sources):
        raise InputError(collector.unreadable[0])  # nothing could be read: the one-line error, exit status 2
    if exit_code:
        pipeline.tell_exit(exit_code)
    return pipeline.report(lang, job_status)


def scan_sources(pipeline: Pipeline, sources: list[Source], jobs: int = 1, fast: bool | str = True,
                 first_index: int = 0, progress: Progress | None = None) -> None:
    """Scan every source into the pipeline's collector (numbered from `first_index`, so that the sources of
    several calls, e.g. one per Ray node, keep apart when their collectors are merged).

    With jobs > 1, files (and the quiet parts of a file too big for one process) are scanned in a
    process pool; results are merged in source order, so the report is the same as a sequential
    scan's. Standard input is always read here.
    """
    progress = progress or Progress()
    year = job_year(sources)
    before = _stats(sources)
    _scan_all(pipeline, sources, jobs, fast, first_index, progress, year)
    _changed(pipeline, sources, before)


def _stats(sources: list[Source]) -> dict[int, os.stat_result]:
    """Each regular file's state when the scan begins, to tell one that changed while it was read."""
    out: dict[int, os.stat_result] = {}
    for i, s in enumerate(sources):
        try:
            st = os.stat(s.path) if s.path is not None else None
        except OSError:
            continue
        if st is not None and stat.S_ISREG(st.st_mode):
            out[i] = st
    return out


def _changed(pipeline: Pipeline, sources: list[Source], before: dict[int, os.stat_result]) -> None:
    """One line for each file deleted, replaced or truncated while it was read: the report holds what was read."""
    skipped = [str(problem) for problem in pipeline.collector.unreadable]
    for i, st in before.items():
        name = sources[i].name
        if any(name in problem for problem in skipped):
            continue  # never read: said already
        try:
            now = os.stat(sources[i].path)  # type: ignore[arg-type]
        except FileNotFoundError:
            pipeline.warn(Msg("warn_changed_deleted", name=name))
            continue
        except OSError:
            continue
        if (now.st_dev, now.st_ino) != (st.st_dev, st.st_ino):
            pipeline.warn(Msg("warn_changed_replaced", name=name))
        elif now.st_size < st.st_size:
            pipeline.warn(Msg("warn_changed_truncated", name=name, before=st.st_size, after=now.st_size))


def _scan_all(pipeline: Pipeline, sources: list[Source], jobs: int, fast: bool | str, first_index: int,
              progress: Progress, year: int | None) -> None:
    db = pipeline.db
    tasks = _tasks(db, sources, jobs, fast, first_index) if jobs > 1 else []
    if len(tasks) > 1:
        signatures = db.by_id()
        results: dict[tuple[int, int], Collector] = {}
        global _FORKED_DB
        from concurrent.futures import ProcessPoolExecutor

        context = _pool_context()
        forked = context.get_start_method() == "fork"
        _FORKED_DB = db if forked else None
        pool = ProcessPoolExecutor(min(jobs, len(tasks)), mp_context=context, initializer=_init_worker,
                                   initargs=(None if forked else list(signatures.values()),))
        try:
            futures = {(batch[0][0], batch[0][2].start if batch[0][2] else 0):
                       pool.submit(_scan_in_worker, batch, fast, year)
                       for batch in _batches(tasks, min(jobs, len(tasks)))}
            for i, s in enumerate(sources, start=first_index):
                if s.is_stdin:
                    results[(i, 0)] = pipeline.scan(s, i, fast, year)
            for key, future in futures.items():
                collector, warnings = future.result()
                progress.add_bytes(collector.bytes)
                progress.source_done(collector.sources)
                for w in warnings:
                    pipeline.warn(w)
                collector.signatures = signatures
                results[key] = collector
        except BaseException:
            _stop(pool)
            raise
        pool.shutdown()
        for key in sorted(results):
            pipeline.add(results[key])
    else:
        pipeline.on_bytes = progress.add_bytes
        for index, source in enumerate(sources, start=first_index):
            pipeline.add(pipeline.scan(source, index, fast, year))
            progress.source_done()


def diagnose_text(db: Database, text: str, lang: str = "en") -> Report:
    pipeline = Pipeline(db)
    pipeline.collector = pipeline.scan_lines(text.splitlines())
    return pipeline.report(lang)
