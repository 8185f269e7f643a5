"""What each process of one source did last: its last line, its last training step, and when.

A source's lines are told apart by who wrote them: a launcher's local worker index (`[default3]:`, under
an srun task label), else the rank a prefix or the file name gave, else the source itself. For each,
the last line and the last step are kept from the source's head (its first HEAD_LINES lines) and its
tail (the last TAIL_LINES lines): the fast search feeds the head and lends the tail, so both paths see
the same lines there; a line in between counts only when it is the last of its kind in neither region
(judge/book.py applies that rule once the source's end is known). Memory: MAX_KEYS writers per source.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from . import normalize
from .marks import Mark, step_of
from .normalize import LogLine

TAIL_LINES = 2000
# the markers Ray's workers print for its log monitor (ray_constants LOG_PREFIX_*): not the process's own output
RAY_MARKERS = (":job_id:", ":actor_name:", ":task_name:", ":task_attempt_start:", ":task_attempt_end:")
MAX_KEYS = 1024  # writers tracked per source; the others are counted
MAX_TEXT = 240
LAUNCHER_MARKS = frozenset({"sched_kill", "srun_task", "agent_death", "agent_term", "agent_failed"})

Who = tuple[int | None, int | None, int | None, int | None]  # (srun task, local rank, rank, pid): see who_of


def who_of(line: LogLine) -> Who:
    """The writer of a line: (task, local rank, None, pid) when a launcher prefix gave a local index, else
    (task, None, rank, pid); the pid is a Ray prefix's (a driver holds every actor's lines)."""
    if line.lrank is not None:
        return (line.task, line.lrank, None, line.pid)
    return (line.task, None, line.rank, line.pid)


@dataclass(slots=True, unsafe_hash=True)  # never changed once made (a frozen one costs a setattr call per field)
class Seen:
    """The last line a writer printed."""

    lineno: int
    time: str | None
    ts: float | None
    text: str


@dataclass(slots=True)
class Track:
    """One writer's last line and step, in the head and overall (see the module doc)."""

    head_line: Seen | None = None
    line: Seen | None = None
    head_step: tuple[int, Seen] | None = None
    step: tuple[int, Seen] | None = None
    waiting: Seen | None = None  # the last "waiting for work" line (not progress, not an error)
    host: str | None = None  # the host its lines named (a Ray prefix's ip=, else the file's)
    # global rank tags ([rank3]:) seen on a local writer's lines: rank -> (last line, seen in the head)
    ranks: dict[int, tuple[int, bool]] = field(default_factory=dict)

    def absorb(self, other: Track) -> None:
        """Merge another part of the same source: the later sighting of each wins."""
        self.head_line = _later(self.head_line, other.head_line)
        self.line = _later(self.line, other.line)
        self.waiting = _later(self.waiting, other.waiting)
        self.head_step = _later_step(self.head_step, other.head_step)
        self.host = self.host or other.host
        self.step = _later_step(self.step, other.step)
        for rank, (lineno, head) in other.ranks.items():
            _tag(self.ranks, rank, lineno, head)


def _tag(ranks: dict[int, tuple[int, bool]], rank: int, lineno: int, head: bool) -> None:
    known = ranks.get(rank)
    if known is None:
        if len(ranks) < 8:
            ranks[rank] = (lineno, head)
    else:
        ranks[rank] = (max(known[0], lineno), known[1] or head)


def _later(a: Seen | None, b: Seen | None) -> Seen | None:
    if a is None:
        return b
    if b is None:
        return a
    return b if b.lineno > a.lineno else a


def _later_step(a: tuple[int, Seen] | None, b: tuple[int, Seen] | None) -> tuple[int, Seen] | None:
    if a is None:
        return b
    if b is None:
        return a
    return b if b[1].lineno > a[1].lineno else a


class ActivityTracker:
    """Fed every logical line a scanner sees (and, at the end, the lent tail); keeps a Track per writer."""

    def __init__(self) -> None:
        self.tracks: dict[Who, Track] = {}
        self.dropped = 0  # lines of writers past MAX_KEYS

    def feed(self, line: LogLine, marks: list[Mark]) -> None:
        text = line.text.strip()
        if not text or text.startswith(RAY_MARKERS) or " NCCL INFO " in text:
            return  # Ray's log-monitor markers and NCCL's chatter say nothing of where the process is
        who = who_of(line)
        track = self.tracks.get(who)
        if track is None:
            if len(self.tracks) >= MAX_KEYS:
                self.dropped += 1
                return
            track = self.tracks[who] = Track()
        seen = Seen(line.lineno, line.time, line.ts, text[:MAX_TEXT])
        if track.host is None and line.lineno <= normalize.HEAD_LINES:
            track.host = line.host
        if marks:
            if any(m.kind == "waiting" for m in marks):
                track.waiting = _later(track.waiting, seen)
                return
            if any(m.kind in LAUNCHER_MARKS for m in marks):
                return  # the scheduler or launcher speaking through the rank's stream (srun labels it with the task)
        head = line.lineno <= normalize.HEAD_LINES
        last = track.line
        if last is None or seen.lineno > last.lineno:  # _later, inline: this runs on every line
            track.line = seen
        if head:
            track.head_line = _later(track.head_line, seen)
        if line.lrank is not None and "[rank" in line.stream and line.rank is not None:
            _tag(track.ranks, line.rank, line.lineno, head)
        # every form of marks.STEP holds one of these words (most lines hold none: no regex)
        step = step_of(text) if "step" in text or "iteration" in text or "episode" in text else None
        if step is not None:
            track.step = _later_step(track.step, (step, seen))
            if head:
                track.head_step = _later_step(track.head_step, (step, seen))
