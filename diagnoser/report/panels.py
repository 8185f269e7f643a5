"""The panels of the terminal report: one finding in full (title, where, evidence, why, remedy) and the first
unrecognised error. A panel's title is its first line inside, wrapped like the rest, never cut at the border."""

from __future__ import annotations

from rich import box
from rich.console import Group, RenderableType
from rich.panel import Panel
from rich.text import Text

from ..i18n import msg
from ..judge.findings import Finding, Unrecognized
from ..judge.rank import compact_ranks
from ..safe import printable
from .health import sparkline, values_text
from .model import Report, clip, clip_key
from .words import EVIDENCE_WIDTH, exception_title, headline, label, seen_text, unrecognized_hint, where_text
from .wrap import Wrapped, units


def evidence(f: Finding) -> Group:
    """Context lines cut to one row each (with an ellipsis); the key line (marked >) is shown whole, wrapped (up to
    4 KiB: its first 3 and last 1)."""
    rows: list[RenderableType] = []
    width = max((len(str(e.lineno)) for e in f.evidence), default=1)
    for e in f.evidence:
        raw = printable((clip_key(e.raw) if e.key else e.raw).replace("\t", "    "))
        marker = ">" if e.key else " "
        line = Text(f"{marker} {e.lineno:>{width}} │ ", style="bold red" if e.key else "dim")
        if e.key:
            line.append(raw, style="bold")
            line.overflow = "fold"
        else:
            line.append(raw[:EVIDENCE_WIDTH] + ("…" if len(raw) > EVIDENCE_WIDTH else ""))
            line.no_wrap = True
            line.overflow = "ellipsis"
        rows.append(line)
    return Group(*rows)


def _heading(text: str, lang: str) -> Text:
    return Text(text, style="bold")


def finding_panel(report: Report, f: Finding, heading: str, style: str, note: str = "") -> Panel:
    lang = report.lang
    tag = f"{f.sig.id} · {msg(f.sig.kind, lang)} · {msg(f.sig.severity, lang)}"
    body: list[RenderableType] = [
        Wrapped(headline(f, lang), f"bold {style}"),
        Text(printable(tag), style="dim"),
    ]
    if note:  # the exit status stands alone: it has no place in the logs, and the evidence line says it all
        body.append(Wrapped(note, "italic"))
    else:
        body += [Wrapped(label("where", lang) + units(where_text(f.first, lang))),
                 Wrapped(label("seen", lang) + units(seen_text(f, lang)))]
    if f.health is not None:  # a training-health finding: the metric, its values and the series as a sparkline
        body += [Wrapped(label("metric_label", lang) + f"{f.health.series.key}: {values_text(f.health, lang)}"),
                 Wrapped(label("series_label", lang) + sparkline(f.health))]
    body += [
        Text(""),
        Text(msg("evidence", lang), style="bold"),
        evidence(f),
        Text(""),
        Text(msg("why", lang), style="bold"),
        Wrapped(report.why[f.sig.id]),
        Text(""),
        Text(msg("remedy", lang), style="bold green"),
        Wrapped(report.remedy[f.sig.id]),
    ]
    return Panel(Group(*body), title=_heading(heading, lang), title_align="left", border_style=style,
                 box=box.ROUNDED)


def unrecognized_panel(report: Report, u: Unrecognized, heading: str) -> Panel:
    lang = report.lang
    seen = msg("times", lang, n=u.count)
    if len(u.ranks) == 1:
        seen += " · " + msg("on_rank", lang, rank=next(iter(u.ranks)))
    elif u.ranks:
        seen += " · " + msg("on_ranks", lang, ranks=compact_ranks(u.ranks))
    body: list[RenderableType] = [
        Wrapped(exception_title(u, lang), "bold yellow"),
        Wrapped(label("where", lang) + units(where_text(u.first, lang))),
        Wrapped(label("seen", lang) + units(seen)),
    ]
    if u.frame:
        body.append(Wrapped(label("frame", lang) + clip(u.frame)))
    message = f"{clip(u.exc_type)}: {clip(u.message)}" if u.exc_type != "?" else clip(u.message)
    body += [Text(""), Text(printable(message), style="bold", overflow="fold"), Text(""),
             Wrapped(unrecognized_hint(u, lang))]
    return Panel(Group(*body), title=_heading(heading, lang), title_align="left", border_style="yellow",
                 box=box.ROUNDED)
