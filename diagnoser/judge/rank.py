"""Order findings (cause > symptom > advisory, then severity, then earliest) and pick the root cause."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cmp_to_key

from .findings import Finding, earlier

KIND_ORDER = {"cause": 0, "symptom": 1, "advisory": 2}
SEVERITY_ORDER = {"fatal": 0, "error": 1, "warning": 2, "info": 3}


def _compare(a: Finding, b: Finding) -> int:
    ka = (KIND_ORDER[a.sig.kind], SEVERITY_ORDER[a.sig.severity])
    kb = (KIND_ORDER[b.sig.kind], SEVERITY_ORDER[b.sig.severity])
    if ka != kb:
        return -1 if ka < kb else 1
    if earlier(a.first, b.first):
        return -1
    if earlier(b.first, a.first):
        return 1
    return -1 if a.sig.id < b.sig.id else (1 if a.sig.id > b.sig.id else 0)


def rank_findings(findings: Iterable[Finding]) -> list[Finding]:
    return sorted(findings, key=cmp_to_key(_compare))


def root_cause(ranked: list[Finding]) -> Finding | None:
    """The first cause of severity error or fatal; symptoms and advisories never are."""
    for f in ranked:
        if f.sig.kind == "cause" and f.sig.is_failure:
            return f
    return None


def compact_ranks(ranks: Iterable[int], limit: int = 12) -> str:
    """`0-3,5,7-9`; long lists end in `… (N ranks)`."""
    values = sorted(set(ranks))
    if not values:
        return ""
    parts: list[str] = []
    start = prev = values[0]
    for v in values[1:]:
        if v == prev + 1:
            prev = v
            continue
        parts.append(f"{start}-{prev}" if prev > start else str(start))
        start = prev = v
    parts.append(f"{start}-{prev}" if prev > start else str(start))
    if len(parts) > limit:
        return ",".join(parts[:limit]) + f",… ({len(values)} ranks)"
    return ",".join(parts)
