"""The compiled records of a signature database: its rules, conditions and facts, each regex compiled on first use.

A database read from the on-disk cache (cache.py) was validated when the cache was written; its regexes are
compiled only when a line first reaches them, so a run pays for the few it needs. The cache also holds each
regex's compiled form as the `regex` module's own pickling support describes it (plain values: the pattern, its
flags, its compiled code as bytes, its group names); a regex it holds is made from that form in about 1/50 of the
time its parser takes (`regex_form`, `remember_forms`), and compiled from its text when it holds none.
"""

from __future__ import annotations

import copyreg
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from functools import cache
from typing import Any

import regex

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


# pattern -> its compiled form (regex_form), for the regexes of the database read from the cache (or sent by --ray)
_FORMS: dict[str, tuple[Any, ...]] = {}
_FORM_TYPES = (str, int, bytes, dict, dict, dict, list, int, tuple, int, int)  # regex's form, field by field


@cache
def _rebuilder() -> Callable[..., Any] | None:
    """What `regex`'s pickling support makes a pattern again with (its registered reducer's callable), or None."""
    reduce: Any = copyreg.dispatch_table.get(regex.Pattern)
    if reduce is None:
        return None
    try:
        made, _form = reduce(regex.compile("(?:)"))
    except (TypeError, ValueError):
        return None
    return made if callable(made) else None


def regex_form(compiled: regex.Pattern[str]) -> tuple[Any, ...] | None:
    """The plain values `regex`'s pickling support makes `compiled` again from, or None when this version of
    `regex` describes it otherwise (then the pattern is compiled from its text, as without a cache)."""
    reduce: Any = copyreg.dispatch_table.get(type(compiled))
    made = _rebuilder()
    if reduce is None or made is None:
        return None
    try:
        again, form = reduce(compiled)
    except (TypeError, ValueError):
        return None
    return form if again is made and _well_formed(compiled.pattern, form) else None


def _well_formed(pattern: str, form: Any) -> bool:
    return (type(form) is tuple and len(form) == len(_FORM_TYPES) and form[0] == pattern
            and all(type(v) is t for v, t in zip(form, _FORM_TYPES, strict=True)))


def regex_forms(lazy: Iterable[LazyPattern], texts: Iterable[str]) -> dict[str, tuple[Any, ...]]:
    """The compiled forms of these regexes (compiled now where they were not yet), by pattern."""
    out: dict[str, tuple[Any, ...]] = {}
    for pattern, compiled in (*((p.pattern, p) for p in lazy), *((t, None) for t in texts)):
        if pattern not in out:
            form = regex_form(compiled.compiled if compiled is not None else compile_known(pattern))
            if form is not None:
                out[pattern] = form
    return out


def remember_forms(forms: dict[str, Any]) -> None:
    """The compiled forms of a database's regexes (pattern -> regex_form), for compile_known (which checks the
    one it uses: a form of another shape is not used, its pattern is compiled from its text)."""
    _FORMS.update(forms)


def compile_known(pattern: str) -> regex.Pattern[str]:
    """`regex.compile(pattern)`: made from its remembered compiled form when there is one (what unpickling a
    pattern does), else compiled from its text; a form the `regex` module refuses is compiled from its text."""
    form = _FORMS.get(pattern)
    made = _rebuilder() if form is not None and _well_formed(pattern, form) else None
    if made is not None:
        try:
            compiled = made(*form)  # type: ignore[misc]
        except (TypeError, ValueError, RuntimeError, OverflowError, MemoryError, regex.error):
            compiled = None
        if isinstance(compiled, regex.Pattern) and compiled.pattern == pattern:
            return compiled
    return regex.compile(pattern)


@dataclass(frozen=True, slots=True)
class CompiledCondition:
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

    @property
    def window(self) -> int:
        """How many lines after a hit must be seen before its window conditions can be decided."""
        return max((c.cond.lines for c in (*self.all, *self.not_) if c.cond.scope == "window"), default=0)

    @property
    def whole_file(self) -> bool:
        return any(c.cond.scope == "file" for c in (*self.all, *self.not_))


@dataclass(frozen=True, slots=True)
class CompiledSignature:
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
    name: str
    pattern: LazyPattern
    gate: Gate | None
    owner: str  # id of the signature that declared it, or "job" for the built-in observations
    mode: str = "first"  # keep the first value seen, or the "last" (checkpoints)
    head_only: bool = False  # read only in the first FACT_LINES lines of a file (config dumps live there)
    job: bool = False  # a built-in observation of the job's shape: read only in the first HEAD_LINES lines
