"""The literal search engine: which lines of a byte block hold one of a set of literals.

Hyperscan (Vectorscan) scans a block for hundreds of literals at once in C, about as fast as memory
is read; it is a dependency wherever its wheel exists (pyproject.toml). Where it is missing, or with
DIAGNOSER_ENGINE=python, the pure-Python plan (plan.py: one trie regex of rare-byte pieces and a few
`bytes.find` passes) finds the same lines, several times slower. Both answer the same questions, so the
fast path gives the same report with either (the tests run both).
"""

from __future__ import annotations

import contextlib
import hashlib
import os
from collections.abc import Iterable
from functools import lru_cache
from typing import Any

from .plan import SearchPlan, plan_search

_hs: Any
try:  # an optional dependency: not every platform has its wheel
    import hyperscan as _hs
except ImportError:  # pragma: no cover - depends on the platform
    _hs = None


def engine_name() -> str:
    """"hyperscan" when it is installed and not switched off (DIAGNOSER_ENGINE=python), else "python"."""
    if _hs is None or os.environ.get("DIAGNOSER_ENGINE", "").strip().lower() == "python":
        return "python"
    return "hyperscan"


LAZY_LINES = 64  # lines searched one at a time before Hyperscan is compiled for them (see LiteralSearch)


class LiteralSearch:
    """Finds the lines of a block that hold one of `literals` (bytes, none holding a newline).

    Hyperscan's database is compiled when first needed (a database from the cache is loaded at once): a search
    that only ever looks at a few lines one at a time (a signature's examples, each in a database of its own)
    tests each literal on them instead, which finds the same literals, and never pays the compilation."""

    def __init__(self, literals: Iterable[str]) -> None:
        self.names: tuple[str, ...] = tuple(sorted(set(literals)))
        self.literals = tuple(x.encode("utf-8") for x in self.names)
        self.engine = engine_name() if self.literals else "python"
        self._hs: Any = None
        self._lines = 0  # lines searched one at a time while Hyperscan is not compiled
        if self.engine == "hyperscan" and literal_key(self.names) in _PRELOADED:
            self._build()
        self._plan: SearchPlan | None = None

    def _build(self) -> Any:
        """The compiled Hyperscan database (None, and the Python plan from now on, when it cannot be built)."""
        if self._hs is None and self.engine == "hyperscan":
            self._hs = _compile(self.literals)
            if self._hs is None:
                self.engine = "python"
        return self._hs

    @property
    def plan(self) -> SearchPlan:
        if self._plan is None:
            self._plan = plan_search(frozenset(self.names))
        return self._plan

    def line_starts(self, block: bytes | bytearray) -> list[int]:
        """Sorted offsets of the starts of the lines of `block` that hold a literal."""
        if not self.literals:
            return []
        if self._build() is not None:
            ends: list[int] = []
            self._hs.scan(block, match_event_handler=_collect, context=ends)
            rfind = block.rfind
            return sorted({rfind(b"\n", 0, end - 1) + 1 for end in ends})
        plan = self.plan
        found: set[int] = set()
        rfind = block.rfind
        if plan.trie is not None:
            for m in plan.trie.finditer(block):
                found.add(rfind(b"\n", 0, m.start()) + 1)
        for lit in plan.passes:
            i = block.find(lit)
            while i >= 0:
                found.add(rfind(b"\n", 0, i) + 1)
                nl = block.find(b"\n", i)
                i = block.find(lit, nl + 1) if nl >= 0 else -1
        out = []
        for start in sorted(found):  # a plan's piece is only part of a literal: confirm on the line
            end = block.find(b"\n", start)
            line = bytes(block[start:end] if end >= 0 else block[start:])  # no copy of a bytes slice
            if plan.confirmed(line, plan.covers_in(line)):
                out.append(start)
        return out

    def found_in(self, line: bytes) -> frozenset[str]:
        """The literals `line` holds."""
        if not self.literals:
            return frozenset()
        if self._hs is None and self.engine == "hyperscan":
            self._lines += 1
            if self._lines <= LAZY_LINES:
                return frozenset(name for name, lit in zip(self.names, self.literals, strict=True) if lit in line)
            self._build()
        if self._hs is not None:
            ids: list[int] = []
            self._hs.scan(line, match_event_handler=_collect_id, context=ids)
            names = self.names
            return frozenset(names[i] for i in ids)
        plan = self.plan
        groups = plan.groups
        return frozenset(lit.decode("utf-8") for c in plan.covers_in(line) for lit in groups.get(c, ())
                         if lit in line)

    def found_by_start(self, region: bytes | bytearray) -> dict[int, frozenset[str]] | None:
        """What found_in gives for each line of `region` that holds a literal, by the offset its line starts at,
        from one scan (a call per line costs several times more than its matches); None without Hyperscan."""
        if not self.literals:
            return {}
        if self._build() is None:
            return None
        hits: list[tuple[int, int]] = []
        self._hs.scan(region, match_event_handler=_collect_pair, context=hits)
        # the matches come in the order of their ends (Hyperscan's rule; one out of order is merged all the same): a
        # line's are consecutive, its start and end looked up once; lines holding the same literals share one set
        rfind, find, names = region.rfind, region.find, self.names
        out: dict[int, frozenset[str]] = {}
        sets: dict[tuple[int, ...], frozenset[str]] = {}
        start, line_end, ids = 0, -1, []
        hits.append((-1, -1))  # the end: the last line is told
        for lit, end in hits:
            if start < end <= line_end:
                ids.append(lit)
                continue
            if ids:
                key = tuple(ids)
                got = sets.get(key)
                if got is None:
                    got = sets[key] = frozenset(names[i] for i in ids)
                before = out.get(start)
                out[start] = got if before is None else before | got
            if lit < 0:
                break
            start = rfind(b"\n", 0, end - 1) + 1
            line_end = find(b"\n", end - 1)
            if line_end < 0:
                line_end = len(region)
            ids = [lit]
        return out

    def found_in_each(self, lines: list[bytes]) -> list[frozenset[str]]:
        """found_in of each line (none holding a newline), from one scan of them joined where Hyperscan is."""
        region = b"\n".join(lines)
        by_start = self.found_by_start(region) if len(lines) > 1 else None
        if by_start is None:
            return [self.found_in(line) for line in lines]
        out, start, nothing = [], 0, frozenset[str]()
        for line in lines:
            out.append(by_start.get(start, nothing))
            start += len(line) + 1
        return out

    def any_in(self, data: bytes) -> bool:
        """Whether `data` holds a literal anywhere."""
        if not self.literals:
            return False
        if self._build() is not None:
            hit: list[int] = []
            with contextlib.suppress(_hs.ScanTerminated):
                self._hs.scan(data, match_event_handler=_stop_at_first, context=hit)
            return bool(hit)
        plan = self.plan
        if plan.trie is not None and plan.trie.search(data) is not None:
            return True
        return any(lit in data for lit in plan.passes)


