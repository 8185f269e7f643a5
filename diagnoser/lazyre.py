"""Regexes of the package's own code, compiled when a line first needs them (issue 13: start-up).

Compiling a `regex` pattern runs its parser in Python (about half a millisecond each here); the package holds a
hundred, and a short log uses a third of them. `lazy(pattern)` stands for `regex.compile(pattern)` and
`lazy_re(pattern)` for `re.compile(pattern)`: the same pattern, compiled with the same flags on its first use,
whose methods are then the compiled pattern's own (bound once, no wrapper in between on later calls).
tests/test_lazyre.py compiles every one of them, so a pattern that cannot compile still fails a test.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any, AnyStr, cast

import regex

# what the package's code reads of a compiled pattern (anything else is looked up on it each time)
_BOUND = ("search", "match", "fullmatch", "sub", "subn", "split", "findall", "finditer", "groupindex", "groups",
          "flags")
CREATED: list[_Lazy] = []  # every lazy pattern made, for the test that compiles them all


class _Lazy:
    __slots__ = ("_compile", "_flags", "_compiled", "pattern", *_BOUND)

    def __init__(self, compile_: Callable[..., Any], pattern: str | bytes, flags: int) -> None:
        self._compile = compile_
        self._flags = flags
        self._compiled: Any = None
        self.pattern = pattern
        CREATED.append(self)

    def compiled(self) -> Any:
        """The compiled pattern (compiled now if it was not yet)."""
        if self._compiled is None:
            compiled = self._compile(self.pattern, self._flags)
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
