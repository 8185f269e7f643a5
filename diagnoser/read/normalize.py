"""Turn one raw physical line into cleaned logical lines: ANSI, `\\r` redraws, prefixes, timestamps.

The raw text is kept for evidence; what the prefixes tell (rank, Ray actor, pid, host, time) is
kept on the record; the cleaned text is what signatures match.
"""

from __future__ import annotations

from dataclasses import dataclass

import regex

from ..safe import to_int
from .gutter import Gutter
from .prefixes import (
    COLON_SPACE,
    DMESG_T_RE,
    ISO_RE,
    KERNEL_HOST_RE,
    MAX_PREFIXES,
    NCCL_PREFIX_RE,
    PAREN,
    REPEAT_RE,
    SRUN_LABEL_RE,
    SYSLOG_RE,
    TRANSPORT,
    Info,
    Told,
    clock,
)
from .prefixes import candidates as prefix_candidates
from .prefixes import clean_text as clean_text  # where the fast search and the tests find them
from .prefixes import segments as split_redraws
from .prefixes import strip_ansi as strip_ansi


@dataclass(slots=True, unsafe_hash=True)
class LogLine:
    """One logical line: where it came from, what it said, and what its prefixes told. Never changed once made
    (not declared frozen: a frozen dataclass pays a setattr call per field, a third of making one)."""

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
    lrank: int | None = None  # a launcher's local worker index ([default3]:), when the line told one
    task: int | None = None  # an srun --label task id ( 3: )


