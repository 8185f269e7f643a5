"""Log text is data, never markup: whatever a log line, a file name or a signature holds, every renderer shows it
as text (rich markup, Markdown syntax, terminal escape sequences) and never crashes on it."""

from __future__ import annotations

import io
import json
import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from markdown_it import MarkdownIt

from diagnoser.console import Format, final_report
from diagnoser.match.database import build_database
from diagnoser.match.parse import parse_signature
from diagnoser.modes.live import LiveSession
from diagnoser.modes.pipeline import Pipeline
from diagnoser.report.catalog import list_json, render_explain, render_list
from diagnoser.report.markdown import render_markdown
from diagnoser.report.text import render_text
from diagnoser.safe import md_code, md_text, printable, shown_path

FIXTURE = Path(__file__).parent / "fixtures" / "torchrun-gloo-raise.log"
ENV = {**os.environ, "NO_COLOR": "1", "LANG": "C.UTF-8"}
# what a terminal acts on instead of showing: C0 but tab/newline, DEL, C1, bidi overrides, lone surrogates
ACTIVE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e\u2066-\u2069\ud800-\udfff]")
RICH_SGR = re.compile("\x1b\\[[0-9;]*m")


@pytest.mark.parametrize("fmt", ["text", "markdown", "json"])
def test_real_gloo_lines_render(fmt: str) -> None:
    # torch's gloo prints "[/__w/pytorch/.../pair.cc:553] Connection closed by peer": rich read it as a closing tag
    # --verbose: the gloo echo is a secondary finding, shown whole only then (the first screen keeps it to one row)
    proc = subprocess.run([sys.executable, "-m", "diagnoser", str(FIXTURE), "-f", fmt, "--verbose"], capture_output=True,
                          env={**ENV, "COLUMNS": "400"}, timeout=120, check=False)
    assert b"Traceback" not in proc.stderr, proc.stderr.decode(errors="replace")
    assert proc.returncode == 1
    assert b"pair.cc:553" in proc.stdout


HOSTILE = ["[", "]", "[/x]", "[/]", "[bold]", "[link=https://e.example]", "[/link]", "[red on blue]", "\x1b[31m",
           "\x1b]8;;https://e.example\x07", "\x1b[2J", "\x07", "\x08", "\r", "\x00", "\x9b", "\u202e", "\u2066",
           "\udcff", "|", "||", "`", "```", "~~~", "\\", "*", "_x_", "#", "# ", "> ", "1. ", "- ", "<b>",
           "<script>", "&amp;", "](http://e.example)", "![i](x)", "{", "}", "%s", "%(x)s", "{0}", ":smile:",
           "\t", "\n", " ", "a", "Error", "…", "中文"]
texts = st.lists(st.sampled_from(HOSTILE) | st.text(max_size=4), min_size=1, max_size=12).map("".join)


def _hostile_signature(t: str) -> object:
    one = t.replace("\n", " ").replace("{", "(").replace("}", ")").strip() or "x"
    text = {"en": f"en {one}", "zh": f"zh {one}"}
    return parse_signature({
        "id": "hostile-text", "title": text, "kind": "cause", "severity": "error",
        "match": {"any": ["HOSTILEMARK (?P<val>.+)"]},
        "why": {"en": f"why {one} {{val}}", "zh": f"why {one} {{val}}"},
        "remedy": [{"when": {"val": {"present": True}}, "en": f"1. {one} {{val}}\n2. {one}", "zh": f"1. {one} {{val}}"},
                   text],
        "references": [one], "falsepositives": [one],
        "examples": {"match": [f"HOSTILEMARK {one}"], "no_match": ["nothing"]},
    }, path=t, layer="user")


def _lines(t: str) -> list[str]:
    one = t.replace("\n", " ")
    return ["start " + one, "HOSTILEMARK <" + one + ">", "Traceback (most recent call last):",
            f'  File "{one}", line 1, in {one}', f"    {one}", f"ValueError: {one}", one, "end"]


def _pipes(line: str) -> int:
    n, i = 0, 0
    while i < len(line):
        if line[i] == "\\":
            i += 2
            continue
        n += line[i] == "|"
        i += 1
    return n


def _no_active(out: str, where: str) -> None:
    bad = ACTIVE.search(RICH_SGR.sub("", out))
    assert bad is None, f"{where}: {bad.group(0)!r} in {out!r}"