def _collect(_id: int, _start: int, end: int, _flags: int, ends: list[int]) -> None:
    ends.append(end)


def _collect_id(lit: int, _start: int, _end: int, _flags: int, ids: list[int]) -> None:
    ids.append(lit)


def _collect_pair(lit: int, _start: int, end: int, _flags: int, hits: list[tuple[int, int]]) -> None:
    hits.append((lit, end))


def _stop_at_first(_id: int, _start: int, end: int, _flags: int, hit: list[int]) -> bool:
    hit.append(end)
    return True  # stop scanning


_PRELOADED: dict[str, bytes] = {}  # compiled databases read from the database cache, by literal_key


def literal_key(literals: Iterable[str]) -> str:
    return hashlib.sha256("\0".join(sorted(set(literals))).encode("utf-8")).hexdigest()


def preload(compiled: dict[str, bytes]) -> None:
    """Compiled Hyperscan databases (from `compiled_bytes`, kept in the database cache), by literal_key."""
    _PRELOADED.update(compiled)


def compiled_bytes(literals: Iterable[str]) -> bytes | None:
    """The serialised Hyperscan database of `literals`, or None without Hyperscan."""
    lits = tuple(x.encode("utf-8") for x in sorted(set(literals)))
    if _hs is None or not lits:
        return None
    try:
        return _database_bytes(lits)
    except Exception:  # any failure of the C library
        return None


def _compile(literals: tuple[bytes, ...]) -> Any:
    """A Hyperscan block-mode database of the literals, or None when it cannot be built."""
    if _hs is None or not literals:
        return None
    stored = _PRELOADED.get(literal_key(x.decode("utf-8") for x in literals))
    if stored is not None:
        try:
            return _from_bytes(stored)
        except Exception:  # another platform's or version's database: compile it here
            pass
    try:
        return _from_bytes(_database_bytes(literals))
    except Exception:  # any failure of the C library: the Python plan does the work
        return None


@lru_cache(maxsize=16)
def _database_bytes(literals: tuple[bytes, ...]) -> bytes:
    db = _hs.Database(mode=_hs.HS_MODE_BLOCK)  # type: ignore[union-attr]
    db.compile(expressions=list(literals), ids=list(range(len(literals))), elements=len(literals),
               flags=[0] * len(literals), literal=True)
    return bytes(_hs.dumpb(db))  # type: ignore[union-attr]


def _from_bytes(data: bytes) -> Any:
    db = _hs.loadb(data, _hs.HS_MODE_BLOCK)  # type: ignore[union-attr]
    db.scratch = _hs.Scratch(db)  # type: ignore[union-attr]
    return db
