"""Render the signature catalogue: `--list` (one row each) and `--explain ID` (one in full)."""

from __future__ import annotations

import json
from typing import TextIO

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..i18n import msg
from ..match.database import Database
from ..match.schema import Signature


def _console(out: TextIO, color: bool) -> Console:
    return Console(file=out, no_color=not color, force_terminal=color if color else None, highlight=False,
                   emoji=False)


def list_json(db: Database, lang: str) -> str:
    rows = [{"id": cs.sig.id, "kind": cs.sig.kind, "role": cs.sig.role, "severity": cs.sig.severity,
             "layer": cs.sig.layer, "title": cs.sig.title.get(lang), "path": cs.sig.path} for cs in _sorted(db)]
    return json.dumps(rows, ensure_ascii=False, indent=2)


def _sorted(db: Database) -> list:  # type: ignore[type-arg]
    return sorted(db.signatures, key=lambda cs: (cs.sig.layer, cs.sig.id))


WIDE = 110  # narrower than this, a table would squeeze the titles into a thin column


def render_list(db: Database, out: TextIO, lang: str, color: bool) -> None:
    console = _console(out, color)
    if console.width < WIDE:
        for cs in _sorted(db):  # two lines each: id, kind and layer; then the title, indented
            console.print(Text.assemble((cs.sig.id, "bold"), f"  {cs.sig.kind} · {cs.sig.layer}"))
            for line in Text(cs.sig.title.get(lang)).wrap(console, max(20, console.width - 4), overflow="fold"):
                line.rstrip()
                console.print(Text("    ").append_text(line))
        console.print(Text(msg("signatures_count", lang, n=len(db.signatures)), style="dim"))
        return
    table = Table(box=box.SIMPLE_HEAD, show_edge=False, pad_edge=False)
    table.add_column(msg("id", lang), no_wrap=True)
    table.add_column(msg("kind", lang), no_wrap=True)
    table.add_column(msg("layer", lang), no_wrap=True)
    table.add_column(msg("title", lang), overflow="fold")
    for cs in _sorted(db):
        table.add_row(cs.sig.id, cs.sig.kind, cs.sig.layer, cs.sig.title.get(lang))
    console.print(table)
    console.print(Text(msg("signatures_count", lang, n=len(db.signatures)), style="dim"))


def render_explain(sig: Signature, out: TextIO, lang: str, color: bool) -> None:
    console = _console(out, color)
    console.print(Text(f"{sig.id}: {sig.title.get(lang)}", style="bold"))
    meta = f"{sig.kind} · {sig.role} · {sig.severity} · {sig.layer} · verdict {sig.verdict}"
    if sig.frameworks:
        meta += " · " + ", ".join(sig.frameworks)
    console.print(Text(meta + f" · {sig.path}", style="dim"))
    if sig.symptom_of:
        console.print(Text("symptom of: " + ", ".join(sig.symptom_of), style="dim"))
    console.print()
    console.print(Text(msg("why", lang), style="bold"))
    console.print(Text(sig.why.get(lang)))
    console.print()
    console.print(Text(msg("remedy", lang), style="bold green"))
    for variant in sig.remedy:
        if variant.when:
            cond = ", ".join(f"{t.name} {t.op} {t.value}" for t in variant.when)
            console.print(Text(f"when {cond}:", style="italic"))
        elif len(sig.remedy) > 1:
            console.print(Text("otherwise:", style="italic"))
        console.print(Text(variant.text.get(lang)))
    console.print()
    console.print(Text("Patterns", style="bold"))
    for p in sig.any:
        console.print(Text("  " + p))
    for c in sig.all:
        console.print(Text(f"  and ({c.scope}{' ' + str(c.lines) if c.lines else ''}): {c.pattern}"))
    for c in sig.not_:
        console.print(Text(f"  not ({c.scope}{' ' + str(c.lines) if c.lines else ''}): {c.pattern}"))
    console.print()
    console.print(Text(msg("references", lang), style="bold"))
    for ref in sig.references:
        console.print(Text("  " + ref))
    if sig.falsepositives:
        console.print()
        console.print(Text(msg("falsepositives", lang), style="bold"))
        for fp in sig.falsepositives:
            console.print(Text("  " + fp))
    console.print()
    console.print(Text(msg("examples", lang), style="bold"))
    for ex in sig.examples_match[:2]:
        console.print(Text(ex.text.rstrip(), style="dim"))
        console.print(Text("  ---", style="dim"))


def markdown_table(db: Database) -> str:
    """The signature table of signatures/README.md (a test keeps the two in sync)."""
    rows = ["| id | kind | role | severity | layer | title |", "|---|---|---|---|---|---|"]
    for cs in _sorted(db):
        s = cs.sig
        rows.append(f"| `{s.id}` | {s.kind} | {s.role} | {s.severity} | {s.layer} | {s.title.en} |")
    return "\n".join(rows)
