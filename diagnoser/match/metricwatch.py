"""Which metric (health) rules read a key of a metric record, and the record's values those rules read."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .compiled import LazyPattern
from .metrics import Pair, Record, number, pairs_of, verl_pair
from .schema import Signature

Ref = tuple[str, int]  # (signature id, clause index)


@dataclass(frozen=True, slots=True)
class MetricRule:
    """One clause of a metric signature, compiled: the keys it reads."""

    ref: Ref
    names: tuple[LazyPattern, ...]
    not_names: tuple[LazyPattern, ...]
    divide_by: LazyPattern | None
    vanished: bool = False  # the clause notices a key missing from a record
    excused_by: tuple[LazyPattern, ...] = ()  # ... unless the record prints one of these keys above 0

    def reads(self, key: str) -> bool:
        return any(p.search(key) for p in self.names) and not any(p.search(key) for p in self.not_names)


def metric_watch(signatures: Iterable[Signature]) -> MetricWatch | None:
    """The clauses of the metric signatures (None when there are none: no metric is read). Their key regexes
    were checked when the signature was parsed (parse.py); each compiles on first use."""
    rules = [MetricRule((sig.id, k), tuple(LazyPattern(p) for p in clause.names),
                        tuple(LazyPattern(p) for p in clause.not_names),
                        LazyPattern(clause.divide_by) if clause.divide_by else None, clause.vanished,
                        tuple(LazyPattern(p) for p in clause.excused_by))
             for sig in signatures for k, clause in enumerate(sig.metric)]
    return MetricWatch(tuple(rules)) if rules else None


MEMO_KEYS = 4096


class MetricWatch:
    """Which clauses read a key, memoised (the same keys come on every step)."""

    def __init__(self, rules: tuple[MetricRule, ...]) -> None:
        self.rules = rules
        self.vanishing = any(r.vanished for r in rules)  # every record counts, even one with no value read
        # the `vanished` clauses with an `excused_by`: a record that does not print that key is cut short (a paste, a
        # line still being written), so it cannot tell that their key vanished
        self.whole_if = tuple(r.ref for r in rules if r.vanished and r.excused_by)
        self._memo: dict[str, tuple[tuple[Ref, ...], tuple[tuple[Ref, LazyPattern], ...]]] = {}
        self._excuses: dict[str, tuple[Ref, ...]] = {}  # key -> the clauses it would excuse
        # key -> (refs, excuses), for read_values
        self._keys: dict[str, tuple[tuple[Ref, ...], tuple[tuple[Ref, LazyPattern], ...], tuple[Ref, ...]]] = {}

    def excuses(self, key: str) -> tuple[Ref, ...]:
        """The `vanished` clauses a record excuses when it prints `key` above 0 (their `excused_by` names it)."""
        refs = self._excuses.get(key)
        if refs is None:
            if len(self._excuses) >= MEMO_KEYS:
                self._excuses.clear()
            refs = self._excuses[key] = tuple(r.ref for r in self.rules if any(p.search(key) for p in r.excused_by))
        return refs

    def excused(self, record: Record) -> tuple[Ref, ...]:
        """The `vanished` clauses this record excuses: it prints a key of their `excused_by` above 0."""
        return read_values(record, self)[1]

    def refs(self, key: str) -> tuple[tuple[Ref, ...], tuple[tuple[Ref, LazyPattern], ...]]:
        """(clauses that read `key` itself, clauses that read it divided by another key: (ref, divisor))."""
        got = self._memo.get(key)
        if got is None:
            direct = tuple(r.ref for r in self.rules if r.divide_by is None and r.reads(key))
            ratio = tuple((r.ref, r.divide_by) for r in self.rules if r.divide_by is not None and r.reads(key))
            if len(self._memo) >= MEMO_KEYS:
                self._memo.clear()
            got = self._memo[key] = (direct, ratio)
        return got


Value = tuple[str, float, str, tuple[Ref, ...]]  # key, value, the text that printed it, the clauses reading it
_NONE: tuple[tuple[Ref, ...], tuple[tuple[Ref, LazyPattern], ...], tuple[Ref, ...]] = ((), (), ())


def read_values(record: Record, watch: MetricWatch) -> tuple[list[Value], tuple[Ref, ...]]:
    """In one pass over the record's keys (each looked up once in a memo): the values some clause reads (as
    floats), ratios included (`a / b` for divide_by), and the `vanished` clauses the record excuses (its key of
    their `excused_by` printed above 0). A key no clause names costs one lookup; its value is never read."""
    out: list[Value] = []
    excused: list[Ref] = []
    printed_excuse: list[Ref] = []
    ratios: list[tuple[str, float, str, Ref, LazyPattern]] = []
    memo = watch._keys
    if record.items is not None:  # verl console: a piece whose key no clause reads is never made a pair
        get = memo.get
        kept = [item for item in record.items if get(item.rpartition(":")[0]) is not _NONE]
        pairs: list[Pair] = [p for p in map(verl_pair, kept) if p is not None]
    else:
        pairs = record.pairs
    for key, printed, token in pairs:
        got = memo.get(key)
        if got is None:
            direct, ratio = watch.refs(key)
            excuse = watch.excuses(key)
            got = (direct, ratio, excuse) if direct or ratio or excuse else _NONE
            if len(memo) >= MEMO_KEYS:
                memo.clear()
            memo[key] = got
        if got is _NONE:
            continue
        direct, ratio, excuse = got
        value = number(printed)
        if excuse:
            printed_excuse += excuse
            if (value or 0) > 0:
                excused += excuse
        if value is None or not (direct or ratio):
            continue
        if direct:
            out.append((key, value, token, direct))
        for ref, divisor in ratio:
            ratios.append((key, value, token, ref, divisor))
    for key, value, token, ref, divisor in ratios:
        for other, printed, other_token in pairs_of(record):
            if divisor.search(other):
                den = number(printed)
                if den:  # neither None nor 0
                    out.append((f"{key} / {other}", value / den, f"{token} … {other_token}", (ref,)))
                break
    excused += [ref for ref in watch.whole_if if ref not in printed_excuse]
    return out, tuple(excused)


def watched(record: Record, watch: MetricWatch) -> list[Value]:
    """The record's values that some clause reads (as floats), ratios included (`a / b` for divide_by)."""
    return read_values(record, watch)[0]
