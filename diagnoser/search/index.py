"""The literal index, compiled once with the signature database: which literals the fast search looks for,
which rules each literal guards, and the search plans over them.

Every signature regex, fact, whole-file condition, traceback start and lone error has a literal its line
must hold (its gate). The database hands this module those literals; nothing below the database derives
them again.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from .plan import SearchPlan, plan_search


@dataclass(slots=True)
class GateIndex:
    """Which items (rules or facts, by position) each literal guards. A line is searched with a plan (a trie
    of rare-byte pieces and a few strings: see plan.py), then tested only against the literals of the
    pieces it holds (most lines hold none). An item without a gate is a candidate on every line."""

    exact: dict[str, list[int]] = field(default_factory=dict)
    always: list[int] = field(default_factory=list)
    plan: SearchPlan | None = None
    by_bytes: dict[bytes, tuple[str, list[int]]] = field(default_factory=dict)

    @classmethod
    def build(cls, gates: Iterable[tuple[str, ...] | None]) -> GateIndex:
        index = cls()
        for i, literals in enumerate(gates):
            if literals is None:
                index.always.append(i)
                continue
            for lit in literals:
                index.exact.setdefault(lit, []).append(i)
        index.by_bytes = {lit.encode("utf-8"): (lit, idx) for lit, idx in index.exact.items()}
        index.plan = plan_search(frozenset(index.exact)) if index.exact else None
        return index

    def candidates(self, text: str, raw: str | None = None) -> list[int]:
        """Items whose literal is in the cleaned text (and, when given, in the line as read)."""
        plan = self.plan
        if plan is None:
            return self.always
        line = text.encode("utf-8", "replace")
        found: set[int] | None = None
        for cover in plan.covers_in(line):
            for lit in plan.groups.get(cover, ()):
                if lit in line:
                    s, idx = self.by_bytes[lit]
                    if raw is None or s in raw:
                        found = set(self.always) if found is None else found
                        found.update(idx)
        return self.always if found is None else sorted(found)


@dataclass(frozen=True, slots=True)
class SearchIndex:
    """What the fast search must find in a block, and the per-line gate indexes of the matcher.

    `body`: the literals searched on every line (rule gates, whole-file conditions, traceback starts, lone
    errors, and the facts read everywhere such as checkpoints). `first_facts`: facts read only in a file's
    head, by name, whose literals are searched there until each fact is found. `complete`: every rule and
    fact has a gate, so lines holding none can be skipped (otherwise every line must be fed).
    """

    body: frozenset[str]
    first_facts: tuple[tuple[str, frozenset[str]], ...]
    complete: bool
    rules: GateIndex
    facts: GateIndex

    @classmethod
    def build(cls, rule_gates: list[tuple[str, ...] | None], fact_gates: list[tuple[str, ...] | None],
              fact_kinds: list[tuple[str, str]], file_gates: list[tuple[str, ...] | None],
              always: Iterable[str]) -> SearchIndex:
        """`fact_kinds`: (name, "first" | "last" | "job") per fact, in the order of `fact_gates`."""
        complete = all(g is not None for g in (*rule_gates, *fact_gates, *file_gates))
        static: set[str] = set(always)
        if all(g is not None for g in (*rule_gates, *file_gates)):
            static.update(lit for g in (*rule_gates, *file_gates) if g is not None for lit in g)
        first: dict[str, set[str]] = {}
        for gate, (name, kind) in zip(fact_gates, fact_kinds, strict=True):
            if kind == "last" and gate is not None:
                static.update(gate)
            elif kind == "first":
                first.setdefault(name, set()).update(gate or ())
        return cls(frozenset(static), tuple((n, frozenset(v)) for n, v in first.items()), complete,
                   GateIndex.build(rule_gates), GateIndex.build(fact_gates))

    @property
    def head(self) -> frozenset[str]:
        """The literals searched in a file's head, where the first facts are read too."""
        return self.body.union(*(lits for _name, lits in self.first_facts))

    @property
    def body_plan(self) -> SearchPlan:
        return plan_search(self.body)

    @property
    def head_plan(self) -> SearchPlan:
        return plan_search(self.head)
