"""Property-based tests: random bytes, random chunking, random noise around real logs; a bounded fuzz run
of the line decoder/normaliser and the traceback grouper."""

from __future__ import annotations

import json
import random

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from diagnoser.match import scanner
from diagnoser.match.database import Database, load_database
from diagnoser.modes.batch import diagnose, diagnose_text
from diagnoser.read import normalize
from diagnoser.read.follow import Follower
from diagnoser.read.grouper import TracebackGrouper
from diagnoser.read.normalize import Normalizer
from diagnoser.read.sources import Source, decode
from diagnoser.read.tail import one_by_one
from diagnoser.read.traceback import MAX_TB_LINES, TracebackRecord
from diagnoser.report.contract import to_json
from diagnoser.search import feeder as fastscan

from .conftest import SAMPLES

DB: Database = load_database()
SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])

# Pieces real logs are made of, so random input reaches the interesting states.
FRAGMENTS = [
    "Traceback (most recent call last):", '  File "a.py", line 3, in f', "    g()", "ValueError: x",
    "During handling of the above exception, another exception occurred:", "", "[rank3]: ", "[default0]:",
    "(WorkerDict pid=12, ip=10.0.0.7) ", "(raylet) ", "\x1b[36m", "\x1b[0m", "[36m", "\r", "45%|████ | 9/20 [",
    "2025-01-01 10:00:00,123 ", "[E501 10:22:34.112833000 ProcessGroupNCCL.cpp:632] ", "terminate called after "
    "throwing an instance of 'c10::Error'", "  what():  CUDA error", "CUDA out of memory. Tried to allocate 2.00 GiB",
    " [repeated 7x across cluster]", "Fatal Python error: Aborted", "*** SIGSEGV received at time=1 ***",
    "Unhandled error (suppress with 'RAY_IGNORE_UNHANDLED_ERRORS=1'): ray::W.f()", "\x00", "\ufffd", "显存不足",
]
# a physical line never holds "\n" (every reader splits on it)
_text = st.text(alphabet=st.characters(blacklist_characters="\n"), max_size=20)
lines_strategy = st.lists(st.lists(st.sampled_from(FRAGMENTS) | _text, max_size=6).map("".join), max_size=60)


@SETTINGS
@given(st.binary(max_size=4000))
def test_random_bytes_never_crash_and_both_paths_agree(tmp_path_factory: pytest.TempPathFactory, data: bytes) -> None:
    log = tmp_path_factory.mktemp("bytes") / "x.log"
    log.write_bytes(data)
    reports = []
    for fast in ("always", False):
        report = to_json(diagnose(DB, [Source(str(log), log)], fast=fast))
        report["stats"]["seconds"] = 0
        reports.append(json.dumps(report, sort_keys=True))
    assert reports[0] == reports[1]


@settings(max_examples=200, deadline=None)
@given(lines_strategy)
def test_fuzz_normaliser_and_grouper(lines: list[str]) -> None:
    closed: list[TracebackRecord] = []
    grouper = TracebackGrouper(closed.append)
    norm = Normalizer("fuzz")
    for i, raw in enumerate(lines, start=1):
        for line in norm.lines(i, raw):
            assert "\x1b" not in line.text and "\n" not in line.text
            grouper.feed(line)
    grouper.close_all()
    assert all(len(tb.lines) <= MAX_TB_LINES and tb.exc_type for tb in closed)


@SETTINGS
@given(lines_strategy, st.lists(st.integers(min_value=1, max_value=97), min_size=1, max_size=40))
def test_appending_in_random_chunks_reads_the_same_lines(tmp_path_factory: pytest.TempPathFactory,
                                                          lines: list[str], cuts: list[int]) -> None:
    data = ("\n".join(lines) + "\n").encode("utf-8", "replace")
    log = tmp_path_factory.mktemp("chunks") / "train.log"
    log.write_bytes(b"")
    follower = Follower([log], from_start=True, warn=lambda _m: None)
    got: list[str] = []
    pos = 0
    k = 0
    while pos < len(data):
        step = cuts[k % len(cuts)]
        k += 1
        with open(log, "ab") as fh:
            fh.write(data[pos:pos + step])
        pos += step
        got += [text for _t, _n, text in one_by_one(follower.poll())]
    got += [text for _t, _n, text in one_by_one(follower.poll())]
    follower.close()
    assert got == [decode(x) for x in data[:-1].split(b"\n")]


POSITIVES = ["chatlearn/cuda-oom-fsdp-packing", "torchrun/nccl-error-ib-completion-second-host",
             "roll/batch-smaller-than-chunks-reference", "verl/cuda-illegal-memory-access-vllm-rollout"]
NOISE = ["(OtherActor pid=9999, ip=10.9.9.9) step:12 - actor/pg_loss:0.0123 - critic/score/mean:0.4",
         "[rank63]:[W1201 10:00:00.000000000 socket.cpp:1] benign warning", "INFO 12-01 10:00:00 [engine.py:1] ok",
         "Processed prompts:  50%|█████     | 64/128 [00:21<00:21,  3.01it/s]", "",
         "2025-12-01 10:00:00,000\tINFO worker.py:1 -- Started a local Ray instance."]
PREFIXES = ["", "2025-12-01T10:00:00.000000000Z ", "\x1b[32m[collector]\x1b[0m 2025-12-01 10:00:00,000 - ",
            "10.0.0.3: "]


@pytest.mark.parametrize("case", POSITIVES)
@settings(max_examples=8, deadline=None)
@given(seed=st.integers(min_value=0, max_value=10_000))
def test_noise_and_prefixes_do_not_change_the_root_cause(case: str, seed: int) -> None:
    text = (SAMPLES / (case + ".log")).read_text(encoding="utf-8")
    expected = diagnose_text(DB, text).root_cause
    assert expected is not None
    rng = random.Random(seed)
    prefix = rng.choice(PREFIXES)
    out: list[str] = []
    for line in text.splitlines():
        if rng.random() < 0.3:
            out.append(rng.choice(NOISE))
        out.append(prefix + line)
    got = diagnose_text(DB, "\n".join(out)).root_cause
    assert got is not None and got.sig.id == expected.sig.id


@pytest.fixture(autouse=True)
def _small_blocks(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(fastscan, "BLOCK", 512)
    for module in (fastscan, normalize, scanner):
        monkeypatch.setattr(module, "HEAD_LINES", 4)
    monkeypatch.setattr(fastscan, "FACT_LINES", 10)
    monkeypatch.setattr(scanner, "FACT_LINES", 10)


def test_settings_are_bounded() -> None:
    # CI time: every property above runs a bounded number of examples, and its samples exist
    assert SETTINGS.max_examples <= 100
    assert all((SAMPLES / (c + ".log")).exists() for c in POSITIVES)
