"""Render a report as rich terminal text (plain when not a terminal) or as Markdown."""

from __future__ import annotations

from typing import TextIO

from rich import box
from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..i18n import msg
from ..judge.findings import Finding, Location, Unrecognized
from ..judge.rank import compact_ranks
from ..judge.story import Entry
from .model import MASKED_ID, Report, first_unrecognized

EVIDENCE_WIDTH = 300
MAX_TIMELINE_ROWS = 12



def _colon(lang: str) -> str:
    return "：" if lang == "zh" else ":"


def _label(key: str, lang: str) -> str:
    """A heading followed by its colon, e.g. "Where: " / "位置："."""
    return msg(key, lang) + ("：" if lang == "zh" else ": ")


def _stop(lang: str) -> str:
    return "。" if lang == "zh" else "."

def where_text(loc: Location, lang: str) -> str:
    parts = [loc.short()]
    if loc.rank is not None:
        parts.append(f"rank {loc.rank}")
    if loc.actor:
        parts.append(loc.actor + (f" pid={loc.pid}" if loc.pid is not None else ""))
    elif loc.pid is not None:
        parts.append(f"pid={loc.pid}")
    if loc.host:
        parts.append(f"host {loc.host}")
    if loc.time:
        parts.append(loc.time.replace("T", " "))
    return " · ".join(parts)


def seen_text(f: Finding, lang: str) -> str:
    parts = [msg("times", lang, n=f.count)]
    if f.ranks:
        parts.append(msg("on_ranks", lang, ranks=compact_ranks(f.ranks)))
    if len(f.hosts) > 1:
        parts.append(msg("on_hosts", lang, hosts=", ".join(sorted(f.hosts)[:8])))
    if len(f.sources) > 1:
        parts.append(f"{len(f.sources)} files")
    return " · ".join(parts)


def _evidence(f: Finding) -> Group:
    """Context lines cut to one row each; the key line (marked >) wraps so it is read in full."""
    rows: list[Text] = []
    width = max((len(str(e.lineno)) for e in f.evidence), default=1)
    for e in f.evidence:
        raw = e.raw.replace("\t", "    ")
        if len(raw) > EVIDENCE_WIDTH:
            raw = raw[:EVIDENCE_WIDTH] + "…"
        marker = ">" if e.key else " "
        line = Text(f"{marker} {e.lineno:>{width}} │ ", style="bold red" if e.key else "dim")
        line.append(raw, style="bold" if e.key else "")
        if not e.key:
            line.no_wrap = True
            line.overflow = "ellipsis"
        rows.append(line)
    return Group(*rows)


def _finding_panel(report: Report, f: Finding, heading: str, style: str) -> Panel:
    lang = report.lang
    label = Text(f"{f.sig.id} · {msg(f.sig.kind, lang)} · {f.sig.severity}", style="dim")
    body: list[RenderableType] = [
        label,
        Text.assemble((_label("where", lang), "bold"), where_text(f.first, lang)),
        Text.assemble((_label("seen", lang), "bold"), seen_text(f, lang)),
        Text(""),
        Text(msg("evidence", lang), style="bold"),
        _evidence(f),
        Text(""),
        Text(msg("why", lang), style="bold"),
        Text(report.why[f.sig.id]),
        Text(""),
        Text(msg("remedy", lang), style="bold green"),
        Text(report.remedy[f.sig.id]),
    ]
    title = Text(f"{heading}{_colon(lang)} {f.sig.title.get(lang)}" if lang != "zh"
                 else f"{heading}：{f.sig.title.get(lang)}", style=f"bold {style}")
    return Panel(Group(*body), title=title, title_align="left", border_style=style, box=box.ROUNDED)


def job_text(report: Report) -> str:
    story = report.story
    if story is None:
        return ""
    job = story.job
    parts: list[str] = []
    if job.get("framework"):
        parts.append(str(job["framework"]))
    if job.get("model"):
        parts.append(str(job["model"]))
    if job.get("ranks_seen") or job.get("world_size"):
        ranks = job.get("world_size") or job.get("ranks_seen")
        hosts = job.get("nnodes") or job.get("hosts_seen") or 1
        parts.append(msg("job_ranks", report.lang, ranks=ranks, hosts=hosts))
    sizes = " ".join(f"{k.upper()} {job[k]}" for k in ("tp", "pp", "cp", "ep", "dp") if k in job)
    if sizes:
        parts.append(sizes)
    for key, label in (("global_batch_size", "global batch"), ("micro_batch_size", "micro batch"),
                       ("rollout_batch_size", "rollout batch")):
        if key in job:
            parts.append(f"{label} {job[key]}")
    return " · ".join(parts)


