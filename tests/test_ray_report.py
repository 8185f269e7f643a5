"""`--ray` without a cluster: Ray missing (exit 2 with the install command), option checks, and how a report shows
the cluster's nodes (every format). Fast, and run with or without Ray installed."""

from __future__ import annotations

import io
import json
import pickle
import sys
from pathlib import Path

import pytest

from diagnoser.cli import main
from diagnoser.console import Format, emit_report
from diagnoser.match.database import load_database
from diagnoser.match.portable import portable, rebuild
from diagnoser.modes.batch import diagnose_text
from diagnoser.report.model import Report
from diagnoser.report.nodes import NodeState

SAMPLES = sorted((Path(__file__).resolve().parent.parent / "sample_logs").glob("*/*.log"))[::8]


def _run(args: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(args)
    out, err = capsys.readouterr()
    return code, out, err


def test_without_ray_the_install_command_and_exit_2(monkeypatch: pytest.MonkeyPatch,
                                                    capsys: pytest.CaptureFixture[str]) -> None:
    monkeypatch.setitem(sys.modules, "ray", None)  # `import ray` raises ImportError, as where it is not installed
    code, out, err = _run(["--ray", "auto", "--lang", "en"], capsys)
    assert code == 2 and out == ""
    assert err.strip() == "diagnose: error: --ray needs Ray, which is not installed here: pip install 'diagnoser[ray]'"
    code, _out, err = _run(["--follow", "--ray", "auto", "--lang", "zh"], capsys)
    assert code == 2 and "pip install 'diagnoser[ray]'" in err


@pytest.mark.parametrize(("args", "message"), [
    (["--ray-paths", "/x", "-"], "--ray-paths and --ray-timeout go with --ray"),
    (["--ray-timeout", "5", "-"], "--ray-paths and --ray-timeout go with --ray"),
    (["--ray", " "], "--ray needs an address"),
    (["--ray", "auto", "--ray-timeout", "0"], "--ray-timeout must be more than 0 seconds"),
])
def test_ray_options_are_checked(args: list[str], message: str, capsys: pytest.CaptureFixture[str]) -> None:
    code, _out, err = _run([*args, "--lang", "en"], capsys)
    assert code == 2 and message in err


NODES = [
    NodeState("a" * 56, "10.0.0.1", "head-0", head=True, state="scanned", log_dir="/tmp/ray/session_1/logs",
              files=40, seconds=1.5),
    NodeState("b" * 56, "10.0.0.2", "worker-1", state="dead", reason="health check failed due to missing too many "
              "heartbeats", log_dir="/tmp/ray/session_1/logs"),
    NodeState("c" * 56, "10.0.0.3", "worker-2", state="unreachable", reason="did not answer within 120 s"),
]


def _local_report() -> Report:
    return diagnose_text(load_database(), "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB.\n")


def _report() -> Report:
    report = _local_report()
    report.nodes = NODES
    return report


@pytest.mark.parametrize("fmt", [Format.text, Format.markdown])
def test_nodes_and_how_to_fetch_the_missing_logs(fmt: Format) -> None:
    out = io.StringIO()
    emit_report(_report(), fmt, out)
    text = " ".join(out.getvalue().split())
    assert "Ray nodes" in text and "10.0.0.1 (head-0) · head" in text
    assert "40 file(s) in 1.5 s from /tmp/ray/session_1/logs" in text
    # a dead node: Ray's reason, then where its logs stay and how to copy them
    assert "scp -r 10.0.0.2:/tmp/ray/session_1/logs ./10.0.0.2/" in text
    # the log folder of a node that never answered is not known: Ray's default one
    assert "scp -r 10.0.0.3:/tmp/ray/session_latest/logs ./10.0.0.3/" in text


def test_nodes_in_json() -> None:
    out = io.StringIO()
    emit_report(_report(), Format.json, out)
    nodes = json.loads(out.getvalue())["nodes"]
    assert [n["state"] for n in nodes] == ["scanned", "dead", "unreachable"]
    assert set(nodes[0]) == {"node_id", "ip", "hostname", "head", "state", "reason", "log_dir", "files", "seconds"}


def test_no_nodes_key_for_local_files() -> None:
    out = io.StringIO()
    emit_report(_local_report(), Format.json, out)
    assert "nodes" not in json.loads(out.getvalue())


def test_the_database_sent_to_the_nodes_diagnoses_as_the_local_one() -> None:
    # --ray sends each node the compiled database (match/portable.py) through pickle, as Ray does
    db = load_database()
    again = rebuild(pickle.loads(pickle.dumps(portable(db))))
    assert [cs.sig.id for cs in again.signatures] == [cs.sig.id for cs in db.signatures]
    for sample in SAMPLES:
        text = sample.read_text(encoding="utf-8", errors="replace")
        expected, got = diagnose_text(db, text), diagnose_text(again, text)
        assert [(f.sig.id, f.count, f.ranks) for f in got.findings] == \
            [(f.sig.id, f.count, f.ranks) for f in expected.findings], sample
