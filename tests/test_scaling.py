"""Work that grows with the input, not its square, and records bounded whatever the input repeats.

No timings: the tests count the work (hits held while the scan goes on, records kept)."""

from __future__ import annotations

import io

from diagnoser.judge.collector import Collector
from diagnoser.judge.deferred import MAX_KEPT
from diagnoser.judge.findings import MAX_RANKS, MAX_UNRECOGNIZED
from diagnoser.judge.rank import compact_ranks
from diagnoser.match.database import Database
from diagnoser.match.matcher import Matcher
from diagnoser.match.scanner import SourceScanner
from diagnoser.modes.batch import diagnose_text
from diagnoser.report.contract import to_json
from diagnoser.report.markdown import render_markdown
from diagnoser.report.text import render_text

# the real crash of samples (CUDA's own message), then a `set -x` trace of `... | tee log_N.txt` repeated: each
# tee line is a hit of dlc-exit-code-masked, whose `not` condition looks at the whole file
CRASH = ("Traceback (most recent call last):\n  File \"train.py\", line 1, in <module>\n"
         "RuntimeError: CUDA error: an illegal memory access was encountered\n")
N = 5000  # more than the 4,096 deferred hits the collector used to keep (the rest were dropped uncounted)


def _tee_log(n: int = N, fixed: bool = False) -> str:
    return CRASH + "".join(f"+ tee log_{i}.txt\n" for i in range(n)) + ("+ exit 1\n" if fixed else "")


def test_whole_file_hits_are_not_held_by_the_scanner(db: Database) -> None:
    collector = Collector(db.by_id())
    scanner = SourceScanner(db, Matcher(db), "job.log", 0, collector)
    most = 0
    for i, line in enumerate(_tee_log().splitlines(), start=1):
        scanner.feed_raw(i, line)
        most = max(most, len(scanner.pending))
    scanner.finish()
    # every line walked every hit still pending: N hits waiting for the end of the file made N^2 steps
    assert most <= 100, most  # a constant (the after-context wait), not N
    collector.finalize()
    assert collector.findings["dlc-exit-code-masked"].count == N


def test_whole_file_hits_are_all_counted_in_bounded_records(db: Database) -> None:
    report = diagnose_text(db, _tee_log())
    counts = {f.sig.id: f.count for f in report.findings}
    assert counts["dlc-exit-code-masked"] == N, counts
    collector = Collector(db.by_id())
    scanner = SourceScanner(db, Matcher(db), "job.log", 0, collector)
    for i, line in enumerate(_tee_log().splitlines(), start=1):
        scanner.feed_raw(i, line)
    scanner.finish()
    assert sum(len(g.kept) for g in collector.deferred.hits.values()) <= MAX_KEPT


def test_a_whole_file_condition_still_decides(db: Database) -> None:
    report = diagnose_text(db, _tee_log(fixed=True))  # `+ exit N` after the pipeline: the fix is in place
    assert "dlc-exit-code-masked" not in {f.sig.id for f in report.findings}
    assert "cuda-illegal-memory-access" in {f.sig.id for f in report.findings}


def test_split_parts_merge_the_same(db: Database) -> None:
    """Two collectors (two parts of a file cut for -j) merged give the count of one."""
    one = Collector(db.by_id())
    parts = [Collector(db.by_id()), Collector(db.by_id())]
    lines = _tee_log().splitlines()
    half = len(lines) // 2
    for collector, chunk, start in ((parts[0], lines[:half], 1), (parts[1], lines[half:], half + 1)):
        scanner = SourceScanner(db, Matcher(db), "job.log", 0, collector)
        for i, line in enumerate(chunk, start=start):
            scanner.feed_raw(i, line)
        scanner.finish()
    scanner = SourceScanner(db, Matcher(db), "job.log", 0, one)
    for i, line in enumerate(lines, start=1):
        scanner.feed_raw(i, line)
    scanner.finish()
    parts[0].merge(parts[1])
    for c in (one, parts[0]):
        c.finalize()
    assert parts[0].findings["dlc-exit-code-masked"].count == one.findings["dlc-exit-code-masked"].count == N


def _word(i: int) -> str:
    out = ""
    for _ in range(4):
        i, r = divmod(i, 26)
        out += chr(ord("a") + r)
    return out


def test_unrecognised_errors_past_the_table_are_counted_and_said(db: Database) -> None:
    # 600 kinds of error no signature knows (numbers are masked when kinds are told apart, so words differ)
    text = "".join(f"Traceback (most recent call last):\n  File \"x.py\", line 1, in <module>\n"
                   f"ValueError: unknown option {_word(i)}\nstep:{i} - actor/pg_loss:0.1\n" for i in range(600))
    report = diagnose_text(db, text)
    assert len(report.unrecognized) == MAX_UNRECOGNIZED and report.stats.unlisted == 600 - MAX_UNRECOGNIZED
    assert to_json(report)["stats"]["unlisted"] == 100  # type: ignore[index]
    out = io.StringIO()
    render_text(report, out, color=False, width=120)
    assert "100 more unrecognised error(s)" in out.getvalue()
    assert "100 more unrecognised error(s)" in render_markdown(report)


def test_ranks_past_the_cap_are_said_to_be_more(db: Database) -> None:
    text = "".join(f"[rank{r}]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a "
                   "total capacity of 79.15 GiB of which 1.00 GiB is free.\n" for r in range(0, 2 * MAX_RANKS, 2))
    report = diagnose_text(db, text)
    oom = next(f for f in report.findings if f.sig.id == "cuda-oom")
    assert len(oom.ranks) == MAX_RANKS and oom.count == MAX_RANKS
    assert f"({MAX_RANKS}+ ranks)" in compact_ranks(oom.ranks)
    assert compact_ranks(range(10)) == "0-9" and compact_ranks([1, 5]) == "1,5"
