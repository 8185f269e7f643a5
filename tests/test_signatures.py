"""Layer 1: every example of every signature is a test (ids like `cuda-oom.match.0`).

A `match` example must match its own signature alone, and through the whole database rank that
signature first; a `no_match` example must not match it. Adding a signature adds its tests. The checks
are modes/examples.py's, the same that `diagnose check-signatures` runs on a user's folder.
"""

from __future__ import annotations

import pytest

from diagnoser.match.database import load_database
from diagnoser.modes.examples import ExampleCase, check_example, example_cases

DB = load_database()
CASES = example_cases(DB)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_example(case: ExampleCase) -> None:
    problem = check_example(DB, case)
    assert problem is None, problem
