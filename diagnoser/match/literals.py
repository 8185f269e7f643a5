"""Read a regex's structure: the literal text every match must contain, and risky nesting.

Both come from the standard library's regex parser (the `regex` package's syntax is a superset;
a pattern the parser cannot read simply gets no literal gate and no static check).
"""

from __future__ import annotations

import importlib
import re
from dataclasses import dataclass
from typing import Any

from ..search.rarity import rarest

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
    """Literals of which at least one occurs in every line the pattern can match (case-sensitive).

    For a case-insensitive pattern (`fold`), each literal stands in the spellings people print: as
    written in the pattern, lower case, UPPER CASE and Capitalised. So `(?i)cuda out of memory` can
    match "CUDA OUT OF MEMORY" but not "cUdA out of memory"; both scan paths agree on that.

    `literals` is the set ordinary lines hold least (search/rarity.py): the fast search looks for it.
    `also`: the other sets the pattern requires (one literal of each must be in the line too); they
    are checked only on the lines the gate found, so a common word required beside a rare one costs
    nothing. A case-insensitive pattern has none (its text may be in any mix of cases).
    """

    literals: tuple[str, ...]
    fold: bool
    also: tuple[tuple[str, ...], ...] = ()


def spellings(literal: str) -> set[str]:
    return {literal, literal.lower(), literal.upper(), literal[:1].upper() + literal[1:].lower()}


_NAMED_GROUP = re.compile(r"\(\?P<[A-Za-z_][A-Za-z0-9_]*>")
_BACKREF = re.compile(r"\(\?P=[A-Za-z_][A-Za-z0-9_]*\)")


def _parse(pattern: str) -> Any | None:
    try:
        return _parser.parse(pattern)
    except Exception:
        pass  # the stdlib parser lacks some syntax of the regex package
    # The regex package allows a group name twice (in alternatives); names do not change which
    # literals are required, so read the pattern again without them.
    plain = _BACKREF.sub("", _NAMED_GROUP.sub("(?:", pattern))
    try:
        return _parser.parse(plain)
    except Exception:
        return None  # other syntax it lacks: no gate, no static check


MAX_ALSO = 3  # required sets checked beside the gate


def required_gate(pattern: str, declared: tuple[str, ...] = ()) -> Gate | None:
    """The gate for `pattern`, or None when no literal of MIN_GATE characters is required.

    Every set of literals the pattern requires is a candidate; the rarest becomes the gate (unless the
    signature `declared` its own), up to MAX_ALSO others are checked beside it."""
    parsed = _parse(pattern)
    if parsed is None:
        return Gate(tuple(sorted(set(declared))), False) if declared else None
    flags = parsed.state.flags
    fold = bool(flags & re.IGNORECASE) or _has_scoped_ignorecase(parsed)
    found: list[list[str]] = []
    _required(parsed, found)
    sets: list[tuple[str, ...]] = []
    for alts in found:
        if alts and min(len(a) for a in alts) >= MIN_GATE and tuple(alts) not in sets:
            sets.append(tuple(alts))
    if declared:
        gate: tuple[str, ...] = tuple(sorted(set(declared)))
    elif not sets:
        return None
    else:
        gate = sets.pop(rarest([[v for a in alts for v in spellings(a)] if fold else alts for alts in sets]))
        if fold:
            gate = tuple(sorted({v for a in gate for v in spellings(a)}))
    if fold:
        return Gate(gate, fold)
    also = sorted((s for s in sets if not set(s) & set(gate)), key=lambda s: -min(len(a) for a in s))
    return Gate(gate, fold, tuple(also[:MAX_ALSO]))


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


MAX_ALTS = 16  # alternatives a literal set may grow to by expanding small alternations
MAX_CLASS = 6  # characters a class may have to be expanded ([:=] yes, [a-z] no)
_NEGATE = getattr(_constants, "NEGATE", None)


def _exact(sub: Any) -> set[str] | None:
    """The finite set of strings `sub` can match, when it is small and made of literals only."""
    out = {""}
    for op, av in sub:
        item = _exact_item(op, av)
        if item is None:
            return None
        out = {a + b for a in out for b in item}
        if len(out) > MAX_ALTS:
            return None
    return out


def _exact_item(op: Any, av: Any) -> set[str] | None:
    if op is _LITERAL:
        return {chr(av)}
    if op is _IN:
        if len(av) > MAX_CLASS or any(o is not _LITERAL for o, _v in av):
            return None  # ranges, categories, negation: too many
        return {chr(v) for _o, v in av}
    if op is _SUBPATTERN:
        return _exact(av[-1])
    if op is _BRANCH:
        found: set[str] = set()
        for branch in av[1]:
            item = _exact(branch)
            if item is None:
                return None
            found |= item
        return found if len(found) <= MAX_ALTS else None
    if op in _REPEATS and av[0] == 0 and av[1] == 1:  # x?
        item = _exact(av[2])
        return None if item is None else item | {""}
    if op in _ZERO_WIDTH:
        return {""}
    return None


def _required(sub: Any, found: list[list[str]] | None = None) -> list[str] | None:
    """Alternative literals, one of which every match of `sub` contains (None: none known); the longest
    such set is returned, and every one is added to `found` when given.

    Runs of literals are joined across small alternations and classes, by cross product:
    `loss[:=] ?nan` requires one of "loss:nan", "loss: nan", "loss=nan", "loss= nan". A run goes on
    with the first copies of a repeated literal (`load \\.{3,}` requires "load ...").
    """
    best: list[str] | None = None
    run: set[str] = {""}

    def consider(candidate: list[str] | set[str] | None) -> None:
        nonlocal best
        if candidate and all(candidate) and found is not None:
            found.append(sorted(candidate))
        if candidate and all(candidate) and _score(list(candidate)) > _score(best):
            best = sorted(candidate)

    def flush() -> None:
        nonlocal run
        if run != {""}:
            consider(run)
        run = {""}

    for op, av in sub:
        if op in _ZERO_WIDTH:
            continue  # anchors and look-arounds consume nothing: the run goes on across them
        item = _exact_item(op, av)
        if item is not None:
            grown = {a + b for a in run for b in item}
            if len(grown) <= MAX_ALTS:
                run = grown
                continue
            flush()
            run = item if "" not in item else {""}
            continue
        if op in _REPEATS and av[0] >= 1:
            item = _exact(av[2])
            if item is not None and "" not in item and len(item) == 1:
                # x{3,}: the run goes on with three x, then ends (more x may follow)
                grown = {a + next(iter(item)) * min(av[0], 8) for a in run}
                run = grown
                flush()
                continue
        flush()
        if op is _SUBPATTERN:
            consider(_required(av[-1], found))
        elif _ATOMIC is not None and op is _ATOMIC:
            consider(_required(av, found))
        elif op is _BRANCH:
            branches = [_required(b) for b in av[1]]
            if all(branches):
                consider({lit for b in branches if b for lit in b})
        elif op in _REPEATS and av[0] >= 1:
            consider(_required(av[2], found if av[0] >= 1 else None))
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

