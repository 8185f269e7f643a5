"""Training health: one series per metric per source, judged by the health rules as its points come.

A series keeps a fixed amount whatever the run's length: its last SERIES_POINTS points, its first EARLY_KEEP
values, and a sketch of at most SKETCH_BUCKETS buckets (min, max, mean of a run of points) for the sparkline.
Each rule clause (match/schema.py MetricClause) keeps a small state per series (points seen, its run of bad
points, the peak), so a rule trips at the point it goes bad, in a live run as in a finished log.

Parts of one big file are scanned by several processes: a part that does not begin the file records its
metric events (at most RECORD_MAX per source, thinned beyond) and the collector that holds the earlier parts
replays them in order (merge), so the series are judged as if the file had been read in one pass.
"""

from __future__ import annotations

import math
from collections import deque
from dataclasses import dataclass, replace

from ..match.events import MetricEvent
from ..match.schema import MetricClause, Signature
from ..read.normalize import LogLine
from .series import EARLY_KEEP, TOKEN_CHARS, ClauseState, Point, Ref, Series, finite

RECORD_MAX = 8192

@dataclass(slots=True)
class Trip:
    """A health rule went bad on a series: where it tripped, where the trend began, the values."""

    ref: Ref
    series: Series
    clause: MetricClause
    step: int
    value: float
    start_step: int
    start_value: float
    reference: float | None  # the baseline the value was compared with (median, early value, peak)
    line: LogLine
    text: str  # the trip line's own words: its head and the metric's key and value
    start_line: int
    start_text: str


def _median(values: list[float]) -> float | None:
    import statistics  # its import costs more than a short log's scan

    return statistics.median(values) if values else None


def _spread(values: list[float], center: float | None) -> float:
    """The median absolute deviation of `values` around `center` (0 for none)."""
    if center is None or not values:
        return 0.0
    import statistics

    return statistics.median(abs(v - center) for v in values)


