"""The words every renderer shares: where a thing was seen, how often, the job line, echoes, the checkpoint,
the timeline rows (text.py draws them in a terminal, markdown.py in Markdown)."""

from __future__ import annotations

from ..i18n import msg
from ..judge.findings import Finding, Location, Unrecognized
from ..judge.rank import compact_ranks
from ..judge.story import Entry
from ..match.database import builtin_root
from .model import MASKED_ID, Report

EVIDENCE_WIDTH = 300  # characters of an evidence line shown


def colon(lang: str) -> str:
    return "：" if lang == "zh" else ":"


def after_colon(lang: str) -> str:
    """What follows a heading: ": " in English, "：" in Chinese (no space after full-width punctuation)."""
    return "：" if lang == "zh" else ": "


def label(key: str, lang: str) -> str:
    """A heading followed by its colon, e.g. "Where: " / "位置："."""
    return msg(key, lang) + ("：" if lang == "zh" else ": ")


def stop(lang: str) -> str:
    return "。" if lang == "zh" else "."

def where_text(loc: Location, lang: str) -> str:
    parts = [loc.short()]
    if loc.rank is not None:
        parts.append(msg("rank_word", lang, rank=loc.rank))
    if loc.actor:
        parts.append(loc.actor + (f" pid={loc.pid}" if loc.pid is not None else ""))
    elif loc.pid is not None:
        parts.append(f"pid={loc.pid}")
    if loc.host:
        parts.append(msg("host_word", lang, host=loc.host))
    if loc.time:
        parts.append(loc.time.replace("T", " "))
    return " · ".join(parts)


def seen_text(f: Finding, lang: str) -> str:
    parts = [msg("times", lang, n=f.count)]
    if len(f.ranks) == 1:
        parts.append(msg("on_rank", lang, rank=next(iter(f.ranks))))
    elif f.ranks:
        parts.append(msg("on_ranks", lang, ranks=compact_ranks(f.ranks)))
    if len(f.hosts) > 1:
        parts.append(msg("on_hosts", lang, hosts=", ".join(sorted(f.hosts)[:8])))
    if len(f.sources) > 1:
        parts.append(count_of(len(f.sources), "files", lang))
    if f.matched_on == "frames":
        parts.append(msg("from_frames", lang))
    return " · ".join(parts)


def count_of(n: int, what: str, lang: str) -> str:
    """`1 file` / `2 files`, `1 rank` / `3 ranks`, `1 line` / `91 lines` (what: files | ranks | lines)."""
    singular = {"files": "one_file", "ranks": "one_rank", "lines": "one_line"}[what]
    plural = {"files": "n_files_exact", "ranks": "n_ranks", "lines": "n_lines"}[what]
    return msg(singular, lang) if n == 1 else msg(plural, lang, n=f"{n:,}" if lang == "en" else n)


def job_text(report: Report) -> str:
    return " · ".join(job_parts(report))


def job_parts(report: Report) -> list[str]:
    """The job's shape as the logs showed it: ranks and hosts counted from what was seen (a world size that
    disagrees does not replace them), then what the config said."""
    story = report.story
    if story is None:
        return []
    job, lang = story.job, report.lang
    parts: list[str] = []
    if job.get("framework"):
        parts.append(str(job["framework"]))
    if job.get("model"):
        parts.append(str(job["model"]))
    seen, world = job.get("ranks_seen"), job.get("world_size")
    if isinstance(seen, int) and isinstance(world, int) and 0 < seen < world:
        ranks = msg("ranks_of_world", lang, seen=seen, world=world)
    elif isinstance(seen, int) and seen:
        ranks = count_of(seen, "ranks", lang)
    elif isinstance(world, int):
        ranks = msg("world_size", lang, n=world)
    else:
        ranks = ""
    hosts = job.get("hosts_seen")
    if isinstance(hosts, int) and hosts:
        where = msg("on_one_host", lang) if hosts == 1 else msg("on_n_hosts", lang, n=hosts)
        ranks = f"{ranks} {where}".strip()
    elif isinstance(job.get("nnodes"), int):
        ranks = f"{ranks} · {msg('nnodes', lang, n=job['nnodes'])}".strip(" ·")
    if ranks:
        parts.append(ranks)
    sizes = " ".join(f"{k.upper()} {job[k]}" for k in ("tp", "pp", "cp", "ep", "dp") if k in job)
    if sizes:
        parts.append(sizes)
    for key, word in (("global_batch_size", "global_batch"), ("micro_batch_size", "micro_batch"),
                      ("rollout_batch_size", "rollout_batch")):
        if key in job:
            parts.append(msg(word, lang, n=job[key]))
    return parts


def echo_lines(report: Report) -> list[str]:
    """What the root cause explains: each echo finding, then the unrecognised errors folded into it."""
    story = report.story
    if story is None:
        return []
    lang = report.lang
    lines = []
    for echo in story.echoes[:6]:
        delay = ""
        if echo.delay is not None and echo.delay >= 60:
            delay = msg("echo_delay", lang, minutes=round(echo.delay / 60))
        who = (count_of(echo.ranks, "ranks", lang) + after_colon(lang)) if echo.ranks else ""
        lines.append(msg("echo_line", lang, ranks=who, title=echo.finding.sig.title.get(lang),
                         count=echo.finding.count, delay=delay))
    for u in story.folded[:4]:
        who = (msg("rank_word", lang, rank=u.first.rank) + after_colon(lang)) if u.first.rank is not None else ""
        lines.append(msg("echo_unrecognized", lang, who=who, exception=exception_title(u, lang),
                         message=u.message[:160] + ("…" if len(u.message) > 160 else "")))
    return lines


