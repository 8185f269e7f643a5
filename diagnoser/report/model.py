"""The report: ranked findings with their remedies filled in, and its JSON form (schema 1)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field

from ..i18n import msg
from ..judge.collector import Collector
from ..judge.findings import Fact, Finding, Location, Unrecognized, earlier
from ..judge.forensics import Forensics, judge_forensics, set_aside
from ..judge.lead import Lead, choose_lead, fold_echoes
from ..judge.rank import compact_ranks, rank_findings, root_cause
from ..judge.remedy import fill, render_remedy, verdict_of
from ..judge.story import Story, build_story
from ..match.events import EvidenceLine
from ..match.observe import framework_of
from .nodes import NodeState

SCHEMA = 1
MAX_EVIDENCE_CHARS = 400
# The report's size is bounded whatever the log (issue 19): a string a log controls is clipped, and the ranks of an
# unrecognised error are listed up to a cap (its count says how many times it was seen).
MAX_TEXT = 400  # characters of an unrecognised error's (or a rank's first error's) message, frame, file or host name
MAX_KEY_CHARS = 4096  # characters of a key evidence line: its first 3 KiB and its last 1 KiB (the advice is at its end)
MAX_UNRECOGNIZED_RANKS = 256
MAX_ROW_SOURCES = 16  # files listed in a rank's row


def clip(text: str, limit: int = MAX_TEXT) -> str:
    return text if len(text) <= limit else text[:limit - 1] + "…"


def clip_key(text: str) -> str:
    if len(text) <= MAX_KEY_CHARS:
        return text
    tail = MAX_KEY_CHARS // 4
    return text[:MAX_KEY_CHARS - tail - 1] + "…" + text[-tail:]


# The meta signature that explains a job reported as succeeded although its logs show a failure.
MASKED_ID = "dlc-exit-code-masked"
SUCCESS_WORDS = ("succeeded", "success", "successful", "completed", "complete", "done", "ok")


@dataclass(slots=True)
class Stats:
    """How much was read."""

    sources: int = 0
    lines: int = 0
    bytes: int = 0
    seconds: float = 0.0
    unlisted: int = 0  # occurrences of unrecognised errors past the MAX_UNRECOGNIZED kinds listed


@dataclass(slots=True)
class Report:
    """The whole report, before it is rendered."""

    lang: str
    findings: list[Finding]
    root_cause: Finding | None
    unrecognized: list[Unrecognized]
    facts: dict[str, Fact]
    stats: Stats
    why: dict[str, str] = field(default_factory=dict)
    remedy: dict[str, str] = field(default_factory=dict)
    verdicts: dict[str, str] = field(default_factory=dict)  # the signature's, or its chosen remedy variant's
    job_status: str | None = None  # what the scheduler reported, from --job-status / --exit-code
    story: Story | None = None
    nodes: list[NodeState] | None = None  # the Ray nodes read (diagnose --ray); None for local files
    forensics: Forensics | None = None  # the per-rank table and the culprit (judge/forensics.py)
    lead: Lead = field(default_factory=lambda: Lead("none"))
    skipped: int = 0  # sources left out: binary content, or they could not be opened

    @property
    def empty(self) -> bool:
        """Nothing to diagnose: no line was read (an empty file or folder, /dev/null, only binary files)."""
        return self.stats.lines == 0 and not self.failed

    def symptom_of(self, f: Finding) -> list[str]:
        """What this symptom echoes in this log: the root cause, when one was found."""
        rc = self.root_cause
        if rc is None or f.sig.kind != "symptom":
            return []
        return [rc.sig.id]

    @property
    def status_masked(self) -> bool:
        """The scheduler said the job succeeded, but the logs show it failed."""
        return reported_success(self.job_status) and self.failed

    @property
    def failed(self) -> bool:
        """The log shows a failure: an error/fatal finding or an unrecognised traceback."""
        return any(f.sig.is_failure for f in self.findings) or bool(self.unrecognized)

    @property
    def only_symptoms(self) -> bool:
        """No root cause, and an echo (a symptom) leads the report instead (judge/lead.py)."""
        return self.lead.role == "symptom"

    @property
    def shown(self) -> Finding | None:
        """The finding the report leads with (the root cause, or the symptom or exit status that stands in)."""
        return self.lead.finding


def values_for(finding: Finding, facts: dict[str, Fact]) -> dict[str, str]:
    """What a remedy template may quote: facts from anywhere in the input, then this finding's own."""
    values = {name: fact.value for name, fact in facts.items()}
    framework = framework_of(facts)  # a remedy variant may be for one framework's settings
    if framework:
        values["framework"] = framework
    first = finding.first
    values.update({"source": first.source, "line": str(first.line), "count": str(finding.count)})
    if first.rank is not None:
        values["rank"] = str(first.rank)
    if first.host:
        values["host"] = first.host
    if first.actor:
        values["actor"] = first.actor
    if finding.ranks:
        values["ranks"] = compact_ranks(finding.ranks)
    values.update(finding.captures)
    return values


