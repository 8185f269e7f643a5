"""Which metric (health) rules read a key of a metric record, and the record's values those rules read."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from .compiled import LazyPattern
from .metrics import Record, number
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
        self._memo: dict[str, tuple[tuple[Ref, ...], tuple[tuple[Ref, LazyPattern], ...]]] = {}
        self._excuses: dict[str, tuple[Ref, ...]] = {}  # key -> the clauses it would excuse

    def excused(self, record: Record) -> tuple[Ref, ...]:
        """The `vanished` clauses this record excuses: it prints a key of their `excused_by` above 0."""
        out: list[Ref] = []
        for key, printed, _token in record.pairs:
            refs = self._excuses.get(key)
            if refs is None:
                if len(self._excuses) >= MEMO_KEYS:
                    self._excuses.clear()
                refs = self._excuses[key] = tuple(r.ref for r in self.rules if any(p.search(key) for p in r.excused_by))
            if refs and (number(printed) or 0) > 0:
                out += refs
        return tuple(out)

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


def watched(record: Record, watch: MetricWatch) -> list[Value]:
    """The record's values that some clause reads (as floats), ratios included (`a / b` for divide_by)."""
    out: list[Value] = []
    ratios: list[tuple[str, float, str, Ref, LazyPattern]] = []
    for key, printed, token in record.pairs:
        direct, ratio = watch.refs(key)
        if not direct and not ratio:
            continue
        value = number(printed)
        if value is None:
            continue
        if direct:
            out.append((key, value, token, direct))
        for ref, divisor in ratio:
            ratios.append((key, value, token, ref, divisor))
    for key, value, token, ref, divisor in ratios:
        for other, printed, other_token in record.pairs:
            if divisor.search(other):
                den = number(printed)
                if den:  # neither None nor 0
                    out.append((f"{key} / {other}", value / den, f"{token} … {other_token}", (ref,)))
                break
    return out
