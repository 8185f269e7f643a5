"""A traceback cut before its exception line, recognised by the frames it holds (a signature's `match.frames`,
framerules.py): the hits the scanner (scanner.py) emits for it when it closes."""

from __future__ import annotations

from ..read.frames import frames_of
from ..read.traceback import TracebackRecord
from .database import Database
from .events import EvidenceLine, HitEvent
from .matcher import Matcher


def frame_hits(db: Database, matcher: Matcher, tb: TracebackRecord) -> list[HitEvent]:
    """The signatures whose `match.frames` the frames of `tb` (closed with no exception line) hold, each as a hit
    made from frames alone (it ranks below a whole match); evidence is the frames it matched."""
    rules = db.frame_rules
    if not rules:
        return []
    frames = frames_of(tb.lines)
    if not frames:
        return []
    done: set[int] = set()
    out: list[HitEvent] = []
    for rule in rules:
        if rule.sig_index in done:
            continue
        got = rule.match(frames, matcher.timeout)
        if got is None:
            continue
        found, captures = got
        cs = db.signatures[rule.sig_index]
        if any(c.cond.scope == "traceback" and matcher.condition(c, x.text, cs.sig.id) is not None
               for c in cs.not_ for x in tb.lines):
            continue  # the signature's own look-alike inside this traceback
        done.add(rule.sig_index)
        key = found[-1].line
        evidence = tuple(EvidenceLine(f.line.lineno, f.line.raw, f.line is key) for f in found[-4:])
        out.append(HitEvent(cs.sig.id, key, captures, evidence, "frames"))
    return out
