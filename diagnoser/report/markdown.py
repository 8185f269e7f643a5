"""Render a report as Markdown (to paste into an issue or a chat): the same lead, the same last line as the
terminal report."""

from __future__ import annotations

from ..i18n import msg
from ..judge.findings import Finding
from ..safe import md_block, md_cell, md_code, md_fence, md_text
from .health import health_rows, precursor_lines, sparkline, values_text
from .model import Report, clip_key, first_unrecognized
from .nodes import nodes_markdown
from .ranks import culprit_line, notes, rank_groups
from .words import (
    EVIDENCE_WIDTH,
    checkpoint_text,
    colon,
    echo_lines,
    exception_title,
    job_text,
    label,
    masked_finding,
    seen_text,
    stop,
    summary_line,
    timeline_rows,
    unrecognized_hint,
    where_text,
)


def _finding(report: Report, f: Finding, heading: str, lead: bool) -> list[str]:
    lang = report.lang
    out = [f"## {heading}{colon(lang)} {md_text(f.sig.title.get(lang))} ({md_code(f.sig.id)})", "",
           f"- **{msg('where', lang)}{colon(lang)}** {md_text(where_text(f.first, lang))}",
           f"- **{msg('seen', lang)}{colon(lang)}** {md_text(seen_text(f, lang))}"]
    if f.health is not None:
        out += [f"- **{msg('metric_label', lang)}{colon(lang)}** {md_code(f.health.series.key)}: "
                f"{md_text(values_text(f.health, lang))}",
                f"- **{msg('series_label', lang)}{colon(lang)}** {md_code(sparkline(f.health))}"]
    out += ["", f"### {msg('evidence', lang)}", ""]
    # the key line whole; context lines cut
    out += md_fence([f"{'>' if e.key else ' '} {e.lineno:>6} | "
                     + (clip_key(e.raw) if e.key
                        else e.raw[:EVIDENCE_WIDTH] + ("…" if len(e.raw) > EVIDENCE_WIDTH else ""))
                     for e in f.evidence])
    out.append("")
    if lead:
        echoes = echo_lines(report) + precursor_lines(report)
        out += [f"- {md_text(line)}" for line in echoes] + ([""] if echoes else [])
    out += [f"### {msg('why', lang)}", "", md_block(report.why[f.sig.id]), "",
            f"### {msg('remedy', lang)}", "", md_block(report.remedy[f.sig.id]), ""]
    if f.sig.references:
        out += [f"### {msg('references', lang)}", ""] + [f"- {md_text(r)}" for r in f.sig.references] + [""]
    return out


