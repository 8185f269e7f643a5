"""Property-based (issue 19): whatever a job does to a followed file between two polls (appends, partial lines,
rotation by rename, truncation, delete and recreate, past the open-file budget), every line written is read once;
the report's clipping keeps within its bounds and keeps both ends of a key line."""

from __future__ import annotations

import os

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st

from diagnoser.read import follow as follow_mod
from diagnoser.read.follow import Follower
from diagnoser.read.tail import one_by_one
from diagnoser.report.model import MAX_KEY_CHARS, MAX_TEXT, clip, clip_key

OPS = st.lists(st.one_of(st.tuples(st.just("write"), st.integers(0, 5), st.integers(1, 4)),
                         st.tuples(st.sampled_from(["move", "truncate", "recreate", "poll"]), st.integers(0, 5),
                                   st.just(0))), max_size=40)


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(OPS)
# cases Hypothesis found, each a bug once: a parked file cut and written to its old size (its head was re-read when
# it was parked); a replaced file read only at the poll after the one that found it, and cut meanwhile (a buffered
# handle had kept the bytes the file lost); a file cut, written to its old size and renamed away, with a new file
# at its path, or one that may be a copy being made (the cut was looked for only while the path named the file)
@example(ops=[("write", 3, 1), ("truncate", 0, 0), ("write", 1, 1), ("truncate", 3, 0), ("write", 2, 1),
              ("write", 3, 1)])
@example(ops=[("move", 0, 0), ("write", 0, 1), ("truncate", 0, 0)])
@example(ops=[("write", 1, 1), ("truncate", 1, 0), ("write", 1, 1), ("move", 1, 0)])
@example(ops=[("write", 0, 1), ("write", 1, 1), ("truncate", 1, 0), ("write", 1, 1), ("move", 1, 0)])
def test_every_line_is_read_once_whatever_happens_between_polls(tmp_path_factory: pytest.TempPathFactory,
                                                                  monkeypatch: pytest.MonkeyPatch,
                                                                  ops: list[tuple[str, int, int]]) -> None:
    monkeypatch.setattr(follow_mod, "open_budget", lambda: 3)  # six files, three handles: parking and waking too
    folder = tmp_path_factory.mktemp("ops")
    for i in range(6):
        (folder / f"rank{i}.log").write_text("")
    f = Follower([folder], from_start=True, warn=lambda _m: None, rescan_every=0.0)
    written: list[str] = []
    got: list[str] = []
    serial = moves = 0

    def poll() -> None:
        got.extend(text for _t, _n, text in one_by_one(f.poll()))

    for op, i, n in ops:
        log = folder / f"rank{i}.log"
        if op == "write":
            with open(log, "a") as fh:
                for _ in range(n):
                    serial += 1
                    fh.write(f"line {serial}\n")
                    written.append(f"line {serial}")
        elif op == "move":
            moves += 1  # a rotated name of its own: kept (two moves with no write between must not overwrite one)
            os.replace(log, folder / f"rank{i}.log.{moves}")
            log.write_text("")
        elif op == "truncate":
            poll()  # what it had is read before it is cut (a copytruncate's copy is tested with real rotation)
            os.truncate(log, 0)
        elif op == "recreate":
            poll()  # a deleted file that was never opened cannot be read
            log.unlink()
            log.write_text("")
        elif op == "poll":
            poll()
    poll()
    poll()  # a parked file renamed away is found under its new name at the listing after the one that saw it go
    f.close()
    assert sorted(got, key=lambda t: int(t.split()[1])) == written


@given(st.text(max_size=10_000))
def test_clipping_is_bounded_and_keeps_both_ends(text: str) -> None:
    assert len(clip(text)) <= MAX_TEXT and clip(text)[:MAX_TEXT - 1] == text[:MAX_TEXT - 1]
    key = clip_key(text)
    assert len(key) <= MAX_KEY_CHARS
    if len(text) > MAX_KEY_CHARS:
        assert text.startswith(key[:3000]) and text.endswith(key[-MAX_KEY_CHARS // 4:])
    else:
        assert key == text
