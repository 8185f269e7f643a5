"""Match one cleaned line against the database: literal prefilter, then each regex with a timeout."""

from __future__ import annotations

import contextlib
import time
from collections.abc import Callable

import regex

from ..i18n import Msg
from .database import CompiledCondition, Database, FactRule, LazyPattern, Rule
from .metricwatch import metric_watch

REGEX_TIMEOUT = 0.25  # seconds one regex may spend on one line
MAX_TIMEOUTS = 3  # after this many, a regex is switched off for the rest of the run
# The time a regex may spend in all: a search longer than SLOW_SEARCH counts toward its SLOW_BUDGET, and a regex
# that has spent its budget is switched off. A user regex costing 0.1 s a line (under the timeout) made 1,500
# lines take 187 s with no warning; an ordinary one spends microseconds a line and never counts. What counts is the
# thread's CPU time, not the wall clock: on a loaded machine a search preempted midway is not slow (a wall-clock
# budget switched cuda-oom off under a load of 12 and lost ranks). The wall clock is cheap and read on every
# search; a search it calls slow is run again under the CPU clock (a syscall), and that time is what counts.
SLOW_SEARCH = 0.01
SLOW_BUDGET = 2.0


class Matcher:
    """Stateless per line, except for the once-only warnings about slow regexes."""

    def __init__(self, db: Database, warn: Callable[[str], None] | None = None,
                 timeout: float = REGEX_TIMEOUT, budget: float = SLOW_BUDGET,
                 clock: Callable[[], float] = time.perf_counter,
                 cpu_clock: Callable[[], float] = time.thread_time) -> None:
        self.db = db
        self.timeout = timeout
        self.budget = budget
        self._clock = clock
        self._cpu_clock = cpu_clock
        self._slow: dict[int, tuple[float, int]] = {}  # regex -> seconds spent in slow searches, their number
        self._warn = warn or (lambda _m: None)
        self._rules = db.rules
        self._facts = db.facts
        self._rule_index = db.search.rules
        self._fact_index = db.search.facts
        self._late_index = db.search.late_facts
        self._timeouts: dict[int, int] = {}
        self._disabled: set[int] = set()
        self.metrics = metric_watch(cs.sig for cs in db.signatures)  # the health rules' clauses, or None

    def rules_for(self, text: str, found: frozenset[str]) -> list[tuple[Rule, dict[str, str]]]:
        """Each signature's first rule that matches `text`, with its named captures.

        `found`: the gate literals of the physical line as read (SearchIndex.line_literals). A literal split
        by a colour code is in the cleaned text but not in the line as read; such a line is not a
        candidate, which keeps the byte-level fast path and this one in agreement.
        """
        out: list[tuple[Rule, dict[str, str]]] = []
        done: set[int] = set()
        for i in self._rule_index.candidates(text, found):
            rule = self._rules[i]
            if rule.sig_index in done:
                continue
            m = self._search(rule.pattern, text, id(rule), self._where(rule))
            if m is not None:
                done.add(rule.sig_index)
                out.append((rule, _captures(m)))
        return out

    def facts_for(self, text: str, found: frozenset[str],
                  late: bool = False) -> list[tuple[FactRule, str, dict[str, str]]]:
        """Facts on this line: (rule, its value, every named group it captured). `late`: past the fact
        region, where only the facts read everywhere (checkpoints) are looked for."""
        out: list[tuple[FactRule, str, dict[str, str]]] = []
        index = self._late_index if late else self._fact_index
        for i in index.candidates(text, found):
            fact = self._facts[i]
            m = self._search(fact.pattern, text, id(fact), f"{self._path(fact.owner)}: facts.{fact.name}")
            if m is None:
                continue
            groups = _captures(m)
            value = groups.get(fact.name) or m.group(0).strip()
            out.append((fact, value, groups))
        return out

    def condition(self, cond: CompiledCondition, text: str, owner: str) -> dict[str, str] | None:
        gate = cond.gate
        if gate is not None and not any(lit in text for lit in gate.literals):
            return None
        m = self._search(cond.pattern, text, id(cond), f"{self._path(owner)}: a match condition")
        return _captures(m) if m is not None else None

    def _search(self, pattern: LazyPattern, text: str, key: int, where: str) -> regex.Match[str] | None:
        if key in self._disabled:
            return None
        start = self._clock()
        try:
            found = pattern.search(text, timeout=self.timeout)
        except TimeoutError:
            count = self._timeouts.get(key, 0) + 1
            self._timeouts[key] = count
            if count == 1:
                self._warn(Msg("warn_regex_slow", where=where, seconds=f"{self.timeout:g}", chars=len(text)))
            if count >= MAX_TIMEOUTS:
                self._disabled.add(key)
                self._warn(Msg("warn_regex_off", where=where, n=count))
            return None
        if self._clock() - start >= SLOW_SEARCH:
            self._count_slow(pattern, text, key, where)
        return found

    def _count_slow(self, pattern: LazyPattern, text: str, key: int, where: str) -> None:
        start = self._cpu_clock()
        with contextlib.suppress(TimeoutError):
            pattern.search(text, timeout=self.timeout)
        spent = self._cpu_clock() - start
        if spent >= SLOW_SEARCH:
            total, lines = self._slow.get(key, (0.0, 0))
            total, lines = total + spent, lines + 1
            self._slow[key] = (total, lines)
            if total >= self.budget:
                self._disabled.add(key)
                self._warn(Msg("warn_regex_budget", where=where, seconds=f"{total:.1f}", n=lines))

    def _where(self, rule: Rule) -> str:
        return f"{self.db.signatures[rule.sig_index].sig.path}: {rule.where}"

    def _path(self, sig_id: str) -> str:
        cs = self.db.get(sig_id)
        return cs.sig.path if cs is not None else sig_id


def _captures(m: regex.Match[str]) -> dict[str, str]:
    return {k: v.strip() for k, v in m.groupdict().items() if v is not None and v.strip()}
