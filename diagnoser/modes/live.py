"""A live diagnosis: lines arrive as a job runs; each new finding is told once, as soon as it is complete.

One scanner per followed file (or per command in `diagnose run`). When a file goes quiet for a moment
its open tracebacks are closed and waiting hits decided, so an error is told without waiting for more
output. Later copies of a finding (other ranks) only raise its count. With a hang limit, silence on
every file (or no training-progress line, when the job prints them) is told as a `job-hang` finding.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from typing import BinaryIO, TextIO

from .. import search
from ..i18n import msg
from ..judge.findings import Finding, Location
from ..judge.rank import compact_ranks
from ..judge.remedy import fill, render_remedy
from ..lazyre import lazy
from ..match.database import Database
from ..match.events import Event, HitEvent, MetricEvent, UnrecognizedEvent
from ..match.observe import PROGRESS
from ..match.scanner import RECENT, SourceScanner
from ..report.contract import finding_json
from ..report.health import sparkline, values_text
from ..report.model import Report, Stats, clip_key, values_for
from ..report.words import where_text
from ..safe import json_dumps, printable
from .pipeline import Pipeline
from .status import StatusLine

IDLE = 0.5  # seconds of quiet after which a file's open tracebacks are closed (a traceback comes in one write)
HANG_SOURCE = "<live>"
_PROGRESS = lazy(PROGRESS)


# every progress pattern holds one of these: the lines worth testing, found from the end of a piece
_PROGRESS_HINTS = (b"step", b"iteration", b"Training Progress", b"episode ", b"%|")
PROGRESS_TRIES = 64  # lines of a piece tested, from its end, for its last progress line


def _last_progress(data: bytes) -> str | None:
    """The last progress line of a piece of whole lines, if one of its last PROGRESS_TRIES hinted lines is."""
    end = len(data)
    for _ in range(PROGRESS_TRIES):
        at = max(data.rfind(h, 0, end) for h in _PROGRESS_HINTS)
        if at < 0:
            return None
        begin = data.rfind(b"\n", 0, at) + 1
        stop = data.find(b"\n", at)
        text = data[begin:stop if stop >= 0 else len(data)].decode("utf-8", "replace")
        if _PROGRESS.search(text):
            return text.strip()[-160:]
        end = begin
    return None


def _uncounted(_n: int) -> None:
    return None  # read_stream's bytes are counted by `saw`


class StopLive(Exception):
    """`--exit-on cause` saw a root cause (or `--exit-on health` a root cause or a training-health finding): stop."""


class LiveSession:
    def __init__(self, db: Database, lang: str, fmt: str, out: TextIO, warn: Callable[[str], None],
                 exit_on: str = "none", hang_after: float = 0.0, color: bool = False, brief: bool = False,
                 status: TextIO | None = None) -> None:
        self.db = db
        # brief (diagnose run): a finding is told in a few lines as it comes, its why and remedy once, in the
        # report at the end; status: where `--follow` says what it is watching (stderr)
        self.brief = brief
        self.status = StatusLine(status, lang) if status is not None else None
        self.lang = lang
        self.fmt = fmt
        self.out = out
        self.exit_on = exit_on
        self.hang_after = hang_after
        self.color = color
        self.pipeline = Pipeline(db, warn, self._emit)
        self.collector = self.pipeline.collector
        self.scanners = self.pipeline.streams
        self.last_feed: dict[str, float] = {}
        self.quiet: set[str] = set()
        self.announced: set[str] = set()
        now = time.monotonic()
        self.last_line = now
        self.last_progress: tuple[float, str] | None = None
        self.rank_last: dict[str, float] = {}
        self.hung = False
        self.stop = False
        self.output_gone = False  # our own output failed (disk full, reader gone): following is pointless
        self.warn = warn
        self.last_lines: dict[str, int] = {}  # the last line of a stream read by read_stream or fed
        self.gates: dict[str, search.LiveGate] = {}  # by stream: the fast search of the lines fed

    # -- input -----------------------------------------------------------------------------------------
    def scanner(self, name: str, rank: int | None = None, host: str | None = None,
                role: str = "worker") -> SourceScanner:
        return self.pipeline.stream(name, rank, host, role)

    def feed(self, name: str, lineno: int, text: str, rank: int | None = None, host: str | None = None,
             role: str = "worker") -> None:
        self.feed_piece(name, lineno, [text], rank, host, role)

    def feed_piece(self, name: str, first: int, got: bytes | str | list[str], rank: int | None = None,
                   host: str | None = None, role: str = "worker") -> None:
        """Lines of a followed file numbered from `first` (whole lines as read, one line or lines as text) through
        the fast search's gate, as batch and `diagnose run` read theirs (search.LiveGate): only the lines that
        can matter reach the scanner."""
        gate = self.gates.get(name)
        if gate is None:
            gate = self.gates[name] = search.LiveGate(self.scanner(name, rank, host, role), self.db.search, RECENT)
        data = gate.feed(first, got)
        self.last_lines[name] = first + data.count(b"\n") - 1
        self.saw(name, data, f"rank {rank}" if rank is not None else name)

    def saw(self, name: str, data: bytes, who: str | None = None) -> None:
        """Whole lines of a stream read in one piece (read_stream): the clocks and counts of `feed`, per piece."""
        now = time.monotonic()
        self.last_line = now
        self.last_feed[name] = now
        self.quiet.discard(name)
        self.collector.lines += data.count(b"\n")
        self.collector.bytes += len(data)
        self.rank_last[who or name] = now
        progress = _last_progress(data)
        if progress is not None:
            self.last_progress = (now, progress)
        if self.stop:
            raise StopLive

    def read_stream(self, name: str, reader: BinaryIO, rank: int | None = None, host: str | None = None,
                    role: str = "worker") -> int:
        """Diagnose a stream read in pieces of whole lines (diagnose run's output) through the fast search's
        gate, as a batch scan reads a big file; the reader calls `saw` for each piece and `tick` while it
        waits. Returns the number of its last line."""
        sc = self.scanner(name, rank, host, role)
        last = search.scan(sc, self.db.search, reader, _uncounted, memory=RECENT, name=name, warn=self.warn,
                           first_line=self.last_lines.get(name, 0) + 1)
        self.last_lines[name] = last
        return last

    def until_quiet(self, now: float) -> float:
        """Seconds until the next stream that is fed goes quiet (tick then closes its tracebacks: a failure is told
        that much sooner than at the next poll); inf when none is."""
        waits = [IDLE - (now - t) for name, t in self.last_feed.items() if name not in self.quiet]
        return max(0.01, min(waits)) if waits else float("inf")

    def tick(self) -> None:
        """Called often: flush files that went quiet, tell a hang."""
        now = time.monotonic()
        for name, sc in self.scanners.items():
            if name not in self.quiet and now - self.last_feed.get(name, now) >= IDLE:
                self.quiet.add(name)
                sc.flush()
        if self.hang_after and not self.hung:
            since = self.last_progress[0] if self.last_progress is not None else self.last_line
            if now - since >= self.hang_after:
                self.hung = True
                self._tell_hang(now - since)
        if self.stop:
            raise StopLive

    def _tell_hang(self, silence: float) -> None:
        what = "training progress" if self.last_progress is not None else "output"
        files = sum(1 for n in self.scanners if n != HANG_SOURCE)
        text = f"diagnose: no {what} for {int(silence)} s from {files} followed file(s)"
        if self.last_progress is not None:
            text += f"; last progress: {self.last_progress[1]}"
        if len(self.rank_last) > 1:
            first = sorted(self.rank_last, key=lambda k: self.rank_last[k])[:4]
            text += "; silent first: " + ", ".join(first)
        sc = self.scanner(HANG_SOURCE)
        sc.feed_raw(sc.lines + 1, text)
        sc.flush()

    def finish(self, exit_status: int | None = None, command: list[str] | None = None) -> Report:
        """The final report. `exit_status`: the wrapped command's; 0 means no lone error line was its failure, any
        other status is a failure even when no line explains it."""
        self.clear_status()
        for gate in self.gates.values():
            gate.end()  # each file's tail lent to its scanner (each writer's last line and step)
        self.pipeline.finish_streams(self.last_lines)
        if exit_status == 0:
            self.collector.lone = []
        elif exit_status is not None:
            self.pipeline.tell_exit(exit_status, command or [])
        return self.pipeline.report(self.lang)

    # -- output ----------------------------------------------------------------------------------------
    def _emit(self, event: Event) -> None:
        """Each event, after the collector has it: tell a new finding at once."""
        if isinstance(event, HitEvent):
            self._finding(event.sig_id, event)
        elif isinstance(event, MetricEvent) and self.collector.health_news:
            news, self.collector.health_news = self.collector.health_news, []
            for sig_id in news:  # a health rule tripped on this record (judge/health.py)
                self._finding(sig_id, event)
        elif isinstance(event, UnrecognizedEvent) and not event.depends_on and event.kind != "line":
            if self.fmt == "jsonl":
                self._jsonl({"event": "unrecognized", "exception": event.exc_type, "message": event.message,
                             "frame": event.frame, **_where(event)})
            elif self.fmt != "quiet":
                self._text(f"! {event.exc_type}: {event.message[:200]}  ({where_text(_loc(event), self.lang)})")

    def _finding(self, sig_id: str, event: HitEvent | MetricEvent) -> None:
        finding = self.collector.findings.get(sig_id)
        if finding is None:
            return
        if sig_id not in self.announced:
            self.announced.add(sig_id)
            if self.fmt != "quiet":
                self._announce(finding)
            cause = finding.sig.role == "root" and finding.sig.is_failure
            if (self.exit_on == "cause" and cause) or (self.exit_on == "health" and (cause or finding.health)):
                self.stop = True
        elif self.fmt == "jsonl":
            self._jsonl({"event": "seen", "id": sig_id, "count": finding.count, "ranks": sorted(finding.ranks),
                         **_loc(event).to_json()})

    def _announce(self, f: Finding) -> None:
        values = values_for(f, self.collector.facts)
        why = fill(f.sig.why.get(self.lang), values)
        remedy = render_remedy(f.sig.remedy, values, self.lang)
        if self.fmt == "jsonl":
            report = Report(self.lang, [f], None, [], dict(self.collector.facts), _no_stats(),
                            why={f.sig.id: why}, remedy={f.sig.id: remedy})
            self._jsonl({"event": "finding", "finding": finding_json(report, f)})
            return
        mark = {"cause": "✗", "symptom": "~", "advisory": "i"}.get(f.sig.kind, "•")
        lines = [f"{mark} [{msg(f.sig.kind, self.lang)}] {f.sig.title.get(self.lang)}  ({f.sig.id})",
                 f"  {where_text(f.first, self.lang)}"
                 + (" · " + msg("on_ranks", self.lang, ranks=compact_ranks(f.ranks)) if len(f.ranks) > 1 else "")]
        key = clip_key(next((e.raw for e in f.evidence if e.key), ""))
        if key:
            lines.append("  > " + key)  # the key line whole: its end often says what to do
        if f.health is not None:
            lines.append(f"  {f.health.series.key}: {values_text(f.health, self.lang)}  {sparkline(f.health)}")
        if self.brief:
            lines.append("  " + msg("told_at_end", self.lang))
        else:
            lines.append("  " + why.replace("\n", " "))
            lines += ["  " + x for x in remedy.splitlines()]
        self._text("\n".join(lines))

    def _text(self, text: str) -> None:
        self.clear_status()
        self._write(printable(text) + "\n")  # log text: its escape sequences are shown, never acted on

    def watching(self, files: int) -> None:
        """What --follow is doing, on stderr: files followed, lines read so far, findings told."""
        if self.status is not None:
            self.status.show(files, self.collector.lines, len(self.announced))

    def clear_status(self) -> None:
        if self.status is not None:
            self.status.clear()

    def _jsonl(self, obj: dict[str, object]) -> None:
        self._write(json_dumps(obj) + "\n")

    def _write(self, text: str) -> None:
        if self.output_gone:
            return
        self.out.write(text)
        self.out.flush()
        if getattr(self.out, "error", None) is not None:  # output.Output: closed, full, or its reader left
            self.output_gone = self.stop = True  # nobody can read what follows: stop at the next line


def _loc(event: HitEvent | UnrecognizedEvent | MetricEvent) -> Location:
    return Location.of(event.line)


def _where(event: HitEvent | UnrecognizedEvent) -> dict[str, object]:
    return _loc(event).to_json()


def _no_stats() -> Stats:
    return Stats()
