"""`diagnose bundle DIR... -o job-report.tar.gz`: what a maintainer asks for, in one file.

The report (Markdown and JSON), each rank's first error with the lines around it, the per-rank timeline, the job's
config facts and the versions its logs print, and the flight-recorder / py-spy artifacts found; with --ray, from
every node. Everything that comes from a log is redacted (report/redact.py) before it is written, and a summary
says what was redacted by kind and count, never the value. Bounded: a few dozen excerpts of a few dozen lines,
artifacts up to a total size. The tarball is written member by member from memory, under names made here (a log
file's name can never make a path), and never follows a link out of the folders given.
"""

from __future__ import annotations

import io
import os
import tarfile
import tempfile
import time
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from .. import __version__
from ..lazyre import lazy_re
from ..match.database import Database
from ..read.sources import Source
from ..report.contract import to_json
from ..report.markdown import render_markdown
from ..report.model import Report
from ..report.redact import Redactor
from ..safe import json_dumps, md_cell
from .batch import scan_sources
from .bundle_parts import Parts, artifacts, excerpts, safe_sources
from .pipeline import Pipeline, Warn, _ignore
from .ray import RayTarget, cluster_report

TOP = "job-report"
_UNSAFE_NAME = lazy_re(r"[^A-Za-z0-9._-]+")


@dataclass(slots=True)
class Bundle:
    """What `--bundle` wrote: the report and the redacted excerpts and artifacts."""

    path: Path
    report: Report
    members: list[tuple[str, int]]  # (name, size)
    redacted: Counter[str]
    left_out: list[str]


def safe_name(name: str, limit: int = 80) -> str:
    """A member name made from a log file's name or a rank key: one path component of plain characters."""
    cleaned = _UNSAFE_NAME.sub("_", name).strip("._-")[:limit]
    return cleaned or "unnamed"


def _local_parts(report: Report, sources: list[Source], roots: list[Path]) -> Parts:
    redactor = Redactor()
    parts = Parts()
    where = [entry.moment.where for entry in report.story.timeline] if report.story is not None else []
    parts.excerpts = excerpts(where, sources, redactor)  # those of the local files (the nodes send their own)
    parts.artifacts, parts.left_out = artifacts([r for r in roots if r.exists()], "", redactor)
    parts.redacted.update(redactor.counts)
    return parts


def local_bundle(db: Database, sources: list[Source], roots: list[Path], lang: str, warn: Warn = _ignore,
                 jobs: int = 1) -> tuple[Report, Parts]:
    """The report and the pieces of a job whose logs are here."""
    sources = safe_sources(sources, roots)
    pipeline = Pipeline(db, warn)
    scan_sources(pipeline, sources, jobs)
    report = pipeline.report(lang)
    return report, _local_parts(report, sources, roots)


def cluster_bundle(db: Database, target: RayTarget, sources: list[Source], roots: list[Path], lang: str,
                   warn: Warn = _ignore, jobs: int = 1) -> tuple[Report, Parts]:
    """The same from every node of a Ray cluster (each node redacts its own pieces), plus the local files."""
    sources = safe_sources(sources, roots)
    report, node_parts = cluster_report(db, target, sources, lang, warn, None, jobs, with_parts=True)
    parts = _local_parts(report, sources, roots)
    for piece in node_parts:
        parts.merge(piece)
    return report, parts


def _markdown_parts(report: Report, parts: Parts) -> str:
    """The per-rank timeline with each first error's lines, the facts and versions, the artifacts."""
    out = ["# First errors", ""]
    by_place = {(e.source, e.line): e for e in parts.excerpts}
    entries = report.story.timeline if report.story is not None else []
    for entry in entries:
        where = entry.moment.where
        out += [f"## {md_cell(entry.key)}: `{md_cell(entry.moment.what)}`", "",
                f"{md_cell(where.source)}:{where.line}" + (f" · {md_cell(where.time)}" if where.time else ""), ""]
        piece = by_place.get((where.source, where.line))
        if piece is not None:
            out.append("```")
            out += [f"{'>' if n == piece.line else ' '} {n:>7} | {text.replace('```', '` ` `')}" for n, text in
                    piece.lines]
            out += ["```", ""]
    out += ["# Facts and versions", "", "| name | value |", "|---|---|"]
    out += [f"| {md_cell(name)} | {md_cell(fact.value)} |" for name, fact in sorted(report.facts.items())]
    out += ["", "# Artifacts", ""]
    out += [f"- `{md_cell(a.name)}` ({a.kind}, {len(a.data)} bytes{', cut' if a.truncated else ''}) from "
            f"{md_cell(a.source)}" for a in parts.artifacts] or ["none found"]
    if parts.left_out:
        out += ["", "Left out:", ""] + [f"- {md_cell(x)}" for x in parts.left_out]
    return "\n".join(out) + "\n"


def _readme(report: Report, parts: Parts, redacted: Counter[str]) -> str:
    lines = [f"diagnose {__version__} bundle, made {time.strftime('%Y-%m-%d %H:%M:%S')}", "",
             "report.md, report.json   the diagnosis (diagnose --format markdown / json)",
             "first-errors.md          each rank's (or file's) first failure with the lines around it; facts "
             "and versions; artifacts", "artifacts/               flight-recorder and py-spy dumps found", "",
             "Redacted before writing (kind: count; the values are not in this bundle):"]
    lines += [f"  {kind}: {n}" for kind, n in sorted(redacted.items())] or ["  nothing found to redact"]
    if report.nodes is not None:
        lines += ["", "Ray nodes: " + ", ".join(f"{n.ip} {n.state}" for n in report.nodes)]
    return "\n".join(lines) + "\n"


def write_bundle(out: Path, report: Report, parts: Parts) -> Bundle:
    """Redact the report, lay out the members, write the tarball atomically."""
    redactor = Redactor()
    shown = redactor.obj(report, keep=[f.sig for f in report.findings])
    md_parts = redactor.text(_markdown_parts(shown, parts))  # excerpts are redacted already; facts are not
    redacted = Counter(parts.redacted)
    redacted.update(redactor.counts)
    members: list[tuple[str, bytes]] = [
        ("report.md", render_markdown(shown).encode("utf-8")),
        ("report.json", (json_dumps(to_json(shown), indent=2) + "\n").encode("utf-8")),
        ("first-errors.md", md_parts.encode("utf-8")),
    ]
    taken: set[str] = set()
    for k, artifact in enumerate(parts.artifacts):
        name = f"{k:02d}-{safe_name(artifact.name)}"
        if name not in taken:
            taken.add(name)
            members.append((f"artifacts/{name}", artifact.data))
    members.insert(0, ("README.txt", _readme(shown, parts, redacted).encode("utf-8")))
    out = out.resolve()
    fd, tmp = tempfile.mkstemp(prefix=".bundle-", suffix=".tar.gz", dir=out.parent)
    try:
        with os.fdopen(fd, "wb") as raw, tarfile.open(fileobj=raw, mode="w:gz") as tar:
            now = int(time.time())
            for name, data in members:
                info = tarfile.TarInfo(f"{TOP}/{name}")
                info.size, info.mtime, info.mode, info.type = len(data), now, 0o644, tarfile.REGTYPE
                tar.addfile(info, io.BytesIO(data))
        os.replace(tmp, out)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise
    return Bundle(out, report, [(n, len(d)) for n, d in members], redacted, parts.left_out)
