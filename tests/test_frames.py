"""Frames: a traceback's frames read from Python, rich and C++ backtraces in call order, and `match.frames`
recognising a traceback cut before its exception line (ranked below a whole match, in every mode)."""

from __future__ import annotations

import io
from pathlib import Path

import pytest
from rich.console import Console
from rich.traceback import Traceback

from diagnoser.match.database import build_database, load_database, load_signatures
from diagnoser.modes.batch import diagnose_text
from diagnoser.modes.pipeline import Pipeline
from diagnoser.read.frames import frames_of, is_frame_start
from diagnoser.read.normalize import Normalizer

from .test_traceback import group

USER_SIG = """id: my-store-cut
title: {en: My store failed, zh: 我的存储失败}
kind: cause
severity: error
match:
  any: ['MyStoreError: (?P<what>.+)']
  frames:
    - [{file: 'frames\\.py$', function: '^_setup_store$'}, {function: '^_connect(?P<step>_once)?$'}]
why: {en: because, zh: 因为}
remedy: {en: fix it, zh: 修复}
references: [https://example.com]
examples: {match: ['MyStoreError: x'], no_match: ['MyStoreError']}
"""


def _connect_once() -> None:
    raise RuntimeError("connection refused")


def _setup_store() -> None:
    _connect_once()


def rich_traceback() -> str:
    """A traceback printed by rich.traceback itself (the format Lightning and typer apps print)."""
    try:
        _setup_store()
    except RuntimeError:
        out = io.StringIO()
        Console(file=out, width=100, color_system=None).print(Traceback(width=100))
        return out.getvalue()
    raise AssertionError("unreachable")


def lines(text: str) -> list:  # type: ignore[type-arg]
    n = Normalizer("x")
    return [ll for i, raw in enumerate(text.splitlines(), 1) for ll in n.lines(i, raw)]


@pytest.fixture()
def user_db(tmp_path: Path):  # type: ignore[no-untyped-def]
    folder = tmp_path / "sigs"
    folder.mkdir()
    (folder / "my-store-cut.yaml").write_text(USER_SIG, encoding="utf-8")
    return build_database(load_signatures([folder]))


def test_rich_traceback_is_grouped_with_its_exception_and_frames_in_call_order() -> None:
    text = rich_traceback()
    tbs = group(text)
    assert len(tbs) == 1 and tbs[0].exc_type == "RuntimeError" and tbs[0].message == "connection refused"
    assert tbs[0].frame.endswith("in _connect_once")
    funcs = [f.function for f in frames_of(tbs[0].lines)]
    assert funcs[-2:] == ["_setup_store", "_connect_once"]


def test_cxx_backtrace_is_reversed_to_call_order() -> None:
    text = """frame #3: c10d::TCPStore::ping() + 200 (0x11b4f5738 in libtorch_cpu.dylib)
frame #4: c10d::TCPStore::TCPStore(std::string, c10d::TCPStoreOptions const&) + 0x20c (0x7fcd in /x/libtorch_cpu.so)
frame #9: /root/miniconda3/envs/x/bin/python3() [0x528b17]"""
    frames = frames_of(lines(text))
    assert [f.function for f in frames] == ["", "c10d::TCPStore::TCPStore(std::string, c10d::TCPStoreOptions const&)",
                                            "c10d::TCPStore::ping()"]
    assert frames[1].file == "/x/libtorch_cpu.so"


def test_faulthandler_dump_is_not_a_frame_start() -> None:
    assert not is_frame_start('  File "/x/moe_layer.py", line 701 in forward')
    assert is_frame_start('  File "/x/moe_layer.py", line 701, in forward')


def test_a_cut_traceback_is_recognised_from_its_frames(user_db) -> None:  # type: ignore[no-untyped-def]
    text = rich_traceback()
    cut = text[: text.index("╰")]  # the paste stops before the box closes and the exception line
    report = diagnose_text(user_db, cut)
    assert report.root_cause is not None and report.root_cause.sig.id == "my-store-cut"
    assert report.root_cause.matched_on == "frames" and report.root_cause.captures == {"step": "_once"}
    assert not report.unrecognized
    whole = diagnose_text(user_db, text)  # with its exception line it is an error no signature knows
    assert whole.root_cause is None and whole.unrecognized[0].exc_type == "RuntimeError"


def test_frames_in_another_order_do_not_match(user_db) -> None:  # type: ignore[no-untyped-def]
    text = """Traceback (most recent call last):
  File "/app/frames.py", line 9, in _connect_once
    _setup_store()
  File "/app/frames.py", line 5, in _setup_store
    raise"""
    report = diagnose_text(user_db, text)
    assert report.root_cause is None


def test_a_frame_only_match_ranks_below_a_whole_one(user_db) -> None:  # type: ignore[no-untyped-def]
    cut = """[rank1]: Traceback (most recent call last):
[rank1]:   File "/app/frames.py", line 5, in _setup_store
[rank1]:     _connect_once()
[rank1]:   File "/app/frames.py", line 9, in _connect_once
[rank1]:     sock.connect(addr)"""
    oom = "[rank0]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total capacity of 79.15 GiB"
    db = build_database([*load_database().by_id().values(),
                         *(cs.sig for cs in user_db.signatures if cs.sig.id == "my-store-cut")])
    report = diagnose_text(db, cut + "\n" + oom)  # the frames come first (rank 1), the whole match later
    assert [f.sig.id for f in report.findings][:2] == ["cuda-oom", "my-store-cut"]
    # a whole match of the same signature replaces the frames as its evidence
    report = diagnose_text(db, cut + "\n[rank0]: MyStoreError: refused")
    assert report.root_cause is not None and report.root_cause.matched_on == "lines"


def test_frames_are_read_when_following_a_log(user_db) -> None:  # type: ignore[no-untyped-def]
    text = rich_traceback()
    cut = text[: text.index("╰")]
    pipeline = Pipeline(user_db)
    scanner = pipeline.stream("train.log")
    for i, raw in enumerate(cut.splitlines(), 1):
        scanner.feed_raw(i, raw)
    scanner.flush()  # the input went quiet: the open traceback closes
    assert "my-store-cut" in pipeline.collector.findings
