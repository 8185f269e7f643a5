"""The fast path (block search for covering literals) reports exactly what feeding every line reports."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from diagnoser.eval import find_cases
from diagnoser.match import scanner
from diagnoser.modes.batch import diagnose
from diagnoser.read import normalize, sources
from diagnoser.read.sources import Source
from diagnoser.report.contract import to_json
from diagnoser.search import feeder as fastscan
from diagnoser.search import grep as grepscan
from diagnoser.search.plan import plan_search

from .conftest import SAMPLES


def _json(db, paths: list[Path], fast: bool) -> str:  # type: ignore[no-untyped-def]
    from diagnoser.console import Warner as _Warner
    from diagnoser.console import input_sources as _sources
    data = to_json(diagnose(db, _sources(paths, _Warner("en")), "en", fast="always" if fast else False))
    data["stats"]["seconds"] = 0
    return json.dumps(data, sort_keys=True, indent=1)


@pytest.fixture(params=["python", "grep"])
def small_blocks(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> str:
    """Blocks of a few KB and a short head, so block edges and skips happen inside small files; the
    candidate lines found by the Python plan, or by grep beside it (grepscan.py)."""
    if request.param == "grep":
        if grepscan.grep_path() is None:
            pytest.skip("no usable grep on this machine")
        monkeypatch.setattr(grepscan, "GREP_MIN_BYTES", 0)
        monkeypatch.delenv("DIAGNOSER_GREP", raising=False)
    else:
        monkeypatch.setenv("DIAGNOSER_GREP", "0")
    monkeypatch.setattr(fastscan, "BLOCK", 2048)
    monkeypatch.setattr(fastscan, "HEAD_LINES", 3)
    monkeypatch.setattr(normalize, "HEAD_LINES", 3)
    monkeypatch.setattr(fastscan, "FACT_LINES", 40)  # facts in the first 40 lines: both plans get used
    monkeypatch.setattr(scanner, "FACT_LINES", 40)
    monkeypatch.setattr(scanner, "HEAD_LINES", 3)
    return str(request.param)


CASES = find_cases(SAMPLES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_fast_equals_reference_on_samples(db, case, small_blocks) -> None:  # type: ignore[no-untyped-def]
    assert _json(db, [case.input], fast=True) == _json(db, [case.input], fast=False)


def _noise(rng: random.Random, n: int) -> list[str]:
    out = []
    for i in range(n):
        r = rng.randrange(8)
        kind = rng.randrange(6)
        if kind == 0:
            out.append(f"(WorkerDict pid={300 + r}, ip=10.0.0.{r}) step {i} loss {rng.random():.3f}")
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


@pytest.mark.parametrize("use_grep", [False, True], ids=["python", "grep"])
def test_split_scan_equals_one_scan(db, monkeypatch: pytest.MonkeyPatch, tmp_path: Path,  # type: ignore[no-untyped-def]
                                    use_grep: bool) -> None:
    """A big file cut into quiet parts for several processes reports what one scan reports."""
    if use_grep and grepscan.grep_path() is None:
        pytest.skip("no usable grep on this machine")
    monkeypatch.setenv("DIAGNOSER_GREP", "1" if use_grep else "0")
    monkeypatch.setattr(grepscan, "GREP_MIN_BYTES", 0)
    import sys

    from diagnoser.search import split
    sys.path.insert(0, str(SAMPLES.parent))
    from benchmarks.generate import generate

    for module, name, value in [
        (fastscan, "BLOCK", 64 << 10), (fastscan, "HEAD_LINES", 50), (normalize, "HEAD_LINES", 50),
        (scanner, "HEAD_LINES", 50), (fastscan, "FACT_LINES", 200), (scanner, "FACT_LINES", 200),
        (split, "FACT_LINES", 200), (split, "HEAD_LINES", 50), (scanner, "STALE_TB", 150),
        (split, "QUIET_LINES", 400), (split, "QUIET_BYTES", 96 << 10), (split, "LEAD", 16 << 10),
        (split, "SPLIT_MIN", 512 << 10),
    ]:
        monkeypatch.setattr(module, name, value)
    log = tmp_path / "big.log"
    generate(str(log), 6 << 20, seed=3)
    parts = split.plan_parts(log, log.stat().st_size, 3, db.search.body_plan)
    assert len(parts) == 3 and parts[1].start > 0
    from diagnoser.console import Warner as _Warner
    from diagnoser.console import input_sources as _sources
    one = to_json(diagnose(db, _sources([log], _Warner("en")), "en", jobs=1, fast="always"))
    many = to_json(diagnose(db, _sources([log], _Warner("en")), "en", jobs=3, fast="always"))
    one["stats"]["seconds"] = many["stats"]["seconds"] = 0
    assert json.dumps(one, sort_keys=True, indent=1) == json.dumps(many, sort_keys=True, indent=1)
    assert one["root_cause"]["id"] == "cuda-oom" and one["stats"]["sources"] == 1


def _counting_grep(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Count the blocks grep answered for (so a test can tell grep was really used)."""
    answered: list[int] = []
    real = grepscan.GrepFinder.candidates

    def candidates(self, block: bytes) -> list[int] | None:  # type: ignore[no-untyped-def]
        out = real(self, block)
        if out is not None:
            answered.append(len(out))
        return out

    monkeypatch.setattr(grepscan.GrepFinder, "candidates", candidates)
    return answered


