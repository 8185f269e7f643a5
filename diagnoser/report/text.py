"""Render a report as rich terminal text (plain when not a terminal).

The full report comes first; it ends with what a reader needs on the last screen of an 80x24 terminal: the lead's
title, where it happened and the first remedy step, then one summary line (like pytest's last line). Secondary
findings are one row each unless --verbose asks for every finding in full.
"""

from __future__ import annotations

from typing import TextIO

from rich import box
from rich.cells import cell_len
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..i18n import msg
from ..judge.findings import Finding, Location
from ..safe import printable
from .health import health_findings, health_rows, precursor_lines
from .model import Report, first_unrecognized
from .nodes import node_rows
from .panels import finding_panel, unrecognized_panel
from .ranks import culprit_line, notes, rank_groups
from .term import terminal
from .words import (
    after_colon,
    checkpoint_text,
    echo_lines,
    exception_title,
    first_step,
    headline,
    job_parts,
    label,
    masked_finding,
    short_where,
    stop,
    summary_line,
    timeline_rows,
)
from .wrap import NBSP, Wrapped, fit_name, units

MAX_TIMELINE_ROWS = 12
SPARK_MIN, SPARK_MAX = 16, 48  # the sparkline's width in the health table
NAME_CELLS = 34  # a file name in a table is shortened in its middle to this many cells, never split


def _t(text: str, style: str = "") -> Text:
    """Log text, file names and signature fields as rich Text: never read as markup, controls made visible."""
    return Text(printable(text), style=style)


def _table(title: str) -> Table:
    return Table(title=title, title_justify="left", box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)


def _where_cell(loc: Location, with_rank: bool = False) -> Text:
    """`file:line · rank 3 · 10:22:34`: the file name whole (shortened in its middle when long)."""
    name = fit_name(f"{loc.source.rsplit('/', 1)[-1]}:{loc.line}", NAME_CELLS)
    rest = short_where(loc, with_rank).split(" · ", 1)[1:] if " · " in short_where(loc, with_rank) else []
    return Text(printable(" · ".join([name.replace(" ", NBSP), *rest])))


def _lead(console: Console, report: Report) -> Finding | None:
    lang = report.lang
    lead = report.lead
    if lead.role == "cause" and lead.finding is not None:
        console.print(finding_panel(report, lead.finding, msg("root_cause", lang), "red"))
        for line in echo_lines(report):
            console.print(Wrapped(line, "dim", hang=2))
        for line in precursor_lines(report):
            console.print(Wrapped(line, "yellow", hang=2))
    elif lead.role == "symptom" and lead.finding is not None:
        console.print(Text(msg("no_root_cause", lang), style="bold yellow"))
        console.print(Wrapped(msg("only_symptoms", lang)))
        console.print(finding_panel(report, lead.finding, msg("symptom", lang), "yellow"))
    elif lead.role == "exit" and lead.finding is not None:
        console.print(finding_panel(report, lead.finding, msg("failed_heading", lang), "red", msg("exit_lead", lang)))
    elif lead.role == "health" and lead.finding is not None:
        console.print(Text(msg("health_headline", lang) + stop(lang), style="bold yellow"))
        console.print(finding_panel(report, lead.finding, msg("health", lang), "yellow"))
    elif lead.role == "unrecognized" or report.failed:
        console.print(Text(msg("no_root_cause", lang) + stop(lang), style="bold yellow"))
        first = first_unrecognized(report)
        if first is not None:
            console.print(unrecognized_panel(report, first, msg("first_error", lang)))
    elif lead.role == "empty":
        console.print(Text(msg("nothing_read", lang) + stop(lang), style="bold yellow"))
        console.print(Wrapped(msg("nothing_read_detail", lang, sources=report.stats.sources, skipped=report.skipped)))
    else:
        console.print(Text(msg("no_failure", lang) + stop(lang), style="bold green"))
    return lead.finding


