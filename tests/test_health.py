"""Training health: the metric readers of each print format, the series (bounded whatever the run's length), the
rules judged as points come, their merge across files and the parts of a split file, the report and live mode."""

from __future__ import annotations

import io
import json
import math
import os
import subprocess
import sys
from pathlib import Path

import pytest

from diagnoser.judge.series import EARLY_KEEP, SERIES_POINTS, SKETCH_BUCKETS
from diagnoser.match.database import Database
from diagnoser.match.metrics import READERS, ReaderState, number, pairs_of, read_record
from diagnoser.modes.batch import diagnose, diagnose_text
from diagnoser.modes.live import LiveSession, StopLive
from diagnoser.read.normalize import Normalizer
from diagnoser.read.sources import Source
from diagnoser.report.contract import to_json
from diagnoser.report.markdown import render_markdown
from diagnoser.report.text import render_text

from .conftest import SAMPLES

HEALTH = SAMPLES / "health"


def _records(name: str) -> list[tuple[str, int | None, dict[str, object]]]:
    """Every metric record of a sample, as the scanner reads it (cleaned lines, all readers)."""
    normalizer = Normalizer(name)
    state = ReaderState()
    out = []
    everyone = list(range(len(READERS)))
    with open(HEALTH / name, encoding="utf-8") as fh:
        for lineno, raw in enumerate(fh, 1):
            for line in normalizer.lines(lineno, raw.rstrip("\n")):
                readers = [i for i in everyone if any(lit in line.text for lit in READERS[i].literals)]
                record = read_record(line.text, readers, state)
                if record is not None:
                    out.append((record.reader, record.step, {k: v for k, v, _t in pairs_of(record)}))
    return out


@pytest.mark.parametrize(("name", "reader", "steps", "key", "value"), [
    ("verl-console-healthy.log", "verl", 24, "actor/grad_norm", None),
    ("verl-v04-console-healthy.log", "verl", 28, "actor/entropy_loss", None),
    ("verl-file-logger-healthy.jsonl", "verl-file", 36, "actor/entropy", None),
    ("roll-rlvr-healthy.log", "roll", 22, "actor_train/grad_norm", None),  # 20 tracker lines + 2 plain JSON lines
    ("openrlhf-healthy.log", "openrlhf", 70, "response_clip_ratio", None),
    ("megatron-healthy.log", "megatron", 110, "grad norm", None),
    ("chatlearn-grpo-healthy.log", "chatlearn", 136, "rollout/response_clip_ratio", None),
    ("trl-grpo-healthy.log", "hf", 64, "completions/clipped_ratio", None),
    ("nemo-rl-grpo-healthy.log", "nemo-rl", 225, "Generation KL Error", None),
    ("trl-grpo-cpu-real-nan.log", "hf", 3, "grad_norm", "'nan'"),
])
def test_each_format_is_read(name: str, reader: str, steps: int, key: str, value: object) -> None:
    records = [r for r in _records(name) if r[0] == reader]
    assert len(records) == steps
    assert any(key in values for _r, _s, values in records)
    for _r, _s, values in records:
        if key in values:
            assert number(values[key]) is not None
    if value is not None:
        assert records[-1][2][key] == value and math.isnan(number(value) or 0.0)


def test_steps_as_the_frameworks_print_them() -> None:
    assert [s for _r, s, _v in _records("roll-rlvr-healthy.log")][:3] == [0, 0, 1]  # 0-based, a plain JSON copy
    assert {s for r, s, _v in _records("trl-grpo-healthy.log")} == {None}  # HF dicts carry no step
    nemo = _records("nemo-rl-grpo-healthy.log")
    assert nemo[0][1] == 1 and nemo[-1][1] == 45  # from the "===== Step N/M =====" header above the values
    megatron = _records("megatron-healthy.log")
    assert [s for _r, s, _v in megatron][:2] == [1, 2]


