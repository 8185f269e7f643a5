"""The prefixes a log line may carry, as regexes: colour codes, progress bars, Ray and rank tags, timestamps.

Each transport prefix (Ray `(Actor pid=…, ip=…)`, `[rankN]:`, MPI, pdsh) names the process that wrote the
line; logger prefixes (ISO, glog, vLLM, ChatLearn, ROLL, syslog, dmesg) add a time, rank or host.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date

import regex

from ..lazyre import lazy, lazy_re

MONTHS = {m: i for i, m in enumerate(
    ("Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"), start=1)}
_MON = "Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|Nov|Dec"


ANSI_RE = lazy(
    r"""
    \x1b\[[0-?]*[ -/]*[@-~]              # CSI: colours, cursor moves
  | \x1b\][^\x07\x1b]*(?:\x07|\x1b\\)?   # OSC: titles, hyperlinks
  | \x1b[@-Z\\-_]                        # two-byte escapes
  | (?:\#033|\^\[|\\033|\\x1b|\\e)\[[0-?]*[ -/]*[@-~]   # ESC written out by a log shipper
  | (?:(?<![\w\\])|(?<=\dm))\[\d{1,3}(?:;\d{1,3})*m    # ESC byte lost: "[36m(" ... "[0m"
    """,
    regex.VERBOSE,
)
CONTROL_RE = lazy(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f]")
# The same two, on bytes, for the fast search: it asks whether a whole stretch of lines may hold a text once
# cleaned, before decoding them. `clean_bytes` removes what the two above remove from each decoded line
# (and, where a removal joins the pieces of a lost-ESC code, that code too; no prefix holds one). Newlines
# are never removed, so each line stays where it was.
_ESC_BYTES_RE = lazy_re(rb"\x1b(?:\[[0-?]*[ -/]*[@-~]|\][^\x07\x1b\n]*(?:\x07|\x1b\\)?|[@-Z\\-_])")
_OTHER_BYTES_RE = lazy_re(
    rb"(?:\#033|\^\[|\\033|\\x1b|\\e)\[[0-?]*[ -/]*[@-~]|(?:(?<![\w\\])|(?<=\dm))\[\d{1,3}(?:;\d{1,3})*m")
_OTHER_HINT_RE = lazy_re(rb"\[\d{1,3}(?:;\d{1,3})*m|(?:033|\^\[|x1b|\\e)\[")
_LOST_BYTES_RE = lazy_re(rb"\[\d{1,3}(?:;\d{1,3})*m")  # the first form of _OTHER_HINT_RE
CONTROL_BYTES = bytes([*range(0, 9), 11, 12, *range(14, 32), 127])
# what a removed sequence can begin with: ESC or another control byte, "[" (a lost ESC), "#", "^", "\\"
REMOVED_START = CONTROL_BYTES + b"[#^\\"


def clean_bytes(data: bytes) -> bytes:
    """`data` (whole lines) without colour codes and control characters, as the normaliser cleans a line."""
    if b"\x1b" in data:
        data = _ESC_BYTES_RE.sub(b"", data)
    if b"[" in data and (_LOST_BYTES_RE.search(data) is not None or b"033[" in data or b"^[[" in data
                         or b"x1b[" in data or b"\\e[" in data):  # _OTHER_HINT_RE, its forms found faster
        data = _OTHER_BYTES_RE.sub(b"", data)
    return data.translate(None, CONTROL_BYTES)


# tqdm-style bars: "45%|████▌     | 45/100 [00:10<00:12, 4.5it/s]" and friends. Every repeat is bounded: an
# unbounded `[\d.]+` before "it/s" made one 64 KB line of digits cost 200 s (each start ran to the line's end).
PROGRESS_RE = lazy(
    r"\d{1,3}%\|[^|]{0,200}\||\|\s{0,8}\d{1,12}/\d{1,12}\s{0,8}\[\d{1,6}:\d\d|(?<![\d.])[\d.]{1,24}+\s?(?:it/s|s/it)\]"
)
# A bar that ended without a newline and had the next message glued on after its "]".
GLUED_RE = lazy(r"^(?P<bar>.*?\d{1,3}%\|[^|]{0,200}\|[^\[\]]{0,100}\[[^\]]{0,300}\])\s*(?P<rest>\S.*)$")
REPEAT_RE = lazy(r"\s*\[repeated (?P<n>\d+)x across cluster\](?:\s*\(Ray deduplicates.*)?\s*$")

_ISO = (
    r"\[?(?P<Y>\d{4})[-/](?P<mo>\d\d)[-/](?P<d>\d\d)[T ](?P<H>\d\d):(?P<M>\d\d):(?P<S>\d\d)"
    r"(?:[.,](?P<f>\d{1,9}))?(?:\s?(?:Z|UTC|[+-]\d\d:?\d\d))?"
)
ISO_RE = lazy(  # in brackets, or in quotes as some log exports write it ("2025-08-07T21:02:33+08:00" ...)
    '^"?' + _ISO + r'(?:\s+[IWEDF]\s+\d+\s+\d+)?[\]"]?(?:(?:\s*[|:]\s*|\s+-\s+|\s+)|$)'
)
# c10 / glog: "[E501 12:00:01.123456789 ProcessGroupNCCL.cpp:616] " (MMDD has no leading zero before
# October), python glog-like "E0325 20:57:27.620000 2606 site-packages/torch/.../api.py:869] "
GLOG_RE = lazy(
    r"^\[?(?P<lvl>[IWEFV])(?P<md>\d{3,4}) (?P<H>\d\d):(?P<M>\d\d):(?P<S>\d\d)(?:\.(?P<f>\d+))?"
    r"\s+(?:\d+\s+)?(?P<loc>[\w.\-/\\]+:\d+)\]\s?"
)
OLD_C10_RE = lazy(r"^\[(?P<lvl>[IWEF]) (?P<loc>[\w.\-/]+:\d+)\]\s?")
DMESG_RE = lazy(r"^\[\s*\d+\.\d+\]\s?")
DMESG_T_RE = lazy(
    rf"^\[(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun) (?P<b>{_MON})\s+(?P<d>\d{{1,2}}) "
    r"(?P<H>\d\d):(?P<M>\d\d):(?P<S>\d\d) (?P<Y>\d{4})\]\s?"
)
SYSLOG_RE = lazy(
    rf"^(?P<b>{_MON})\s+(?P<d>\d{{1,2}}) (?P<H>\d\d):(?P<M>\d\d):(?P<S>\d\d) "
    r"(?P<host>[\w.\-]+) (?P<prog>[\w\-/.]+)(?:\[\d+\])?: "
)
KERNEL_HOST_RE = lazy(r"^(?P<host>[\w.\-]+) kernel: ")
# vLLM: "INFO 05-09 16:18:30 [engine.py:310] ", "ERROR 04-15 00:31:11 worker_base.py:574] "
VLLM_RE = lazy(
    r"^(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) (?P<mo>\d\d)-(?P<d>\d\d) (?P<H>\d\d):(?P<M>\d\d):(?P<S>\d\d)"
    r"(?:\.(?P<f>\d+))? \[?[\w./\-]+:\d+\]\s?"
)
# ChatLearn's logger, after its "[<asctime> " was taken: "ChatLearn-policy_trainer 10.0.0.7 RANK:3] (x.py 37): "
CHATLEARN_RE = lazy(
    r"^ChatLearn(?:-(?P<actor>[\w.\-]+))?(?: (?P<host>[\w.:\-]+) RANK:(?P<rank>\d+))?\] \([\w.\-]+ \d+\):"
    r"(?: (?:DEBUG|INFO|WARNING|ERROR|CRITICAL)(?= ))? ?"
)
# ROLL's logger, after its "[<asctime>] ": "[rlvr_pipeline.py (487)] [INFO] [actor_train-0-G0 0 / 8][PID 4321] "
ROLL_RE = lazy(
    r"^\[[\w.\-]+ \(\d+\)\] \[[A-Z]+\] \[(?P<actor>[\w.\-]+) (?P<rank>\d+) / \d+\]\[PID (?P<pid>\d+)\]\s?"
)
# (also SkyPilot's run prefixes, sky/skylet: "(task, pid=N)" on one node, "(worker1, rank=1, pid=N, ip=X)" on several:
# that rank is the node's index in the cluster, not a training rank, so it is not read as one)
RAY_RE = lazy(
    r"^\((?:(?P<actor>[^()=,\s][^()=,]*?(?:\([^()]*\))?)(?:,\s*rank=\d+)?,?\s+)?pid=(?P<pid>\w+)"
    r"(?:,\s*ip=(?P<ip>[0-9A-Fa-f.:]+))?(?:,\s*[^)]*)?\)\s?"
)
RAY_SVC_RE = lazy(
    r"^\((?P<actor>raylet|gcs_server|autoscaler|monitor|dashboard|dashboard_agent|log_monitor|"
    r"runtime_env_agent)(?:,\s*ip=(?P<ip>[0-9A-Fa-f.:]+))?(?:\s+\+[\dhms.]+)?\)\s?"
)
RANK_RE = lazy(r"^\[[Rr]ank\s?(?P<rank>\d+)\]:\s?")
ROLE_RE = lazy(r"^\[(?!rank\d)(?P<role>[A-Za-z_][\w\-]*?)(?P<lrank>\d+)\]:\s?")
# NCCL's debug prefix "<host>:<pid>:<tid> [<cudaDev>] " (src/debug.cc): names the process, and stays in the text
NCCL_PREFIX_RE = lazy(r"^(?P<host>[A-Za-z0-9][\w.\-]{0,254}):(?P<pid>\d{1,9}):\d{1,9} \[\d{1,3}\] ")
# srun --label, read as the task id once a file is known to be srun's (normalize.py): right-aligned to the width
# of the largest one (slurm src/common/write_labelled_message.c `_build_label`, "%*d: "); heterogeneous jobs put
# "P<component> " first. SRUN_RE below strips a label in any file, as a logger prefix that names no one.
SRUN_LABEL_RE = lazy(r"^(?:P\d{1,4} )?(?P<label> {0,5}\d{1,6}): ")
MPI_RE = lazy(r"^\[\d+,(?P<rank>\d+)\]<(?:stdout|stderr)>:\s?")
# Slurm `srun --label`: the task number before each line of its output ("4: [rank4]: ..."); it says nothing
# about the stream a pasted numbered listing would also have, so it is read as a logger prefix, not a transport
SRUN_RE = lazy(r"^\d{1,5}: (?=\S)")
PDSH_RE = lazy(
    r"^(?P<host>\d{1,3}(?:\.\d{1,3}){3}|(?:[A-Za-z][\w-]*-)?(?:master|worker|node)-\d+[\w-]*): "
)

# Transport prefixes say which process wrote the line (they define its stream); logger prefixes
# only add a rank or a time to what the process itself printed.
TRANSPORT = frozenset({RAY_RE, RAY_SVC_RE, RANK_RE, ROLE_RE, MPI_RE, PDSH_RE})
BRACKET = (ISO_RE, GLOG_RE, OLD_C10_RE, DMESG_T_RE, DMESG_RE, RANK_RE, MPI_RE, ROLE_RE, ROLL_RE)
PAREN = (RAY_RE, RAY_SVC_RE)
DIGIT = (ISO_RE, PDSH_RE, SRUN_RE)
ALPHA = (GLOG_RE, VLLM_RE, CHATLEARN_RE, SYSLOG_RE, PDSH_RE)
MAX_PREFIXES = 8
# the patterns every match of which holds ": " (a line without one is not tried with them)
COLON_SPACE = frozenset({PDSH_RE, SYSLOG_RE, SRUN_RE})
_GROUPS = {"[": BRACKET, "(": PAREN, '"': (ISO_RE,)}
_BY_START: dict[str, tuple[regex.Pattern[str], ...]] = {}
START_MEMO = 8192


def candidates(text: str) -> tuple[regex.Pattern[str], ...] | None:
    """The prefix patterns that may match at the start of `text` (non-empty), in the order they are tried; None
    when no prefix starts like it. Decided once per pair of first characters: those of the group of its first
    character (BRACKET, PAREN, DIGIT, ALPHA) that match the pair or could match a text that begins with it
    (a partial match), so a line tries one or two patterns, not nine."""
    start = text[:2]
    found = _BY_START.get(start)
    if found is None:
        first = start[0]
        group = _GROUPS.get(first) or (DIGIT if first.isdigit() else ALPHA if first.isalpha() else ())
        found = tuple(p for p in group if p.match(start, partial=True) is not None)
        if len(_BY_START) >= START_MEMO:
            _BY_START.clear()
        _BY_START[start] = found
    return found or None


def is_progress(text: str) -> bool:
    return PROGRESS_RE.search(text) is not None


def segments(body: str) -> list[str]:
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


_EPOCH_DAY = date(1970, 1, 1).toordinal()


def timegm(year: int, month: int, day: int, hour: int, minute: int, sec: int) -> int:
    """calendar.timegm's arithmetic (same result, same ValueError for a month or year out of range) without
    importing calendar, which imports locale: a start-up paid 10 ms for it."""
    return (((date(year, month, 1).toordinal() - _EPOCH_DAY + day - 1) * 24 + hour) * 60 + minute) * 60 + sec


Clock = tuple[int | None, str | None, float | None]  # the year, "MM-DDTHH:MM:SS" (None: out of range), epoch seconds
_CLOCKS: dict[tuple[str | int | None, ...], Clock | None] = {}
CLOCK_MEMO = 4096


def clock(md: str | None, mo: str | None, b: str | None, d: str | None, hh: str | None, mm: str | None,
          ss: str | None, y: str | None, year: int | None) -> Clock | None:
    """A time prefix's groups read to the second (None when they are no date): the year (`y` as printed, else
    `year`), the stamp, and the epoch seconds (None without a year or past the calendar). Lines of one second
    share it, so it is read once per distinct value (a line's fraction of a second is added by the caller)."""
    key = (md, mo, b, d, hh, mm, ss, y, year)
    if key in _CLOCKS:
        return _CLOCKS[key]
    got = _read_clock(md, mo, b, d, hh, mm, ss, y, year)
    if len(_CLOCKS) >= CLOCK_MEMO:
        _CLOCKS.clear()
    _CLOCKS[key] = got
    return got


def _read_clock(md: str | None, mo: str | None, b: str | None, d: str | None, hh: str | None, mm: str | None,
                ss: str | None, y: str | None, year: int | None) -> Clock | None:
    try:
        if md:
            month, day = divmod(int(md), 100)
        else:
            month = int(mo) if mo else MONTHS[b or ""]
            day = int(d or 0)
        hour, minute, sec = int(hh or 0), int(mm or 0), int(ss or 0)
        if y:
            year = int(y)
    except (KeyError, ValueError, OverflowError):
        return None
    if not (1 <= month <= 12 and 1 <= day <= 31 and hour < 24 and minute < 60 and sec < 62):
        return (year, None, None)
    stamp = f"{month:02d}-{day:02d}T{hour:02d}:{minute:02d}:{sec:02d}"
    try:
        ts = None if year is None else float(timegm(year, month, day, hour, minute, min(sec, 59)))
    except (ValueError, OverflowError):
        ts = None
    return (year, stamp, ts)


_LAST_CLEAN = ("", "")  # the last line cleaned and its text: the fast search cleans a line, then feeds it


# The usual line holds colour codes only (Ray's actor prefix): they are removed by a plain pattern, about twice as
# fast as ANSI_RE; when what is left holds nothing ANSI_RE could still remove (no ESC, no lost or written-out
# ESC), ANSI_RE would have removed exactly those codes (none of its other forms can overlap one), else it runs.
_CSI_RE = lazy_re(r"\x1b\[[0-?]*[ -/]*[@-~]")
_LOST_RE = lazy_re(r"\[\d{1,3}(?:;\d{1,3})*m")


def _left(text: str) -> bool:
    """Whether `text` holds the start of something ANSI_RE removes (other than a CSI code: see strip_ansi)."""
    return "\x1b" in text or ("[" in text and (
        _LOST_RE.search(text) is not None or "033[" in text or "^[[" in text or "x1b[" in text or "\\e[" in text))


def strip_ansi(text: str) -> str:
    if "\x1b" in text:
        quick = _CSI_RE.sub("", text)
        return ANSI_RE.sub("", text) if _left(quick) else quick
    return ANSI_RE.sub("", text) if _left(text) else text


def clean_text(raw: str) -> str:
    """The physical line without its line end, colour codes and control characters: the text every logical
    line of it is a part of."""
    global _LAST_CLEAN
    last = _LAST_CLEAN
    if raw == last[0]:
        return last[1]
    clean = strip_ansi(raw.rstrip("\r\n"))
    if not clean.isprintable() and CONTROL_RE.search(clean):  # a control character is never printable
        clean = CONTROL_RE.sub("", clean)
    _LAST_CLEAN = (raw, clean)
    return clean


@dataclass(slots=True)
class Info:
    """What a line's prefixes told (read/normalize.py)."""

    rank: int | None = None
    host: str | None = None
    actor: str | None = None
    pid: int | None = None
    time: str | None = None
    ts: float | None = None
    has_time: bool = False
    stream: str = ""
    rank_is_local: bool = False
    lrank: int | None = None


# what a line's first prefix told: rank, host, actor, pid, stream, rank_is_local, lrank (see Normalizer)
Told = tuple[int | None, str | None, str | None, int | None, str, bool, int | None]