def echo_lines(report: Report) -> list[str]:
    story = report.story
    if story is None:
        return []
    lines = []
    for echo in story.echoes[:6]:
        delay = ""
        if echo.delay is not None and echo.delay >= 60:
            delay = msg("echo_delay", report.lang, minutes=round(echo.delay / 60))
        lines.append(msg("echo_line", report.lang, ranks=echo.ranks, title=echo.finding.sig.title.get(report.lang),
                         count=echo.finding.count, delay=delay))
    return lines


def checkpoint_text(report: Report) -> str:
    story = report.story
    ckpt = story.checkpoint if story is not None else None
    if not ckpt:
        return msg("checkpoint_none", report.lang)
    where = f"{ckpt['source']}:{ckpt['line']}"
    if ckpt.get("time"):
        where += f", {str(ckpt['time']).replace('T', ' ')}"
    step, path = ckpt.get("step"), ckpt.get("path")
    if step is not None and path:
        text = msg("checkpoint_at", report.lang, step=step, path=path, where=where)
    elif path:
        text = msg("checkpoint_path", report.lang, path=path, where=where)
    else:
        text = msg("checkpoint_step", report.lang, step=step if step is not None else "?", where=where)
    return text + ("" if ckpt.get("confirmed", True) else msg("checkpoint_unconfirmed", report.lang))


def _short_where(loc: Location, with_rank: bool = False) -> str:
    name = loc.source.rsplit("/", 1)[-1]
    when = loc.time.split("T")[-1][:8] if loc.time else ""
    rank = f" · rank {loc.rank}" if with_rank and loc.rank is not None else ""
    return f"{name}:{loc.line}{rank}" + (f" · {when}" if when else "")


def _timeline_rows(report: Report) -> list[tuple[str, str, str, str]]:
    """One row per kind of first failure, in order of first appearance: who, what, where/when, why."""
    story = report.story
    if story is None or len(story.timeline) < 2:
        return []
    lang = report.lang
    groups: dict[str, list[Entry]] = {}
    for e in story.timeline:
        groups.setdefault(e.moment.what, []).append(e)
    rows = []
    for what, entries in groups.items():
        ranks = [e.moment.where.rank for e in entries if e.moment.where.rank is not None and e.key.startswith("rank")]
        files = len(entries) - len(ranks)
        who = []
        if ranks:
            who.append(("rank " if len(ranks) == 1 else "ranks ") + compact_ranks(ranks, limit=4))
        if files:
            who.append(msg("n_files", lang, n=files) if files > 1 or ranks else entries[-1].key.rsplit("/", 1)[-1])
        first = entries[0]
        explained = ""
        if first.explained_by is not None:
            sig_id, where = first.explained_by
            explained = f"{sig_id} ({_short_where(where)})"
        label = what.split(":", 1)[1] if what.startswith("exception:") else what
        rows.append((" + ".join(who), label, _short_where(first.moment.where), explained))
    return rows