@pytest.mark.parametrize(("text", "want"), [
    ("np.float64(0.25)", 0.25), ("'0.1234'", 0.1234), ("2.306353E+00", 2.306353), ("1e-6", 1e-6),
    ("164.96s", 164.96), ("NaN", math.nan), ("Infinity", math.inf), ("np.float64(nan)", math.nan),
    (None, math.nan), (3, 3.0), ("True", None), (True, None), ("'abc'", None), ("[1, 2]", None),
])
def test_numbers_as_printed(text: object, want: float | None) -> None:
    got = number(text)
    if want is None or got is None:
        assert got is want
    elif math.isnan(want):
        assert math.isnan(got)
    else:
        assert got == pytest.approx(want)


def _verl_lines(values: list[float], key: str = "actor/grad_norm") -> list[str]:
    return [f"(TaskRunner pid=7) step:{i} - {key}:np.float64({v!r})" for i, v in enumerate(values, 1)]


def test_a_series_stays_bounded_and_still_trips_late(db: Database) -> None:
    values = [0.3 + 0.01 * (i % 7) for i in range(20000)] + [9.5, 0.31]
    report = diagnose_text(db, "\n".join(_verl_lines(values)))
    f = next(f for f in report.findings if f.sig.id == "grad-norm-explosion")
    assert f.health is not None
    series = f.health.series
    assert f.health.step == 20001 and series.n == 20002
    assert len(series.recent) <= SERIES_POINTS and len(series.early) <= EARLY_KEEP
    assert len(series.sketch.buckets) <= SKETCH_BUCKETS
    assert sum(b[5] + b[6] for b in series.sketch.buckets) == 20002  # every point is in one bucket


def test_a_healthy_series_trips_nothing_and_a_spike_must_be_sustained_where_asked(db: Database) -> None:
    steady = [0.33, 0.31, 0.36, 0.35, 0.30, 0.34, 0.9, 0.32, 0.35, 0.33]  # a 2.7x spike is ordinary
    assert not diagnose_text(db, "\n".join(_verl_lines(steady))).findings
    probs = [0.003, 0.0032, 0.003, 0.012, 0.0031, 0.013, 0.0121, 0.003]  # > 0.01, never 3 points in a row
    assert not diagnose_text(db, "\n".join(_verl_lines(probs, "training/rollout_probs_diff_mean"))).findings


def test_a_crash_after_the_trend_links_them(db: Database) -> None:
    text = "\n".join([*_verl_lines([0.33, 0.31, 0.36, 0.35, 0.3, 0.34, 0.9, 1.6, 4.2]), "(TaskRunner pid=7) step:10 - actor/pg_loss:np.float64(nan) - actor/grad_norm:np.float64(nan)"])
    report = diagnose_text(db, text)
    assert report.root_cause is not None and report.root_cause.sig.id == "nan-loss"
    assert report.story is not None and [f.sig.id for f in report.story.precursors] == ["grad-norm-explosion"]
    data = to_json(report)
    assert data["precursors"] == [{"id": "grad-norm-explosion", "metric": "actor/grad_norm", "start_step": 7,
                                   "step": 9, "source": "<text>", "line": 9}]
    out = io.StringIO()
    render_text(report, out, color=False, width=200)
    assert "← began earlier: Gradient norm exploded" in out.getvalue() and "from step 7" in out.getvalue()


def test_a_trend_is_tied_only_to_a_failure_it_can_cause(db: Database) -> None:
    # the same grad-norm explosion, then a CUDA OOM (cuda-oom's example line): an OOM is no NaN, so the health
    # finding stays a finding of its own, not "where the failure began"
    oom = ("torch.cuda.OutOfMemoryError: CUDA out of memory. Tried to allocate 8.06 GiB. GPU 0 has a total capacty of "
           "23.70 GiB of which 1.27 GiB is free. Including non-PyTorch memory, this process has 22.43 GiB memory in use.")
    report = diagnose_text(db, "\n".join([*_verl_lines([0.33, 0.31, 0.36, 0.35, 0.3, 0.34, 0.9, 1.6, 4.2]), oom]))
    assert report.root_cause is not None and report.root_cause.sig.id == "cuda-oom"
    assert any(f.sig.id == "grad-norm-explosion" for f in report.findings)
    assert report.story is not None and report.story.precursors == []
    assert to_json(report)["precursors"] == []


