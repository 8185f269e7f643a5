"""The package's own regexes are compiled on first use (diagnoser/lazyre.py, issue 13): each of them still compiles,
to the very pattern `regex.compile` / `re.compile` would give, and once used it is that compiled pattern's own
methods that run."""

from __future__ import annotations

import importlib
import pickle
import pkgutil
import re

import regex

import diagnoser
from diagnoser.lazyre import CREATED, lazy, lazy_re


def test_every_lazy_pattern_of_the_package_compiles() -> None:
    for info in pkgutil.walk_packages(diagnoser.__path__, "diagnoser."):
        importlib.import_module(info.name)
    assert len(CREATED) > 50
    for lazy_pattern in list(CREATED):
        compiled = lazy_pattern.compiled()
        again = (regex if isinstance(compiled, regex.Pattern) else re).compile(lazy_pattern.pattern, compiled.flags)
        assert (compiled.pattern, compiled.flags, compiled.groupindex) == (again.pattern, again.flags,
                                                                           again.groupindex)


def test_a_lazy_pattern_is_the_compiled_pattern_once_used() -> None:
    text = "[rank3]: torch.OutOfMemoryError: CUDA out of memory"
    rx = lazy(r"(?i)cuda (?P<what>out of memory)")
    assert rx.pattern == r"(?i)cuda (?P<what>out of memory)"
    found = rx.search(text)
    assert found is not None and found.group("what") == "out of memory" and isinstance(found, regex.Match)
    assert rx.search.__self__ is regex.compile(rx.pattern)  # regex's own cache: the same compiled object
    assert rx.sub("X", text) == regex.sub(r"(?i)cuda (?P<what>out of memory)", "X", text)
    assert rx.groupindex == {"what": 1} and rx.groups == 1 and rx.flags & regex.IGNORECASE
    raw = lazy_re(rb"\x1b\[[0-9;]*m", re.I)
    assert raw.sub(b"", b"\x1b[31mred\x1b[0m") == b"red" and isinstance(raw.match(b"\x1b[0m"), re.Match)
    assert raw.flags & re.IGNORECASE
    copy = pickle.loads(pickle.dumps(lazy(r"a+b")))
    assert copy.fullmatch("aab") is not None and copy.pattern == "a+b"
