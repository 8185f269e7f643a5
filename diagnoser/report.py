"""The report: ranked findings with their remedies filled in, and its JSON form (schema 1)."""

from __future__ import annotations

from dataclasses import dataclass, field

from .findings import Collector, Fact, Finding, Unrecognized, earlier
from .rank import compact_ranks, rank_findings, root_cause
from .remedy import fill, render_remedy

SCHEMA = 1
MAX_EVIDENCE_CHARS = 400


@dataclass(slots=True)
class Stats:
    sources: int = 0
    lines: int = 0
    bytes: int = 0
    seconds: float = 0.0


@dataclass(slots=True)
class Report:
    lang: str
    findings: list[Finding]
    root_cause: Finding | None
    unrecognized: list[Unrecognized]
    facts: dict[str, Fact]
    stats: Stats
    why: dict[str, str] = field(default_factory=dict)
    remedy: dict[str, str] = field(default_factory=dict)

    @property
    def failed(self) -> bool:
        """The log shows a failure: an error/fatal finding or an unrecognised traceback."""
        return any(f.sig.is_failure for f in self.findings) or bool(self.unrecognized)

    @property
    def only_symptoms(self) -> bool:
        return self.root_cause is None and any(f.sig.kind == "symptom" for f in self.findings)


def values_for(finding: Finding, facts: dict[str, Fact]) -> dict[str, str]:
    """What a remedy template may quote: facts from anywhere in the input, then this finding's own."""
    values = {name: fact.value for name, fact in facts.items()}
    first = finding.first
    values.update({"source": first.source, "line": str(first.line), "count": str(finding.count)})
    if first.rank is not None:
        values["rank"] = str(first.rank)
    if first.host:
        values["host"] = first.host
    if first.actor:
        values["actor"] = first.actor
    if finding.ranks:
        values["ranks"] = compact_ranks(finding.ranks)
    values.update(finding.captures)
    return values


def build_report(collector: Collector, lang: str, seconds: float) -> Report:
    ranked = rank_findings(collector.findings.values())
    unrecognized = sorted(collector.unrecognized.values(), key=lambda u: (u.first.source_index, u.first.line))
    stats = Stats(collector.sources, collector.lines, collector.bytes, round(seconds, 3))
    report = Report(lang, ranked, root_cause(ranked), unrecognized, dict(collector.facts), stats)
    for f in ranked:
        values = values_for(f, collector.facts)
        report.why[f.sig.id] = fill(f.sig.why.get(lang), values)
        report.remedy[f.sig.id] = render_remedy(f.sig.remedy, values, lang)
    return report


def first_unrecognized(report: Report) -> Unrecognized | None:
    best: Unrecognized | None = None
    for u in report.unrecognized:
        if best is None or earlier(u.first, best.first):
            best = u
    return best


def finding_json(report: Report, f: Finding) -> dict[str, object]:
    return {
        "id": f.sig.id,
        "title": f.sig.title.get(report.lang),
        "kind": f.sig.kind,
        "severity": f.sig.severity,
        "layer": f.sig.layer,
        "verdict": f.sig.verdict,
        "count": f.count,
        "first": f.first.to_json(),
        "last": f.last.to_json(),
        "ranks": sorted(f.ranks),
        "hosts": sorted(f.hosts),
        "sources": list(f.sources),
        "captures": dict(f.captures),
        "why": report.why[f.sig.id],
        "remedy": report.remedy[f.sig.id],
        "references": list(f.sig.references),
        "evidence": [e.raw[:MAX_EVIDENCE_CHARS] for e in f.evidence],
        "evidence_lines": [e.lineno for e in f.evidence],
        "symptom_of": list(f.sig.symptom_of),
    }


def to_json(report: Report) -> dict[str, object]:
    findings = [finding_json(report, f) for f in report.findings]
    root = findings[report.findings.index(report.root_cause)] if report.root_cause is not None else None
    return {
        "schema": SCHEMA,
        "root_cause": root,
        "findings": findings,
        "unrecognized": [
            {"exception": u.exc_type, "message": u.message, "source": u.first.source, "line": u.first.line,
             "count": u.count, "frame": u.frame, "rank": u.first.rank, "ranks": sorted(u.ranks)}
            for u in report.unrecognized
        ],
        "facts": {name: fact.value for name, fact in sorted(report.facts.items())},
        "failed": report.failed,
        "stats": {"sources": report.stats.sources, "lines": report.stats.lines, "bytes": report.stats.bytes,
                  "seconds": report.stats.seconds},
    }