def test_json_carries_the_series_summary_and_the_start_step() -> None:
    code = subprocess.run([sys.executable, "-m", "diagnoser", str(HEALTH / "megatron-grad-spike-loss-vanished.log"),
                           "--format", "json"], capture_output=True, text=True, timeout=120)
    report = json.loads(code.stdout)
    assert code.returncode == 1 and report["root_cause"]["id"] == "megatron-loss-vanished"
    spike = next(f for f in report["findings"] if f["id"] == "grad-norm-explosion")
    health = spike["health"]
    assert set(health) == {"metric", "source", "format", "condition", "step", "start_step", "value", "start_value",
                           "reference", "ordinal", "series"}
    assert (health["metric"], health["format"], health["step"], health["start_step"]) == ("grad norm", "megatron", 65, 63)
    series = health["series"]
    assert set(series) == {"points", "nonfinite", "first_step", "last_step", "min", "max", "last", "buckets"}
    assert series["points"] == 74 and series["nonfinite"] == 7 and series["last"] is None  # NaN is null in JSON
    assert all(len(b) == 3 for b in series["buckets"]) and series["buckets"][-1][2] is None
    assert report["findings"][0]["health"]["metric"] == "lm loss"  # the vanished loss is a health finding too
    assert all(f["health"] is None for f in report["findings"] if f["id"] == "nan-loss")


def test_markdown_shows_a_small_table(db: Database) -> None:
    report = diagnose(db, [Source("chatlearn.log", HEALTH / "chatlearn-grpo-entropy-reward-straggler.log")])
    md = render_markdown(report)
    assert "## Training health" in md and "| `entropy-collapse` | `policy_trainer/entropy_loss` | 9 → 26 |" in md
    assert "**No crash, but the training metrics went bad.**" in md


def test_series_merge_per_source_across_files(db: Database, tmp_path: Path) -> None:
    lines = _verl_lines([0.33, 0.31, 0.36, 0.35, 0.30, 0.34, 4.1])
    for name in ("a.log", "b.log"):
        (tmp_path / name).write_text("\n".join(lines) + "\n", encoding="utf-8")
    one = diagnose(db, [Source("a.log", tmp_path / "a.log"), Source("b.log", tmp_path / "b.log")], jobs=1)
    two = diagnose(db, [Source("a.log", tmp_path / "a.log"), Source("b.log", tmp_path / "b.log")], jobs=2)
    for report in (one, two):
        f = next(f for f in report.findings if f.sig.id == "grad-norm-explosion")
        assert f.count == 2 and f.sources == ["a.log", "b.log"] and f.first.source == "a.log"
    assert to_json(one)["findings"] == to_json(two)["findings"]


