"""The report's JSON form (schema 1): the contract the README documents, stable English keys."""

from __future__ import annotations

from ..judge.findings import Finding, Location, Unrecognized
from ..judge.ranks import RankRow
from .health import health_json
from .model import MAX_EVIDENCE_CHARS, MAX_ROW_SOURCES, MAX_UNRECOGNIZED_RANKS, SCHEMA, Report, clip, clip_key

MAX_RANK_ROWS = 100000
def finding_json(report: Report, f: Finding) -> dict[str, object]:
    return {
        "id": f.sig.id,
        "title": f.sig.title.get(report.lang),
        "kind": f.sig.kind,
        "role": f.sig.role,
        "severity": f.sig.severity,
        "layer": f.sig.layer,
        "verdict": report.verdicts.get(f.sig.id, f.sig.verdict),
        "count": f.count,
        "first": f.first.to_json(),
        "last": f.last.to_json(),
        "ranks": sorted(f.ranks),
        "hosts": [clip(h) for h in sorted(f.hosts)],
        "sources": list(f.sources),
        "captures": dict(f.captures),
        "why": report.why[f.sig.id],
        "remedy": report.remedy[f.sig.id],
        "references": list(f.sig.references),
        # context lines cut; the key line whole (its end often holds the advice: PyTorch's PYTORCH_CUDA_ALLOC_CONF)
        "evidence": [clip_key(e.raw) if e.key else e.raw[:MAX_EVIDENCE_CHARS] for e in f.evidence],
        "evidence_lines": [e.lineno for e in f.evidence],
        "symptom_of": report.symptom_of(f),
        "matched_on": f.matched_on,
        "health": health_json(f),
    }


def unrecognized_json(u: Unrecognized) -> dict[str, object]:
    return {"exception": clip(u.exc_type), "message": clip(u.message), "source": clip(u.first.source),
            "line": u.first.line, "count": u.count, "frame": clip(u.frame) if u.frame else u.frame,
            "rank": u.first.rank, "ranks": sorted(u.ranks)[:MAX_UNRECOGNIZED_RANKS], "lone": u.lone,
            "symptom_of": [u.echo_of] if u.echo_of else []}


def to_json(report: Report) -> dict[str, object]:
    findings = [finding_json(report, f) for f in report.findings]
    root = findings[report.findings.index(report.root_cause)] if report.root_cause is not None else None
    return {
        "schema": SCHEMA,
        "root_cause": root,
        "findings": findings,
        "unrecognized": [unrecognized_json(u) for u in report.unrecognized],
        "facts": {name: fact.value for name, fact in sorted(report.facts.items())},
        "failed": report.failed,
        "job_status": {"reported": report.job_status, "masked": report.status_masked},
        **story_json(report),
        **({"nodes": [n.to_json() for n in report.nodes]} if report.nodes is not None else {}),
        **forensics_json(report),
        "stats": {"sources": report.stats.sources, "lines": report.stats.lines, "bytes": report.stats.bytes,
                  "seconds": report.stats.seconds, "unlisted": report.stats.unlisted},
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


def _where(loc: Location | None) -> dict[str, object] | None:
    return None if loc is None else {"source": loc.source, "line": loc.line, "time": loc.time}


def _row(r: RankRow) -> dict[str, object]:
    error = None
    if r.first_error is not None:
        error = {"id": clip(r.first_error[0]), "message": clip(r.detail) if r.detail else None,
                 **(_where(r.first_error[1]) or {})}
    echo = None if r.first_echo is None else {"id": r.first_echo[0], **(_where(r.first_echo[1]) or {})}
    return {"rank": r.rank, "attempt": r.attempt, "host": clip(r.host) if r.host else r.host, "gpu": r.gpu,
            "pid": r.pid, "local_rank": r.local_rank, "state": r.state, "last_step": r.step, "last_time": r.last_time,
            "last_line": clip(r.last_line) if r.last_line else r.last_line, "first_error": error, "first_echo": echo,
            "exit_code": r.exit_code, "signal": r.signal, "killed_by": r.killed_by,
            "sources": [clip(x) for x in r.sources[:MAX_ROW_SOURCES]]}


def forensics_json(report: Report) -> dict[str, object]:
    fx = report.forensics
    if fx is None:
        return {}
    c = fx.culprit
    culprit = None
    if c is not None:
        host, gpu = c.machine()
        culprit = {"rank": c.rank, "host": host, "gpu": gpu,
                   "reason": c.reason, "attempt": c.row.attempt if c.row else None, "error": c.what,
                   "where": _where(c.where), "waiters": c.waiters, "collective": c.collective,
                   "others": list(c.others), "odd": list(c.odd), "phase": c.phase,
                   "silence_s": None if c.silence is None else round(c.silence, 3)}
    restarts = None
    if fx.restarts is not None:
        restarts = {"attempts": [{"attempt": a.attempt, "error": a.what, "message": a.detail or None,
                                  "last_step": a.step} for a in fx.restarts.attempts],
                    "same_error": fx.restarts.same, "progressed": fx.restarts.progressed}
    return {
        "culprit": culprit,
        "ranks": [_row(r) for r in fx.table.rows[:MAX_RANK_ROWS] if r.rank is not None],
        "ranks_missing": list(fx.table.missing),
        "ignored": [{"id": what, "reason": why, **(_where(where) or {})} for what, why, where in fx.ignored],
        "restarts": restarts,
        "artifacts": [{"kind": n.kind, "ranks": list(n.ranks), "pids": list(n.pids), "text": n.text} for n in fx.notes],
    }
