"""Render the signature catalogue: `--list` (one row each) and `--explain ID` (one in full)."""

from __future__ import annotations

import re
from typing import TextIO

from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from ..i18n import msg
from ..match.database import Database, builtin_root
from ..match.schema import PLACEHOLDER_RE, Signature, WhenTest
from ..safe import json_dumps, printable
from .health import condition_text
from .term import terminal


def _console(out: TextIO, color: bool) -> Console:
    return terminal(out, color)


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


_NAMES = {"framework": "name_framework", "phase": "name_phase"}


def _name(name: str, lang: str) -> str:
    return msg(_NAMES[name], lang) if name in _NAMES else name


def _value(value: object) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, list):
        return ", ".join(_value(v) for v in value)
    return str(value)


def condition_words(test: WhenTest, lang: str) -> str:
    """A remedy variant's condition as a reader says it: `packing is true`, `the framework is verl or roll`."""
    name = _name(test.name, lang)
    if test.op == "present":
        return msg("when_present" if test.value else "when_absent", lang, name=name)
    return msg(f"when_{test.op}", lang, name=name, value=_value(test.value))


def readable(template: str) -> str:
    """A remedy template as a reader sees it: `{max_token_in_packing:half|…}` reads `<max_token_in_packing ÷ 2>`."""

    def sub(m: re.Match[str]) -> str:
        token = m.group(0)
        if token in ("{{", "}}"):
            return token[0]
        if token.startswith("$"):
            return token
        name, flt = m.group(1), m.group(2)
        shown = {"half": f"{name} ÷ 2", "double": f"{name} × 2"}.get(flt or "", name)
        return f"<{shown}>"

    return PLACEHOLDER_RE.sub(sub, template)


def signature_file(sig: Signature) -> str:
    """Where the signature's file is on this machine (a built-in one inside the installed package)."""
    path = builtin_root().parent / sig.path
    return str(path) if path.is_file() else sig.path


def render_explain(sig: Signature, out: TextIO, lang: str, color: bool) -> None:
    console = _console(out, color)
    console.print(_t(f"{sig.id}: {sig.title.get(lang)}", style="bold"))
    meta = (f"{msg(sig.kind, lang)} · {sig.role} · {msg(sig.severity, lang)} · {sig.layer} · "
            f"{label('verdict', lang)}{sig.verdict}")
    if sig.frameworks:
        meta += " · " + ", ".join(sig.frameworks)
    console.print(_t(meta, style="dim"))
    console.print(_t(label("file", lang) + signature_file(sig), style="dim"))
    if sig.symptom_of:
        console.print(_t(label("symptom_of", lang) + ", ".join(sig.symptom_of), style="dim"))
    console.print()
    console.print(_t(msg("why", lang), style="bold"))
    console.print(_t(readable(sig.why.get(lang))))
    console.print()
    console.print(_t(msg("remedy", lang), style="bold green"))
    console.print(_t(msg("remedy_values", lang), style="dim"))
    for variant in sig.remedy:
        if variant.when:
            cond = msg("and_word", lang).join(condition_words(t, lang) for t in variant.when)
            console.print(_t(msg("when_heading", lang, cond=cond), style="italic"))
        elif len(sig.remedy) > 1:
            console.print(_t(msg("otherwise", lang), style="italic"))
        console.print(_t(readable(variant.text.get(lang))))
        if variant.verdict is not None and variant.verdict != sig.verdict:
            console.print(_t(label("verdict", lang) + variant.verdict, style="dim"))
    console.print()
    console.print(_t(msg("patterns", lang) if not sig.metric else msg("metric_rule", lang), style="bold"))
    for clause in sig.metric:  # a health rule: the metric keys it reads and when a series goes bad
        console.print(_t("  " + " | ".join(clause.names) + ": " + condition_text(clause)))
    for p in sig.any:
        console.print(_t("  " + p))
    for word, conds in (("and_scope", sig.all), ("not_scope", sig.not_)):
        for c in conds:
            scope = f"{c.scope}{' ' + str(c.lines) if c.lines else ''}"
            console.print(_t(f"  {msg(word, lang)} ({scope}): {c.pattern}"))
    for seq in sig.frames:
        calls = " → ".join(f"{fp.file or '*'}:{fp.function or '*'}" for fp in seq)
        console.print(_t(f"  {msg('or_frames', lang)}: {calls}"))
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


def label(key: str, lang: str) -> str:
    return msg(key, lang) + ("：" if lang == "zh" else ": ")


def markdown_table(db: Database) -> str:
    """The signature table of signatures/README.md (a test keeps the two in sync)."""
    rows = ["| id | kind | role | severity | layer | title |", "|---|---|---|---|---|---|"]
    for cs in _sorted(db):
        s = cs.sig
        rows.append(f"| `{s.id}` | {s.kind} | {s.role} | {s.severity} | {s.layer} | {s.title.en} |")
    return "\n".join(rows)