def test_a_split_file_is_judged_as_one(db: Database, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """The reward peaks in the first part and collapses in the third: only the replayed series knows its peak."""
    from diagnoser.search import split

    for name, value in (("QUIET_LINES", 200), ("QUIET_BYTES", 32 << 10), ("LEAD", 8 << 10), ("SPLIT_MIN", 256 << 10),
                        ("FACT_LINES", 100), ("HEAD_LINES", 50)):
        monkeypatch.setattr(split, name, value)
    noise = "INFO 07-01 10:00:00 [scheduler.py:1203] Running: 12 reqs, Swapped: 0 reqs, Pending: 3 reqs"
    rewards = [0.2 + 0.004 * i for i in range(100)] + [0.6 * 0.9 ** i for i in range(60)]
    out = []
    for i, r in enumerate(rewards, 1):
        out.append(f"(TaskRunner pid=7) step:{i} - critic/score/mean:{r!r} - timing_s/step:61.0")
        out += [noise] * 40
    log = tmp_path / "big.log"
    log.write_text("\n".join(out) + "\n", encoding="utf-8")
    parts = split.plan_parts(log, log.stat().st_size, 3, db.search.quiet_search)
    assert len(parts) == 3
    whole = to_json(diagnose(db, [Source("big.log", log)], jobs=1, fast="always"))
    many = to_json(diagnose(db, [Source("big.log", log)], jobs=3, fast="always"))
    for report in (whole, many):
        report["stats"]["seconds"] = 0
    assert json.dumps(whole, sort_keys=True) == json.dumps(many, sort_keys=True)
    collapse = next(f for f in whole["findings"] if f["id"] == "reward-collapse")
    assert collapse["health"]["start_step"] == 101 and collapse["health"]["step"] > 101


def test_a_part_records_a_bounded_number_of_events(monkeypatch: pytest.MonkeyPatch) -> None:
    from diagnoser.judge import health
    from diagnoser.judge.collector import Collector
    from diagnoser.match.events import MetricEvent
    from diagnoser.read.normalize import LogLine

    monkeypatch.setattr(health, "RECORD_MAX", 64)
    part = Collector({}, recording=True)
    for i in range(1, 1001):
        line = LogLine("big.log", i, "x" * 3000, "x" * 3000)
        part(MetricEvent("verl", i, (("critic/score/mean", 0.5, "critic/score/mean:0.5", (("reward-collapse", 0),)),),
                         "step:1 - ", line))
    kept = part.health.recorded["big.log"]
    assert len(kept) < 64 and all(len(e.line.raw) <= 160 and not e.line.text for e in kept)
    assert [e.step for e in kept[:3]] == [1, 17, 33]  # every 16th, in order


def _session(db: Database, exit_on: str, fmt: str = "text") -> tuple[LiveSession, io.StringIO]:
    out = io.StringIO()
    return LiveSession(db, "en", fmt, out, lambda _m: None, exit_on=exit_on), out


def test_live_tells_the_trip_while_the_job_runs(db: Database) -> None:
    session, out = _session(db, "none", "jsonl")
    lines = _verl_lines([0.33, 0.31, 0.36, 0.35, 0.30, 0.34, 4.1, 0.33])
    for lineno, line in enumerate(lines[:7], 1):
        session.feed("train.log", lineno, line)
    events = [json.loads(x) for x in out.getvalue().splitlines()]
    assert [e["finding"]["id"] for e in events if e["event"] == "finding"] == ["grad-norm-explosion"]
    assert events[0]["finding"]["health"]["step"] == 7


@pytest.mark.parametrize(("exit_on", "stops"), [("health", True), ("cause", False), ("none", False)])
def test_exit_on_health_stops_at_the_trip(db: Database, exit_on: str, stops: bool) -> None:
    session, out = _session(db, exit_on)
    lines = _verl_lines([0.33, 0.31, 0.36, 0.35, 0.30, 0.34, 4.1, 0.33, 0.32])
    stopped_at = None
    for lineno, line in enumerate(lines, 1):
        try:
            session.feed("train.log", lineno, line)
        except StopLive:
            stopped_at = lineno
            break
    assert stopped_at == (7 if stops else None)
    assert "Gradient norm exploded" in out.getvalue()
    assert "actor/grad_norm: 4.1 at step 7 (baseline 0.335)  ▁▁▁▁▁▁█" in out.getvalue()


def test_diagnose_run_exit_on_health_stops_the_command(tmp_path: Path) -> None:
    script = tmp_path / "train.py"
    script.write_text(
        "import time\n"
        "for i, v in enumerate([0.33, 0.31, 0.36, 0.35, 0.30, 0.34, 4.1] + [0.3] * 600, 1):\n"
        "    print(f'(TaskRunner pid=7) step:{i} - actor/grad_norm:np.float64({v})', flush=True)\n"
        "    time.sleep(0.05)\n", encoding="utf-8")
    env = {**os.environ, "NO_COLOR": "1", "LANG": "C.UTF-8"}
    proc = subprocess.run([sys.executable, "-m", "diagnoser", "run", "--exit-on", "health", "--", sys.executable,
                           str(script)], capture_output=True, text=True, env=env, timeout=120, check=False)
    assert proc.returncode == 1 and "grad-norm-explosion" in proc.stderr
    assert proc.stdout.count("step:") < 600  # stopped long before the end


@pytest.mark.parametrize("width", [80, 160])
def test_the_health_table_keeps_ids_and_metric_names_whole(db: Database, width: int) -> None:
    report = diagnose_text(db, (HEALTH / "verl-console-mismatch-grad-nan.log").read_text(encoding="utf-8"))
    out = io.StringIO()
    render_text(report, out, color=False, width=width)
    lines = out.getvalue().splitlines()
    assert any("train-infer-mismatch" in line and "training/rollout_probs_diff_mean" in line for line in lines)
    assert all(len(line) <= width for line in lines)