def _others(console: Console, report: Report, others: list[Finding], verbose: bool) -> None:
    lang = report.lang
    if verbose:
        for f in others:
            console.print(finding_panel(report, f, msg(f.sig.kind, lang), "blue"))
        return
    table = _table(msg("other_findings", lang) + ("" if lang == "zh" else " ") + msg("more_findings", lang))
    table.add_column(msg("kind", lang), no_wrap=True)
    table.add_column(msg("id", lang), no_wrap=True, overflow="ellipsis")
    table.add_column(msg("count", lang), justify="right", no_wrap=True)
    table.add_column(msg("first_seen", lang), overflow="ellipsis")
    for f in others:
        table.add_row(_t(msg(f.sig.kind, lang)), _t(f.sig.id), _t(str(f.count)), _where_cell(f.first, with_rank=True))
    console.print(table)


def _unrecognized(console: Console, report: Report, verbose: bool) -> None:
    lang = report.lang
    lead = first_unrecognized(report) if report.lead.finding is None else None
    listed = [u for u in report.unrecognized if u.echo_of is None and u is not lead]  # the lead has its panel
    if not listed:
        return
    if verbose:
        for u in listed[:20]:
            console.print(unrecognized_panel(report, u, msg("unrecognized", lang)))
        return
    table = _table(msg("unrecognized", lang))
    table.add_column(msg("exception", lang), overflow="ellipsis", max_width=28)
    table.add_column(msg("message", lang), overflow="ellipsis")
    table.add_column(msg("count", lang), justify="right", no_wrap=True)
    table.add_column(msg("first_seen", lang), overflow="ellipsis", max_width=NAME_CELLS)
    for u in listed[:20]:
        message = u.message if len(u.message) <= 160 else u.message[:160] + "…"
        where = _where_cell(u.first, with_rank=True)
        if u.frame:
            where.append("\n" + printable(fit_name(u.frame.rsplit("/", 1)[-1], NAME_CELLS)))
        table.add_row(_t(exception_title(u, lang)), _t(message), _t(str(u.count)), where)
    console.print(table)


def _timeline(console: Console, report: Report) -> None:
    lang = report.lang
    rows = timeline_rows(report)
    if not rows:
        return
    table = _table(msg("timeline", lang))
    table.add_column(msg("rank", lang), overflow="ellipsis", max_width=22)
    table.add_column(msg("first_failure", lang), overflow="ellipsis")
    explained = any(row[3] for row in rows)
    if explained:
        table.add_column(msg("explained_by", lang), overflow="ellipsis", max_width=26)
    for who, what, where, why in rows[:MAX_TIMELINE_ROWS]:
        name, _, rest = where.partition(" · ")
        place = [fit_name(name, NAME_CELLS).replace(" ", NBSP), *([rest] if rest else [])]
        cell = _t(what + "\n" + " · ".join(place))
        cells = [_t(units(who, ", ")), cell, _t(units(why))]
        table.add_row(*(cells if explained else cells[:2]))
    console.print(table)
    if len(rows) > MAX_TIMELINE_ROWS:
        console.print(Text(msg("more_rows", lang, n=len(rows) - MAX_TIMELINE_ROWS), style="dim"))


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


def _nodes(console: Console, report: Report) -> None:
    """The Ray nodes read (diagnose --ray): each node's state, the ones not read with the reason."""
    if report.nodes is None:
        return
    lang = report.lang
    table = _table(msg("ray_nodes", lang))
    table.add_column(msg("node", lang), overflow="fold", max_width=30)
    table.add_column(msg("state", lang), no_wrap=True)
    table.add_column(msg("note", lang), overflow="fold")
    for node_row in node_rows(report.nodes, lang):
        table.add_row(*(_t(cell) for cell in node_row))
    console.print(table)
    if not report.failed:  # nothing in the nodes' logs: the actor's own exception may be in the driver's output
        console.print(Wrapped(msg("ray_driver_hint", lang), "dim"))


