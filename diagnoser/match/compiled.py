"""The compiled records of a signature database: its rules, conditions and facts, each regex compiled on first use.

A database read from the on-disk cache (cache.py) was validated when the cache was written; its regexes are
compiled only when a line first reaches them, so a run pays for the few it needs. The cache also holds each
regex's compiled form as the `regex` module's own pickling support describes it (plain values: the pattern, its
flags, its compiled code as bytes, its group names); a regex it holds is made from that form in about 1/50 of the
time its parser takes (lazyre.compile_known), and compiled from its text when it holds none.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

import regex

from ..lazyre import compile_known, packed_form
from .literals import Gate
from .schema import Condition, Signature


class LazyPattern:
    """A regex compiled the first time it is used."""

    __slots__ = ("_compiled", "pattern")

    def __init__(self, pattern: str, compiled: regex.Pattern[str] | None = None) -> None:
        self.pattern = pattern
        self._compiled = compiled

    @property
    def compiled(self) -> regex.Pattern[str]:
        if self._compiled is None:
            self._compiled = compile_known(self.pattern)
        return self._compiled

    def search(self, text: str, timeout: float | None = None) -> regex.Match[str] | None:
        return self.compiled.search(text, timeout=timeout)

    @property
    def groupindex(self) -> dict[str, int]:
        return dict(self.compiled.groupindex)


def regex_forms(lazy: Iterable[LazyPattern], texts: Iterable[str]) -> dict[str, bytes]:
    """The compiled forms of these regexes (compiled now where they were not yet), packed, by pattern."""
    out: dict[str, bytes] = {}
    for pattern, compiled in (*((p.pattern, p) for p in lazy), *((t, None) for t in texts)):
        if pattern not in out:
            form = packed_form(compiled.compiled if compiled is not None else compile_known(pattern))
            if form is not None:
                out[pattern] = form
    return out


@dataclass(frozen=True, slots=True)
class CompiledCondition:
    """A signature's condition with its regex (compiled on first use) and literal gate."""

    cond: Condition
    pattern: LazyPattern
    gate: Gate | None


@dataclass(frozen=True, slots=True)
class Rule:
    """One `match.any` regex of a signature, with its literal gate and the conditions a hit must meet
    (the signature's own `match.all` / `match.not`, then this pattern's)."""

    sig_index: int
    pattern: LazyPattern
    gate: Gate | None
    where: str  # e.g. "match.any[1]", for warnings
    all: tuple[CompiledCondition, ...] = ()
    not_: tuple[CompiledCondition, ...] = ()
    # how many lines after a hit must be seen before its window conditions can be decided (read on every line fed
    # while a hit waits: worked out once)
    window: int = field(init=False, default=0)

    def __post_init__(self) -> None:
        conds = (*self.all, *self.not_)
        object.__setattr__(self, "window", max((c.cond.lines for c in conds if c.cond.scope == "window"), default=0))

    @property
    def whole_file(self) -> bool:
        return any(c.cond.scope == "file" for c in (*self.all, *self.not_))


@dataclass(frozen=True, slots=True)
class CompiledSignature:
    """A signature ready to match: its rules and conditions, compiled."""

    sig: Signature
    index: int
    rules: tuple[Rule, ...]
    all: tuple[CompiledCondition, ...]
    not_: tuple[CompiledCondition, ...]

    @property
    def window(self) -> int:
        return max((r.window for r in self.rules), default=0)

    def conditions(self) -> tuple[CompiledCondition, ...]:
        """Every condition of the signature and of its patterns."""
        return (*self.all, *self.not_, *(c for r in self.rules for c in (*r.all, *r.not_)))


@dataclass(frozen=True, slots=True)
class FactRule:
    """A fact to read from the logs: its regex, gate and owner."""

    name: str
    pattern: LazyPattern
    gate: Gate | None
    owner: str  # id of the signature that declared it, or "job" for the built-in observations
    mode: str = "first"  # keep the first value seen, or the "last" (checkpoints)
    head_only: bool = False  # read only in the first FACT_LINES lines of a file (config dumps live there)
    job: bool = False  # a built-in observation of the job's shape: read only in the first HEAD_LINES lines
