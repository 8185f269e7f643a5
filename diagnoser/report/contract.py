"""The report's JSON form (schema 1): the contract the README documents, stable English keys."""

from __future__ import annotations

from ..judge.findings import Finding
from .health import health_json
from .model import MAX_EVIDENCE_CHARS, SCHEMA, Report


def finding_json(report: Report, f: Finding) -> dict[str, object]:
    return {
        "id": f.sig.id,
        "title": f.sig.title.get(report.lang),
        "kind": f.sig.kind,
        "role": f.sig.role,
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
        "matched_on": f.matched_on,
        "health": health_json(f),
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
             "count": u.count, "frame": u.frame, "rank": u.first.rank, "ranks": sorted(u.ranks),
             "lone": u.lone}
            for u in report.unrecognized
        ],
        "facts": {name: fact.value for name, fact in sorted(report.facts.items())},
        "failed": report.failed,
        "job_status": {"reported": report.job_status, "masked": report.status_masked},
        **story_json(report),
        **({"nodes": [n.to_json() for n in report.nodes]} if report.nodes is not None else {}),
        "stats": {"sources": report.stats.sources, "lines": report.stats.lines, "bytes": report.stats.bytes,
                  "seconds": report.stats.seconds},
    }


def story_json(report: Report) -> dict[str, object]:
    story = report.story
    if story is None:
        return {}
    return {
        "verdict": story.verdict,
        "verdict_reason": story.verdict_reason,
        "last_checkpoint": story.checkpoint,
        "job": story.job,
        "precursors": [{"id": f.sig.id, "metric": f.health.series.key, "start_step": f.health.start_step,
                        "step": f.health.step, "source": f.first.source, "line": f.first.line}
                       for f in story.precursors if f.health is not None],
        "timeline": [
            {"key": e.key, "what": e.moment.what, **e.moment.where.to_json(),
             "explained_by": None if e.explained_by is None else
             {"id": e.explained_by[0], **e.explained_by[1].to_json()}}
            for e in story.timeline[:1000]
        ],
    }
