"""Regexes of the package's own code, compiled when a line first needs them (issue 13: start-up).

Compiling a `regex` pattern runs its parser in Python (about half a millisecond each here); the package holds a
hundred, and a short log uses a third of them. `lazy(pattern)` stands for `regex.compile(pattern)` and
`lazy_re(pattern)` for `re.compile(pattern)`: the same pattern, compiled with the same flags on its first use,
whose methods are then the compiled pattern's own (bound once, no wrapper in between on later calls).
tests/test_lazyre.py compiles every one of them, so a pattern that cannot compile still fails a test.

`compile_known` compiles a `regex` pattern (no flags) from its compiled form when the database cache gave one
(`remember_forms`: the plain values the `regex` module's own pickling support rebuilds a pattern from, about 1/50
of the time its parser takes; see match/cache.py): the signatures' regexes, the package's own `lazy` ones and
those `own` names (the cache keeps the forms of every pattern in OWN).
"""

from __future__ import annotations

import copyreg
import marshal
import re
from collections.abc import Callable
from functools import cache
from typing import Any, AnyStr, cast

import regex

# what the package's code reads of a compiled pattern (anything else is looked up on it each time)
_BOUND = ("search", "match", "fullmatch", "sub", "subn", "split", "findall", "finditer", "groupindex", "groups",
          "flags")
CREATED: list[_Lazy] = []  # every lazy pattern made, for the test that compiles them all
OWN: set[str] = set()  # the package's own `regex` patterns without flags, whose forms the database cache keeps


class _Lazy:
    __slots__ = ("_compile", "_flags", "_compiled", "pattern", *_BOUND)

    def __init__(self, compile_: Callable[..., Any], pattern: str | bytes, flags: int) -> None:
        self._compile = compile_
        self._flags = flags
        self._compiled: Any = None
        self.pattern = pattern
        CREATED.append(self)
        if compile_ is regex.compile and not flags and type(pattern) is str:
            OWN.add(pattern)

    def compiled(self) -> Any:
        """The compiled pattern (compiled now if it was not yet)."""
        if self._compiled is None:
            pattern = self.pattern
            known = self._compile is regex.compile and not self._flags and type(pattern) is str
            compiled = compile_known(pattern) if known else self._compile(pattern, self._flags)  # type: ignore[arg-type]
            for name in _BOUND:
                setattr(self, name, getattr(compiled, name))
            self._compiled = compiled
        return self._compiled

    def __getattr__(self, name: str) -> Any:  # only reached while a bound name is unset, or for other names
        if name.startswith("__"):
            raise AttributeError(name)
        return getattr(self.compiled(), name)

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self._compile, self.pattern, self._flags))

    def __repr__(self) -> str:
        return f"lazy({self.pattern!r})"


def lazy(pattern: str, flags: int = 0) -> regex.Pattern[str]:
    """`regex.compile(pattern, flags)`, compiled on first use."""
    return cast("regex.Pattern[str]", _Lazy(regex.compile, pattern, flags))


def lazy_re(pattern: AnyStr, flags: int = 0) -> re.Pattern[AnyStr]:
    """`re.compile(pattern, flags)`, compiled on first use."""
    return cast("re.Pattern[AnyStr]", _Lazy(re.compile, pattern, flags))


def own(pattern: str) -> str:
    """A pattern of the package's own, compiled elsewhere with compile_known: its form is kept in the cache too."""
    OWN.add(pattern)
    return pattern


# pattern -> its compiled form (regex_form) as marshal bytes, unpacked when the pattern is first compiled (unpacking
# all of them took 4.5 ms of each start), for the regexes of the database read from the cache (or sent by --ray)
_FORMS: dict[str, bytes] = {}
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


def packed_form(compiled: regex.Pattern[str]) -> bytes | None:
    """regex_form as marshal bytes (what the cache keeps), or None."""
    form = regex_form(compiled)
    return None if form is None else marshal.dumps(form)


def _well_formed(pattern: str, form: Any) -> bool:
    return (type(form) is tuple and len(form) == len(_FORM_TYPES) and form[0] == pattern
            and all(type(v) is t for v, t in zip(form, _FORM_TYPES, strict=True)))


def remember_forms(forms: dict[str, bytes]) -> None:
    """The compiled forms of regexes (pattern -> packed_form), for compile_known (which checks the one it uses: a
    form of another shape is not used, its pattern is compiled from its text)."""
    _FORMS.update(forms)


def compile_known(pattern: str) -> regex.Pattern[str]:
    """`regex.compile(pattern)`: made from its remembered compiled form when there is one (what unpickling a
    pattern does), else compiled from its text; a form the `regex` module refuses is compiled from its text."""
    packed = _FORMS.get(pattern)
    try:
        form = marshal.loads(packed) if type(packed) is bytes else None
    except (EOFError, ValueError, TypeError):
        form = None
    made = _rebuilder() if form is not None and _well_formed(pattern, form) else None
    if made is not None:
        try:
            compiled = made(*form)  # type: ignore[misc]
        except (TypeError, ValueError, RuntimeError, OverflowError, MemoryError, regex.error):
            compiled = None
        if isinstance(compiled, regex.Pattern) and compiled.pattern == pattern:
            return compiled
    return regex.compile(pattern)