def reported_success(status: str | None) -> bool:
    if status is None:
        return False
    low = status.strip().lower()
    return low in SUCCESS_WORDS or low in ("0", "exit 0", "exit code 0", "exited 0")


def _masked_finding(collector: Collector, status: str) -> Finding | None:
    sig = collector.signatures.get(MASKED_ID)
    if sig is None:
        return None
    where = Location("<job status>", 0)
    evidence = (EvidenceLine(0, f"the scheduler reported this job as: {status}", True),)
    return Finding(sig, 1, where, where, {"job_status": status}, evidence)


def _taken(u: Unrecognized, findings: Iterable[Finding]) -> bool:
    """Whether a lone line is one a finding took (a rule with conditions that held on it: the scanner offers such a line
    as a lone error too, since the conditions are decided later): its place, or its message in a hit line of its
    source."""
    for f in findings:
        if any(u.first.source == w.source and u.first.line == w.line for w in (f.first, f.last)):
            return True
        if u.message and f.first.source == u.first.source and any(e.key and u.message in e.raw for e in f.evidence):
            return True
    return False


def build_report(collector: Collector, lang: str, seconds: float, job_status: str | None = None) -> Report:
    collector.finalize()
    found = dict(collector.findings)
    unrecognized = sorted(collector.unrecognized.values(), key=lambda u: (u.first.source_index, u.first.line))
    book = collector.forensics
    killed = bool(book.items("sched_kill") or book.items("agent_death"))
    unrecognized, ignored = set_aside(book, found, unrecognized, killed)  # teardown, retried, the kill itself
    facts = {name: f.value for name, f in collector.facts.items()}
    forensics = judge_forensics(book, facts, found, collector.signatures, root_cause(rank_findings(found.values())),
                                lang)
    forensics.ignored = ignored
    if not any(f.sig.role == "root" and f.sig.is_failure for f in found.values()) and all(
            u.exc_type == "?" for u in unrecognized):
        # no cause, and no traceback that kept its exception line: the exception lines that stood alone (a paste's
        # last line, a worker's error above the driver's cut traceback) say more than a cut traceback's '?'
        lone = [u for u in collector.lone_unrecognized() if not _taken(u, found.values())]
        unrecognized = sorted(unrecognized + lone, key=lambda u: (u.first.source_index, u.first.line))
    failed = any(f.sig.is_failure for f in found.values() if not f.sig.only_with_failure) or bool(unrecognized)
    for sig_id in [k for k, f in found.items() if f.sig.only_with_failure and not failed]:
        del found[sig_id]  # a meta signature only speaks when the input shows a failure
    if failed and reported_success(job_status) and MASKED_ID not in found:
        masked = _masked_finding(collector, job_status or "")
        if masked is not None:
            found[MASKED_ID] = masked
    if job_status is not None and MASKED_ID in found:
        found[MASKED_ID].captures.setdefault("job_status", job_status)
    ranked = rank_findings(found.values())
    stats = Stats(collector.sources, collector.lines, collector.bytes, round(seconds, 3), collector.unlisted)
    root = root_cause(ranked)
    fold_echoes(unrecognized, root)
    report = Report(lang, ranked, root, unrecognized, dict(collector.facts), stats,
                    job_status=job_status, skipped=collector.skipped_binary + len(collector.unreadable))
    report.lead = choose_lead(ranked, root, unrecognized, report.failed, report.empty)
    for f in ranked:
        values = values_for(f, collector.facts)
        report.why[f.sig.id] = fill(f.sig.why.get(lang), values)
        report.remedy[f.sig.id] = render_remedy(f.sig.remedy, values, lang)
        report.verdicts[f.sig.id] = verdict_of(f.sig.remedy, values, f.sig.verdict)
    root_verdict = report.verdicts.get(report.root_cause.sig.id) if report.root_cause is not None else None
    report.story = build_story(collector, ranked, report.root_cause, report.failed, lang, unrecognized,
                               report.empty, root_verdict, {r.rank for r in forensics.table.rows if r.rank is not None})
    report.forensics = forensics
    if forensics.restarts is not None and forensics.restarts.verdict == "stop" and report.failed:
        report.story.verdict = "stop"
        report.story.verdict_reason = msg("verdict_stop", lang, attempts=len(forensics.restarts.attempts))
    return report


def first_unrecognized(report: Report) -> Unrecognized | None:
    """The unrecognised error the report leads with, or else the earliest one that is not an echo."""
    if report.lead.unrecognized is not None:
        return report.lead.unrecognized
    best: Unrecognized | None = None
    for u in report.unrecognized:
        if u.echo_of is None and (best is None or earlier(u.first, best.first)):
            best = u
    return best