def render_text(report: Report, out: TextIO, *, color: bool, width: int | None = None) -> None:
    console = Console(file=out, no_color=not color, force_terminal=color if color else None,
                      highlight=False, width=width, emoji=False, soft_wrap=False)
    lang = report.lang
    rc = report.root_cause
    shown: Finding | None = rc
    job = job_text(report)
    if job:
        console.print(Text.assemble((_label("job", lang), "bold"), job), style="dim")
    if rc is not None:
        console.print(_finding_panel(report, rc, msg("root_cause", lang), "red"))
        for line in echo_lines(report):
            console.print(Text(line, style="dim"))
    elif report.only_symptoms:
        shown = next(f for f in report.findings if f.sig.kind == "symptom")
        console.print(Text(msg("no_root_cause", lang), style="bold yellow"))
        console.print(Text(msg("only_symptoms", lang)))
        console.print(_finding_panel(report, shown, msg("symptom", lang), "yellow"))
    elif not report.failed:
        console.print(Text(msg("no_failure", lang) + _stop(lang), style="bold green"))
    else:
        console.print(Text(msg("no_root_cause", lang) + _stop(lang), style="bold yellow"))
        first = first_unrecognized(report)
        if first is not None:
            console.print(_unrecognized_panel(report, first))

    masked = _masked(report)
    if masked is not None and masked is not shown:
        console.print(_finding_panel(report, masked, msg("also", lang), "magenta"))
    others = [f for f in report.findings if f is not shown and f is not masked]
    if others:
        table = Table(title=msg("other_findings", lang), title_justify="left", box=box.SIMPLE_HEAD,
                      show_edge=False, pad_edge=False)
        table.add_column(msg("kind", lang), no_wrap=True)
        table.add_column(msg("id", lang), no_wrap=True)
        table.add_column(msg("count", lang), justify="right", no_wrap=True)
        table.add_column(msg("first_seen", lang), overflow="fold")
        for f in others:
            table.add_row(msg(f.sig.kind, lang), f.sig.id, str(f.count), _short_where(f.first, with_rank=True))
        console.print(table)
    if report.unrecognized:
        table = Table(title=msg("unrecognized", lang), title_justify="left", box=box.SIMPLE_HEAD,
                      show_edge=False, pad_edge=False)
        table.add_column(msg("exception", lang), overflow="fold", max_width=28)
        table.add_column(msg("message", lang), overflow="fold")
        table.add_column(msg("count", lang), justify="right", no_wrap=True)
        table.add_column(msg("first_seen", lang), overflow="fold", max_width=24)
        for u in report.unrecognized[:20]:
            message = u.message if len(u.message) <= 160 else u.message[:160] + "…"
            where = _short_where(u.first, with_rank=True) + (f"\n{u.frame}" if u.frame else "")
            table.add_row(u.exc_type, message, str(u.count), where)
        console.print(table)
    rows = _timeline_rows(report)
    if rows:
        table = Table(title=msg("timeline", lang), title_justify="left", box=box.SIMPLE_HEAD, show_edge=False,
                      pad_edge=False)
        table.add_column(msg("rank", lang), overflow="fold", max_width=20)
        table.add_column(msg("first_failure", lang), overflow="fold")
        table.add_column(msg("first_seen", lang), overflow="fold", max_width=30)
        explained = any(row[3] for row in rows)
        if explained:
            table.add_column(msg("explained_by", lang), overflow="fold", max_width=22)
        for row in rows[:MAX_TIMELINE_ROWS]:
            table.add_row(*(row if explained else row[:3]))
        console.print(table)
        if len(rows) > MAX_TIMELINE_ROWS:
            console.print(Text(msg("more_rows", lang, n=len(rows) - MAX_TIMELINE_ROWS), style="dim"))
    if report.story is not None:
        console.print(Text.assemble((_label("verdict", lang), "bold"), report.story.verdict_reason))
        if report.failed or report.story.checkpoint:
            console.print(Text.assemble((_label("last_checkpoint", lang), "bold"), checkpoint_text(report)))
    s = report.stats
    console.print(Text(msg("stats", lang, lines=s.lines, mb=f"{s.bytes / 1e6:.1f}", sources=s.sources,
                           seconds=f"{s.seconds:.2f}"), style="dim"))


def _unrecognized_hint(u: Unrecognized, lang: str) -> str:
    return msg("unrecognized_hint_lone" if u.lone else "unrecognized_hint", lang) + msg("unrecognized_teach", lang)


def _unrecognized_panel(report: Report, u: Unrecognized) -> Panel:
    lang = report.lang
    body: list[RenderableType] = [
        Text.assemble((_label("where", lang), "bold"), where_text(u.first, lang)),
        Text.assemble((_label("seen", lang), "bold"), msg("times", lang, n=u.count)
                      + (" · " + msg("on_ranks", lang, ranks=compact_ranks(u.ranks)) if u.ranks else "")),
    ]
    if u.frame:
        body.append(Text.assemble((_label("frame", lang), "bold"), u.frame))
    body += [Text(""), Text(f"{u.exc_type}: {u.message}", style="bold"), Text(""),
             Text(_unrecognized_hint(u, lang))]
    title = Text(f"{_label('first_error', lang)}{u.exc_type}", style="bold yellow")
    return Panel(Group(*body), title=title, title_align="left", border_style="yellow", box=box.ROUNDED)


def _masked(report: Report) -> Finding | None:
    """The exit-code-masked finding, when it deserves a panel of its own beside the root cause."""
    if not report.status_masked:
        return None
    return next((f for f in report.findings if f.sig.id == MASKED_ID), None)


