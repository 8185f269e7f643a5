"""Layer 2: every labelled case under sample_logs/ runs through the real CLI path.

Each case is `NAME.expected.yaml` beside its input. `UPDATE_EXPECTED=1 python -m diagnoser.eval
sample_logs/` re-blesses; the diff is the review. The evaluation must be perfect on these cases.
"""

from __future__ import annotations

import pytest

from diagnoser.eval import Case, Outcome, evaluate, find_cases, run_case, table

from .conftest import SAMPLES

CASES = find_cases(SAMPLES)
_OUTCOMES: dict[str, Outcome] = {}


def outcome_of(case: Case) -> Outcome:
    key = str(case.expected_path)
    if key not in _OUTCOMES:
        _OUTCOMES[key] = run_case(case)
    return _OUTCOMES[key]


@pytest.mark.parametrize("case", CASES, ids=[str(c.expected_path.relative_to(SAMPLES)).replace(".expected.yaml", "")
                                             for c in CASES])
def test_sample(case) -> None:  # type: ignore[no-untyped-def]
    outcome = outcome_of(case)
    assert not outcome.problems, f"{case.input}: " + "; ".join(outcome.problems)


def test_every_case_names_its_provenance() -> None:
    for case in CASES:
        assert str(case.expected.get("provenance", "")).strip(), f"{case.expected_path}: say where the text came from"
        assert "root_cause" in case.expected, f"{case.expected_path}: root_cause (an id or null) is required"


def test_evaluation_is_perfect_on_samples() -> None:
    metrics = evaluate([outcome_of(c) for c in CASES])
    assert metrics.top1 == 1.0 and metrics.recall == 1.0 and metrics.fp_rate == 0.0, table(metrics)
