"""Scan a job's files (and the quiet parts of a file too big for one process) in a process pool, the parent
scanning beside its workers; each worker's results come back as a collector, merged in source order."""

from __future__ import annotations

import signal
from collections import deque
from typing import TYPE_CHECKING

from .. import search
from ..judge.collector import Collector
from ..match.database import Database, build_database
from ..match.schema import Signature
from ..read.sources import Source
from ..search import Part
from .pipeline import Pipeline, source_size

if TYPE_CHECKING:  # a pool only when a scan uses more than one process
    import multiprocessing.context
    from concurrent.futures import ProcessPoolExecutor

Task = tuple[int, Source, Part | None]  # (source index, source, part of it or None: all of it)


class Progress:
    """Told how far a scan is (sources done, bytes read); the console shows it on stderr in a terminal."""

    def source_done(self, n: int = 1) -> None:
        return None

    def add_bytes(self, n: int) -> None:
        return None

    def close(self) -> None:
        return None


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


def _scan_in_worker(batch: list[Task], fast: bool | str, year: int | None) -> tuple[Collector, list[str]]:
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


def _batches(tasks: list[Task], workers: int) -> list[list[Task]]:
    """Consecutive small files go together, a few batches for each worker (all of a job's 64 per-rank files in one
    batch kept one worker busy while the others waited); a part of a big file goes alone."""
    weights = [(part.end - part.start) if part is not None else source_size(source) for _i, source, part in tasks]
    whole = [w for w, (_i, _source, part) in zip(weights, tasks, strict=True) if part is None]
    share = max(1, workers * BATCH_SHARES)
    most_bytes = min(BATCH_BYTES, max(BATCH_MIN, sum(whole) // share))
    most_files = min(BATCH_FILES, max(1, -(-len(whole) // share)))
    out: list[list[Task]] = []
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


def _pool_context() -> multiprocessing.context.BaseContext:
    import multiprocessing

    methods = multiprocessing.get_all_start_methods()
    return multiprocessing.get_context("fork" if "fork" in methods else "spawn")


def scan_in_pool(pipeline: Pipeline, sources: list[Source], tasks: list[Task], jobs: int, fast: bool | str,
                 first_index: int, progress: Progress, year: int | None) -> None:
    """Scan `tasks` in `jobs` processes (the parent one of them) and add their collectors to `pipeline` in source
    order; stdin is read by the parent."""
    db = pipeline.db
    signatures = db.by_id()
    results: dict[tuple[int, int], Collector] = {}
    global _FORKED_DB
    from concurrent.futures import Future, ProcessPoolExecutor

    # the parent scans too (a pool of jobs - 1): it would only wait, and a worker fewer is a fork and a
    # collector sent back fewer; it takes the first batch (a big file's head), then batches from the end
    batches = _batches(tasks, min(jobs, len(tasks)))
    if len(batches) == 1:  # small files that go together: no process to start
        _scan_stdin(pipeline, sources, first_index, fast, year, results)
        results.update(_scan_here(pipeline, batches[0], fast, year, progress))
        for key in sorted(results):
            pipeline.add(results[key])
        return
    context = _pool_context()
    forked = context.get_start_method() == "fork"
    _FORKED_DB = db if forked else None
    workers = max(1, min(jobs - 1, len(batches) - 1))
    pool = ProcessPoolExecutor(workers, mp_context=context, initializer=_init_worker,
                               initargs=(None if forked else list(signatures.values()),))
    try:
        # the pool is given a batch at a time, one more than its workers (none waits on the parent), the parent
        # taking the last ones: the executor queues what it is given, and a batch it holds cannot be taken back
        waiting = deque(batches[1:])
        futures: dict[tuple[int, int], Future[tuple[Collector, list[str]]]] = {}

        def top_up() -> None:
            while waiting and sum(not f.done() for f in futures.values()) < workers + 1:
                batch = waiting.popleft()
                futures[_batch_key(batch)] = pool.submit(_scan_in_worker, batch, fast, year)

        top_up()
        _scan_stdin(pipeline, sources, first_index, fast, year, results)
        results.update(_scan_here(pipeline, batches[0], fast, year, progress))
        while waiting:
            top_up()
            if waiting:
                results.update(_scan_here(pipeline, waiting.pop(), fast, year, progress))
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


def _scan_stdin(pipeline: Pipeline, sources: list[Source], first_index: int, fast: bool | str, year: int | None,
                results: dict[tuple[int, int], Collector]) -> None:
    for i, s in enumerate(sources, start=first_index):
        if s.is_stdin:
            results[(i, 0)] = pipeline.scan(s, i, fast, year)


def _batch_key(batch: list[Task]) -> tuple[int, int]:
    """Where a batch's results go in source order: its first source, and where its part starts."""
    first = batch[0]
    return first[0], first[2].start if first[2] else 0


def _scan_here(pipeline: Pipeline, batch: list[Task], fast: bool | str, year: int | None,
               progress: Progress) -> dict[tuple[int, int], Collector]:
    """A batch scanned by the parent, each source's collector kept apart (merged in source order at the end)."""
    out: dict[tuple[int, int], Collector] = {}
    pipeline.on_bytes = progress.add_bytes
    for index, source, part in batch:
        key = (index, part.start if part is not None else 0)
        if part is not None:
            out[key] = pipeline.scan_part(source, index, part, year)
            progress.add_bytes(out[key].bytes)  # a part tells its bytes once done, as a worker's does
        else:
            out[key] = pipeline.scan(source, index, fast, year)
        progress.source_done(out[key].sources)
    return out
