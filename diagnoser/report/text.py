"""Render a report as rich terminal text (plain when not a terminal)."""

from __future__ import annotations

import os
from typing import TextIO

from rich import box
from rich.cells import cell_len
from rich.console import Console, Group, RenderableType
from rich.panel import Panel
from rich.table import Table
from rich.text import Text

from ..i18n import msg
from ..judge.findings import Finding, Unrecognized
from ..judge.rank import compact_ranks
from ..safe import printable, to_int
from .health import health_findings, health_rows, precursor_lines, sparkline, values_text
from .model import Report, first_unrecognized
from .nodes import node_rows
from .ranks import culprit_line, notes, rank_groups
from .words import (
    EVIDENCE_WIDTH,
    checkpoint_text,
    colon,
    echo_lines,
    job_text,
    label,
    masked_finding,
    seen_text,
    short_where,
    stop,
    timeline_rows,
    unrecognized_hint,
    where_text,
)

MAX_TIMELINE_ROWS = 12
SPARK_MIN, SPARK_MAX = 16, 48  # the sparkline's width in the health table


def _t(text: str, style: str = "") -> Text:
    """Log text, file names and signature fields as rich Text: never read as markup, controls made visible."""
    return Text(printable(text), style=style)


def _field(key: str, lang: str, value: str) -> Text:
    return Text.assemble((label(key, lang), "bold"), printable(value))


def _evidence(f: Finding) -> Group:
    """Context lines cut to one row each; the key line (marked >) wraps so it is read in full."""
    rows: list[Text] = []
    width = max((len(str(e.lineno)) for e in f.evidence), default=1)
    for e in f.evidence:
        raw = printable(e.raw.replace("\t", "    "))
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
    tag = _t(f"{f.sig.id} · {msg(f.sig.kind, lang)} · {f.sig.severity}", style="dim")
    body: list[RenderableType] = [
        tag,
        _field("where", lang, where_text(f.first, lang)),
        _field("seen", lang, seen_text(f, lang)),
    ]
    if f.health is not None:
        body += [_field("metric_label", lang, f"{f.health.series.key}: {values_text(f.health, lang)}"),
                 _field("series_label", lang, sparkline(f.health))]
    body += [
        Text(""),
        Text(msg("evidence", lang), style="bold"),
        _evidence(f),
        Text(""),
        Text(msg("why", lang), style="bold"),
        _t(report.why[f.sig.id]),
        Text(""),
        Text(msg("remedy", lang), style="bold green"),
        _t(report.remedy[f.sig.id]),
    ]
    title = _t(f"{heading}{colon(lang)} {f.sig.title.get(lang)}" if lang != "zh"
               else f"{heading}：{f.sig.title.get(lang)}", style=f"bold {style}")
    return Panel(Group(*body), title=title, title_align="left", border_style=style, box=box.ROUNDED)


MIN_WIDTH, MAX_WIDTH = 40, 1000  # COLUMNS=0 printed an empty report; a huge one pads every line to it


def report_width(width: int | None = None) -> int | None:
    """The width asked for (or COLUMNS), within MIN_WIDTH..MAX_WIDTH; None: the terminal's (rich's default)."""
    if width is None:
        width = to_int(os.environ.get("COLUMNS"))
    return None if width is None else min(max(width, MIN_WIDTH), MAX_WIDTH)


def _health_table(console: Console, report: Report) -> None:
    """One row per health finding with its series as a sparkline, as wide as the terminal leaves room for; where a
    readable one does not fit beside the other columns (80 columns and a long metric name), two lines a finding."""
    lang = report.lang
    heads = [msg(k, lang) for k in ("id", "metric", "steps", "values")]
    rows = health_rows(report, 1)
    # each column and the gap after it (padding, the box's divider, padding)
    room = console.width - sum(max(cell_len(h), *(cell_len(r[i]) for r in rows)) + 3 for i, h in enumerate(heads))
    if room < SPARK_MIN:
        console.print(Text(msg("health", lang), style="italic"))
        for row in health_rows(report, min(console.width - 2, SPARK_MAX)):
            console.print(_t(" · ".join(row[:4])))
            console.print(_t("  " + row[4]))
        return
    table = Table(title=msg("health", lang), title_justify="left", box=box.SIMPLE_HEAD, show_edge=False,
                  pad_edge=False)
    for head in (*heads, msg("series", lang)):
        table.add_column(head, no_wrap=True)
    for row in health_rows(report, min(room, SPARK_MAX)):
        table.add_row(*(_t(cell) for cell in row))
    console.print(table)


