"""The terminal side of the command: warnings on stderr, the report's language, the inputs named on the
command line, and writing a report in the format asked for."""

from __future__ import annotations

import os
import sys
from enum import Enum
from pathlib import Path
from typing import TextIO

from .errors import UsageError
from .i18n import LANGS, Msg, detect_lang, localized, msg
from .read.sources import Source
from .read.walk import expand, file_sources
from .report.contract import to_json
from .report.markdown import render_markdown
from .report.model import Report
from .report.text import render_text
from .safe import json_dumps, printable


class Format(str, Enum):
    text = "text"
    json = "json"
    markdown = "markdown"
    jsonl = "jsonl"


class Warner:
    """Warnings go to stderr, each distinct message once."""

    def __init__(self, lang: str) -> None:
        self.lang = lang
        self.seen: set[str] = set()

    def __call__(self, message: str) -> None:
        if message in self.seen:
            return
        self.seen.add(message)
        print(msg("warning_prefix", self.lang) + printable(localized(message, self.lang)), file=sys.stderr, flush=True)


def use_color(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


def emit_report(report: Report, fmt: Format, out: TextIO) -> None:
    if fmt is Format.json:
        out.write(json_dumps(to_json(report), indent=2) + "\n")
    elif fmt is Format.markdown:
        out.write(render_markdown(report))
    else:
        render_text(report, out, color=use_color(out))
    out.flush()


def final_report(report: Report, fmt: Format, out: TextIO) -> None:
    if fmt is Format.jsonl:
        out.write(json_dumps({"event": "summary", "report": to_json(report)}) + "\n")
        out.flush()
    else:
        emit_report(report, fmt, out)


def choose_language(lang: str | None) -> str:
    if lang is None:
        return detect_lang()
    if lang not in LANGS:
        raise UsageError(Msg("err_lang", langs=", ".join(LANGS), value=lang))
    return lang


def input_sources(paths: list[Path], warn: Warner) -> list[Source]:
    if not paths:
        if sys.stdin is None or sys.stdin.isatty():
            raise UsageError(Msg("err_no_input"))
        return [Source("<stdin>", None)]
    out: list[Source] = []
    for source in file_sources(paths):
        if source.path is not None and source.path.is_dir():
            found = expand(source.path, warn)
            if not found:
                warn(Msg("warn_no_logs", path=source.name))
            out.extend(found)
        else:
            out.append(source)
    return out


def one_line(text: str) -> str:
    """An error for stderr: one line, whatever a file name or a signature's text held."""
    return printable(" ".join(text.split()), one_line=True)


def lang_of(args: list[str]) -> str:
    """The language of one-line errors: --lang when the command line gives a valid one (even if the rest
    of it is wrong), else the environment's."""
    for i, arg in enumerate(args):
        if arg == "--":
            break
        value = args[i + 1] if arg == "--lang" and i + 1 < len(args) else (
            arg.split("=", 1)[1] if arg.startswith("--lang=") else None)
        if value in LANGS:
            return value
    return detect_lang()
