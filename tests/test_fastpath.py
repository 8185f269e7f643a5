"""The fast path (block search for covering literals) reports exactly what feeding every line reports."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from diagnoser.eval import find_cases
from diagnoser.match import scanner
from diagnoser.modes.batch import diagnose
from diagnoser.read import activity, normalize, sources
from diagnoser.read.sources import Source
from diagnoser.report.contract import to_json
from diagnoser.search import engine
from diagnoser.search import feeder as fastscan
from diagnoser.search.plan import plan_search

from .conftest import SAMPLES


def _json(db, paths: list[Path], fast: bool) -> str:  # type: ignore[no-untyped-def]
    from diagnoser.console import Warner as _Warner
    from diagnoser.console import input_sources as _sources
    data = to_json(diagnose(db, _sources(paths, _Warner("en")), "en", fast="always" if fast else False))
    data["stats"]["seconds"] = 0
    return json.dumps(data, sort_keys=True, indent=1)


ENGINES = ["python", "hyperscan"] if engine._hs is not None else ["python"]


@pytest.fixture(params=ENGINES)
def small_blocks(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Blocks of a few KB and a short head, so block edges and skips happen inside small files; the
    candidate lines found by the pure-Python plan or by Hyperscan (engine.py)."""
    monkeypatch.setenv("DIAGNOSER_ENGINE", str(request.param))
    monkeypatch.setattr(fastscan, "BLOCK", 2048)
    monkeypatch.setattr(fastscan, "HEAD_LINES", 3)
    monkeypatch.setattr(normalize, "HEAD_LINES", 3)
    monkeypatch.setattr(fastscan, "FACT_LINES", 40)  # facts in the first 40 lines: both plans get used
    monkeypatch.setattr(scanner, "FACT_LINES", 40)
    monkeypatch.setattr(scanner, "HEAD_LINES", 3)
    monkeypatch.setattr(activity, "TAIL_LINES", 5)  # each writer's last line: only the tail is lent
    return str(request.param)


