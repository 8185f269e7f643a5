"""Cross-rank forensics on the sample job folders: the flight-recorder dumps of a real hang, and the same culprit
in --follow mode as in batch."""

from __future__ import annotations

import io
from pathlib import Path

from diagnoser.modes.batch import diagnose
from diagnoser.read.flightrec import read_dump
from diagnoser.read.walk import expand
from diagnoser.report.contract import to_json

from .conftest import SAMPLES

JOBS = SAMPLES / "jobs"


def _report(db, path: Path) -> dict:  # type: ignore[no-untyped-def,type-arg]
    return to_json(diagnose(db, expand(path, lambda _m: None), "en"))


def test_flight_recorder_names_the_rank_that_never_joined() -> None:
    dumps = sorted((JOBS / "forensics-torchrun-hang" / "fr").glob("nccl_trace_rank_*"))
    assert dumps, "the sample holds one dump per rank"
    parsed = [read_dump(p.read_bytes(), int(p.name.rsplit("_", 1)[1]), p.name) for p in dumps]
    from diagnoser.judge.artifacts import flight_recorder
    notes = flight_recorder(parsed, 4)
    assert {(n.kind, tuple(n.ranks)) for n in notes} >= {("fr-behind", (3,)), ("fr-missing", (3,))}


def test_live_mode_names_the_same_culprit(db) -> None:  # type: ignore[no-untyped-def]
    from diagnoser.modes.live import LiveSession
    job = JOBS / "forensics-torchelastic-2nodes"
    session = LiveSession(db, "en", "quiet", io.StringIO(), lambda _m: None)
    for source in expand(job, lambda _m: None):
        if source.kind != "log" or source.path is None:
            continue
        for lineno, text in enumerate(source.path.read_text(errors="replace").splitlines(), 1):
            session.feed(source.name, lineno, text, source.rank, source.host, source.role)
    live = to_json(session.finish())
    batch = _report(db, job)
    assert live["culprit"]["rank"] == batch["culprit"]["rank"] == 3


def test_flight_recorder_names_the_rank_with_another_size() -> None:
    # the hang's real JSON dumps of ranks 0-2 (all pending in collective 3 of group 0), rank 2's input size changed:
    # fr_trace's SIZE_MISMATCH, and only rank 2 is named
    import json
    dumps = []
    for rank in range(3):
        doc = json.loads((JOBS / "forensics-torchrun-hang" / "fr" / "json" / f"nccl_trace_rank_{rank}.json").read_text())
        if rank == 2:
            for entry in doc["entries"]:
                if entry["collective_seq_id"] == 3:
                    entry["input_sizes"] = entry["output_sizes"] = [[2048]]
        dumps.append(read_dump(json.dumps(doc).encode(), rank, f"nccl_trace_rank_{rank}.json"))
    from diagnoser.judge.artifacts import flight_recorder
    notes = [n for n in flight_recorder(dumps, 3) if n.kind == "fr-mismatch"]
    assert [(n.ranks, "sizes differ" in n.text) for n in notes] == [([2], True)]
