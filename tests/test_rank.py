"""Ranking: root > cascade > confirmation > teardown > advice, then the earliest, then severity; root cause
selection."""

from __future__ import annotations

from diagnoser.judge.findings import Finding, Location
from diagnoser.judge.rank import compact_ranks, rank_findings, root_cause
from diagnoser.match.schema import Signature, Text
from diagnoser.modes.batch import diagnose_text


def sig(sig_id: str, kind: str, severity: str, role: str = "") -> Signature:
    t = Text("t", "t")
    return Signature(sig_id, t, kind, severity, "test", "investigate", (), (), False, ("x",), ((),), ((),), ((),), (), (),
                     (), t, (),
                     ("https://x",), (), (), (), (), "test.yaml", role=role)


def finding(s: Signature, line: int, ts: float | None = None, source_index: int = 0) -> Finding:
    loc = Location("a.log", line, ts=ts, source_index=source_index)
    return Finding(s, 1, loc, loc, {}, ())


def test_cause_beats_earlier_symptom() -> None:
    ranked = rank_findings([finding(sig("echo", "symptom", "error"), 1), finding(sig("real", "cause", "error"), 99)])
    assert [f.sig.id for f in ranked] == ["real", "echo"]
    assert root_cause(ranked) is ranked[0]


def test_earliest_initiating_error_wins_then_severity() -> None:
    a = finding(sig("a", "cause", "error"), 5)
    b = finding(sig("b", "cause", "fatal"), 50)
    c = finding(sig("c", "cause", "fatal"), 10)
    d = finding(sig("d", "cause", "error"), 10)
    assert [f.sig.id for f in rank_findings([a, b, c, d])] == ["a", "c", "d", "b"]


def test_role_order_and_defaults() -> None:
    kinds = {"cause": "root", "symptom": "cascade", "advisory": "advice"}
    for kind, role in kinds.items():
        assert sig("x", kind, "error").role == role
    teardown = finding(sig("teardown", "symptom", "info", "teardown"), 1)
    confirm = finding(sig("confirm", "symptom", "error", "confirmation"), 2)
    echo = finding(sig("echo", "symptom", "error"), 3)
    advice = finding(sig("advice", "advisory", "warning"), 0)
    root = finding(sig("root", "cause", "error"), 9)
    ranked = rank_findings([teardown, confirm, echo, advice, root])
    assert [f.sig.id for f in ranked] == ["root", "echo", "confirm", "teardown", "advice"]
    assert root_cause(ranked) is root
    assert root_cause(ranked[1:]) is None  # echoes, confirmations, teardown and advice are never the cause


def test_timestamps_order_across_files() -> None:
    late_in_first_file = finding(sig("x", "cause", "fatal"), 1, ts=200.0, source_index=0)
    early_in_second = finding(sig("y", "cause", "fatal"), 900, ts=100.0, source_index=1)
    assert rank_findings([late_in_first_file, early_in_second])[0].sig.id == "y"


def test_only_symptoms_give_no_root_cause() -> None:
    ranked = rank_findings([finding(sig("echo", "symptom", "error"), 1), finding(sig("adv", "advisory", "warning"), 1)])
    assert root_cause(ranked) is None


def test_warning_cause_is_not_a_root_cause() -> None:
    assert root_cause([finding(sig("w", "cause", "warning"), 1)]) is None


def test_compact_ranks() -> None:
    assert compact_ranks([0, 1, 2, 3, 5, 7, 8, 9]) == "0-3,5,7-9"
    assert compact_ranks([]) == ""
    assert compact_ranks(range(0, 100, 2)).endswith("(50 ranks)")


def test_same_signature_on_many_ranks_is_one_finding(db) -> None:  # type: ignore[no-untyped-def]
    lines = [f"[rank{r}]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU {r} has a "
             f"total capacity of 79.15 GiB of which 1.00 GiB is free." for r in range(8)]
    report = diagnose_text(db, "\n".join(lines))
    oom = [f for f in report.findings if f.sig.id == "cuda-oom"]
    assert len(oom) == 1 and oom[0].count == 8 and sorted(oom[0].ranks) == list(range(8))
    assert oom[0].first.rank == 0
