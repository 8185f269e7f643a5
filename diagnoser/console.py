"""The terminal side of the command: warnings on stderr, the report's language, the inputs named on the
command line, the options several commands share, writing a report in the format asked for, and the
`diagnose bundle` subcommand (cli.py dispatches to it; it is here to keep cli.py readable)."""

from __future__ import annotations

import contextlib
import os
import sys
from argparse import Namespace
from enum import Enum
from pathlib import Path
from typing import TYPE_CHECKING, TextIO

from .errors import InputError, UsageError
from .i18n import LANGS, Msg, detect_lang, localized, msg
from .modes.batch import Progress
from .modes.status import parse_duration
from .read.sources import Source
from .read.walk import expand, file_sources
from .safe import json_dumps, printable
from .usage import integer, number

if TYPE_CHECKING:  # the modes and renderers below are imported where they are used: a start-up pays for its own
    from .match.database import Database
    from .modes.bundle import Bundle
    from .modes.live import LiveSession
    from .modes.ray import RayTarget
    from .report.model import Report


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


class TerminalProgress(Progress):
    """A progress line on stderr for a scan that takes more than a second, only when stderr is a terminal (never
    in a pipe or a file); cleared before the report is printed."""

    DELAY = 1.0
    EVERY = 0.25

    def __init__(self, total: int, lang: str, stream: TextIO | None = None) -> None:
        import time

        self.clock = time.monotonic
        self.stream = stream if stream is not None else sys.stderr
        self.enabled = bool(getattr(self.stream, "isatty", lambda: False)())
        self.total, self.lang = total, lang
        self.done = self.bytes = 0
        self.started = self.clock()
        self.shown_at = 0.0
        self.shown = False

    def source_done(self, n: int = 1) -> None:
        self.done += n
        self._show()

    def add_bytes(self, n: int) -> None:
        self.bytes += n
        self._show()

    def _show(self) -> None:
        if not self.enabled:
            return
        now = self.clock()
        if now - self.started < self.DELAY or now - self.shown_at < self.EVERY:
            return
        self.shown_at = now
        line = msg("scanning", self.lang, done=min(self.done, self.total), total=self.total,
                   mb=f"{self.bytes / 1e6:,.0f}")
        with contextlib.suppress(OSError, ValueError):
            self.stream.write("\r\x1b[K" + line)
            self.stream.flush()
            self.shown = True

    def close(self) -> None:
        if self.shown:
            with contextlib.suppress(OSError, ValueError):
                self.stream.write("\r\x1b[K")
                self.stream.flush()
            self.shown = False


def use_color(stream: TextIO) -> bool:
    if os.environ.get("NO_COLOR") or os.environ.get("TERM") == "dumb":
        return False
    return bool(getattr(stream, "isatty", lambda: False)())


def jsonl_lines(report: Report) -> list[str]:
    """The report as JSON lines: each finding, each unrecognised error, then the summary (as --follow prints
    them, so one reader handles both)."""
    from .report.contract import finding_json, to_json, unrecognized_json

    lines = [json_dumps({"event": "finding", "finding": finding_json(report, f)}) for f in report.findings]
    lines += [json_dumps({"event": "unrecognized", **unrecognized_json(u)}) for u in report.unrecognized]
    lines.append(json_dumps({"event": "summary", "report": to_json(report)}))
    return lines


def emit_report(report: Report, fmt: Format, out: TextIO, verbose: bool = False) -> None:
    if fmt is Format.json:
        from .report.contract import to_json

        out.write(json_dumps(to_json(report), indent=2) + "\n")
    elif fmt is Format.jsonl:
        out.write("".join(line + "\n" for line in jsonl_lines(report)))
    elif fmt is Format.markdown:
        from .report.markdown import render_markdown

        out.write(render_markdown(report, verbose=verbose))
    else:
        from .report.text import render_text  # rich: only for the text report

        render_text(report, out, color=use_color(out), verbose=verbose)
    out.flush()


def final_report(report: Report, fmt: Format, out: TextIO, verbose: bool = False) -> None:
    """The report at the end of a live session (its findings were told as they came: jsonl ends with the summary)."""
    if fmt is Format.jsonl:
        from .report.contract import to_json

        out.write(json_dumps({"event": "summary", "report": to_json(report)}) + "\n")
        out.flush()
    else:
        emit_report(report, fmt, out, verbose)


def choose_language(lang: str | None) -> str:
    if lang is None:
        return detect_lang()
    if lang not in LANGS:
        raise UsageError(Msg("err_lang", langs=", ".join(LANGS), value=lang))
    return lang


