"""The benchmark's own measuring (benchmarks/run.py): each command's peak memory is its own; the commands compared
run in turn."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from benchmarks.run import best_in_turn, timed


@pytest.mark.skipif(not sys.platform.startswith("linux"), reason="reads /proc")
def test_peak_rss_is_the_command_s_own() -> None:
    """A small command is not charged this (big) test process's memory, as getrusage's ru_maxrss, inherited across
    fork and exec, would; a command that grows is measured at its peak, and so is a child it starts."""
    hold = bytearray(200 << 20)  # this process: 200 MiB more than any command below
    hold[::4096] = b"x" * len(hold[::4096])
    _secs, small, out = timed(["cat", "/proc/self/status"])
    assert b"VmHWM" in out and small < 50 << 10
    grow = "import time; x = bytearray(120 << 20); x[::4096] = b'x' * len(x[::4096]); time.sleep(0.3)"
    _secs, grown, _out = timed([sys.executable, "-c", grow])
    assert 120 << 10 < grown < 200 << 10
    parent = f"import subprocess, sys; subprocess.run([sys.executable, '-c', {grow!r}])"
    _secs, child, _out = timed([sys.executable, "-c", parent])
    assert 120 << 10 < child < 200 << 10
    del hold


def test_the_commands_compared_run_in_turn(tmp_path: Path) -> None:
    """Round after round, each command once (not all runs of one, then all of the next: a machine whose speed
    drifts would slow one and not the other); each command's best run is the one reported, with its output."""
    order = tmp_path / "order"
    cmds = [["sh", "-c", f"echo {x} >> {order}; echo {x}"] for x in "ab"]
    got = best_in_turn(cmds, 3)
    assert order.read_text().split() == ["a", "b"] * 3
    assert [r[3] for r in got] == [b"a\n", b"b\n"] and all(r[0] > 0 and r[1] >= 0 for r in got)


def test_the_metric_floor_reads_every_record_and_only_the_watched_values(tmp_path: Path) -> None:
    """benchmarks/metric_floor.py: its floor reads each verl record of the project's generated log once, and the
    values of the keys the product's health rules read, as the product's reader finds them; the signatures it
    leaves out are exactly those holding a metric clause (a database built from the rest reads no record)."""
    from benchmarks.generate import generate
    from benchmarks.metric_floor import floor_read, watched_keys, without_metric_signatures
    from diagnoser.match.database import load_database
    from diagnoser.match.metrics import ReaderState, read_record
    from diagnoser.match.metricwatch import metric_watch, read_values

    log = tmp_path / "own.log"
    generate(str(log), 300_000, 7)
    keys = watched_keys(log)
    _secs, records, values = floor_read(log, keys)
    lines = log.read_text(encoding="utf-8").splitlines()
    steps = [x for x in lines if " step:" in x or x.startswith("step:")]
    assert keys and records == len(steps) > 100
    watch = metric_watch(s.sig for s in load_database().signatures)
    assert watch is not None
    read = 0
    for text in steps:
        record = read_record(text[text.find("step:"):], [0], ReaderState())
        assert record is not None
        read += len(read_values(record, watch)[0])
    assert values == read
    folder = without_metric_signatures(tmp_path)
    kept = {p.name for p in folder.rglob("*.yaml")}
    root = Path(__file__).resolve().parents[1] / "signatures"
    every = {p.name: p.read_text(encoding="utf-8") for p in root.rglob("*.yaml")}
    assert kept == {name for name, text in every.items() if "\nmetric:" not in text and not text.startswith("metric:")}
    assert len(kept) < len(every)
    db = load_database(builtin=False, extra_dirs=[folder])
    assert metric_watch(s.sig for s in db.signatures) is None
