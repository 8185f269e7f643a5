"""A job restarted by its launcher (torchelastic attempt_N, one log per restart): did the restarts help?

Each attempt's first own error is compared (signature, or exception and message with its numbers masked):
when every attempt failed the same way and no attempt got further in training than the one before, the
verdict is `stop`: restarting again will fail the same way.
"""

from __future__ import annotations

from dataclasses import dataclass
from itertools import pairwise

from ..lazyre import lazy
from .book import ForensicBook
from .findings import Location
from .table import Table

_NUMBERS = lazy(r"0x[0-9a-fA-F]+|\d+")


@dataclass(slots=True)
class Attempt:
    """One attempt of a job that was restarted: its first own error and how far it got."""

    attempt: int
    what: str | None  # the first own error (a signature id, or exception:<type>)
    detail: str  # its message, numbers masked
    where: Location | None
    step: int | None  # the furthest training step any rank reached


@dataclass(slots=True)
class Restarts:
    """The attempts of a restarted job, and whether restarting again would help."""

    attempts: list[Attempt]
    same: bool  # every attempt failed with the same error
    progressed: bool  # a later attempt got further than an earlier one
    verdict: str | None  # "stop" when it failed the same way with no progress


def judge_restarts(table: Table, book: ForensicBook) -> Restarts | None:
    if len(table.attempts) < 2:
        return None
    attempts: list[Attempt] = []
    for a in table.attempts:
        rows = [r for r in table.rows if r.attempt == a]
        failed = [r for r in rows if r.first_error is not None]
        first = min(failed, key=lambda r: (r.first_error[1].ts if r.first_error and r.first_error[1].ts is not None
                                           else float("inf"), r.rank or 0), default=None)
        steps = [r.step for r in rows if r.step is not None]
        attempts.append(Attempt(a, first.first_error[0] if first and first.first_error else None,
                                _NUMBERS.sub("N", first.detail) if first else "",
                                first.first_error[1] if first and first.first_error else None,
                                max(steps) if steps else None))
    keys = {(x.what, x.detail) for x in attempts}
    same = len(keys) == 1 and attempts[0].what is not None
    progressed = any((b.step or -1) > (a.step or -1) for a, b in pairwise(attempts))
    return Restarts(attempts, same, progressed, "stop" if same and not progressed else None)