# Year-less timestamps (glog, syslog) take the year of the first dated line among the first HEAD_LINES
# lines of their file: a fixed place, so every scan path dates them the same way.
HEAD_LINES = 2000
# Config values (signature facts, the job's shape) are read from the first FACT_LINES lines of a file,
# where config dumps and launch lines are; checkpoint messages are read everywhere.
FACT_LINES = 50000
SRUN_PREAMBLE = 50  # lines a batch script may print before srun's labelled output starts
MAX_REPEAT = 10**9  # Ray's "[repeated Nx across cluster]": a count past this is a count of this
PREFIX_MEMO = 4096  # first prefixes remembered per source (see Normalizer._absorb_first)


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
        # srun --label: None until a labelled line is seen, then its width; 0 once the source is known not to be
        self.srun_width: int | None = None
        self.srun_seen = 0
        self.gutter = Gutter()  # a pasted listing's line numbers or time column (read/gutter.py)
        # (first prefix pattern, its groups) -> what it told (see _absorb_first)
        self._first: dict[tuple[regex.Pattern[str], str, tuple[str | None, ...]], Told] = {}
        self._paren: dict[str, Told] = {}  # a Ray prefix's text -> what it told (see _strip_prefixes)

    @property
    def settled(self) -> bool:
        """Whether a line's normalising no longer depends on earlier lines: the head's year taken, srun's decided."""
        return (self.lineno > HEAD_LINES and (self.srun_width == 0 or self.srun_seen >= 3)
                and self.gutter.decided is not None)

    def known_stream(self, head: str) -> bool:
        """Whether a line whose cleaned text starts with `head`, a Ray prefix "(...) ", is certainly of a transport
        stream: that prefix was seen and remembered (see _strip_prefixes) and told one."""
        told = self._paren.get(head)
        return told is not None and bool(told[4])

    def lines(self, lineno: int, raw: str) -> list[LogLine]:
        """The logical lines of one physical line (usually one; more after `\\r` redraws)."""
        self.lineno = lineno
        clean = clean_text(raw)
        # what a terminal would have shown: the line without colour codes, prefixes kept
        raw = clean.replace("\r", " ⏎ ") if "\r" in clean else clean
        info = Info()
        task = None
        if self.gutter.decided is not False and clean:
            clean = self.gutter.peel(clean, lineno)
        if self.srun_width != 0 and clean:
            clean, task = self._srun_label(clean)
            if task is not None:
                info.stream = f"{task}:|"
        body = self._strip_prefixes(clean, info)
        if info.pid is None and body[:1].isalnum() and " NCCL " in body:
            m = NCCL_PREFIX_RE.match(body)
            if m is not None:
                info.pid = int(m.group("pid"))
                info.host = info.host or m.group("host")
        if task is not None and info.rank is None:
            info.rank = task  # srun started one task per rank
        if info.rank is None and self.default_rank is not None:
            info.rank = self.default_rank
        if info.host is None and self.default_host is not None:
            info.host = self.default_host
        repeat = 1
        if "[repeated" in body:
            m = REPEAT_RE.search(body)
            if m:
                repeat = min(to_int(m.group("n")) or 1, MAX_REPEAT)
                body = body[: m.start()]
        segments = split_redraws(body) if "\r" in body or "%|" in body else [body]
        out: list[LogLine] = []
        for seg in segments:
            if seg is body:
                seg_info, text = info, seg
            else:
                seg_info = Info(info.rank, info.host, info.actor, info.pid, info.time, info.ts, info.has_time,
                                 info.stream, info.rank_is_local, info.lrank)
                text = self._strip_prefixes(seg, seg_info)
            out.append(LogLine(  # by position (a third of the cost of by name): the order of LogLine's fields
                self.source, lineno, raw, text.rstrip(), seg_info.stream, seg_info.rank, seg_info.host, seg_info.actor,
                seg_info.pid, seg_info.time, seg_info.ts, repeat, self.source_index, seg_info.has_time, seg_info.lrank,
                task))
        return out

    def _srun_label(self, text: str) -> tuple[str, int | None]:
        """Peel srun's `--label` task id. A source is taken as srun's once its first labelled lines agree
        (three in a row, one width); lines srun prints itself (`srun: error: ...`) carry none."""
        m = SRUN_LABEL_RE.match(text)
        if m is not None and (self.srun_width is None or len(m.group("label")) == self.srun_width):
            self.srun_width = len(m.group("label"))
            self.srun_seen += 1
            return text[m.end():], int(m.group("label"))
        undecided = self.srun_width is None
        if (not undecided and self.srun_seen < 3) or (undecided and self.lineno > SRUN_PREAMBLE):
            self.srun_width = 0
        return text, None

    def _strip_prefixes(self, text: str, info: Info) -> str:
        start = 0
        if text[:1] == "(" and not info.stream:
            # a Ray prefix seen before, "(<no parens>) ": none of its patterns can read past its ")" (they match
            # a "(" or ")" only as its first and last character), so it tells what it told then
            close = text.find(")")
            if close > 0 and text[close + 1:close + 2] == " ":
                told = self._paren.get(text[:close + 2])
                if told is not None:
                    info.rank, info.host, info.actor, info.pid, info.stream, info.rank_is_local, info.lrank = told
                    text, start = text[close + 2:], 1
        for i in range(start, MAX_PREFIXES):
            if not text:
                return text
            if text[0] == " ":
                if text[:2] != "  " and len(text) > 1 and not text[1].isspace():
                    text = text[1:]  # one stray space left by a prefix separator
                    continue
                return text
            patterns = prefix_candidates(text)
            if patterns is None:
                return text
            for pattern in patterns:
                if pattern in COLON_SPACE and ": " not in text:
                    continue  # every match of it holds ": "
                m = pattern.match(text)
                if m is not None:
                    if i == 0 and not info.stream:
                        told = self._absorb_first(pattern, m, info)
                        if told is not None and pattern in PAREN:
                            self._remember_paren(text, m.end(), told)
                    else:
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

    def _absorb_first(self, pattern: regex.Pattern[str], m: regex.Match[str], info: Info) -> Told | None:
        """`_absorb` of a line's first prefix into a fresh Info: what a prefix without a time tells depends on its
        groups alone, remembered per source (a Ray actor's, a rank tag's: the same on thousands of lines). Returns
        what it told, when that is remembered."""
        key = (pattern, m.group(0), m.groups())
        got = self._first.get(key)
        if got is None:
            self._absorb(m, info)
            if pattern in TRANSPORT:
                info.stream += m.group(0).strip() + "|"
            if "H" in pattern.groupindex and m.group("H") is not None:
                return None  # a time: the year it takes may depend on the lines before (and it is seldom the same)
            if len(self._first) >= PREFIX_MEMO:
                self._first.clear()
            got = self._first[key] = (info.rank, info.host, info.actor, info.pid, info.stream, info.rank_is_local,
                                      info.lrank)
            return got
        info.rank, info.host, info.actor, info.pid, info.stream, info.rank_is_local, info.lrank = got
        return got

    def _remember_paren(self, text: str, end: int, told: Told) -> None:
        """A Ray prefix that matched as "(<no parens>) " (see _strip_prefixes): what it told, by its text."""
        close = text.find(")")
        if end == close + 2 and text[close + 1] == " " and text.find("(", 1, close) < 0:
            if len(self._paren) >= PREFIX_MEMO:
                self._paren.clear()
            self._paren[text[:end]] = told

    def _absorb(self, m: regex.Match[str], info: Info) -> None:
        groups = m.groupdict()
        # a global rank ([rank12]:) beats a local worker index ([default0]:) whatever their order
        rank = to_int(groups.get("rank"))
        if rank is not None and (info.rank is None or info.rank_is_local):
            info.rank = rank
            info.rank_is_local = False
        lrank = to_int(groups.get("lrank"))
        if lrank is not None and info.lrank is None:
            info.lrank = lrank
            if info.rank is None:
                info.rank = info.lrank
                info.rank_is_local = True
        host = groups.get("host") or groups.get("ip")
        if host and info.host is None:
            info.host = host
        if groups.get("actor") and info.actor is None:
            info.actor = groups["actor"].strip()
        pid = groups.get("pid")
        if pid and info.pid is None and pid.isdigit():
            info.pid = to_int(pid)
        elif pid and info.actor is None and not pid.isdigit():
            info.actor = pid  # "(pid=gcs_server)"
        if groups.get("H") is not None and info.time is None:
            self._time(groups, info)

    def _time(self, g: dict[str, str | None], info: Info) -> None:
        y = g.get("Y")
        told = clock(g.get("md"), g.get("mo"), g.get("b"), g.get("d"), g.get("H"), g.get("M"), g.get("S"), y,
                     None if y else self.year if self.year is not None else self.job_year)
        if told is None:
            return
        year, stamp, ts = told
        if y and self.year is None and self.lineno <= HEAD_LINES:
            self.year = year
        if stamp is None:
            return  # no such day or time
        frac = g.get("f") or ""
        if frac:
            stamp += "." + frac[:6]
        info.has_time = True
        if year is None:
            info.time = stamp
            return
        info.time = f"{year:04d}-{stamp}"
        if ts is not None:
            info.ts = ts + float("0." + frac) if frac else ts
