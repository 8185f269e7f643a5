"""Render a report as rich terminal text (plain when not a terminal) or as Markdown."""

from __future__ import annotations

from typing import TextIO

from rich import box
from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from .findings import Finding, Location, Unrecognized
from .i18n import msg
from .rank import compact_ranks
from .report import MASKED_ID, Report, first_unrecognized

EVIDENCE_WIDTH = 300


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
        Text.assemble((msg("where", lang) + ": ", "bold"), where_text(f.first, lang)),
        Text.assemble((msg("seen", lang) + ": ", "bold"), seen_text(f, lang)),
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
    title = Text(f"{heading}: {f.sig.title.get(lang)}", style=f"bold {style}")
    return Panel(Group(*body), title=title, title_align="left", border_style=style, box=box.ROUNDED)


def render_text(report: Report, out: TextIO, *, color: bool, width: int | None = None) -> None:
    console = Console(file=out, no_color=not color, force_terminal=color if color else None,
                      highlight=False, width=width, emoji=False, soft_wrap=False)
    lang = report.lang
    rc = report.root_cause
    shown: Finding | None = rc
    if rc is not None:
        console.print(_finding_panel(report, rc, msg("root_cause", lang), "red"))
    elif report.only_symptoms:
        shown = next(f for f in report.findings if f.sig.kind == "symptom")
        console.print(Text(msg("no_root_cause", lang), style="bold yellow"))
        console.print(Text(msg("only_symptoms", lang)))
        console.print(_finding_panel(report, shown, msg("symptom", lang), "yellow"))
    elif not report.failed:
        console.print(Text(msg("no_failure", lang) + ".", style="bold green"))
    else:
        console.print(Text(msg("no_root_cause", lang) + ".", style="bold yellow"))
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
        table.add_column(msg("id", lang), overflow="fold")
        table.add_column(msg("count", lang), justify="right", no_wrap=True)
        table.add_column(msg("first_seen", lang), overflow="fold")
        for f in others:
            table.add_row(msg(f.sig.kind, lang), f.sig.id, str(f.count), where_text(f.first, lang))
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
            where = where_text(u.first, lang) + (f"\n{u.frame}" if u.frame else "")
            table.add_row(u.exc_type, message, str(u.count), where)
        console.print(table)
    s = report.stats
    console.print(Text(msg("stats", lang, lines=s.lines, mb=f"{s.bytes / 1e6:.1f}", sources=s.sources,
                           seconds=f"{s.seconds:.2f}"), style="dim"))


def _unrecognized_panel(report: Report, u: Unrecognized) -> Panel:
    lang = report.lang
    body: list[RenderableType] = [
        Text.assemble((msg("where", lang) + ": ", "bold"), where_text(u.first, lang)),
        Text.assemble((msg("seen", lang) + ": ", "bold"), msg("times", lang, n=u.count)
                      + (" · " + msg("on_ranks", lang, ranks=compact_ranks(u.ranks)) if u.ranks else "")),
    ]
    if u.frame:
        body.append(Text.assemble((msg("frame", lang) + ": ", "bold"), u.frame))
    body += [Text(""), Text(f"{u.exc_type}: {u.message}", style="bold"), Text(""),
             Text(msg("unrecognized_hint", lang))]
    title = Text(f"{msg('first_error', lang)}: {u.exc_type}", style="bold yellow")
    return Panel(Group(*body), title=title, title_align="left", border_style="yellow", box=box.ROUNDED)


def _masked(report: Report) -> Finding | None:
    """The exit-code-masked finding, when it deserves a panel of its own beside the root cause."""
    if not report.status_masked:
        return None
    return next((f for f in report.findings if f.sig.id == MASKED_ID), None)


def render_markdown(report: Report) -> str:
    lang = report.lang
    out: list[str] = ["# diagnose report", ""]
    rc = report.root_cause
    shown = rc
    if rc is None and report.only_symptoms:
        shown = next(f for f in report.findings if f.sig.kind == "symptom")
        out += [f"**{msg('no_root_cause', lang)}.** {msg('only_symptoms', lang)}", ""]
    elif rc is None:
        out += [f"**{msg('no_failure', lang) if not report.failed else msg('no_root_cause', lang)}.**", ""]
        first = first_unrecognized(report)
        if first is not None:
            out += [f"## {msg('first_error', lang)}: `{first.exc_type}`", "",
                    f"- **{msg('where', lang)}:** {where_text(first.first, lang)}",
                    *([f"- **{msg('frame', lang)}:** `{first.frame}`"] if first.frame else []), "",
                    "```", f"{first.exc_type}: {first.message}", "```", "", msg("unrecognized_hint", lang), ""]
    if shown is not None:
        heading = msg("root_cause", lang) if shown is rc else msg("symptom", lang)
        out += [f"## {heading}: {shown.sig.title.get(lang)} (`{shown.sig.id}`)", "",
                f"- **{msg('where', lang)}:** {where_text(shown.first, lang)}",
                f"- **{msg('seen', lang)}:** {seen_text(shown, lang)}", "",
                f"### {msg('evidence', lang)}", "", "```"]
        for e in shown.evidence:
            out.append(f"{'>' if e.key else ' '} {e.lineno:>6} | {e.raw[:EVIDENCE_WIDTH]}")
        out += ["```", "", f"### {msg('why', lang)}", "", report.why[shown.sig.id], "",
                f"### {msg('remedy', lang)}", "", report.remedy[shown.sig.id], ""]
        if shown.sig.references:
            out += [f"### {msg('references', lang)}", ""] + [f"- {r}" for r in shown.sig.references] + [""]
    masked = _masked(report)
    if masked is not None and masked is not shown:
        out += [f"## {msg('also', lang)}: {masked.sig.title.get(lang)} (`{masked.sig.id}`)", "",
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
    s = report.stats
    out.append("_" + msg("stats", lang, lines=s.lines, mb=f"{s.bytes / 1e6:.1f}", sources=s.sources,
                         seconds=f"{s.seconds:.2f}") + "_")
    return "\n".join(out) + "\n"
