"""Layer 1: every example of every signature is a test (ids like `cuda-oom.match.0`).

A `match` example must match its own signature alone, and through the whole database rank that
signature first; a `no_match` example must not match it. Adding a signature adds its tests.
"""

from __future__ import annotations

import pytest

from diagnoser.match.database import load_database
from diagnoser.match.schema import Example
from diagnoser.modes.batch import diagnose_text
from diagnoser.modes.pipeline import Pipeline

DB = load_database()
CASES: list[tuple[str, str, int, Example]] = []
for _cs in DB.signatures:
    CASES += [(_cs.sig.id, "match", i, ex) for i, ex in enumerate(_cs.sig.examples_match)]
    CASES += [(_cs.sig.id, "no_match", i, ex) for i, ex in enumerate(_cs.sig.examples_no_match)]


@pytest.mark.parametrize(("sig_id", "kind", "index", "example"), CASES,
                         ids=[f"{c[0]}.{c[1]}.{c[2]}" for c in CASES])
def test_example(sig_id: str, kind: str, index: int, example: Example) -> None:
    alone = Pipeline(DB.only([sig_id])).scan_lines(example.text.splitlines())
    if kind == "no_match":
        assert sig_id not in alone.findings, f"{sig_id} matched a no_match example"
        return
    assert sig_id in alone.findings, f"{sig_id} did not match its own example"
    found = alone.findings[sig_id]
    for name, value in example.captures.items():
        assert found.captures.get(name) == value, f"capture {name}: {found.captures.get(name)!r} != {value!r}"
    report = diagnose_text(DB, example.text)
    ranked = [f.sig.id for f in report.findings]
    if DB.get(sig_id).sig.only_with_failure:  # type: ignore[union-attr]
        # a meta signature speaks beside the failure it explains, never instead of it
        assert sig_id in ranked, f"through the whole database {sig_id} is missing: {ranked[:3]}"
    else:
        assert ranked and ranked[0] == sig_id, f"through the whole database the first finding is {ranked[:3]}"
    remedy = report.remedy[sig_id]
    for snippet in example.remedy_contains:
        assert snippet in remedy, f"remedy lacks {snippet!r}:\n{remedy}"
    zh = diagnose_text(DB, example.text, "zh")
    assert zh.remedy[sig_id].strip() and zh.why[sig_id].strip()