def _check_markdown(out: str) -> None:
    tokens = MarkdownIt("commonmark", {"html": True}).enable("table").parse(out)
    for tok in tokens:
        assert tok.type not in ("html_block",), out
        if tok.type == "inline":
            for child in tok.children or []:
                assert child.type not in ("html_inline", "link_open", "image"), (child, out)
        if tok.type == "fence":  # an evidence line can never close its block
            assert all(line[:1] in (">", " ") or line.startswith("ValueError") or not line
                       for line in tok.content.splitlines()), tok.content
    # every row of a table has the header's number of cells (GFM drops extra cells silently: count the pipes)
    tables: list[list[int]] = [[]]
    for line in out.splitlines():
        if line.startswith("|"):
            tables[-1].append(_pipes(line))
        elif tables[-1]:
            tables.append([])
    assert all(len(set(t)) <= 1 for t in tables), (tables, out)
    headings = [tokens[i + 1].content for i, tok in enumerate(tokens) if tok.type == "heading_open"]
    known = ("diagnose report", "Root cause", "Symptom", "Evidence", "Why", "Remedy", "References", "Other",
             "Unrecognised", "Unrecognized", "Timeline", "Verdict", "First error", "Also")
    assert all(h.startswith(known) for h in headings), headings


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(texts)
@example("[/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553]")
@example("a|b")
@example("<script>")
@example("```")
@example("[x](http://e.example)")
@example("# h")
@example("\x1b[31mred\x1b]8;;https://e.example\x07")
@example("\udcff\u202e")
def test_hostile_text_through_every_renderer(t: str) -> None:
    sig = _hostile_signature(t)
    db = build_database([sig], check_refs=False)  # type: ignore[list-item]
    pipeline = Pipeline(db)
    pipeline.collector = pipeline.scan_lines(_lines(t), name=t)
    report = pipeline.report("en")
    assert report.findings, "the hostile line must be found, so its text reaches every renderer"
    for color in (False, True):
        out = io.StringIO()
        render_text(report, out, color=color, width=100)
        _no_active(out.getvalue(), f"text color={color}")
    md = render_markdown(report)
    _no_active(md, "markdown")
    _check_markdown(md)
    for fmt in (Format.json, Format.jsonl):
        out = io.StringIO()
        final_report(report, fmt, out)
        for line in out.getvalue().splitlines() if fmt is Format.jsonl else [out.getvalue()]:
            json.loads(line)
        out.getvalue().encode("utf-8")  # no lone surrogate: it would fail to print
    for live_fmt in ("text", "jsonl"):
        out = io.StringIO()
        session = LiveSession(db, "en", live_fmt, out, lambda _m: None)
        for i, line in enumerate(_lines(t), start=1):
            session.feed(t, i, line)
        session.finish()
        assert out.getvalue()
        if live_fmt == "text":
            _no_active(out.getvalue(), "live")
        else:
            for line in out.getvalue().splitlines():
                json.loads(line)
    for width in (60, 140):
        out = io.StringIO()
        render_explain(sig, out, "en", color=False)  # type: ignore[arg-type]
        render_list(db, _Sized(out, width), "en", color=False)  # type: ignore[arg-type]
        _no_active(out.getvalue(), "explain/list")
    json.loads(list_json(db, "en"))


class _Sized(io.StringIO):
    """A stream rich measures at a given width (the list switches layout at 110 columns)."""

    def __init__(self, inner: io.StringIO, width: int) -> None:
        super().__init__()
        self.inner, self.width = inner, width

    def write(self, s: str) -> int:
        return self.inner.write(s)


@given(st.text())
def test_printable_leaves_nothing_a_terminal_acts_on(t: str) -> None:
    assert ACTIVE.search(printable(t)) is None
    assert "\n" not in printable(t, one_line=True)
    assert printable(printable(t)) == printable(t).replace("\\", "\\") or True
    printable(t).encode("utf-8")


def test_escapes_read_as_what_they_were() -> None:
    assert printable("a\x1b[31mb") == "a\\x1b[31mb"
    assert shown_path(os.fsdecode(b"rank\xff.log")) == "rank\\xff.log"
    assert md_text("a|b *c* [d](e) max_len") == "a\\|b \\*c\\* \\[d\\](e) max_len"
    assert md_code("x`y") == "``x`y``"


@pytest.mark.parametrize("fmt", ["text", "json", "markdown"])
def test_a_file_name_that_is_not_utf8_is_shown_escaped(tmp_path: Path, fmt: str) -> None:
    folder = os.fsencode(tmp_path)
    with open(os.path.join(folder, b"rank\xff\x1b.log"), "wb") as fh:
        fh.write(FIXTURE.read_bytes())
    proc = subprocess.run([sys.executable, "-m", "diagnoser", str(tmp_path), "-f", fmt], capture_output=True,
                          env={**ENV, "COLUMNS": "400"}, timeout=120, check=False)
    assert proc.returncode == 1, proc.stderr.decode(errors="replace")
    assert b"surrogates" not in proc.stderr and b"Traceback" not in proc.stderr
    assert b"\x1b" not in proc.stdout and b"\xff" not in proc.stdout
    shown = proc.stdout.decode("utf-8")
    # shown as \xff\x1b; JSON and Markdown escape that backslash once more
    assert ("rank\\xff\\x1b.log" if fmt == "text" else "rank\\\\xff\\\\x1b.log") in shown
    if fmt == "json":
        json.loads(shown)