def render_text(report: Report, out: TextIO, *, color: bool, width: int | None = None) -> None:
    console = Console(file=out, no_color=not color, force_terminal=color if color else None,
                      highlight=False, width=report_width(width), emoji=False, soft_wrap=False)
    lang = report.lang
    rc = report.root_cause
    shown: Finding | None = rc
    lead = culprit_line(report)
    if lead:
        console.print(Text(lead, style="bold red"))
    job = job_text(report)
    if job:
        console.print(_field("job", lang, job), style="dim")
    healthy_findings = health_findings(report)
    if rc is not None:
        console.print(_finding_panel(report, rc, msg("root_cause", lang), "red"))
        for line in echo_lines(report):
            console.print(_t(line, style="dim"))
        for line in precursor_lines(report):
            console.print(_t(line, style="yellow"))
    elif report.only_symptoms:
        shown = next(f for f in report.findings if f.sig.kind == "symptom")
        console.print(Text(msg("no_root_cause", lang), style="bold yellow"))
        console.print(Text(msg("only_symptoms", lang)))
        console.print(_finding_panel(report, shown, msg("symptom", lang), "yellow"))
    elif not report.failed and healthy_findings:
        shown = healthy_findings[0]
        console.print(Text(msg("health_headline", lang) + stop(lang), style="bold yellow"))
        console.print(_finding_panel(report, shown, msg("health", lang), "yellow"))
    elif not report.failed:
        console.print(Text(msg("no_failure", lang) + stop(lang), style="bold green"))
    else:
        console.print(Text(msg("no_root_cause", lang) + stop(lang), style="bold yellow"))
        first = first_unrecognized(report)
        if first is not None:
            console.print(_unrecognized_panel(report, first))

    masked = masked_finding(report)
    if masked is not None and masked is not shown:
        console.print(_finding_panel(report, masked, msg("also", lang), "magenta"))
    others = [f for f in report.findings if f is not shown and f is not masked and f.health is None]
    if health_findings(report):
        _health_table(console, report)
    if others:
        table = Table(title=msg("other_findings", lang), title_justify="left", box=box.SIMPLE_HEAD,
                      show_edge=False, pad_edge=False)
        table.add_column(msg("kind", lang), no_wrap=True)
        table.add_column(msg("id", lang), no_wrap=True)
        table.add_column(msg("count", lang), justify="right", no_wrap=True)
        table.add_column(msg("first_seen", lang), overflow="fold")
        for f in others:
            table.add_row(_t(msg(f.sig.kind, lang)), _t(f.sig.id), _t(str(f.count)),
                          _t(short_where(f.first, with_rank=True)))
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
            where = short_where(u.first, with_rank=True) + (f"\n{u.frame}" if u.frame else "")
            table.add_row(_t(u.exc_type), _t(message), _t(str(u.count)), _t(where))
        console.print(table)
    rows = timeline_rows(report)  # type: ignore[assignment]
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
            table.add_row(*(_t(cell) for cell in (row if explained else row[:3])))
        console.print(table)
        if len(rows) > MAX_TIMELINE_ROWS:
            console.print(Text(msg("more_rows", lang, n=len(rows) - MAX_TIMELINE_ROWS), style="dim"))
    _ranks_table(report, console)
    if report.story is not None:
        console.print(_field("verdict", lang, report.story.verdict_reason))
        if report.failed or report.story.checkpoint:
            console.print(_field("last_checkpoint", lang, checkpoint_text(report)))
    if report.nodes is not None:
        table = Table(title=msg("ray_nodes", lang), title_justify="left", box=box.SIMPLE_HEAD, show_edge=False,
                      pad_edge=False)
        table.add_column(msg("node", lang), overflow="fold", max_width=30)
        table.add_column(msg("state", lang), no_wrap=True)
        table.add_column(msg("note", lang), overflow="fold")
        for node_row in node_rows(report.nodes, lang):
            table.add_row(*(_t(cell) for cell in node_row))
        console.print(table)
        if not report.failed:  # nothing in the nodes' logs: the actor's own exception may be in the driver's output
            console.print(Text(msg("ray_driver_hint", lang), style="dim"))
    s = report.stats
    if s.unlisted:
        console.print(Text(msg("unlisted", lang, n=s.unlisted, kinds=len(report.unrecognized)), style="yellow"))
    console.print(Text(msg("stats", lang, lines=s.lines, mb=f"{s.bytes / 1e6:.1f}", sources=s.sources,
                           seconds=f"{s.seconds:.2f}"), style="dim"))


def _unrecognized_panel(report: Report, u: Unrecognized) -> Panel:
    lang = report.lang
    body: list[RenderableType] = [
        _field("where", lang, where_text(u.first, lang)),
        _field("seen", lang, msg("times", lang, n=u.count)
               + (" · " + msg("on_ranks", lang, ranks=compact_ranks(u.ranks)) if u.ranks else "")),
    ]
    if u.frame:
        body.append(_field("frame", lang, u.frame))
    body += [Text(""), _t(f"{u.exc_type}: {u.message}", style="bold"), Text(""),
             _t(unrecognized_hint(u, lang))]
    title = _t(f"{label('first_error', lang)}{u.exc_type}", style="bold yellow")
    return Panel(Group(*body), title=title, title_align="left", border_style="yellow", box=box.ROUNDED)


def _ranks_table(report: Report, console: Console) -> None:
    lang = report.lang
    groups = rank_groups(report)
    if groups:
        table = Table(title=msg("ranks_table", lang), title_justify="left", box=box.SIMPLE_HEAD, show_edge=False,
                      pad_edge=False)
        for key, width in (("col_ranks", 16), ("col_host", 18), ("col_state", 8), ("col_step", 8),
                           ("col_time", 9), ("col_what", None)):
            table.add_column(msg(key, lang), overflow="fold", max_width=width)
        for row in groups:
            table.add_row(*(Text(cell) for cell in row))
        console.print(table)
    for line in notes(report):
        console.print(Text(line, style="dim"))
