"""Batch mode: every source of a finished job, scanned by the pipeline (in a process pool when there are
many files, or a file too big for one process), merged in source order into one report."""

from __future__ import annotations

import os
import stat
import zlib

from .. import search
from ..errors import InputError
from ..i18n import Msg
from ..lazyre import lazy_re
from ..match.database import Database
from ..read.sources import Source, open_binary
from ..report.model import Report
from . import pool
from .pipeline import Pipeline, Warn, _ignore, source_size
from .pool import Progress, scan_in_pool

__all__ = ["Progress", "default_jobs", "diagnose", "diagnose_text", "job_year", "scan_sources"]

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


def default_jobs() -> int:
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except (AttributeError, OSError):
        return max(1, os.cpu_count() or 1)


def _tasks(db: Database, sources: list[Source], jobs: int, fast: bool | str,
           first_index: int = 0) -> list[pool.Task]:
    """What the pool scans: whole files, and the quiet parts of files too big for one process."""
    tasks: list[pool.Task] = []
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
        scan_in_pool(pipeline, sources, tasks, jobs, fast, first_index, progress, year)
    else:
        pipeline.on_bytes = progress.add_bytes
        for index, source in enumerate(sources, start=first_index):
            pipeline.add(pipeline.scan(source, index, fast, year))
            progress.source_done()


def diagnose_text(db: Database, text: str, lang: str = "en") -> Report:
    pipeline = Pipeline(db)
    pipeline.collector = pipeline.scan_lines(text.splitlines())
    return pipeline.report(lang)
