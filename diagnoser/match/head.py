"""What a line in the head of a source tells beside its text: the rank it says it is, and the framework its Ray
actor's class names (match/observe.py ACTOR_FRAMEWORKS)."""

from __future__ import annotations

from collections.abc import Iterator

from ..read.marks import RANK_SELF_LITERALS, self_rank
from ..read.normalize import LogLine
from .events import Event, FactEvent, MarkEvent
from .observe import ACTOR_FRAMEWORKS


def head_events(line: LogLine, text: str, facts_seen: set[str]) -> Iterator[Event]:
    """The events of a line of the head (read/normalize.py HEAD_LINES); a framework fact only the first time
    (`facts_seen`, which it adds to, is the scanner's)."""
    if text and any(lit in text for lit in RANK_SELF_LITERALS):
        said = self_rank(text)
        if said is not None:
            yield MarkEvent(said, line)
    framework = ACTOR_FRAMEWORKS.get(line.actor) if line.actor else None
    if framework is not None and f"fw_{framework}" not in facts_seen:
        facts_seen.add(f"fw_{framework}")
        yield FactEvent(f"fw_{framework}", line.actor or "", line, {})
