"""How a training-health finding reads: its values, the sparkline of its series, its JSON (the README documents the
keys), and the line that ties it to a later crash."""

from __future__ import annotations

import math

from ..i18n import msg
from ..judge.findings import Finding
from ..judge.health import Trip
from ..judge.series import fmt
from ..match.schema import MetricClause
from .model import Report

BARS = "▁▂▃▄▅▆▇█"
NONFINITE = "×"


def health_findings(report: Report) -> list[Finding]:
    """The findings of health rules, in the order they tripped."""
    return [f for f in report.findings if f.health is not None]


def sparkline(trip: Trip, width: int = 48) -> str:
    """The whole series in at most `width` block characters (a bucket's max when the series went bad upwards, its
    min when downwards, else its mean); × marks a stretch of NaN/Inf only."""
    direction = trip.clause.direction
    values = [v for _first, _last, v in trip.series.sketch.values(direction)]
    while len(values) > width:
        pairs = [values[i:i + 2] for i in range(0, len(values), 2)]
        values = [_pick([v for v in pair if v is not None], direction) for pair in pairs]
    seen = [v for v in values if v is not None]
    if not seen:
        return NONFINITE * len(values)
    low, high = min(seen), max(seen)
    out = []
    for v in values:
        if v is None:
            out.append(NONFINITE)
        elif high == low:
            out.append(BARS[3])
        else:
            out.append(BARS[round((v - low) / (high - low) * (len(BARS) - 1))])
    return "".join(out)


def _pick(values: list[float], direction: str) -> float | None:
    if not values:
        return None
    return max(values) if direction == "up" else min(values) if direction == "down" else sum(values) / len(values)


def values_text(trip: Trip, lang: str) -> str:
    if trip.start_step == trip.step:
        text = msg("health_value", lang, step=trip.step, value=fmt(trip.value))
    else:
        text = msg("health_values", lang, start=trip.start_step, start_value=fmt(trip.start_value), step=trip.step,
                   value=fmt(trip.value))
    if trip.reference is not None:
        text += msg("health_baseline", lang, reference=fmt(trip.reference))
    return text


def health_rows(report: Report, width: int = 32) -> list[tuple[str, str, str, str, str]]:
    """(id, metric, steps: began → tripped, values, sparkline) per health finding."""
    rows = []
    for f in health_findings(report):
        trip = f.health
        assert trip is not None
        rows.append((f.sig.id, trip.series.key, f"{trip.start_step} → {trip.step}",
                     f"{fmt(trip.start_value)} → {fmt(trip.value)}", sparkline(trip, width)))
    return rows


def precursor_lines(report: Report) -> list[str]:
    """The health findings that began before the root cause (the crash they led to)."""
    story = report.story
    if story is None:
        return []
    out = []
    for f in story.precursors:
        trip = f.health
        assert trip is not None
        out.append(msg("precursor_line", report.lang, title=f.sig.title.get(report.lang), metric=trip.series.key,
                       start=trip.start_step, start_value=fmt(trip.start_value), step=trip.step,
                       value=fmt(trip.value)))
    return out


def _number(value: float | None) -> float | None:
    """JSON has no NaN or Infinity: null instead."""
    if value is None or math.isnan(value) or math.isinf(value):
        return None
    return round(value, 6) if abs(value) >= 1e-4 else float(f"{value:.6g}")


def condition_text(c: MetricClause) -> str:
    """The clause in words (English, for the JSON report)."""
    parts: list[str] = []
    what = f"mean of the last {c.smooth} points" if c.smooth > 1 else "value"
    if c.vanished:
        parts.append("missing from a record after being printed")
    for key, word in (("above", ">"), ("below", "<")):
        limit = getattr(c, key)
        if limit is not None:
            parts.append(f"{what} {word} {limit:g}")
    if c.outside is not None:
        parts.append(f"{what} outside [{c.outside[0]:g}, {c.outside[1]:g}]")
    if c.above_median is not None:
        parts.append(f"{what} > {c.above_median:g} x median of the previous {c.window} points")
    if c.above_early is not None:
        parts.append(f"{what} > {c.above_early:g} x median of the first {c.early} points")
    if c.below_early is not None:
        parts.append(f"{what} < {c.below_early:g} x median of the first {c.early} points")
    if c.below_peak is not None:
        parts.append(f"{what} < {c.below_peak:g} x its peak")
    if c.sustain > 1:
        parts.append(f"{c.sustain} points in a row")
    if c.skip:
        parts.append(f"after the first {c.skip} points")
    return ", ".join(parts)


def health_json(f: Finding) -> dict[str, object] | None:
    trip = f.health
    if trip is None:
        return None
    s = trip.series
    return {
        "metric": s.key, "source": s.source, "format": s.reader, "condition": condition_text(trip.clause),
        "step": trip.step, "start_step": trip.start_step, "value": _number(trip.value),
        "start_value": _number(trip.start_value), "reference": _number(trip.reference), "ordinal": s.ordinal,
        "series": {
            "points": s.n, "nonfinite": s.nonfinite, "first_step": s.first_step, "last_step": s.last_step,
            "min": _number(s.low), "max": _number(s.high), "last": _number(s.last),
            "buckets": [[first, last, _number(v)] for first, last, v in s.sketch.values(trip.clause.direction)],
        },
    }