def render_markdown(report: Report, verbose: bool = False) -> str:
    lang = report.lang
    out: list[str] = ["# diagnose report", ""]
    culprit = culprit_line(report)
    if culprit:
        out += [f"**{md_text(culprit)}**", ""]
    job = job_text(report)
    if job:
        out += [f"**{msg('job', lang)}{colon(lang)}** {md_text(job)}", ""]
    lead = report.lead
    shown = lead.finding
    if lead.role == "symptom":
        out += [f"**{msg('no_root_cause', lang)}{stop(lang)}** {msg('only_symptoms', lang)}", ""]
    elif lead.role == "health":
        out += [f"**{msg('health_headline', lang)}{stop(lang)}**", ""]
    elif lead.role == "empty":
        out += [f"**{msg('nothing_read', lang)}{stop(lang)}** " + msg(
            "nothing_read_detail", lang, sources=report.stats.sources, skipped=report.skipped), ""]
    elif lead.role in ("none", "unrecognized"):
        out += [f"**{msg('no_failure', lang) if not report.failed else msg('no_root_cause', lang)}{stop(lang)}**", ""]
        first = first_unrecognized(report)
        if first is not None:
            out += [f"## {label('first_error', lang)}{md_code(exception_title(first, lang))}", "",
                    f"- **{msg('where', lang)}{colon(lang)}** {md_text(where_text(first.first, lang))}",
                    *([f"- **{msg('frame', lang)}{colon(lang)}** {md_code(first.frame)}"] if first.frame else []),
                    "", *md_fence([f"{first.exc_type}: {first.message}"]), "",
                    md_block(unrecognized_hint(first, lang)), ""]
    if shown is not None:
        heading = {"cause": "root_cause", "symptom": "symptom", "exit": "failed_heading", "health": "health"}[lead.role]
        out += _finding(report, shown, msg(heading, lang), lead.role == "cause")
    masked = masked_finding(report)
    if masked is not None and masked is not shown:
        out += [f"## {label('also', lang)}{md_text(masked.sig.title.get(lang))} ({md_code(masked.sig.id)})", "",
                md_block(report.why[masked.sig.id]), "", md_block(report.remedy[masked.sig.id]), ""]
    rows = health_rows(report)
    if rows:
        out += [f"## {msg('health', lang)}", "",
                f"| {msg('id', lang)} | {msg('metric', lang)} | {msg('steps', lang)} | {msg('values', lang)} | "
                f"{msg('series', lang)} |", "|---|---|---|---|---|"]
        out += [f"| {md_code(sig_id)} | {md_code(metric)} | {md_cell(steps)} | {md_cell(values)} | {md_code(line)} |"
                for sig_id, metric, steps, values, line in rows]
        out.append("")
    others = [f for f in report.findings if f is not shown and f is not masked and f.health is None]
    if others and verbose:
        for f in others:
            out += _finding(report, f, msg(f.sig.kind, lang), False)
    elif others:
        out += [f"## {msg('other_findings', lang)}", "",
                f"| {msg('kind', lang)} | {msg('id', lang)} | {msg('count', lang)} | {msg('first_seen', lang)} |",
                "|---|---|---:|---|"]
        out += [f"| {msg(f.sig.kind, lang)} | {md_code(f.sig.id)} | {f.count} | {md_cell(where_text(f.first, lang))} |"
                for f in others]
        out.append("")
    listed = [u for u in report.unrecognized if u.echo_of is None]
    if listed:
        out += [f"## {msg('unrecognized', lang)}", "",
                f"| {msg('exception', lang)} | {msg('message', lang)} | {msg('count', lang)} | "
                f"{msg('first_seen', lang)} |", "|---|---|---:|---|"]
        for u in listed[:20]:
            out.append(f"| {md_code(exception_title(u, lang))} | {md_cell(u.message[:160])} | {u.count} | "
                       f"{md_cell(where_text(u.first, lang))} |")
        out.append("")
    if report.stats.unlisted:
        out += [md_cell(msg("unlisted", lang, n=report.stats.unlisted, kinds=len(report.unrecognized))), ""]
    timeline = timeline_rows(report)
    if timeline:
        out += [f"## {msg('timeline', lang)}", "",
                f"| {msg('rank', lang)} | {msg('first_failure', lang)} | {msg('where', lang)} | "
                f"{msg('explained_by', lang)} |", "|---|---|---|---|"]
        out += ["| " + " | ".join(md_cell(cell) for cell in row) + " |" for row in timeline[:50]]
        out.append("")
    groups = rank_groups(report)
    if groups:
        out += [f"## {msg('ranks_table', lang)}", "",
                "| " + " | ".join(msg(k, lang) for k in ("col_ranks", "col_host", "col_state", "col_step",
                                                          "col_time", "col_what")) + " |",
                "|---|---|---|---:|---|---|"]
        out += ["| " + " | ".join(md_cell(cell) for cell in row) + " |" for row in groups]
        out.append("")
    extra = notes(report)
    if extra:
        out += [f"- {md_text(line)}" for line in extra] + [""]
    if report.story is not None:
        out += [f"## {msg('verdict', lang)}", "", md_block(report.story.verdict_reason), ""]
        if report.failed or report.story.checkpoint:
            out += [f"**{msg('last_checkpoint', lang)}{colon(lang)}** {md_text(checkpoint_text(report))}", ""]
    if report.nodes is not None:
        out += nodes_markdown(report.nodes, lang, report.failed)
    s = report.stats
    out.append("_" + msg("stats", lang, lines=s.lines, mb=f"{s.bytes / 1e6:.1f}", sources=s.sources,
                         seconds=f"{s.seconds:.2f}") + "_")
    out += ["", f"**{md_text(summary_line(report))}**"]
    return "\n".join(out) + "\n"