def input_sources(paths: list[Path], warn: Warner) -> list[Source]:
    """The sources the command line names. A path that does not exist is warned about and left out; only when
    none of them exists is it an error (exit status 2)."""
    if not paths:
        if sys.stdin is None or sys.stdin.isatty():
            raise UsageError(Msg("err_no_input"))
        return [Source("<stdin>", None)]
    present = [p for p in paths if str(p) == "-" or os.path.lexists(p)]
    missing = [p for p in paths if p not in present]
    if not present:
        raise InputError(Msg("err_no_such_path", path=missing[0]))
    for p in missing:
        warn(Msg("warn_missing", path=p))
    out: list[Source] = []
    for source in file_sources(present):
        if source.path is not None and source.path.is_dir():
            found = expand(source.path, warn)
            if not found:
                warn(Msg("warn_no_logs", path=source.name))
            out.extend(found)
        else:
            out.append(source)
    return out


def ray_target(address: str | None, paths: list[str] | None, timeout_text: str | None) -> RayTarget | None:
    """--ray, --ray-paths and --ray-timeout, checked."""
    if address is None:
        if paths or timeout_text is not None:
            raise UsageError(Msg("err_ray_only"))
        return None
    from .modes.ray import RAY_TIMEOUT, RayTarget

    timeout = number(timeout_text, "--ray-timeout")
    if not address.strip():
        raise UsageError(Msg("err_ray_address"))
    if timeout is not None and not timeout > 0:
        raise UsageError(Msg("err_ray_timeout"))
    return RayTarget(address.strip(), tuple(paths or ()), RAY_TIMEOUT if timeout is None else timeout)


def explain_signature(db: Database, sig_id: str, lang: str) -> int:
    """--explain ID: one signature in full (exit 0), or the ids it may have meant."""
    cs = db.get(sig_id)
    if cs is None:
        close = sorted(c.sig.id for c in db.signatures if sig_id in c.sig.id or c.sig.id in sig_id)
        hint = Msg("hint_did_you_mean", ids=", ".join(close[:5])) if close else Msg("hint_see_list")
        raise UsageError(Msg("err_no_signature", sig_id=sig_id, hint=hint))
    from .report.catalog import render_explain

    render_explain(cs.sig, sys.stdout, lang, use_color(sys.stdout))
    return 0


def bundle_summary(bundle: Bundle, lang: str) -> str:
    """One line on what was written, and what was redacted (kind × count, never a value)."""
    redacted = ", ".join(f"{kind} × {n}" for kind, n in sorted(bundle.redacted.items())) or msg("nothing", lang)
    kib = max(1, round(bundle.path.stat().st_size / 1024))
    return msg("bundle_written", lang, path=printable(str(bundle.path)), kib=kib, members=len(bundle.members),
               redacted=redacted)


def parse_duration_option(text: str) -> float:
    """A duration option (--hang-after), or a usage error."""
    try:
        return parse_duration(text)
    except ValueError as exc:
        raise UsageError(exc.args[0] if exc.args else str(exc)) from None


def live_session(db: Database, fmt: Format, language: str, warn: Warner, hang_after: str | None,
                 default_hang: str, exit_on: str, out: TextIO, *, brief: bool = False,
                 status: TextIO | None = None) -> LiveSession:
    """brief (diagnose run): each finding told in a few lines, its why and remedy once, in the final report;
    status: where --follow says what it is watching (stderr)."""
    from .modes.live import LiveSession

    if fmt not in (Format.text, Format.jsonl, Format.json):
        raise UsageError(Msg("err_live_format"))
    hang = parse_duration_option(hang_after if hang_after is not None else default_hang)
    live_fmt = "jsonl" if fmt is Format.jsonl else ("quiet" if fmt is Format.json else "text")
    return LiveSession(db, language, live_fmt, out, warn, exit_on, hang, use_color(out), brief=brief, status=status)


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


def bundle_command(a: Namespace) -> int:
    """`diagnose bundle`: pack what a maintainer asks for into one tarball: the report (Markdown, JSON), each rank's
    first error with its context, facts and versions, flight-recorder / py-spy dumps; secrets redacted (and
    counted). Exits with the diagnosis's status."""
    from .match.database import load_database
    from .modes.batch import default_jobs
    from .modes.bundle import cluster_bundle, local_bundle, write_bundle

    language = choose_language(a.lang)
    warn = Warner(language)
    ray = ray_target(a.ray_address, a.ray_paths, a.ray_timeout)
    paths = [Path(p) for p in a.paths or []]
    if not paths and ray is None:
        raise UsageError(Msg("err_bundle_input"))
    jobs = integer(a.jobs, "--jobs", 1)
    db = load_database([Path(d) for d in a.signatures or []])
    sources = input_sources(paths, warn) if paths else []
    roots = [Path(os.path.abspath(p)) for p in paths]
    if ray is not None:
        report, parts = cluster_bundle(db, ray, sources, roots, language, warn, jobs or default_jobs())
    else:
        report, parts = local_bundle(db, sources, roots, language, warn, jobs or default_jobs())
    print(bundle_summary(write_bundle(Path(a.output), report, parts), language))
    return 1 if report.failed else 0
