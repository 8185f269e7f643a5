"""Read a regex's structure: the literal text every match must contain, and risky nesting.

Both come from the standard library's regex parser (the `regex` package's syntax is a superset;
a pattern the parser cannot read simply gets no literal gate and no static check).
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from typing import Any

try:  # Python 3.11+
    _parser: Any = importlib.import_module("re._parser")
    _constants: Any = importlib.import_module("re._constants")
except ImportError:  # Python 3.10
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        _parser = importlib.import_module("sre_parse")
        _constants = importlib.import_module("sre_constants")

_LITERAL = _constants.LITERAL
_SUBPATTERN = _constants.SUBPATTERN
_BRANCH = _constants.BRANCH
_IN = _constants.IN
_REPEATS = tuple(
    getattr(_constants, name) for name in ("MAX_REPEAT", "MIN_REPEAT", "POSSESSIVE_REPEAT") if hasattr(_constants, name)
)
_ATOMIC = getattr(_constants, "ATOMIC_GROUP", None)
_MAXREPEAT = _constants.MAXREPEAT
_ZERO_WIDTH = tuple(
    getattr(_constants, name) for name in ("AT", "ASSERT", "ASSERT_NOT") if hasattr(_constants, name)
)

MIN_GATE = 3  # a shorter literal filters too little to be worth a check


@dataclass(frozen=True, slots=True)
class Gate:
    """Literals of which at least one occurs in every line the pattern can match.

    `fold` means the literals are lower-cased and must be looked for in the lower-cased line.
    """

    literals: tuple[str, ...]
    fold: bool


def _parse(pattern: str) -> Any | None:
    try:
        return _parser.parse(pattern)
    except Exception:
        return None


def required_gate(pattern: str) -> Gate | None:
    """The gate for `pattern`, or None when no literal of MIN_GATE characters is required."""
    parsed = _parse(pattern)
    if parsed is None:
        return None
    flags = parsed.state.flags
    fold = bool(flags & re.IGNORECASE) or _has_scoped_ignorecase(parsed)
    alts = _required(parsed)
    if not alts or min(len(a) for a in alts) < MIN_GATE:
        return None
    literals = sorted({a.lower() for a in alts} if fold else set(alts))
    return Gate(tuple(literals), fold)


def _has_scoped_ignorecase(sub: Any) -> bool:
    for op, av in sub:
        if op is _SUBPATTERN:
            add_flags = av[1] if len(av) == 4 else 0
            if add_flags & re.IGNORECASE or _has_scoped_ignorecase(av[-1]):
                return True
        elif op is _BRANCH:
            if any(_has_scoped_ignorecase(b) for b in av[1]):
                return True
        elif op in _REPEATS:
            if _has_scoped_ignorecase(av[2]):
                return True
        elif _ATOMIC is not None and op is _ATOMIC and _has_scoped_ignorecase(av):
            return True
    return False


def _score(alts: list[str] | None) -> int:
    return min(len(a) for a in alts) if alts else 0


def _required(sub: Any) -> list[str] | None:
    """Alternative literals, one of which every match of `sub` contains (None: none known)."""
    best: list[str] | None = None
    run: list[str] = []

    def consider(candidate: list[str] | None) -> None:
        nonlocal best
        if candidate and _score(candidate) > _score(best):
            best = candidate

    def flush() -> None:
        if run:
            consider(["".join(run)])
            run.clear()

    for op, av in sub:
        if op is _LITERAL:
            run.append(chr(av))
            continue
        if op is _IN and len(av) == 1 and av[0][0] is _LITERAL:
            run.append(chr(av[0][1]))
            continue
        if op in _ZERO_WIDTH:
            continue  # anchors and look-arounds consume nothing: the run goes on across them
        flush()
        if op is _SUBPATTERN:
            consider(_required(av[-1]))
        elif _ATOMIC is not None and op is _ATOMIC:
            consider(_required(av))
        elif op is _BRANCH:
            branches = [_required(b) for b in av[1]]
            if all(branches):
                consider(sorted({lit for b in branches if b for lit in b}))
        elif op in _REPEATS and av[0] >= 1:
            consider(_required(av[2]))
    flush()
    return best


def nesting_problem(pattern: str) -> str | None:
    """A message when `pattern` nests unbounded quantifiers the way that backtracks exponentially.

    The classic shapes are `(a+)+`, `(a*)*`, `(\\w+\\s?)*`: an unbounded repeat whose body, once the
    optional parts are dropped, is itself a single unbounded repeat. `(?:\\s+\\w+)*` is fine.
    """
    parsed = _parse(pattern)
    if parsed is None:
        return None
    return _nesting(parsed)


def _is_unbounded_repeat(op: Any, av: Any) -> bool:
    return op in _REPEATS and av[1] == _MAXREPEAT


def _mandatory_items(sub: Any) -> list[tuple[Any, Any]]:
    items = []
    for op, av in sub:
        if op in _REPEATS and av[0] == 0 and av[1] != _MAXREPEAT:
            continue  # x? and x{0,n} are optional
        if op in _ZERO_WIDTH:
            continue
        items.append((op, av))
    return items


def _body_is_single_unbounded(sub: Any) -> bool:
    items = _mandatory_items(sub)
    if len(items) != 1:
        return False
    op, av = items[0]
    if _is_unbounded_repeat(op, av):
        return True
    if op is _SUBPATTERN:
        return _body_is_single_unbounded(av[-1])
    if op is _BRANCH:
        return any(_body_is_single_unbounded(b) for b in av[1])
    return False


def _nesting(sub: Any) -> str | None:
    for op, av in sub:
        if _is_unbounded_repeat(op, av):
            if _body_is_single_unbounded(av[2]):
                return "nested unbounded quantifier such as (a+)+ backtracks exponentially on a long line"
            found = _nesting(av[2])
        elif op in _REPEATS:
            found = _nesting(av[2])
        elif op is _SUBPATTERN:
            found = _nesting(av[-1])
        elif op is _BRANCH:
            found = next((p for p in (_nesting(b) for b in av[1]) if p), None)
        elif _ATOMIC is not None and op is _ATOMIC:
            found = _nesting(av)
        else:
            found = None
        if found:
            return found
    return None