def exception_title(u: Unrecognized, lang: str) -> str:
    """An unrecognised error's name; a traceback cut before its exception line is named by its last frame."""
    if u.exc_type != "?":
        return u.exc_type
    func = u.frame.rsplit(" in ", 1)[-1] if " in " in u.frame else ""
    where = u.frame.rsplit(" in ", 1)[0].rsplit("/", 1)[-1] if u.frame else ""
    if func:
        return msg("cut_traceback", lang, func=f"{func} ({where})" if where else func)
    return msg("cut_traceback", lang, func=where or "?")


def headline(f: Finding, lang: str) -> str:
    """A finding's title; the exit status's says what it was (`the command was killed by signal 9 (SIGKILL)`)."""
    status, signal = f.captures.get("status"), f.captures.get("signal")
    if f.sig.id != "command-failed" or not status:
        return f.sig.title.get(lang)
    who = "scheduler" if "scheduler" in (f.evidence[-1].raw if f.evidence else "") else "command"
    if signal:
        return msg(f"exit_{who}_signal", lang, status=status, signal=signal, n=f.captures.get("signal_number", "?"))
    return msg(f"exit_{who}_status", lang, status=status)


def first_step(remedy: str) -> str:
    """The remedy's first numbered step (or its first line)."""
    lines = [line.strip() for line in remedy.splitlines() if line.strip()]
    return next((line for line in lines if line[:2] in ("1.", "1)")), lines[0] if lines else "")


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
            who.append(msg("rank_word", lang, rank=ranks[0]) if len(ranks) == 1
                       else msg("ranks_word", lang, ranks=compact_ranks(ranks, limit=4)))
        if files:
            who.append(count_of(files, "files", lang) if files > 1 or ranks else entries[-1].key.rsplit("/", 1)[-1])
        first = entries[0]
        explained = ""
        if first.explained_by is not None:
            sig_id, where = first.explained_by
            explained = sig_id if where.source == first.moment.where.source else f"{sig_id} ({short_where(where)})"
        shown = what.split(":", 1)[1] if what.startswith("exception:") else what
        if shown == "?":  # a traceback cut before its exception line: named by its last frame
            where = first.moment.where
            cut = next((u for u in report.unrecognized if u.exc_type == "?" and u.first.source == where.source
                        and u.first.line == where.line), None)
            shown = exception_title(cut, lang) if cut is not None else shown
        rows.append((" + ".join(who), shown, short_where(first.moment.where), explained))
    return rows


def unrecognized_hint(u: Unrecognized, lang: str) -> str:
    return msg("unrecognized_hint_lone" if u.lone else "unrecognized_hint", lang) + msg(
        "unrecognized_teach", lang, guide=signature_guide())


def signature_guide() -> str:
    """The guide to writing a signature, where it is on this machine (it ships inside the package)."""
    return str(builtin_root() / "README.md")


def masked_finding(report: Report) -> Finding | None:
    """The exit-code-masked finding, when it deserves a panel of its own beside the root cause."""
    if not report.status_masked:
        return None
    return next((f for f in report.findings if f.sig.id == MASKED_ID), None)


def summary_line(report: Report) -> str:
    """One line, like pytest's last: `root cause: cuda-oom on rank 3 (host h1) · 7 echoes · verdict fix-then-restart
    · 2 files, 91 lines`."""
    lang = report.lang
    lead = report.lead
    parts: list[str] = []
    where = ""
    loc: Location | None = None
    ranks: list[int] = []
    if lead.finding is not None:
        loc, ranks = lead.finding.first, sorted(lead.finding.ranks)
        name = headline(lead.finding, lang) if lead.role == "exit" else lead.finding.sig.id
    elif lead.unrecognized is not None:
        loc, ranks = lead.unrecognized.first, sorted(lead.unrecognized.ranks)
        name = exception_title(lead.unrecognized, lang)
    if loc is not None:
        if ranks or loc.rank is not None:
            shown = ranks or [loc.rank]  # type: ignore[list-item]
            who = msg("rank_word", lang, rank=shown[0]) if len(shown) == 1 else msg(
                "ranks_word", lang, ranks=compact_ranks(shown, limit=3))
            where = msg("summary_where_rank", lang, ranks=who)
        if loc.host:
            where += msg("summary_host", lang, host=loc.host)
        parts.append(msg(f"summary_{lead.role}", lang, id=name, where=where))
    else:
        parts.append(msg("summary_empty" if lead.role == "empty" else "summary_none", lang))
    story = report.story
    if story is not None and lead.role == "cause":
        n = sum(e.finding.count for e in story.echoes) + sum(u.count for u in story.folded)
        if n:
            parts.append(msg("summary_echo", lang) if n == 1 else msg("summary_echoes", lang, n=n))
    if story is not None and story.verdict != "none":
        parts.append(msg("summary_verdict", lang, verdict=story.verdict))
    s = report.stats
    parts.append(msg("summary_read", lang, files=count_of(s.sources, "files", lang),
                     lines=count_of(s.lines, "lines", lang)))
    return " · ".join(parts)
