"""The signature record: what a signature file holds once parsed (parse.py reads and validates the YAML)."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..lazyre import lazy_re

KINDS = ("cause", "symptom", "advisory")
# The causal role of what a signature matches (NVRx's restart-agent registry uses the same idea): `root` starts a
# failure; `cascade` echoes one that started elsewhere (NCCL watchdog, Ray actor death); `confirmation` confirms a
# cause found elsewhere but says nothing by itself (a bare `Killed`, exit code -9); `teardown` is printed while the
# job shuts down after a fatal error; `advice` is a hint ("may be caused by", CUDA_LAUNCH_BLOCKING) and never a cause.
ROLES = ("root", "cascade", "confirmation", "teardown", "advice")
# the role a signature has when its file names none, and the roles each kind allows
DEFAULT_ROLE = {"cause": "root", "symptom": "cascade", "advisory": "advice"}
KIND_ROLES = {"cause": ("root",), "symptom": ("cascade", "confirmation", "teardown"), "advisory": ("advice",)}
SEVERITIES = ("fatal", "error", "warning", "info")
VERDICTS = ("restart", "fix-then-restart", "investigate")
SCOPES = ("line", "traceback", "window", "file")
MATCHED_ON = ("lines", "frames")
WHEN_OPS = ("eq", "ne", "gt", "ge", "lt", "le", "in", "present")

# The order the fields are written in; the database lint holds built-in files to it.
FIELD_ORDER = (
    "id", "title", "kind", "role", "severity", "layer", "verdict", "frameworks", "symptom_of", "only_with_failure",
    "match", "metric", "leads_to", "facts", "why", "remedy", "references", "falsepositives", "examples",
)
REQUIRED = ("id", "title", "kind", "severity", "why", "remedy", "references", "examples")  # and `match` or `metric`
ID_RE = lazy_re(r"^[a-z0-9]+(?:-[a-z0-9]+)*\Z")  # \Z: "$" would let a trailing newline in
NAME_RE = lazy_re(r"^[A-Za-z_][A-Za-z0-9_]*\Z")
# `{name}`, `{name|fallback text}` or `{name:filter}`; `{{` and `}}` are literal braces, and so is a
# shell variable `${VAR}` / `${PIPESTATUS[0]}` (remedies quote shell commands).
PLACEHOLDER_RE = lazy_re(
    r"\{\{|\}\}|\$\{[^{}\s]*\}|\{([A-Za-z_][A-Za-z0-9_]*)(?::([a-z_]+))?(?:\|([^{}]*))?\}"
)
FILTERS = ("half", "double", "upper", "lower")


@dataclass(frozen=True, slots=True)
class Text:
    """A text in English and Chinese (Simplified)."""

    en: str
    zh: str

    def get(self, lang: str) -> str:
        return self.zh if lang == "zh" and self.zh else self.en


@dataclass(frozen=True, slots=True)
class Condition:
    """A regex that must (or, under `not`, must not) hold near a hit.

    scope "line": on the hit line itself; "traceback": on some line of the traceback that holds
    the hit; "window": on some line within `lines` physical lines before or after it, same source;
    "file": on any line of the same source (decided when the source ends).
    """

    pattern: str
    scope: str = "line"
    lines: int = 0


@dataclass(frozen=True, slots=True)
class FramePattern:
    """One frame of a `match.frames` sequence: regexes searched in the frame's file and in its function name
    (an empty one matches any)."""

    file: str = ""
    function: str = ""


@dataclass(frozen=True, slots=True)
class WhenTest:
    """A test on a captured value that picks a remedy variant."""

    name: str
    op: str
    value: Any


@dataclass(frozen=True, slots=True)
class RemedyVariant:
    """One remedy text, used when every test in `when` holds (an empty `when` always holds). `verdict`, when set,
    replaces the signature's for this case (NCCL's "invalid usage" is configuration, its network errors are not)."""

    when: tuple[WhenTest, ...]
    text: Text
    verdict: str | None = None


@dataclass(frozen=True, slots=True)
class MetricClause:
    """One condition of a metric (health) rule: the metric keys it reads, and when a series goes bad.

    A series is one metric of one source, in the order its records came. Every test given must hold on a point
    (the mean of the last `smooth` points) for `sustain` points in a row; the first `skip` points only teach
    the baselines. Baselines: the median of the previous `window` points, the median of the first `early`
    points, the highest value so far (the peak). `vanished`: the key was in earlier records of its format and
    is missing from this one (Megatron drops a NaN loss from its line), unless a key of that record matching
    `excused_by` is above 0 (Megatron also drops the loss of an interval whose iterations were all skipped), or
    the record does not print such a key at all (a line cut short: Megatron prints it after the losses).
    """

    names: tuple[str, ...]
    not_names: tuple[str, ...] = ()
    divide_by: str | None = None  # a key of the same record this metric is divided by (a count over a batch size)
    above: float | None = None
    below: float | None = None
    outside: tuple[float, float] | None = None
    above_median: float | None = None  # value > k x median of the previous `window` points
    above_early: float | None = None  # value > k x median of the first `early` points
    below_early: float | None = None  # value < k x median of the first `early` points
    below_peak: float | None = None  # value - base < k x (peak - base); base = min(0, lowest value so far)
    vanished: bool = False
    excused_by: tuple[str, ...] = ()  # keys of the same record: one above 0 excuses a vanished key (fp16 skips)
    window: int = 20
    early: int = 5
    smooth: int = 1
    skip: int = 0
    sustain: int = 1

    @property
    def direction(self) -> str:
        """"up" when the series goes bad by rising, "down" by falling, "both" otherwise (for the sparkline)."""
        ups = (self.above, self.above_median, self.above_early)
        downs = (self.below, self.below_early, self.below_peak)
        up = any(x is not None for x in ups)
        down = any(x is not None for x in downs)
        return "up" if up and not down else "down" if down and not up else "both"


@dataclass(frozen=True, slots=True)
class Example:
    """A log excerpt that must (or must not) match; optional expectations on what it yields."""

    text: str
    captures: Mapping[str, str] = field(default_factory=dict)
    remedy_contains: tuple[str, ...] = ()
    matched_on: str = ""  # "frames": the example must be recognised from its frames alone; "lines": from a line


@dataclass(frozen=True, slots=True)
class Signature:
    """One signature, as read from its YAML file."""

    id: str
    title: Text
    kind: str
    severity: str
    layer: str
    verdict: str
    frameworks: tuple[str, ...]
    symptom_of: tuple[str, ...]
    only_with_failure: bool
    any: tuple[str, ...]
    any_literals: tuple[tuple[str, ...], ...]  # per pattern: declared gate literals, or () to derive them
    any_all: tuple[tuple[Condition, ...], ...]  # per pattern: conditions that hold for it alone
    any_not: tuple[tuple[Condition, ...], ...]
    all: tuple[Condition, ...]
    not_: tuple[Condition, ...]
    facts: tuple[tuple[str, tuple[str, ...]], ...]
    why: Text
    remedy: tuple[RemedyVariant, ...]
    references: tuple[str, ...]
    falsepositives: tuple[str, ...]
    examples_match: tuple[Example, ...]
    examples_no_match: tuple[Example, ...]
    todo: tuple[str, ...]
    path: str
    role: str = ""  # root | cascade | confirmation | teardown | advice; "" = the default of its kind
    # `match.frames`: sequences of frames (outermost first) that recognise a traceback cut before its exception line
    frames: tuple[tuple[FramePattern, ...], ...] = ()
    metric: tuple[MetricClause, ...] = ()  # a health rule: it reads metric series instead of matching lines
    leads_to: tuple[str, ...] = ()  # a health rule: the failures its trend can cause (the story ties them)

    def __post_init__(self) -> None:
        if not self.role:
            object.__setattr__(self, "role", DEFAULT_ROLE.get(self.kind, "root"))

    @property
    def is_failure(self) -> bool:
        return self.severity in ("fatal", "error")


def placeholder_names(text: str) -> set[str]:
    """The `{name}` placeholders a template uses (fallbacks and filters aside)."""
    return {m.group(1) for m in PLACEHOLDER_RE.finditer(text) if m.group(1)}
