"""The words every renderer shares: where a thing was seen, how often, the job line, echoes, the checkpoint,
the timeline rows (text.py draws them in a terminal, markdown.py in Markdown)."""

from __future__ import annotations

from ..i18n import msg
from ..judge.findings import Finding, Location, Unrecognized
from ..judge.rank import compact_ranks
from ..judge.story import Entry
from .model import MASKED_ID, Report

EVIDENCE_WIDTH = 300  # characters of an evidence line shown


def colon(lang: str) -> str:
    return "：" if lang == "zh" else ":"


def label(key: str, lang: str) -> str:
    """A heading followed by its colon, e.g. "Where: " / "位置："."""
    return msg(key, lang) + ("：" if lang == "zh" else ": ")


def stop(lang: str) -> str:
    return "。" if lang == "zh" else "."

def where_text(loc: Location, lang: str) -> str:
    parts = [loc.short()]
    if loc.rank is not None:
        parts.append(f"rank {loc.rank}")
    if loc.actor:
        parts.append(loc.actor + (f" pid={loc.pid}" if loc.pid is not None else ""))
    elif loc.pid is not None:
        parts.append(f"pid={loc.pid}")
    if loc.host:
        parts.append(f"host {loc.host}")
    if loc.time:
        parts.append(loc.time.replace("T", " "))
    return " · ".join(parts)


def seen_text(f: Finding, lang: str) -> str:
    parts = [msg("times", lang, n=f.count)]
    if f.ranks:
        parts.append(msg("on_ranks", lang, ranks=compact_ranks(f.ranks)))
    if len(f.hosts) > 1:
        parts.append(msg("on_hosts", lang, hosts=", ".join(sorted(f.hosts)[:8])))
    if len(f.sources) > 1:
        parts.append(f"{len(f.sources)} files")
    if f.matched_on == "frames":
        parts.append(msg("from_frames", lang))
    return " · ".join(parts)


def job_text(report: Report) -> str:
    story = report.story
    if story is None:
        return ""
    job = story.job
    parts: list[str] = []
    if job.get("framework"):
        parts.append(str(job["framework"]))
    if job.get("model"):
        parts.append(str(job["model"]))
    if job.get("ranks_seen") or job.get("world_size"):
        ranks = job.get("world_size") or job.get("ranks_seen")
        hosts = job.get("nnodes") or job.get("hosts_seen") or 1
        parts.append(msg("job_ranks", report.lang, ranks=ranks, hosts=hosts))
    sizes = " ".join(f"{k.upper()} {job[k]}" for k in ("tp", "pp", "cp", "ep", "dp") if k in job)
    if sizes:
        parts.append(sizes)
    for key, label in (("global_batch_size", "global batch"), ("micro_batch_size", "micro batch"),
                       ("rollout_batch_size", "rollout batch")):
        if key in job:
            parts.append(f"{label} {job[key]}")
    return " · ".join(parts)


def echo_lines(report: Report) -> list[str]:
    story = report.story
    if story is None:
        return []
    lines = []
    for echo in story.echoes[:6]:
        delay = ""
        if echo.delay is not None and echo.delay >= 60:
            delay = msg("echo_delay", report.lang, minutes=round(echo.delay / 60))
        lines.append(msg("echo_line", report.lang, ranks=echo.ranks, title=echo.finding.sig.title.get(report.lang),
                         count=echo.finding.count, delay=delay))
    return lines


def checkpoint_text(report: Report) -> str:
    story = report.story
    ckpt = story.checkpoint if story is not None else None
    if not ckpt:
        return msg("checkpoint_none", report.lang)
    where = f"{ckpt['source']}:{ckpt['line']}"
    if ckpt.get("time"):
        where += f", {str(ckpt['time']).replace('T', ' ')}"
    step, path = ckpt.get("step"), ckpt.get("path")
    if step is not None and path:
        text = msg("checkpoint_at", report.lang, step=step, path=path, where=where)
    elif path:
        text = msg("checkpoint_path", report.lang, path=path, where=where)
    else:
        text = msg("checkpoint_step", report.lang, step=step if step is not None else "?", where=where)
    return text + ("" if ckpt.get("confirmed", True) else msg("checkpoint_unconfirmed", report.lang))


def short_where(loc: Location, with_rank: bool = False) -> str:
    name = loc.source.rsplit("/", 1)[-1]
    when = loc.time.split("T")[-1][:8] if loc.time else ""
    rank = f" · rank {loc.rank}" if with_rank and loc.rank is not None else ""
    return f"{name}:{loc.line}{rank}" + (f" · {when}" if when else "")


def timeline_rows(report: Report) -> list[tuple[str, str, str, str]]:
    """One row per kind of first failure, in order of first appearance: who, what, where/when, why."""
    story = report.story
    if story is None or len(story.timeline) < 2:
        return []
    lang = report.lang
    groups: dict[str, list[Entry]] = {}
    for e in story.timeline:
        groups.setdefault(e.moment.what, []).append(e)
    rows = []
    for what, entries in groups.items():
        ranks = [e.moment.where.rank for e in entries if e.moment.where.rank is not None and e.key.startswith("rank")]
        files = len(entries) - len(ranks)
        who = []
        if ranks:
            who.append(("rank " if len(ranks) == 1 else "ranks ") + compact_ranks(ranks, limit=4))
        if files:
            who.append(msg("n_files", lang, n=files) if files > 1 or ranks else entries[-1].key.rsplit("/", 1)[-1])
        first = entries[0]
        explained = ""
        if first.explained_by is not None:
            sig_id, where = first.explained_by
            explained = f"{sig_id} ({short_where(where)})"
        shown = what.split(":", 1)[1] if what.startswith("exception:") else what
        rows.append((" + ".join(who), shown, short_where(first.moment.where), explained))
    return rows


def unrecognized_hint(u: Unrecognized, lang: str) -> str:
    return msg("unrecognized_hint_lone" if u.lone else "unrecognized_hint", lang) + msg("unrecognized_teach", lang)


def masked_finding(report: Report) -> Finding | None:
    """The exit-code-masked finding, when it deserves a panel of its own beside the root cause."""
    if not report.status_masked:
        return None
    return next((f for f in report.findings if f.sig.id == MASKED_ID), None)
