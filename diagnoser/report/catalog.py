"""Render the signature catalogue: `--list` (one row each) and `--explain ID` (one in full)."""

from __future__ import annotations

from typing import TextIO

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..i18n import msg
from ..match.database import Database
from ..match.schema import Signature
from ..safe import json_dumps, printable
from .health import condition_text
from .text import report_width


def _console(out: TextIO, color: bool) -> Console:
    return Console(file=out, no_color=not color, force_terminal=color if color else None, highlight=False,
                   emoji=False, width=report_width())


def _t(text: str, style: str = "") -> Text:
    """A signature's own text (a user's file may hold anything): never markup, controls made visible."""
    return Text(printable(text), style=style)


def list_json(db: Database, lang: str) -> str:
    rows = [{"id": cs.sig.id, "kind": cs.sig.kind, "role": cs.sig.role, "severity": cs.sig.severity,
             "layer": cs.sig.layer, "title": cs.sig.title.get(lang), "path": cs.sig.path} for cs in _sorted(db)]
    return json_dumps(rows, indent=2)


def _sorted(db: Database) -> list:  # type: ignore[type-arg]
    return sorted(db.signatures, key=lambda cs: (cs.sig.layer, cs.sig.id))


WIDE = 110  # narrower than this, a table would squeeze the titles into a thin column


def render_list(db: Database, out: TextIO, lang: str, color: bool) -> None:
    console = _console(out, color)
    if console.width < WIDE:
        for cs in _sorted(db):  # two lines each: id, kind and layer; then the title, indented
            console.print(Text.assemble((printable(cs.sig.id), "bold"), f"  {cs.sig.kind} · {cs.sig.layer}"))
            for line in _t(cs.sig.title.get(lang)).wrap(console, max(20, console.width - 4), overflow="fold"):
                line.rstrip()
                console.print(_t("    ").append_text(line))
        console.print(_t(msg("signatures_count", lang, n=len(db.signatures)), style="dim"))
        return
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column(msg("id", lang), no_wrap=True)
    table.add_column(msg("kind", lang), no_wrap=True)
    table.add_column(msg("layer", lang), no_wrap=True)
    table.add_column(msg("title", lang), overflow="fold")
    for cs in _sorted(db):
        table.add_row(*(_t(x) for x in (cs.sig.id, cs.sig.kind, cs.sig.layer, cs.sig.title.get(lang))))
    console.print(table)
    console.print(_t(msg("signatures_count", lang, n=len(db.signatures)), style="dim"))


def render_explain(sig: Signature, out: TextIO, lang: str, color: bool) -> None:
    console = _console(out, color)
    console.print(_t(f"{sig.id}: {sig.title.get(lang)}", style="bold"))
    meta = f"{sig.kind} · {sig.role} · {sig.severity} · {sig.layer} · verdict {sig.verdict}"
    if sig.frameworks:
        meta += " · " + ", ".join(sig.frameworks)
    console.print(_t(meta + f" · {sig.path}", style="dim"))
    if sig.symptom_of:
        console.print(_t("symptom of: " + ", ".join(sig.symptom_of), style="dim"))
    console.print()
    console.print(_t(msg("why", lang), style="bold"))
    console.print(_t(sig.why.get(lang)))
    console.print()
    console.print(_t(msg("remedy", lang), style="bold green"))
    for variant in sig.remedy:
        if variant.when:
            cond = ", ".join(f"{t.name} {t.op} {t.value}" for t in variant.when)
            console.print(_t(f"when {cond}:", style="italic"))
        elif len(sig.remedy) > 1:
            console.print(_t("otherwise:", style="italic"))
        console.print(_t(variant.text.get(lang)))
    console.print()
    console.print(_t("Patterns" if not sig.metric else "Metric rule", style="bold"))
    for clause in sig.metric:  # a health rule: the metric keys it reads and when a series goes bad
        console.print(_t("  " + " | ".join(clause.names) + ": " + condition_text(clause)))
    for p in sig.any:
        console.print(_t("  " + p))
    for c in sig.all:
        console.print(_t(f"  and ({c.scope}{' ' + str(c.lines) if c.lines else ''}): {c.pattern}"))
    for c in sig.not_:
        console.print(_t(f"  not ({c.scope}{' ' + str(c.lines) if c.lines else ''}): {c.pattern}"))
    for seq in sig.frames:
        calls = " → ".join(f"{fp.file or '*'}:{fp.function or '*'}" for fp in seq)
        console.print(_t(f"  or frames: {calls}"))
    console.print()
    console.print(_t(msg("references", lang), style="bold"))
    for ref in sig.references:
        console.print(_t("  " + ref))
    if sig.falsepositives:
        console.print()
        console.print(_t(msg("falsepositives", lang), style="bold"))
        for fp in sig.falsepositives:
            console.print(_t("  " + fp))
    console.print()
    console.print(_t(msg("examples", lang), style="bold"))
    for ex in sig.examples_match[:2]:
        console.print(_t(ex.text.rstrip(), style="dim"))
        console.print(Text("  ---", style="dim"))


def markdown_table(db: Database) -> str:
    """The signature table of signatures/README.md (a test keeps the two in sync)."""
    rows = ["| id | kind | role | severity | layer | title |", "|---|---|---|---|---|---|"]
    for cs in _sorted(db):
        s = cs.sig
        rows.append(f"| `{s.id}` | {s.kind} | {s.role} | {s.severity} | {s.layer} | {s.title.en} |")
    return "\n".join(rows)