def _recap(console: Console, report: Report) -> None:
    """The lead again in three lines, so that the last screen answers: what, where, the first step."""
    lang = report.lang
    lead = report.lead
    if lead.finding is not None:
        f = lead.finding
        heading = {"cause": "root_cause", "symptom": "symptom", "exit": "failed_heading", "health": "health"}[lead.role]
        console.print(Wrapped(label(heading, lang) + headline(f, lang), "bold red" if lead.role != "symptom"
                              else "bold yellow"))
        if lead.role != "exit":
            console.print(Wrapped(label("at", lang) + units(where_line(f.first, lang)), indent=2, hang=2))
        step = first_step(report.remedy.get(f.sig.id, ""))
        if step:
            console.print(Wrapped(label("first_step", lang) + step, indent=2, hang=2))
    elif lead.unrecognized is not None:
        u = lead.unrecognized
        message = u.message if len(u.message) <= 120 else u.message[:120] + "…"
        title = exception_title(u, lang) + (after_colon(lang) + message if message and u.exc_type != "?" else "")
        console.print(Wrapped(label("first_error", lang) + title, "bold yellow"))
        console.print(Wrapped(label("at", lang) + units(where_line(u.first, lang)), indent=2, hang=2))


def where_line(loc: Location, lang: str) -> str:
    parts = []
    if loc.rank is not None:
        parts.append(msg("rank_word", lang, rank=loc.rank))
    if loc.host:
        parts.append(msg("host_word", lang, host=loc.host))
    parts.append(f"{loc.source}:{loc.line}")
    return " · ".join(parts)


def render_text(report: Report, out: TextIO, *, color: bool, width: int | None = None, verbose: bool = False) -> None:
    console = terminal(out, color, width)
    lang = report.lang
    culprit = culprit_line(report)  # which rank started it (judge/forensics.py), first
    if culprit:
        console.print(Wrapped(culprit, "bold red"))
    parts = job_parts(report)
    if parts:
        console.print(Wrapped(label("job", lang) + " · ".join(p.replace(" ", NBSP) for p in parts), "dim"))
    shown = _lead(console, report)
    masked = masked_finding(report)
    if masked is not None and masked is not shown:
        console.print(finding_panel(report, masked, msg("also", lang), "magenta"))
    if health_findings(report):
        _health_table(console, report)
    others = [f for f in report.findings if f is not shown and f is not masked and f.health is None]
    if others:
        _others(console, report, others, verbose)
    _unrecognized(console, report, verbose)
    _timeline(console, report)
    _ranks_table(report, console)
    if report.story is not None:
        console.print(Wrapped(label("verdict", lang) + report.story.verdict_reason))
        if report.failed or report.story.checkpoint:
            console.print(Wrapped(label("last_checkpoint", lang) + checkpoint_text(report)))
    _nodes(console, report)
    s = report.stats
    if s.unlisted:
        console.print(Wrapped(msg("unlisted", lang, n=s.unlisted, kinds=len(report.unrecognized)), "yellow"))
    console.print(Wrapped(msg("stats", lang, lines=s.lines, mb=f"{s.bytes / 1e6:.1f}", sources=s.sources,
                              seconds=f"{s.seconds:.2f}"), "dim"))
    if report.failed:
        console.print(Text(""))
        _recap(console, report)
    console.print(Wrapped(units(summary_line(report)), "bold", hang=2))


def _ranks_table(report: Report, console: Console) -> None:
    lang = report.lang
    groups = rank_groups(report)
    if groups:
        table = Table(title=msg("ranks_table", lang), title_justify="left", box=box.SIMPLE_HEAD, show_edge=False,
                      pad_edge=False)
        for key, width in (("col_ranks", 16), ("col_host", 18), ("col_state", 8), ("col_step", 8),
                           ("col_time", 9), ("col_what", None)):
            table.add_column(msg(key, lang), overflow="ellipsis", max_width=width)  # a name is cut with …, never split
        for row in groups:
            table.add_row(*(_t(cell) for cell in row))
        console.print(table)
    for line in notes(report):
        console.print(Wrapped(line, "dim"))