@pytest.mark.skipif(grepscan.grep_path() is None, reason="no usable grep on this machine")
def test_grep_finds_the_candidates_of_a_generated_log(db, monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
                                                      tmp_path: Path) -> None:
    """On a log past the fact region, grep answers for the blocks, and the report is the Python plan's."""
    import sys
    sys.path.insert(0, str(SAMPLES.parent))
    from benchmarks.generate import generate

    for module, name, value in [(fastscan, "BLOCK", 64 << 10), (fastscan, "FACT_LINES", 300),
                                (scanner, "FACT_LINES", 300), (grepscan, "GREP_MIN_BYTES", 0)]:
        monkeypatch.setattr(module, name, value)
    log = tmp_path / "big.log"
    generate(str(log), 3 << 20, seed=11)
    with log.open("ab") as fh:  # a line holding grep's own SYNC marker must be read as any other line
        fh.write(b"junk " + grepscan.SYNC + b" more\n" + b"\n".join(x.encode() for x in OOM_TB) + b"\n")
    monkeypatch.setenv("DIAGNOSER_GREP", "0")
    python = _json(db, [log], fast=True)
    monkeypatch.delenv("DIAGNOSER_GREP")
    answered = _counting_grep(monkeypatch)
    with_grep = _json(db, [log], fast=True)
    assert len(answered) > 10 and sum(answered) > 0
    assert with_grep == python
    assert json.loads(with_grep)["root_cause"]["id"] == "cuda-oom"


@pytest.mark.skipif(grepscan.grep_path() is None, reason="no usable grep on this machine")
def test_grep_dying_midway_falls_back_to_python(db, small_blocks, monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]
                                               tmp_path: Path) -> None:
    if small_blocks != "grep":
        pytest.skip("about grep")
    calls = [0]
    real = grepscan.GrepFinder.candidates

    def candidates(self, block: bytes) -> list[int] | None:  # type: ignore[no-untyped-def]
        calls[0] += 1
        if calls[0] == 3:
            self.proc.kill()  # grep dies (out of memory, killed by the OOM killer, ...)
            self.proc.wait()
        return real(self, block)

    monkeypatch.setattr(grepscan.GrepFinder, "candidates", candidates)
    case = next(c for c in CASES if c.name == "torchrun-cuda-oom-buried-under-watchdog-echoes")
    with_grep = _json(db, [case.input], fast=True)
    assert calls[0] > 3
    monkeypatch.setenv("DIAGNOSER_GREP", "0")
    assert with_grep == _json(db, [case.input], fast=False)


def test_no_grep_when_switched_off(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DIAGNOSER_GREP", "0")
    assert grepscan.start(["CUDA out of memory"]) is None
