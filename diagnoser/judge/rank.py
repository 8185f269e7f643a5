"""Order findings by causal role (root > cascade > confirmation > teardown > advice), a whole match before one
made from a cut traceback's frames alone; among roots the earliest
first (then the graver), among the others the graver first (then the earliest); and pick the root cause: the
earliest initiating error."""

from __future__ import annotations

from collections.abc import Iterable
from functools import cmp_to_key

from .findings import MAX_RANKS, Finding, earlier

ROLE_ORDER = {"root": 0, "cascade": 1, "confirmation": 2, "teardown": 3, "advice": 4}
SEVERITY_ORDER = {"fatal": 0, "error": 1, "warning": 2, "info": 3}


def _key(f: Finding) -> tuple[int, int, int]:
    # a whole match before one made from a cut traceback's frames alone; a failure (error/fatal) before a warning
    return ROLE_ORDER[f.sig.role], 1 if f.matched_on == "frames" else 0, 0 if f.sig.is_failure else 1


def _compare(a: Finding, b: Finding) -> int:
    ka, kb = _key(a), _key(b)
    if ka != kb:
        return -1 if ka < kb else 1
    sa, sb = SEVERITY_ORDER[a.sig.severity], SEVERITY_ORDER[b.sig.severity]
    if sa != sb and a.sig.role != "root":
        # among echoes the graver one tells more (a node lost explains the actor that died with it)
        return -1 if sa < sb else 1
    if earlier(a.first, b.first):
        return -1
    if earlier(b.first, a.first):
        return 1
    if sa != sb:
        return -1 if sa < sb else 1
    return -1 if a.sig.id < b.sig.id else (1 if a.sig.id > b.sig.id else 0)


def rank_findings(findings: Iterable[Finding]) -> list[Finding]:
    return sorted(findings, key=cmp_to_key(_compare))


def root_cause(ranked: list[Finding]) -> Finding | None:
    """The first initiating error (role root, severity error or fatal); echoes, confirmations, teardown and
    advice never are."""
    for f in ranked:
        if f.sig.role == "root" and f.sig.is_failure:
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
    many = f"{len(values)}+" if len(values) >= MAX_RANKS else str(len(values))  # at the cap: no more are counted
    if len(parts) > limit:
        return ",".join(parts[:limit]) + f",… ({many} ranks)"
    if len(values) >= MAX_RANKS:
        return ",".join(parts) + f" ({many} ranks)"
    return ",".join(parts)
