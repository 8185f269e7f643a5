"""A metric series of one source, kept in a fixed amount of memory whatever the run's length: its last
SERIES_POINTS points, its first EARLY_KEEP values, a sketch of at most SKETCH_BUCKETS buckets for the sparkline,
and each health-rule clause's small state (judge/health.py)."""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, field

SERIES_POINTS = 64
EARLY_KEEP = 16
SKETCH_BUCKETS = 48
TOKEN_CHARS = 160

Ref = tuple[str, int]
Point = tuple[int, float, int, str]  # step, value, line number, the text that printed it


finite = math.isfinite  # neither NaN nor Inf


class Sketch:
    """The whole series in at most SKETCH_BUCKETS buckets: [first step, last step, min, max, sum, n, nonfinite].
    When full, neighbouring buckets are merged two by two, so every bucket covers the same number of points."""

    __slots__ = ("buckets", "width")

    def __init__(self) -> None:
        self.buckets: list[list[float]] = []
        self.width = 1

    def add(self, step: int, value: float) -> None:
        b = self.buckets[-1] if self.buckets else None
        if b is None or b[5] + b[6] >= self.width:
            b = [step, step, math.inf, -math.inf, 0.0, 0, 0]
            self.buckets.append(b)
            if len(self.buckets) > SKETCH_BUCKETS:
                self._halve()
                b = self.buckets[-1]
        b[1] = step
        if finite(value):
            b[2], b[3] = min(b[2], value), max(b[3], value)
            b[4] += value
            b[5] += 1
        else:
            b[6] += 1

    def _halve(self) -> None:
        merged: list[list[float]] = []
        for i in range(0, len(self.buckets), 2):
            pair = self.buckets[i:i + 2]
            if len(pair) == 1:
                merged.append(pair[0])
                continue
            a, b = pair
            merged.append([a[0], b[1], min(a[2], b[2]), max(a[3], b[3]), a[4] + b[4], a[5] + b[5], a[6] + b[6]])
        self.buckets = merged
        self.width *= 2

    def values(self, direction: str) -> list[tuple[int, int, float | None]]:
        """(first step, last step, value) per bucket: its max when the series goes bad upwards, its min when
        downwards, else its mean; None for a bucket of NaN/Inf only."""
        out: list[tuple[int, int, float | None]] = []
        for b in self.buckets:
            if not b[5]:
                out.append((int(b[0]), int(b[1]), None))
            else:
                v = b[3] if direction == "up" else b[2] if direction == "down" else b[4] / b[5]
                out.append((int(b[0]), int(b[1]), v))
        return out


@dataclass(slots=True)
class ClauseState:
    """How far one health clause has got along one metric series."""

    seen: int = 0  # finite points judged
    run: int = 0  # bad points in a row
    peak: float | None = None
    peak_point: Point | None = None  # where the peak was (a fall from the peak began there)
    low: float | None = None
    done: bool = False
    value: float = 0.0  # the value last judged (the mean of the last `smooth` points)
    reference: float | None = None  # the baseline of the last judgement
    spread: float = 0.0  # how far the baseline's own points stray from it (median absolute deviation)


@dataclass(slots=True)
class Series:
    """One metric of one source, as the health rules read it step by step."""

    source: str
    reader: str
    key: str
    refs: tuple[Ref, ...]
    n: int = 0
    nonfinite: int = 0
    low: float | None = None
    high: float | None = None
    last: float | None = None
    first_step: int | None = None
    last_step: int | None = None
    ordinal: bool = False  # steps are the count of records (the format prints no step)
    early: list[float] = field(default_factory=list)
    recent: deque[Point] = field(default_factory=lambda: deque(maxlen=SERIES_POINTS))
    values: deque[float] = field(default_factory=lambda: deque(maxlen=SERIES_POINTS))  # the last finite values
    sketch: Sketch = field(default_factory=Sketch)
    states: dict[Ref, ClauseState] = field(default_factory=dict)
    # a clause's count of early points -> (how many `early` held, their median when all were there, their median, their
    # spread): `early` only grows, to EARLY_KEEP, so the baseline is computed again only while it grows
    baselines: dict[int, tuple[int, float | None, float | None, float]] = field(default_factory=dict)


def fmt(value: float | None) -> str:
    """A metric value as the report shows it (4 significant digits)."""
    if value is None:
        return "?"
    if not finite(value):
        return "nan" if math.isnan(value) else ("inf" if value > 0 else "-inf")
    return f"{value:.4g}"