CASES = find_cases(SAMPLES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_fast_equals_reference_on_samples(db, case, small_blocks) -> None:  # type: ignore[no-untyped-def]
    assert _json(db, [case.input], fast=True) == _json(db, [case.input], fast=False)


def count_fed(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """The numbers of the lines the scanner is fed from now on (the list fills as they are fed)."""
    fed: list[int] = []
    real = scanner.SourceScanner.feed_raw

    def counting(self, lineno: int, raw: str, found: frozenset[str] | None = None) -> None:  # type: ignore[no-untyped-def]
        fed.append(lineno)
        real(self, lineno, raw, found)

    monkeypatch.setattr(scanner.SourceScanner, "feed_raw", counting)
    return fed


def _noise(rng: random.Random, n: int) -> list[str]:
    out = []
    for i in range(n):
        r = rng.randrange(8)
        kind = rng.randrange(6)
        if kind == 0:  # a metric record: its readers' literal (" - actor/") makes it a candidate
            out.append(f"(WorkerDict pid={300 + r}, ip=10.0.0.{r}) step:{i} - actor/pg_loss:{rng.random():.3f}")
        elif kind == 1:
            out.append(f"[rank{r}]:[W1201 10:0{r}:00.000000000 ProcessGroupNCCL.cpp:1] benign warning {i}")
        elif kind == 2:
            out.append(f"Processed prompts:  {i % 100}%|███      | {i}/512 [00:01<00:02, 3.1it/s]\\r" * 2)
        else:
            out.append(f"2024-12-01 10:00:{i % 60:02d},000 INFO iteration {i} consumed samples {i * 8}")
    return out


OOM_TB = [
    "Traceback (most recent call last):",
    '  File "/w/train.py", line 10, in <module>',
    "    main()",
    '  File "/w/train.py", line 5, in main',
    "    loss.backward()",
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 1 has a total capacity of "
    "79.15 GiB of which 1.00 GiB is free.",
]


def test_fast_equals_reference_with_injected_errors(db, small_blocks, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    rng = random.Random(5)
    lines = ["  micro_batch_size ................................ 4", "packing: true"]
    for k in range(30):
        lines += _noise(rng, rng.randrange(1, 120))
        r = rng.randrange(8)
        prefix = rng.choice(["", f"[rank{r}]: ", f"(WorkerDict pid={300 + r}, ip=10.0.0.{r}) "])
        block = [prefix + x for x in OOM_TB] if k % 3 == 0 else [
            prefix + "ZeroDivisionError: division by zero" if k % 3 == 1 else
            prefix + "[Rank 3] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=5, OpType=ALLREDUCE, "
                     "NumelIn=1, NumelOut=1, Timeout(ms)=600000) ran for 600001 milliseconds before timing out."]
        if k % 3 == 1:
            block = [prefix + "Traceback (most recent call last):", prefix + '  File "a.py", line 1, in f', *block]
        # interleave the error with noise from other ranks
        for x in block:
            lines.append(x)
            if rng.random() < 0.3:
                lines += _noise(rng, 2)
    lines.append("x" * 70000 + " CUDA out of memory. Tried to allocate 1 GiB")  # cut at 64 KiB: no match
    lines.append("tail line without newline")
    log = tmp_path / "mixed.log"
    log.write_text("\n".join(lines), encoding="utf-8")
    assert _json(db, [log], fast=True) == _json(db, [log], fast=False)


def test_lone_exception_lines_deep_in_the_body(db, small_blocks, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # the fast path must feed lone exception lines (no traceback, no signature literal) to the scanner; only those
    # near the end count (rank 0's was recovered from: the run went on for 400 lines)
    rng = random.Random(9)
    lines = [*_noise(rng, 100), "[rank0]: ZeroDivisionError: recovered from, far from the end", *_noise(rng, 400)]
    for k in range(1, 5):
        kind = ["ZeroDivisionError", "hydra.errors.ConfigCompositionException", "TokenizerLoadError"][k % 3]
        lines += [f"[rank{k}]: {kind}: odd failure {'abcde'[k]}", *_noise(rng, 12)]  # types no signature names
    log = tmp_path / "lone.log"
    log.write_text("\n".join(lines), encoding="utf-8")
    fast = _json(db, [log], fast=True)
    assert fast == _json(db, [log], fast=False)
    assert [u["rank"] for u in json.loads(fast)["unrecognized"]] == [2, 3, 4]  # the last three, in log order


def test_lone_lines_kept_the_same_from_parts_or_whole() -> None:
    from diagnoser.judge.collector import Collector
    from diagnoser.match.scanner import UnrecognizedEvent
    from diagnoser.read.normalize import LogLine

    def event(source_index: int, lineno: int) -> UnrecognizedEvent:
        message = "".join(chr(97 + int(d)) for d in str(lineno))  # distinct after numbers are masked
        line = LogLine(f"s{source_index}", lineno, f"ValueError: {message}", f"ValueError: {message}",
                       source_index=source_index)
        return UnrecognizedEvent("ValueError", message, "", line, "line")

    whole = Collector({})
    for e in [event(0, n) for n in range(1, 40)] + [event(1, n) for n in range(1, 9)]:
        whole(e)
    parts = Collector({})
    for chunk in ([event(0, n) for n in range(1, 20)], [event(0, n) for n in range(20, 40)],
                  [event(1, n) for n in range(1, 9)]):
        part = Collector({})
        for e in chunk:
            part(e)
        parts.merge(part)
    got = [(u.first.source_index, u.first.line) for u in whole.lone_unrecognized()]
    assert got == [(0, 37), (0, 38), (0, 39), (1, 6), (1, 7), (1, 8)]
    assert [(u.first.source_index, u.first.line) for u in parts.lone_unrecognized()] == got


def test_long_line_longer_than_a_block(db, small_blocks, monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
                                       tmp_path: Path) -> None:
    monkeypatch.setattr(fastscan, "MAX_LINE", 5000)
    monkeypatch.setattr(sources, "MAX_LINE", 5000)
    log = tmp_path / "long.log"
    log.write_text("ok\n" + "CUDA error: out of memory " + "z" * 20000 + "\nafter\n" + "y" * 9000)
    assert _json(db, [log], fast=True) == _json(db, [log], fast=False)


def test_the_search_plan_finds_every_literal() -> None:
    literals = {"Watchdog caught collective operation timeout", "CUDA out of memory. Tried to allocate ",
                "NCCL WARN", "Xid", "Killed", "killed due to memory pressure", "Traceback (most recent call last)"}
    plan = plan_search(frozenset(literals))
    for lit in literals:
        line = b"noise before " + lit.encode() + b" and after"
        assert plan.confirmed(line, plan.covers_in(line)), lit
    line = b"step 12 loss 0.31 lr 1e-5"
    assert not plan.confirmed(line, plan.covers_in(line))


def test_stdin_source_uses_the_same_path(db, small_blocks, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    import io
    import sys
    text = "\n".join(OOM_TB) + "\n"
    monkeypatch.setattr(sys, "stdin", io.TextIOWrapper(io.BufferedReader(io.BytesIO(text.encode()))))
    report = diagnose(db, [Source("<stdin>", None)], fast=True)
    assert report.root_cause is not None and report.root_cause.sig.id == "cuda-oom"


def small_split(monkeypatch: pytest.MonkeyPatch) -> None:
    """Sizes of the split scaled down so a 6 MB file has quiet places and splits in three (search/split.py)."""
    from diagnoser.search import split

    for module, name, value in [
        (fastscan, "BLOCK", 64 << 10), (fastscan, "HEAD_LINES", 50), (normalize, "HEAD_LINES", 50),
        (scanner, "HEAD_LINES", 50), (fastscan, "FACT_LINES", 200), (scanner, "FACT_LINES", 200),
        (split, "FACT_LINES", 200), (split, "HEAD_LINES", 50), (scanner, "STALE_TB", 150),
        (split, "QUIET_LINES", 400), (split, "QUIET_BYTES", 24 << 10), (split, "LEAD", 16 << 10),
        (split, "SPLIT_MIN", 512 << 10), (split, "SEEK_BYTES", 1 << 20),
    ]:
        monkeypatch.setattr(module, name, value)


def split_report_is_one_scans(db, log: Path, jobs: int) -> dict:  # type: ignore[no-untyped-def,type-arg]
    """The JSON report of `log` scanned in parts by `jobs` processes equals one scan's (time apart); that report."""
    from diagnoser.console import Warner as _Warner
    from diagnoser.console import input_sources as _sources
    one = to_json(diagnose(db, _sources([log], _Warner("en")), "en", jobs=1, fast="always"))
    many = to_json(diagnose(db, _sources([log], _Warner("en")), "en", jobs=jobs, fast="always"))
    one["stats"]["seconds"] = many["stats"]["seconds"] = 0
    assert json.dumps(one, sort_keys=True, indent=1) == json.dumps(many, sort_keys=True, indent=1)
    return one


@pytest.mark.parametrize("engine_name", ENGINES)
def test_split_scan_equals_one_scan(db, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,  # type: ignore[no-untyped-def]
                                    engine_name: str) -> None:
    """A big file cut into quiet parts for several processes reports what one scan reports."""
    monkeypatch.setenv("DIAGNOSER_ENGINE", engine_name)
    import sys

    from diagnoser.search import split
    sys.path.insert(0, str(SAMPLES.parent))
    from benchmarks.generate import generate

    small_split(monkeypatch)
    log = tmp_path / "big.log"
    generate(str(log), 6 << 20, seed=3)
    parts = split.plan_parts(log, log.stat().st_size, 3, db.search.quiet_search)
    assert len(parts) == 3 and parts[1].start > 0
    one = split_report_is_one_scans(db, log, 3)
    assert one["root_cause"]["id"] == "cuda-oom" and one["stats"]["sources"] == 1


@pytest.mark.skipif(engine._hs is None, reason="Hyperscan is not installed here")
def test_both_engines_find_the_same_lines(db) -> None:  # type: ignore[no-untyped-def]
    """Hyperscan and the pure-Python plan find the same lines and the same literals in them."""
    import os
    rng = random.Random(3)
    lines = _noise(rng, 400) + OOM_TB + ["x Error: y", "junk NCCL WARN z", "transformer_engine only"]
    rng.shuffle(lines)
    block = ("\n".join(lines) + "\n").encode()
    got = {}
    for name in ("python", "hyperscan"):
        os.environ["DIAGNOSER_ENGINE"] = name
        try:
            search = engine.LiteralSearch(db.search.head)
            assert search.engine == name
            starts = search.line_starts(block)
            got[name] = (starts, [search.found_in(block[s:block.index(b"\n", s)]) for s in starts],
                         search.any_in(block), search.any_in(b"nothing here\n"))
        finally:
            del os.environ["DIAGNOSER_ENGINE"]
    assert got["python"] == got["hyperscan"]
    assert len(got["python"][0]) >= len(OOM_TB) - 2 and got["python"][2] and not got["python"][3]


@pytest.mark.parametrize("name", ENGINES)
def test_the_literals_of_many_lines_found_in_one_scan_are_each_line_s(db, name: str,  # type: ignore[no-untyped-def]
                                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    """found_in_each and found_by_start (one scan of many lines, with Hyperscan) give what found_in gives line by
    line: the head the feeder feeds whole and the tail it lends are searched so."""
    monkeypatch.setenv("DIAGNOSER_ENGINE", name)
    rng = random.Random(11)
    lines = [x.encode() for x in _noise(rng, 300) + OOM_TB + ["", "Error:", "xError: yError: z"]]
    lines.append("训练中断 CUDA out of memory".encode())
    rng.shuffle(lines)
    search = engine.LiteralSearch(db.search.every)
    assert search.engine == name
    each = search.found_in_each(lines)
    assert each == [search.found_in(x) for x in lines] and sum(map(bool, each)) >= 20
    starts = [sum(len(x) + 1 for x in lines[:i]) for i in range(len(lines))]
    want = {s: f for s, f in zip(starts, each, strict=True) if f} if name == "hyperscan" else None
    assert search.found_by_start(b"\n".join(lines) + b"\n") == want
    assert search.found_by_start(b"\n".join(lines)) == want  # the last line without its line end


@pytest.mark.skipif(engine._hs is None, reason="Hyperscan is not installed here")
def test_a_line_holds_the_same_literals_before_hyperscan_is_compiled(db) -> None:  # type: ignore[no-untyped-def]
    """A literal search compiles Hyperscan when first needed: its first LAZY_LINES lines searched one at a time are
    tested literal by literal (a signature's examples never pay the compilation), and find what Hyperscan finds."""
    rng = random.Random(5)
    lines = [x.encode() for x in OOM_TB + _noise(rng, 2 * engine.LAZY_LINES)]
    literals = set(db.search.every) | {"a literal no cached database holds"}
    lazy, compiled = engine.LiteralSearch(literals), engine.LiteralSearch(literals)
    assert compiled.any_in(b"Traceback (most recent call last):\n") and compiled._hs is not None
    found = [lazy.found_in(x) for x in lines]
    assert lazy._hs is not None and lazy._lines == engine.LAZY_LINES + 1  # compiled after LAZY_LINES lines
    assert found == [compiled.found_in(x) for x in lines] and sum(map(bool, found[:engine.LAZY_LINES])) >= 5


def test_open_traceback_on_a_prefixed_stream_feeds_only_that_stream(db, small_blocks, monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
                                                                      tmp_path: Path) -> None:
    """A rank that raised never prints again: its traceback stays open until it goes stale, and meanwhile only
    that rank's lines are fed (the others hold nothing it needs). Lines of the stream split by a colour code
    are still found; the report is the line-by-line one."""
    from diagnoser.read import grouper
    monkeypatch.setattr(scanner, "STALE_TB", 700)
    monkeypatch.setattr(grouper, "STALE_TB", 700)
    rng = random.Random(17)
    lines = _noise(rng, 50)
    lines += ["[rank3]: Traceback (most recent call last):", '[rank3]:   File "/w/train.py", line 10, in <module>']
    for k in range(3000):
        r = rng.randrange(8)
        lines.append(f"\x1b[36m(WorkerDict pid={300 + r}, ip=10.0.0.{r})\x1b[0m step {k} loss {rng.random():.3f}")
        if k == 40:
            lines.append("[ra\x1b[0mnk3]:     loss.backward()")  # rank 3, its prefix split by a colour code
        if k == 1500:  # a second traceback on another rank, closed at once
            lines += ["[rank5]: Traceback (most recent call last):", '[rank5]:   File "/w/x.py", line 2, in f',
                      "[rank5]: ZeroDivisionError: division by zero", "[rank5]: step 9"]
    lines.append("[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.")
    log = tmp_path / "stale.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fed = count_fed(monkeypatch)
    fast = _json(db, [log], fast=True)
    assert len(fed) < 60, len(fed)  # not the 700 lines the open traceback used to keep busy
    assert 94 in fed  # the colour-split line of rank 3
    assert fast == _json(db, [log], fast=False)


def test_which_file_takes_the_fast_path(db, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    """With Hyperscan every file is searched, however small (its compiled search comes from the cache); with the
    pure-Python plan a file below half a megabyte is read line by line (the plan costs what it would save)."""
    from diagnoser import search
    from diagnoser.modes import pipeline
    searched: list[str] = []
    real = search.scan

    def spy(*args, **kwargs):  # type: ignore[no-untyped-def]
        searched.append(kwargs["name"])
        return real(*args, **kwargs)

    monkeypatch.setattr(search, "scan", spy)

    def takes_fast_path(path: Path) -> bool:
        searched.clear()
        report = diagnose(db, [Source(str(path), path)], fast=True)
        assert report.root_cause is not None and report.root_cause.sig.id == "cuda-oom"
        return searched == [str(path)]

    small = tmp_path / "small.log"
    small.write_text("\n".join(OOM_TB) + "\n", encoding="utf-8")
    big = tmp_path / "big.log"
    big.write_text("\n".join(_noise(random.Random(5), 9000) + OOM_TB) + "\n", encoding="utf-8")
    assert big.stat().st_size >= pipeline.PYTHON_FAST_MIN_BYTES > small.stat().st_size
    monkeypatch.setenv("DIAGNOSER_ENGINE", "python")
    assert not takes_fast_path(small)
    assert takes_fast_path(big)
    if engine._hs is not None:
        monkeypatch.setenv("DIAGNOSER_ENGINE", "hyperscan")
        assert takes_fast_path(small)


def test_ray_autoscaler_tips_are_not_fed(db, small_blocks, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    # the ActorDiedError's "\tip: <node>" line is read for the dead actor's node (read/marks.py); Ray's driver prints
    # "Tip: use `ray status` ..." every few seconds, which holds "ip: " too: those lines must stay unread
    tip = ("(autoscaler +{}m{}s) Tip: use `ray status` to view detailed cluster status. To disable these messages, "
           "set RAY_SCHEDULER_EVENTS=0.")
    lines = [tip.format(i // 60, i % 60) for i in range(400)]
    lines += ["ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
              "\tclass_name: PolicyTrainer", "\tactor_id: afbd67f9619699cfe1988ad9f06c144a", "\tpid: 2603",
              "\tname: policy_trainer_5", "\tip: 10.0.66.32"]
    log = tmp_path / "driver.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fed = count_fed(monkeypatch)
    fast = _json(db, [log], fast=True)
    assert len(fed) < 60, len(fed)
    assert fast == _json(db, [log], fast=False)
