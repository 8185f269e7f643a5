"""Turn one raw physical line into cleaned logical lines: ANSI, `\\r` redraws, prefixes, timestamps.

The raw text is kept for evidence; what the prefixes tell (rank, Ray actor, pid, host, time) is
kept on the record; the cleaned text is what signatures match.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass, replace

import regex

MONTHS = {m: i for i, m in enumerate(
    ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), start=1)}
_MON = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"


@dataclass(frozen=True, slots=True)
class LogLine:
    """One logical line: where it came from, what it said, and what its prefixes told."""

    source: str
    lineno: int
    raw: str
    text: str
    stream: str = ""
    rank: int | None = None
    host: str | None = None
    actor: str | None = None
    pid: int | None = None
    time: str | None = None
    ts: float | None = None
    repeat: int = 1
    source_index: int = 0
    has_prefix_time: bool = False


ANSI_RE = regex.compile(
    r"""
    \x1b\[[0-?]*[ -/]*[@-~]              # CSI: colours, cursor moves
  | \x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?   # OSC: titles, hyperlinks
  | \x1b[@-Z\\-_]                        # two-byte escapes
  | (?:\#033|\^\[|\\033|\\x1b|\\e)\[[0-?]*[ -/]*[@-~]   # ESC written out by a log shipper
  | (?:(?<![\w\\])|(?<=\dm))\[\d{1,3}(?:;\d{1,3})*m    # ESC byte lost: "[36m(" ... "[0m"
    """,
    regex.VERBOSE,
)
CONTROL_RE = regex.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")

# tqdm-style bars: "45%|████▌     | 45/100 [00:10<00:12, 4.5it/s]" and friends.
PROGRESS_RE = regex.compile(
    r"\d{1,3}%\|[^|]{0,200}\||\|\s*\d+/\d+\s*\[\d+:\d\d|[\d.]+\s?(?:it/s|s/it)\]"
)
# A bar that ended without a newline and had the next message glued on after its "]".
GLUED_RE = regex.compile(r"^(?P<bar>.*?\d{1,3}%\|[^|]{0,200}\|[^\[\]]{0,100}\[[^\]]{0,300}\])\s*(?P<rest>\S.*)$")
REPEAT_RE = regex.compile(r"\s*\[repeated (?P<n>\d+)x across cluster\](?:\s*\(Ray deduplicates.*)?\s*$")

_ISO = (
    r"\[?(?P<Y>\d{4})[-/](?P<mo>\d\d)[-/](?P<d>\d\d)[T ](?P<H>\d\d):(?P<M>\d\d):(?P<S>\d\d)"
    r"(?:[.,](?P<f>\d{1,9}))?(?:\s?(?:Z|UTC|[+-]\d\d:?\d\d))?"
)
ISO_RE = regex.compile(
    "^" + _ISO + r"(?:\s+[IWEDF]\s+\d+\s+\d+)?\]?(?:(?:\s*[|:]\s*|\s+-\s+|\s+)|$)"
)
# c10 / glog: "[E501 12:00:01.123456789 ProcessGroupNCCL.cpp:616] " (MMDD has no leading zero before
# October), python glog-like "E0325 20:57:27.620000 2606 site-packages/torch/.../api.py:869] "
GLOG_RE = regex.compile(
    r"^\[?(?P<lvl>[IWEFV])(?P<md>\d{3,4}) (?P<H>\d\d):(?P<M>\d\d):(?P<S>\d\d)(?:\.(?P<f>\d+))?"
    r"\s+(?:\d+\s+)?(?P<loc>[\w.\-/\\]+:\d+)\]\s?"
)
OLD_C10_RE = regex.compile(r"^\[(?P<lvl>[IWEF]) (?P<loc>[\w.\-/]+:\d+)\]\s?")
DMESG_RE = regex.compile(r"^\[\s*\d+\.\d+\]\s?")
DMESG_T_RE = regex.compile(
    rf"^\[(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?P<b>{_MON})\s+(?P<d>\d{{1,2}}) "
    r"(?P<H>\d\d):(?P<M>\d\d):(?P<S>\d\d) (?P<Y>\d{4})\]\s?"
)
SYSLOG_RE = regex.compile(
    rf"^(?P<b>{_MON})\s+(?P<d>\d{{1,2}}) (?P<H>\d\d):(?P<M>\d\d):(?P<S>\d\d) "
    r"(?P<host>[\w.\-]+) (?P<prog>[\w\-/.]+)(?:\[\d+\])?: "
)
KERNEL_HOST_RE = regex.compile(r"^(?P<host>[\w.\-]+) kernel: ")
# vLLM: "INFO 05-09 16:18:30 [engine.py:310] ", "ERROR 04-15 00:31:11 worker_base.py:574] "
VLLM_RE = regex.compile(
    r"^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) (?P<mo>\d\d)-(?P<d>\d\d) (?P<H>\d\d):(?P<M>\d\d):(?P<S>\d\d)"
    r"(?:\.(?P<f>\d+))? \[?[\w./\-]+:\d+\]\s?"
)
# ChatLearn's logger, after its "[<asctime> " was taken: "ChatLearn-policy_trainer 10.0.0.7 RANK:3] (x.py 37): "
CHATLEARN_RE = regex.compile(
    r"^ChatLearn(?:-(?P<actor>[\w.\-]+))?(?: (?P<host>[\w.:\-]+) RANK:(?P<rank>\d+))?\] \([\w.\-]+ \d+\):"
    r"(?: (?:DEBUG|INFO|WARNING|ERROR|CRITICAL)(?= ))? ?"
)
# ROLL's logger, after its "[<asctime>] ": "[rlvr_pipeline.py (487)] [INFO] [actor_train-0-G0 0 / 8][PID 4321] "
ROLL_RE = regex.compile(
    r"^\[[\w.\-]+ \(\d+\)\] \[[A-Z]+\] \[(?P<actor>[\w.\-]+) (?P<rank>\d+) / \d+\]\[PID (?P<pid>\d+)\]\s?"
)
RAY_RE = regex.compile(
    r"^\((?:(?P<actor>[^()=,\s][^()=,]*?(?:\([^()]*\))?)\s+)?pid=(?P<pid>\w+)"
    r"(?:,\s*ip=(?P<ip>[0-9A-Fa-f.:]+))?(?:,\s*[^)]*)?\)\s?"
)
RAY_SVC_RE = regex.compile(
    r"^\((?P<actor>raylet|gcs_server|autoscaler|monitor|dashboard|dashboard_agent|log_monitor|"
    r"runtime_env_agent)(?:,\s*ip=(?P<ip>[0-9A-Fa-f.:]+))?(?:\s+\+[\dhms.]+)?\)\s?"
)
RANK_RE = regex.compile(r"^\[[Rr]ank\s?(?P<rank>\d+)\]:\s?")
ROLE_RE = regex.compile(r"^\[(?!rank\d)(?P<role>[A-Za-z_][\w\-]*?)(?P<lrank>\d+)\]:\s?")
MPI_RE = regex.compile(r"^\[\d+,(?P<rank>\d+)\]<(?:stdout|stderr)>:\s?")
PDSH_RE = regex.compile(
    r"^(?P<host>\d{1,3}(?:\.\d{1,3}){3}|(?:[A-Za-z][\w-]*-)?(?:master|worker|node)-\d+[\w-]*): "
)

# Transport prefixes say which process wrote the line (they define its stream); logger prefixes
# only add a rank or a time to what the process itself printed.
TRANSPORT = frozenset({RAY_RE, RAY_SVC_RE, RANK_RE, ROLE_RE, MPI_RE, PDSH_RE})
_BRACKET = (ISO_RE, GLOG_RE, OLD_C10_RE, DMESG_T_RE, DMESG_RE, RANK_RE, MPI_RE, ROLE_RE, ROLL_RE)
_PAREN = (RAY_RE, RAY_SVC_RE)
_DIGIT = (ISO_RE, PDSH_RE)
_ALPHA = (GLOG_RE, VLLM_RE, CHATLEARN_RE, SYSLOG_RE, PDSH_RE)
_MAX_PREFIXES = 8
# Year-less timestamps (glog, syslog) take the year of the first dated line among the first HEAD_LINES
# lines of their file: a fixed place, so every scan path dates them the same way.
HEAD_LINES = 2000
# Config values (signature facts, the job's shape) are read from the first FACT_LINES lines of a file,
# where config dumps and launch lines are; checkpoint messages are read everywhere.
FACT_LINES = 50000


@dataclass(slots=True)
class _Info:
    rank: int | None = None
    host: str | None = None
    actor: str | None = None
    pid: int | None = None
    time: str | None = None
    ts: float | None = None
    has_time: bool = False
    stream: str = ""
    rank_is_local: bool = False


def strip_ansi(text: str) -> str:
    if "\x1b" in text or "[" in text:
        text = ANSI_RE.sub("", text)
    return text


def is_progress(text: str) -> bool:
    return PROGRESS_RE.search(text) is not None


class Normalizer:
    """Per-source normaliser; dates year-less timestamps with the first full year in the head (else the job's)."""

    def __init__(self, source: str, source_index: int = 0, rank: int | None = None,
                 host: str | None = None, job_year: int | None = None) -> None:
        self.source = source
        self.source_index = source_index
        self.default_rank = rank  # what the file's name says, for lines whose prefixes say nothing
        self.default_host = host
        self.year: int | None = None
        self.job_year = job_year  # the year the job's other files print, for a file that prints none
        self.lineno = 0

    def lines(self, lineno: int, raw: str) -> list[LogLine]:
        """The logical lines of one physical line (usually one; more after `\\r` redraws)."""
        self.lineno = lineno
        clean = strip_ansi(raw.rstrip("\r\n"))
        if CONTROL_RE.search(clean):
            clean = CONTROL_RE.sub("", clean)
        # what a terminal would have shown: the line without colour codes, prefixes kept
        raw = clean.replace("\r", " ⏎ ") if "\r" in clean else clean
        info = _Info()
        body = self._strip_prefixes(clean, info)
        if info.rank is None and self.default_rank is not None:
            info.rank = self.default_rank
        if info.host is None and self.default_host is not None:
            info.host = self.default_host
        repeat = 1
        if "[repeated" in body:
            m = REPEAT_RE.search(body)
            if m:
                repeat = int(m.group("n"))
                body = body[: m.start()]
        segments = _segments(body) if "\r" in body or "%|" in body else [body]
        out: list[LogLine] = []
        for seg in segments:
            seg_info = _Info(info.rank, info.host, info.actor, info.pid, info.time, info.ts, info.has_time,
                             info.stream, info.rank_is_local)
            text = self._strip_prefixes(seg, seg_info) if seg is not body else seg
            out.append(
                LogLine(
                    source=self.source, lineno=lineno, raw=raw, text=text.rstrip(),
                    stream=seg_info.stream, rank=seg_info.rank, host=seg_info.host,
                    actor=seg_info.actor, pid=seg_info.pid, time=seg_info.time, ts=seg_info.ts,
                    repeat=repeat, source_index=self.source_index, has_prefix_time=seg_info.has_time,
                )
            )
        return out

    def _strip_prefixes(self, text: str, info: _Info) -> str:
        for _ in range(_MAX_PREFIXES):
            if not text:
                return text
            first = text[0]
            if first == "[":
                candidates: tuple[regex.Pattern[str], ...] = _BRACKET
            elif first == "(":
                candidates = _PAREN
            elif first.isdigit():
                candidates = _DIGIT
            elif first.isalpha():
                candidates = _ALPHA
            elif first == " " and text[:2] != "  " and len(text) > 1 and not text[1].isspace():
                text = text[1:]  # one stray space left by a prefix separator
                continue
            else:
                return text
            for pattern in candidates:
                m = pattern.match(text)
                if m is not None:
                    self._absorb(m, info)
                    if pattern in TRANSPORT:
                        info.stream += m.group(0).strip() + "|"
                    text = text[m.end():]
                    if pattern is ISO_RE or pattern is SYSLOG_RE or pattern is DMESG_T_RE:
                        km = KERNEL_HOST_RE.match(text)
                        if km is not None:
                            info.host = info.host or km.group("host")
                            text = text[km.end():]
                    break
            else:
                return text
        return text

    def _absorb(self, m: regex.Match[str], info: _Info) -> None:
        groups = m.groupdict()
        # a global rank ([rank12]:) beats a local worker index ([default0]:) whatever their order
        if groups.get("rank") is not None and (info.rank is None or info.rank_is_local):
            info.rank = int(groups["rank"])
            info.rank_is_local = False
        if groups.get("lrank") is not None and info.rank is None:
            info.rank = int(groups["lrank"])
            info.rank_is_local = True
        host = groups.get("host") or groups.get("ip")
        if host and info.host is None:
            info.host = host
        if groups.get("actor") and info.actor is None:
            info.actor = groups["actor"].strip()
        pid = groups.get("pid")
        if pid and info.pid is None and pid.isdigit():
            info.pid = int(pid)
        elif pid and info.actor is None:
            info.actor = pid  # "(pid=gcs_server)"
        if groups.get("H") is not None and info.time is None:
            self._time(groups, info)

    def _time(self, g: dict[str, str | None], info: _Info) -> None:
        try:
            if g.get("md"):
                month, day = divmod(int(g["md"] or 0), 100)
            else:
                month = int(g["mo"] or 0) if g.get("mo") else MONTHS[g["b"] or ""]
                day = int(g["d"] or 0)
            hour, minute, sec = int(g["H"] or 0), int(g["M"] or 0), int(g["S"] or 0)
            frac = g.get("f") or ""
            year = int(g["Y"] or 0) if g.get("Y") else None
            if year is None:
                year = self.year if self.year is not None else self.job_year
            elif self.year is None and self.lineno <= HEAD_LINES:
                self.year = year
            if not (1 <= month <= 12 and 1 <= day <= 31 and hour < 24 and minute < 60 and sec < 62):
                return
            stamp = f"{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{sec:02d}"
            if frac:
                stamp += "." + frac[:6]
            info.has_time = True
            if year is None:
                info.time = stamp
                return
            info.time = f"{year:04d}-{stamp}"
            info.ts = calendar.timegm((year, month, day, hour, minute, min(sec, 59), 0, 0, 0)) + (
                float("0." + frac) if frac else 0.0
            )
        except (KeyError, ValueError, OverflowError):
            return


def _segments(body: str) -> list[str]:
    """Split `\\r` redraws: keep real text, drop all but the last progress-bar frame."""
    parts = [p for p in body.split("\r") if p.strip()] if "\r" in body else [body]
    if not parts:
        return [""]
    kept: list[str] = []
    for i, part in enumerate(parts):
        last = i == len(parts) - 1
        if "%|" in part:
            glued = GLUED_RE.match(part)
            if glued is not None:
                kept.append(glued.group("rest"))
                continue
        if last or not is_progress(part):
            kept.append(part)
    return kept or [parts[-1]]


def with_text(line: LogLine, text: str) -> LogLine:
    return replace(line, text=text)
