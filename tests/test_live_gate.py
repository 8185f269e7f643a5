"""--follow reads its files through the fast search's gate (search.LiveGate: the feeder batch and `diagnose run`
use), in pieces as they come: it reports what feeding every line reports, and what batch reports."""

from __future__ import annotations

import io
import json
import random
from pathlib import Path
from typing import Any

import pytest

from diagnoser.eval import find_cases
from diagnoser.modes.batch import diagnose
from diagnoser.modes.live import LiveSession
from diagnoser.read.sources import line_text
from diagnoser.read.walk import expand, file_sources
from diagnoser.report.contract import to_json

from .conftest import SAMPLES

CASES = find_cases(SAMPLES)


def _sources(path: Path) -> list[Any]:
    found = expand(path, lambda _m: None) if path.is_dir() else list(file_sources([path]))
    return [s for s in found if s.kind == "log" and s.path is not None and s.path.suffix != ".gz"]


def _lines(source: Any) -> list[str]:
    return [line_text(raw) for raw in source.path.read_bytes().split(b"\n")[:-1]]


def _live(db: Any, path: Path, pieces: random.Random | None) -> dict[str, Any]:
    """A live session fed every line of each file: one by one to the scanner (pieces None: the reference), or in
    pieces of random sizes through the gate (what --follow does)."""
    session = LiveSession(db, "en", "quiet", io.StringIO(), lambda _m: None)
    for source in _sources(path):
        lines = _lines(source)
        if pieces is None:
            sc = session.scanner(source.name, source.rank, source.host, source.role)
            for lineno, text in enumerate(lines, 1):
                sc.feed_raw(lineno, text)
            session.last_lines[source.name] = len(lines)
            session.saw(source.name, "".join(t + "\n" for t in lines).encode("utf-8", "replace"))  # the counts
            continue
        i = 0
        while i < len(lines):
            n = pieces.choice((1, 2, 7, 50, 4000))
            session.feed_piece(source.name, i + 1, lines[i:i + n], source.rank, source.host, source.role)
            i += n
    data = to_json(session.finish())
    data["stats"] = {}
    return data


def _ids(report: dict[str, Any]) -> list[tuple[str, int]]:
    return sorted((f["id"], f["count"]) for f in report["findings"])


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_follow_through_the_gate_equals_every_line(db, case) -> None:  # type: ignore[no-untyped-def]
    if not _sources(case.input):
        pytest.skip("no plain log to follow")
    reference = _live(db, case.input, None)
    gated = _live(db, case.input, random.Random(case.name))
    assert json.dumps(gated, sort_keys=True, indent=1) == json.dumps(reference, sort_keys=True, indent=1)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_follow_through_the_gate_finds_what_batch_finds(db, case) -> None:  # type: ignore[no-untyped-def]
    sources = _sources(case.input)
    if not sources or len(sources) != len(expand(case.input, lambda _m: None) if case.input.is_dir() else [1]):
        pytest.skip("a file --follow does not read as batch does (compressed, a dump)")
    batch = to_json(diagnose(db, sources, "en"))
    gated = _live(db, case.input, random.Random(case.name))
    assert _ids(gated) == _ids(batch)
    assert (gated["root_cause"] or {}).get("id") == (batch["root_cause"] or {}).get("id")


RUN_CASES = [c for c in CASES if c.input.is_file() and c.input.suffix == ".log"][:4]


@pytest.mark.parametrize("case", RUN_CASES, ids=[c.name for c in RUN_CASES])
def test_run_through_the_gate_finds_what_batch_finds(db, case, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # `diagnose run -- cat LOG`: the command's output read in chunks through the same gate
    import os
    import subprocess
    import sys
    env = {**os.environ, "NO_COLOR": "1", "XDG_CACHE_HOME": str(tmp_path)}
    proc = subprocess.run([sys.executable, "-m", "diagnoser", "run", "--format", "json", "--", "cat", str(case.input)],
                          capture_output=True, env=env, timeout=300, check=False)
    live = json.loads(proc.stderr[proc.stderr.find(b"{"):])
    batch = to_json(diagnose(db, _sources(case.input), "en"))
    assert _ids(live) == _ids(batch) and proc.stdout == case.input.read_bytes()
