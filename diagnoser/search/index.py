"""The literal index, compiled once with the signature database: which literals the fast search looks for,
which rules each literal guards, and the engines that search for them.

Every signature regex, fact, whole-file condition, traceback start and lone error has a literal its line
must hold (its gate), chosen as the rarest of the literals its regex requires; some also name other
literals the line must hold (see match/literals.py). The database hands this module those gates;
nothing below the database derives them again.

A gate holds on a logical line when one of its literals is in the physical line as read (raw) and in the
line's cleaned text, and one literal of each `also` set is in the cleaned text. Both scan paths decide it
so: the matcher per logical line, the fast search per physical line before anything is cleaned.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field

from .engine import LiteralSearch, compiled_bytes, engine_name, literal_key

# A gate: (literals, also-sets), or None for an item that has none (a candidate on every line).
GateSpec = tuple[tuple[str, ...], tuple[tuple[str, ...], ...]] | None


def _also_hold(also: tuple[tuple[str, ...], ...], text: str) -> bool:
    return all(any(a in text for a in alts) for alts in also)


@dataclass(slots=True)
class GateIndex:
    """Which items (rules, facts or conditions, by position) each literal guards."""

    exact: dict[str, list[int]] = field(default_factory=dict)
    also: list[tuple[tuple[str, ...], ...]] = field(default_factory=list)
    always: list[int] = field(default_factory=list)

    @classmethod
    def build(cls, gates: Iterable[GateSpec]) -> GateIndex:
        index = cls()
        for i, gate in enumerate(gates):
            if gate is None:
                index.always.append(i)
                index.also.append(())
                continue
            literals, also = gate
            index.also.append(also)
            for lit in literals:
                index.exact.setdefault(lit, []).append(i)
        return index

    def candidates(self, text: str, found: frozenset[str]) -> list[int]:
        """Items whose gate holds on `text`, a logical line of the physical line holding `found`."""
        out: set[int] | None = None
        exact = self.exact
        for lit in found:
            idx = exact.get(lit)
            if idx is None or lit not in text:
                continue
            for i in idx:
                also = self.also[i]
                if not also or _also_hold(also, text):
                    out = set(self.always) if out is None else out
                    out.add(i)
        return self.always if out is None else sorted(out)


@dataclass(frozen=True, slots=True)
class SearchIndex:
    """What the fast search must find in a block, and the per-line gate indexes of the matcher.

    `body`: the literals searched on every line (rule gates, whole-file conditions, traceback starts, lone
    errors, and the facts read everywhere such as checkpoints). `first_facts`: facts read only in a file's
    head, by name, whose literals are searched there until each fact is found. `complete`: every rule and
    fact has a gate, so lines holding none can be skipped (otherwise every line must be fed). `also`: for
    each searched literal, the other sets of literals one of the items it guards needs (an empty tuple: an
    item needs nothing more), so the fast search drops a line whose gate literal is all it holds. `metrics`:
    which metric readers (match/metrics.py) may read a line; `metric_only`: the body literals only they need.
    """

    body: frozenset[str]
    first_facts: tuple[tuple[str, frozenset[str]], ...]
    complete: bool
    rules: GateIndex
    facts: GateIndex
    late_facts: GateIndex  # only the facts read after the fact region (mode "last")
    files: GateIndex  # whole-file conditions
    also: dict[str, tuple[tuple[tuple[str, ...], ...], ...]]
    every: frozenset[str]  # every literal any gate names: what a physical line is searched for
    searches: dict[str, LiteralSearch] = field(default_factory=dict, compare=False)
    metrics: GateIndex = field(default_factory=GateIndex)
    metric_only: frozenset[str] = frozenset()
    mark_only: frozenset[str] = frozenset()
    job_only: frozenset[str] = frozenset()  # the literals only job facts name: read in a file's head alone

    @classmethod
    def build(cls, rule_gates: Sequence[GateSpec], fact_gates: Sequence[GateSpec],
              fact_kinds: Sequence[tuple[str, str]], file_gates: Sequence[GateSpec],
              always: Iterable[str], metric_gates: Sequence[tuple[str, ...]] = (),
              marks: Iterable[str] = (), split_free: Iterable[str] = ()) -> SearchIndex:
        """`fact_kinds`: (name, "first" | "last" | "job") per fact, in the order of `fact_gates`; `metric_gates`:
        the literals of each metric reader (a line holding none of a reader's is not read by it); `always`: the
        literals the line readers need on every line (tracebacks, lone errors, py-spy); `marks`: those of the
        marks (read/marks.py), searched on every line too; `split_free`: the marks' literals whose lines may lie
        just before a part of a split file begins (read/marks.py SPLIT_FREE_LITERALS)."""
        complete = all(g is not None for g in (*rule_gates, *fact_gates, *file_gates))
        readers = set(always)
        always = (*always, *marks)
        static: set[str] = set(always)
        if all(g is not None for g in (*rule_gates, *file_gates)):
            static.update(lit for g in (*rule_gates, *file_gates) if g is not None for lit in g[0])
        first: dict[str, set[str]] = {}
        late: list[GateSpec] = []
        for gate, (name, kind) in zip(fact_gates, fact_kinds, strict=True):
            late.append(gate if kind == "last" else ((), ()))
            if kind == "last" and gate is not None:
                static.update(gate[0])
            elif kind == "first":
                first.setdefault(name, set()).update(gate[0] if gate else ())
        # such a mark is read from its line alone and leaves no scanner waiting: its literals alone do not make
        # a stretch busy for the split (split.py); a literal some other item needs too does
        needed = {lit for g in (*rule_gates, *file_gates, *fact_gates) if g is not None for lit in g[0]}
        mark_only = set(split_free).intersection(marks) - readers - needed
        metric_only = {lit for g in metric_gates for lit in g} - static
        static |= metric_only
        also: dict[str, set[tuple[tuple[str, ...], ...]]] = {lit: {()} for lit in (*always, *metric_only)}
        for gate in (*rule_gates, *fact_gates, *file_gates, *((g, ()) for g in metric_gates)):
            if gate is not None:
                for lit in gate[0]:
                    also.setdefault(lit, set()).add(gate[1])
        every = frozenset(also)
        kinds = [kind for _n, kind in fact_kinds]
        job = {lit for g, kind in zip(fact_gates, kinds, strict=True) if kind == "job" and g for lit in g[0]}
        named = {lit for g, kind in zip(fact_gates, kinds, strict=True) if kind != "job" and g for lit in g[0]}
        named |= {lit for g in (*rule_gates, *file_gates) if g is not None for lit in g[0]} | static | readers
        return cls(frozenset(static), tuple((n, frozenset(v)) for n, v in first.items()), complete,
                   GateIndex.build(rule_gates), GateIndex.build(fact_gates), GateIndex.build(late),
                   GateIndex.build(file_gates),
                   {lit: tuple(sorted(v, key=len)) for lit, v in also.items()}, every,
                   metrics=GateIndex.build((g, ()) for g in metric_gates), metric_only=frozenset(metric_only),
                   mark_only=frozenset(mark_only - metric_only), job_only=frozenset(job - named))

    @property
    def lean(self) -> frozenset[str]:
        """The literals of the marks read from their line alone (NCCL's communicator-init lines) that no rule, fact,
        file condition, lone error or metric reader names: none of those can read a line holding no other literal."""
        return frozenset() if self.metrics.always else self.mark_only - frozenset(self.metrics.exact)

    @property
    def metric_lean(self) -> frozenset[str]:
        """`lean` and the literals only metric readers name: after the fact region (where the first facts are read,
        whose literals a metric reader may name too), no rule, fact, file condition or lone error can read a line
        holding no other literal."""
        return self.lean | self.metric_only

    @property
    def head(self) -> frozenset[str]:
        """The literals searched in a file's head, where the first facts are read too."""
        return self.body.union(*(lits for _name, lits in self.first_facts))

    def _search(self, key: str, literals: frozenset[str]) -> LiteralSearch:
        key = f"{key}:{engine_name()}"
        found = self.searches.get(key)
        if found is None:
            found = self.searches[key] = LiteralSearch(literals)
        return found

    @property
    def body_search(self) -> LiteralSearch:
        return self._search("body", self.body)

    @property
    def quiet_search(self) -> LiteralSearch:
        """What makes a stretch of a file busy for the split (split.py): a metric record leaves no scanner waiting
        (the health series of a later part are replayed after the earlier parts, judge/health.py), nor does a
        mark (each part's marks reach the same book, judge/book.py)."""
        return self._search("quiet", self.quiet)

    @property
    def quiet(self) -> frozenset[str]:
        return self.body - self.metric_only - self.mark_only

    @property
    def head_search(self) -> LiteralSearch:
        return self._search("head", self.head)

    @property
    def line_search(self) -> LiteralSearch:
        return self._search("every", self.every)

    def compiled_engines(self) -> dict[str, bytes]:
        """The compiled Hyperscan databases of the three literal sets (for the database cache)."""
        out = {}
        for literals in (self.body, self.head, self.every, self.quiet):
            data = compiled_bytes(literals)
            if data is not None:
                out[literal_key(literals)] = data
        return out

    def line_literals(self, raw: str) -> frozenset[str]:
        """The gate literals a physical line holds, as read."""
        return self.line_search.found_in(raw.encode("utf-8", "replace"))

    def matters(self, found: frozenset[str], clean: str, ignore: frozenset[str] = frozenset()) -> bool:
        """Whether a physical line holding the gate literals `found` (as read) can be a candidate for some
        item: a gate literal (not in `ignore`) is in its cleaned text, with one literal of each set its item
        needs beside it. `clean`: the line without colour codes and control characters, every logical
        line's text is part of it."""
        for lit in found:
            if lit in ignore or lit not in clean:
                continue
            for needs in self.also.get(lit, ()):
                if not needs or _also_hold(needs, clean):
                    return True
        return False

