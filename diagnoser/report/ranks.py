"""The words of cross-rank forensics every renderer shares: the culprit line, the per-rank table (ranks that
did the same thing are one row), what was not counted as a failure, and the restart attempts."""

from __future__ import annotations

from ..i18n import msg
from ..judge.culprit import Culprit, canonical
from ..judge.rank import compact_ranks
from ..judge.ranks import RankRow
from .model import Report

MAX_GROUPS = 24
MAX_LINE = 110


def _title(report: Report, what: str | None, detail: str = "") -> str:
    if what is None:
        return ""
    if what.startswith("exception:"):
        exc = what.split(":", 1)[1].rsplit(".", 1)[-1]
        return f"{exc}: {detail}" if detail else exc
    for f in report.findings:
        if f.sig.id == what:
            return f.sig.title.get(report.lang).split(":")[0]
    return what


def _cut(text: str, width: int = MAX_LINE) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def culprit_line(report: Report) -> str | None:
    """One line that names the rank that started it, its host and GPU, and why (None when nobody is named)."""
    fx = report.forensics
    c = fx.culprit if fx is not None else None
    if c is None or c.rank is None:
        return None
    lang = report.lang
    host, gpu = c.machine()
    where = [msg("culprit_host", lang, host=host)] if host else []
    if gpu:
        where.append(msg("culprit_gpu", lang, gpu=gpu))
    head = f"{msg('culprit', lang)}: rank {c.rank}" + (f" ({', '.join(where)})" if where else "")
    parts = [_reason(report, c)]
    if c.artifact:
        parts.append(msg("culprit_artifact", lang, text=_cut(c.artifact, 160)))
    if c.row is not None and c.row.kernel is not None:
        parts.append(msg("culprit_kernel", lang, what=c.row.kernel[0]))
    if c.waiters and c.reason != "hang":
        parts.append(msg("culprit_waiters", lang, n=c.waiters))
    also = c.odd[1:] if c.reason == "hang" else c.others
    if also and c.reason in ("silent", "killed", "never-enqueued", "behind", "hang", "named"):
        parts.append(msg("culprit_also", lang, ranks=compact_ranks(also, limit=6)))
    if c.phase:
        parts.append(msg("culprit_phase", lang, phase=c.phase))
    if c.what is None and c.row is not None and c.row.last_line:
        when = [f"step {c.row.step}"] if c.row.step is not None else []
        if c.row.last_time:
            when.append(c.row.last_time.replace("T", " "))
        parts.append(msg("culprit_last", lang, when=", ".join(when) or "?", line=_cut(c.row.last_line, 80)))
    if c.silence is not None and c.silence >= 1 and c.what is None:
        parts.append(msg("culprit_silence", lang, seconds=int(c.silence)))
    return head + " " + "; ".join(p for p in parts if p)


def _reason(report: Report, c: Culprit) -> str:
    lang = report.lang
    if c.reason == "own-error":
        return msg("why_own-error", lang, error=_cut(_title(report, c.what, c.row.detail if c.row else ""), 120))
    if c.reason in ("never-enqueued", "behind"):
        return msg(f"why_{c.reason}", lang, what=c.collective or "?")
    if c.reason == "killed":
        signal = (c.row.signal or (f"exit {c.row.exit_code}" if c.row.exit_code is not None else "?")) if c.row else "?"
        return msg("why_killed", lang, signal=signal)
    if c.reason == "hang":
        return msg("why_hang_artifact" if c.artifact else "why_hang" if c.odd else "why_hang_first", lang)
    return msg(f"why_{c.reason}", lang)


def _what(report: Report, row: RankRow) -> str:
    if row.state == "failed" and row.first_error is not None:
        return _title(report, row.first_error[0], row.detail)
    if row.state == "echo" and row.first_echo is not None:
        return _title(report, row.first_echo[0])
    return row.last_line or ""


def rank_groups(report: Report) -> list[tuple[str, str, str, str, str, str]]:
    """(ranks, host, state, last step, last time, first error or last line): ranks that did the same are one row,
    the culprit's first."""
    fx = report.forensics
    if fx is None or not report.failed:
        return []
    rows = fx.table.ranked()
    if len(rows) < 2:
        return []
    lang = report.lang
    culprit = fx.culprit.row if fx.culprit is not None else None
    groups: dict[tuple[object, ...], list[RankRow]] = {}
    for r in rows:
        what = _what(report, r)
        key = ("culprit",) if r is culprit else (r.attempt, r.state, r.step, canonical(what)[:80])
        groups.setdefault(key, []).append(r)
    order = sorted(groups.items(), key=lambda kv: (kv[0] != ("culprit",), kv[1][0].attempt or 0,
                                                   ("failed", "silent", "echo", "ok").index(kv[1][0].state),
                                                   kv[1][0].rank or 0))
    out = []
    for _key, members in order[:MAX_GROUPS]:
        first = members[0]
        hosts = sorted({r.host for r in members if r.host})
        host = ", ".join(hosts) if len(hosts) <= 2 else msg("n_hosts", lang, n=len(hosts))
        ranks = compact_ranks(r.rank for r in members if r.rank is not None)
        if first.attempt is not None:
            ranks = f"{ranks} (#{first.attempt})"
        steps = sorted({r.step for r in members if r.step is not None})
        step = "" if not steps else str(steps[0]) if len(steps) == 1 else f"{steps[0]}-{steps[-1]}"
        times = sorted(r.last_time for r in members if r.last_time)
        when = times[-1].split("T")[-1][:8] if times else ""
        out.append((ranks, host, msg(f"state_{first.state}", lang), step, when, _cut(_what(report, first), 90)))
    return out


def notes(report: Report) -> list[str]:
    """Lines under the table: ranks with no log, Ray's folded lines, what was not counted, the attempts."""
    fx = report.forensics
    if fx is None:
        return []
    lang = report.lang
    out = []
    if fx.table.missing and len(fx.table.ranked()) >= 1:
        out.append(msg("ranks_missing", lang, ranks=compact_ranks(fx.table.missing)))
    if fx.table.hidden:
        out.append(msg("ranks_hidden", lang, n=fx.table.hidden))
    if fx.ignored:
        items = [f"{_title(report, what)} ({msg('ignored_' + why, lang)})" for what, why, _where in fx.ignored[:6]]
        out.append(msg("ignored_line", lang, items="; ".join(items)))
    for n in fx.notes:
        out.append(msg("artifacts_line", lang, kind=n.kind, text=n.text))
    if fx.restarts is not None:
        items = [f"#{a.attempt}: {_title(report, a.what, a.detail) or '-'}"
                 + (f" (step {a.step})" if a.step is not None else "") for a in fx.restarts.attempts[:8]]
        out.append(msg("restarts_line", lang, items="; ".join(items)))
    return out