def render_markdown(report: Report) -> str:
    lang = report.lang
    out: list[str] = ["# diagnose report", ""]
    job = job_text(report)
    if job:
        out += [f"**{msg('job', lang)}{_colon(lang)}** {job}", ""]
    rc = report.root_cause
    shown = rc
    if rc is None and report.only_symptoms:
        shown = next(f for f in report.findings if f.sig.kind == "symptom")
        out += [f"**{msg('no_root_cause', lang)}{_stop(lang)}** {msg('only_symptoms', lang)}", ""]
    elif rc is None:
        out += [f"**{msg('no_failure', lang) if not report.failed else msg('no_root_cause', lang)}{_stop(lang)}**", ""]
        first = first_unrecognized(report)
        if first is not None:
            out += [f"## {_label('first_error', lang)}`{first.exc_type}`", "",
                    f"- **{msg('where', lang)}{_colon(lang)}** {where_text(first.first, lang)}",
                    *([f"- **{msg('frame', lang)}{_colon(lang)}** `{first.frame}`"] if first.frame else []), "",
                    "```", f"{first.exc_type}: {first.message}", "```", "",
                    _unrecognized_hint(first, lang), ""]
    if shown is not None:
        heading = msg("root_cause", lang) if shown is rc else msg("symptom", lang)
        out += [f"## {heading}: {shown.sig.title.get(lang)} (`{shown.sig.id}`)", "",
                f"- **{msg('where', lang)}{_colon(lang)}** {where_text(shown.first, lang)}",
                f"- **{msg('seen', lang)}{_colon(lang)}** {seen_text(shown, lang)}", "",
                f"### {msg('evidence', lang)}", "", "```"]
        for e in shown.evidence:
            out.append(f"{'>' if e.key else ' '} {e.lineno:>6} | {e.raw[:EVIDENCE_WIDTH]}")
        out += ["```", ""]
        if shown is rc:
            out += [f"- {line}" for line in echo_lines(report)] + ([""] if echo_lines(report) else [])
        out += [f"### {msg('why', lang)}", "", report.why[shown.sig.id], "",
                f"### {msg('remedy', lang)}", "", report.remedy[shown.sig.id], ""]
        if shown.sig.references:
            out += [f"### {msg('references', lang)}", ""] + [f"- {r}" for r in shown.sig.references] + [""]
    masked = _masked(report)
    if masked is not None and masked is not shown:
        out += [f"## {_label('also', lang)}{masked.sig.title.get(lang)} (`{masked.sig.id}`)", "",
                report.why[masked.sig.id], "", report.remedy[masked.sig.id], ""]
    others = [f for f in report.findings if f is not shown and f is not masked]
    if others:
        out += [f"## {msg('other_findings', lang)}", "",
                f"| {msg('kind', lang)} | {msg('id', lang)} | {msg('count', lang)} | {msg('first_seen', lang)} |",
                "|---|---|---:|---|"]
        out += [f"| {msg(f.sig.kind, lang)} | `{f.sig.id}` | {f.count} | {where_text(f.first, lang)} |"
                for f in others]
        out.append("")
    if report.unrecognized:
        out += [f"## {msg('unrecognized', lang)}", "",
                f"| {msg('exception', lang)} | {msg('message', lang)} | {msg('count', lang)} | "
                f"{msg('first_seen', lang)} |", "|---|---|---:|---|"]
        for u in report.unrecognized[:20]:
            message = u.message.replace("|", "\\|")[:160]
            out.append(f"| `{u.exc_type}` | {message} | {u.count} | {where_text(u.first, lang)} |")
        out.append("")
    rows = _timeline_rows(report)
    if rows:
        out += [f"## {msg('timeline', lang)}", "",
                f"| {msg('rank', lang)} | {msg('first_failure', lang)} | {msg('where', lang)} | "
                f"{msg('explained_by', lang)} |", "|---|---|---|---|"]
        out += ["| " + " | ".join(cell.replace("|", "\\|") for cell in row) + " |" for row in rows[:50]]
        out.append("")
    if report.story is not None:
        out += [f"## {msg('verdict', lang)}", "", report.story.verdict_reason, ""]
        if report.failed or report.story.checkpoint:
            out += [f"**{msg('last_checkpoint', lang)}{_colon(lang)}** {checkpoint_text(report)}", ""]
    s = report.stats
    out.append("_" + msg("stats", lang, lines=s.lines, mb=f"{s.bytes / 1e6:.1f}", sources=s.sources,
                         seconds=f"{s.seconds:.2f}") + "_")
    return "\n".join(out) + "\n"
