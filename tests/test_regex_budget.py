"""Every regex a line meets is bounded in time: the reader's own on any line (no backtracking that grows with the
square of a line), and a signature's per line (the timeout) and in all (its budget of slow searches)."""

from __future__ import annotations

import importlib
import pkgutil
import re
from pathlib import Path

import pytest
import regex

import diagnoser.read
from diagnoser import lazyre
from diagnoser.match.database import load_database
from diagnoser.match.matcher import Matcher
from diagnoser.read import prefixes
from diagnoser.read.normalize import Normalizer

from .test_hardening import GOOD

LINE = 65536  # what a reader keeps of one physical line
# one character (or two) repeated over a whole line: where an unbounded repeat followed by something that fails
# restarts at every position. "7" * 64 KB ending in "\r" took 203 s in the progress-bar regex.
HOSTILE = [c * LINE for c in ("7", "1.", " ", "[", "[1", "|", "|1", "a", "a:", "\x1b[", "(pid=", "0x", "1:", "%|",
                               "1%|", "| 1/", "-", "/", "E", ":", "1 ", "\t", "a=", "[rank1]:", "2024-01-01 ")]


def _reader_patterns() -> list[tuple[str, regex.Pattern[str]]]:
    out = []
    for info in pkgutil.iter_modules(diagnoser.read.__path__):
        module = importlib.import_module(f"diagnoser.read.{info.name}")
        for name, value in vars(module).items():
            if isinstance(value, lazyre._Lazy):  # compiled on first use (issue 13): checked all the same
                value = value.compiled()
            if isinstance(value, regex.Pattern) and isinstance(value.pattern, str):
                out.append((f"{module.__name__}.{name}", value))
    return out


@pytest.mark.parametrize(("name", "pattern"), _reader_patterns())
def test_the_readers_regexes_are_linear_on_hostile_lines(name: str, pattern: regex.Pattern[str]) -> None:
    for text in HOSTILE:
        for line in (text[:LINE], text[:LINE - 1] + "\r"):
            try:
                pattern.search(line, timeout=10.0)  # a linear search takes milliseconds; a quadratic one minutes
            except TimeoutError:
                pytest.fail(f"{name} backtracks on {line[:12]!r}... ({len(line)} characters)")


def test_the_normaliser_on_a_line_of_digits_ending_in_cr() -> None:
    assert all(isinstance(x.text, str) for x in Normalizer("x.log", 0).lines(1, "7" * (LINE - 1) + "\r"))
    assert not [p for p in (prefixes.PROGRESS_RE,) if re.search(r"\[\\d\.\]\+", p.pattern)]


SLOW = GOOD.replace("'MyFrameworkError: (?P<what>.+)'", "'MyFrameworkError: (?P<what>.+)', 'Slow[a-z]+z'").replace(
    "match: ['MyFrameworkError: x']", "match: ['MyFrameworkError: x', 'Slowaz']")


def test_a_regex_that_eats_its_budget_is_switched_off_with_one_warning(tmp_path: Path) -> None:
    folder = tmp_path / "sigs"
    folder.mkdir()
    (folder / "my-sig.yaml").write_text(SLOW, encoding="utf-8")
    db = load_database([folder])
    now = [0.0]

    def clock() -> float:  # each search "takes" 0.05 s: under the 0.25 s timeout, so no single line gives up
        now[0] += 0.05
        return now[0]

    warnings: list[str] = []
    matcher = Matcher(db, warnings.append, clock=clock, cpu_clock=clock)
    line = "Slow" + "a" * 100
    for _ in range(1500):
        matcher.rules_for(line, db.search.line_literals(line))
    budget = [w for w in warnings if "switched off" in w]
    assert len(budget) == 1 and "my-sig" in budget[0], warnings
    # the regex is off after 2 s of slow searches: 40 lines, not 1,500
    assert len(matcher._disabled) == 1 and now[0] < 1500 * 0.1
    # a search only the wall clock calls slow (the thread was preempted) does not count
    calm = Matcher(db, warnings.append, clock=clock, cpu_clock=lambda: 0.0)
    for _ in range(1500):
        assert calm.rules_for(line, db.search.line_literals(line)) == [] and not calm._disabled


def test_an_ordinary_regex_is_never_switched_off(tmp_path: Path) -> None:
    folder = tmp_path / "sigs"
    folder.mkdir()
    (folder / "my-sig.yaml").write_text(SLOW, encoding="utf-8")
    db = load_database([folder])
    warnings: list[str] = []
    matcher = Matcher(db, warnings.append)
    line = "MyFrameworkError: boom"
    for _ in range(2000):
        assert matcher.rules_for(line, db.search.line_literals(line))
    assert not warnings