class HealthBook:
    """The series of one collector and the clause states; `feed` returns the trips a record caused."""

    def __init__(self, recording: bool = False) -> None:
        self.series: dict[tuple[str, str, str], Series] = {}
        self.vanishing: dict[tuple[str, str], list[Series]] = {}
        self.recording = recording  # a later part of a split file: keep the events for the earlier parts' book
        self.recorded: dict[str, list[MetricEvent]] = {}
        self.stride: dict[str, list[int]] = {}  # per recorded source: keep every n-th event, events offered
        self.fed: set[str] = set()

    # -- input ------------------------------------------------------------------------------------------------
    def feed(self, event: MetricEvent, signatures: dict[str, Signature]) -> list[Trip]:
        source = event.line.source
        if self.recording or source in self.recorded:
            self._record(source, event)
            return []
        self.fed.add(source)
        trips: list[Trip] = []
        present: set[str] = set()
        for key, value, token, refs in event.values:
            present.add(key)
            series = self._series(source, event.reader, key, refs, signatures)
            trips += self._add(series, event, value, token, signatures)
        for series in self.vanishing.get((source, event.reader), ()):
            if series.key not in present:
                trips += self._vanished(series, event, signatures)
        return trips

    def _record(self, source: str, event: MetricEvent) -> None:
        events = self.recorded.setdefault(source, [])
        stride = self.stride.setdefault(source, [1, 0])
        stride[1] += 1
        if (stride[1] - 1) % stride[0]:
            return
        events.append(replace(event, line=replace(event.line, raw=event.head[:TOKEN_CHARS], text="")))
        if len(events) >= RECORD_MAX:  # thin out: every other event, and from now on every 2n-th
            del events[1::2]
            stride[0] *= 2

    def _series(self, source: str, reader: str, key: str, refs: tuple[Ref, ...],
                signatures: dict[str, Signature]) -> Series:
        series = self.series.get((source, reader, key))
        if series is None:
            series = self.series[(source, reader, key)] = Series(source, reader, key, refs)
            if any(getattr(_clause(signatures, ref), "vanished", False) for ref in refs):
                self.vanishing.setdefault((source, reader), []).append(series)
        return series

    def _add(self, s: Series, event: MetricEvent, value: float, token: str,
             signatures: dict[str, Signature]) -> list[Trip]:
        step = event.step
        if step is None:
            s.ordinal = True
            step = s.n + 1
        elif s.recent and s.recent[-1][0] == step:
            return []  # the same step printed twice (ROLL's tracker line and its plain JSON line)
        trips: list[Trip] = []
        point: Point = (step, value, event.line.lineno, _said(event.head[:TOKEN_CHARS // 2], token)[:TOKEN_CHARS])
        if finite(value):
            prev = s.values  # the points before this one (copied only by a clause that reads them)
            for ref in s.refs:
                clause = _clause(signatures, ref)
                state = s.states.get(ref)
                if state is None:
                    state = s.states[ref] = ClauseState()
                if clause is None or clause.vanished:
                    continue
                self._judge(clause, state, s, prev, value, point)
                if state.run >= clause.sustain and not state.done:
                    state.done = True
                    trips.append(self._trip(ref, clause, state, s, point, event))
            s.values.append(value)
            if len(s.early) < EARLY_KEEP:
                s.early.append(value)
            s.low = value if s.low is None else min(s.low, value)
            s.high = value if s.high is None else max(s.high, value)
        else:
            s.nonfinite += 1
            for state in s.states.values():
                state.run = 0
        s.n += 1
        s.last = value
        s.first_step = step if s.first_step is None else s.first_step
        s.last_step = step
        s.recent.append(point)
        s.sketch.add(step, value)
        return trips

    def _judge(self, c: MetricClause, st: ClauseState, s: Series, prev: deque[float], value: float,
               point: Point) -> None:
        """Judge one finite point for one clause: update its run of bad points and the baseline it was compared
        with (the median of the previous points, of the first points, or the peak)."""
        window = list(prev)[-(c.smooth - 1):] if c.smooth > 1 else []
        x = st.value = (sum(window) + value) / (len(window) + 1)
        ok = st.seen >= c.skip
        held = min(len(s.early), c.early)
        known = s.baselines.get(c.early)
        if known is None or known[0] != held:
            early_points = s.early[:c.early]  # the baseline of absolute tests, while it is still being learnt too
            first = _median(early_points)
            known = s.baselines[c.early] = (held, first if held >= c.early else None, first,
                                            _spread(early_points, first))
        _held, early, first, st.spread = known
        st.reference = first
        if ok and c.above is not None:
            ok = x > c.above
        if ok and c.below is not None:
            ok = x < c.below
        if ok and c.outside is not None:
            ok = not c.outside[0] <= x <= c.outside[1]
        if c.above_median is not None:
            recent = list(prev)[-c.window:] if len(prev) >= min(c.window, 5) else []
            med = _median(recent)
            st.reference, st.spread = med, _spread(recent, med)
            ok = ok and med is not None and med > 0 and x > c.above_median * med
        if ok and c.above_early is not None:
            ok = early is not None and early > 0 and x > c.above_early * early
        if ok and c.below_early is not None:
            ok = early is not None and early > 0 and x < c.below_early * early
        if c.below_peak is not None:
            st.reference, st.spread = st.peak, 0.0
            if ok:
                base = min(0.0, st.low if st.low is not None else 0.0)
                ok = st.peak is not None and st.peak > base and x - base < c.below_peak * (st.peak - base)
            if st.peak is None or x > st.peak:
                st.peak, st.peak_point = x, point
            st.low = x if st.low is None else min(st.low, x)
        st.seen += 1
        st.run = st.run + 1 if ok else 0

    def _trip(self, ref: Ref, c: MetricClause, st: ClauseState, s: Series, point: Point,
              event: MetricEvent) -> Trip:
        """The trip, and the step its trend began: the peak for a fall from the peak; otherwise walking back while
        the points stay clearly beyond the baseline, on the side the series went bad (as far as the points kept
        reach)."""
        step, value, _lineno, token = point
        start = point
        base = st.reference
        if c.below_peak is not None and st.peak_point is not None:
            start = st.peak_point
        elif base is not None:
            up = value > base
            # beyond the baseline's usual spread, and a tenth of the way to the trip value (a slow healthy drift
            # of the baseline is not the trend)
            band = max(st.spread, abs(value - base) / 10)
            for p in reversed(s.recent):
                beyond = p[1] > base + band if up else p[1] < base - band
                if not finite(p[1]) or not beyond:
                    break
                start = p
        return Trip(ref, s, c, step, st.value, start[0], start[1], base, event.line, token, start[2], start[3])

    def _vanished(self, s: Series, event: MetricEvent, signatures: dict[str, Signature]) -> list[Trip]:
        trips: list[Trip] = []
        if not s.n:
            return trips
        step = event.step if event.step is not None else s.n + 1
        for ref in s.refs:
            clause = _clause(signatures, ref)
            state = s.states.setdefault(ref, ClauseState())
            if clause is None or not clause.vanished or state.done or ref in event.excused:
                continue
            state.done = True
            last = s.recent[-1] if s.recent else (step, math.nan, event.line.lineno, "")
            text = event.head + " … " + " | ".join(v[2] for v in event.values[:3])
            trips.append(Trip(ref, s, clause, step, math.nan, last[0], last[1], None, event.line,
                              text[:TOKEN_CHARS * 2], last[2], last[3]))
        return trips

    # -- merging the books of several sources, or of the parts of one ------------------------------------------
    def merge(self, other: HealthBook, signatures: dict[str, Signature]) -> list[Trip]:
        """Fold in a later book (called in source order). A later part's recorded events are replayed here
        when this book has read the earlier parts of that source; otherwise they wait (finalize)."""
        trips: list[Trip] = []
        for key, series in other.series.items():
            if key not in self.series:
                self.series[key] = series
        for where, lst in other.vanishing.items():
            mine = self.vanishing.setdefault(where, [])
            mine.extend(s for s in lst if self.series.get((s.source, s.reader, s.key)) is s)
        self.fed |= other.fed
        for source, events in other.recorded.items():
            if self.recording or source not in self.fed:
                for event in events:
                    self._record(source, event)
            else:
                for event in events:
                    trips += self.feed(event, signatures)
        return trips

    def finalize(self, signatures: dict[str, Signature]) -> list[Trip]:
        """Replay the events still waiting (a split file whose first metric records were in a later part)."""
        if self.recording:
            return []
        trips: list[Trip] = []
        waiting, self.recorded, self.stride = self.recorded, {}, {}
        for _source, events in waiting.items():
            for event in events:
                trips += self.feed(event, signatures)
        return trips


def _clause(signatures: dict[str, Signature], ref: Ref) -> MetricClause | None:
    sig = signatures.get(ref[0])
    if sig is None or ref[1] >= len(sig.metric):
        return None
    return sig.metric[ref[1]]


def _said(head: str, token: str) -> str:
    return f"{head} … {token}" if head else token

