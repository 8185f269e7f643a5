"""The signature record and the one place that knows (and validates) its YAML shape."""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from ..errors import SignatureError

KINDS = ("cause", "symptom", "advisory")
SEVERITIES = ("fatal", "error", "warning", "info")
VERDICTS = ("restart", "fix-then-restart", "investigate")
SCOPES = ("line", "traceback", "window", "file")
WHEN_OPS = ("eq", "ne", "gt", "ge", "lt", "le", "in", "present")

# The order the fields are written in; the database lint holds built-in files to it.
FIELD_ORDER = (
    "id", "title", "kind", "severity", "layer", "verdict", "frameworks", "symptom_of", "only_with_failure",
    "match", "facts", "why", "remedy", "references", "falsepositives", "examples",
)
REQUIRED = ("id", "title", "kind", "severity", "match", "why", "remedy", "references", "examples")
ID_RE = re.compile(r"^[a-z0-9]+(?:-[a-z0-9]+)*$")
NAME_RE = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
# `{name}`, `{name|fallback text}` or `{name:filter}`; `{{` and `}}` are literal braces, and so is a
# shell variable `${VAR}` / `${PIPESTATUS[0]}` (remedies quote shell commands).
PLACEHOLDER_RE = re.compile(
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
class WhenTest:
    name: str
    op: str
    value: Any


@dataclass(frozen=True, slots=True)
class RemedyVariant:
    """One remedy text, used when every test in `when` holds (an empty `when` always holds)."""

    when: tuple[WhenTest, ...]
    text: Text


@dataclass(frozen=True, slots=True)
class Example:
    """A log excerpt that must (or must not) match; optional expectations on what it yields."""

    text: str
    captures: Mapping[str, str] = field(default_factory=dict)
    remedy_contains: tuple[str, ...] = ()


@dataclass(frozen=True, slots=True)
class Signature:
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

    @property
    def is_failure(self) -> bool:
        return self.severity in ("fatal", "error")


class _Reader:
    """Typed access to one YAML mapping with `path: field: problem` errors."""

    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, where: str, message: str) -> SignatureError:
        return SignatureError(self.path, where, message)

    def mapping(self, value: object, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, f"must be a mapping, not {_type_name(value)}")
        for key in value:
            if not isinstance(key, str):
                raise self.fail(where, f"keys must be strings, not {key!r}")
        return value

    def string(self, value: object, where: str, *, allow_empty: bool = False) -> str:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise self.fail(where, f"must be a string, not {_type_name(value)}")
        text = str(value)
        if not allow_empty and not text.strip():
            raise self.fail(where, "must not be empty")
        return text

    def strings(self, value: object, where: str, *, allow_empty_list: bool = True) -> tuple[str, ...]:
        if value is None:
            value = []
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list):
            raise self.fail(where, f"must be a list of strings, not {_type_name(value)}")
        if not value and not allow_empty_list:
            raise self.fail(where, "must list at least one entry")
        return tuple(self.string(item, f"{where}[{i}]") for i, item in enumerate(value))

    def choice(self, value: object, where: str, choices: tuple[str, ...]) -> str:
        text = self.string(value, where)
        if text not in choices:
            raise self.fail(where, f"must be one of {', '.join(choices)}, not {text!r}")
        return text

    def only(self, data: Mapping[str, Any], where: str, allowed: tuple[str, ...]) -> None:
        for key in data:
            if key not in allowed:
                prefix = f"{where}." if where else ""
                raise self.fail(f"{prefix}{key}", f"unknown key (allowed: {', '.join(allowed)})")

    def text(self, value: object, where: str) -> Text:
        data = self.mapping(value, where)
        self.only(data, where, ("en", "zh"))
        if "en" not in data:
            raise self.fail(f"{where}.en", "missing (every text needs English and Chinese)")
        if "zh" not in data:
            raise self.fail(f"{where}.zh", "missing (every text needs English and Chinese)")
        en = self.string(data["en"], f"{where}.en").strip()
        zh = self.string(data["zh"], f"{where}.zh").strip()
        self.placeholders(en, f"{where}.en")
        self.placeholders(zh, f"{where}.zh")
        return Text(en, zh)

    def placeholders(self, text: str, where: str) -> None:
        for m in PLACEHOLDER_RE.finditer(text):
            flt = m.group(2)
            if flt and flt not in FILTERS:
                raise self.fail(where, f"unknown filter {flt!r} in {m.group(0)} (known: {', '.join(FILTERS)})")
        stripped = PLACEHOLDER_RE.sub("", text)
        if "{" in stripped or "}" in stripped:
            raise self.fail(where, "unbalanced or malformed {placeholder} (write {{ and }} for literal braces)")

    def condition(self, value: object, where: str, default_scope: str) -> Condition:
        if isinstance(value, str):
            return Condition(value, default_scope, 0)
        data = self.mapping(value, where)
        self.only(data, where, ("regex", "inside", "within"))
        if "regex" not in data:
            raise self.fail(f"{where}.regex", "missing")
        pattern = self.string(data["regex"], f"{where}.regex")
        if "inside" in data and "within" in data:
            raise self.fail(where, "give either inside or within, not both")
        if "inside" in data:
            inside = self.string(data["inside"], f"{where}.inside")
            if inside != "traceback":
                raise self.fail(f"{where}.inside", f"must be 'traceback', not {inside!r}")
            return Condition(pattern, "traceback", 0)
        if "within" in data:
            lines = data["within"]
            if lines == "file":
                return Condition(pattern, "file", 0)
            if isinstance(lines, bool) or not isinstance(lines, int) or not 1 <= lines <= 200:
                raise self.fail(f"{where}.within", "must be a whole number of lines from 1 to 200, or 'file'")
            return Condition(pattern, "window", lines)
        return Condition(pattern, default_scope, 0)

    def when(self, value: object, where: str) -> tuple[WhenTest, ...]:
        data = self.mapping(value, where)
        tests: list[WhenTest] = []
        for name, test in data.items():
            if not NAME_RE.match(name):
                raise self.fail(f"{where}.{name}", "must be a capture or fact name")
            if isinstance(test, dict):
                if len(test) != 1:
                    raise self.fail(f"{where}.{name}", "a test mapping holds exactly one operator")
                op, operand = next(iter(test.items()))
                if op not in WHEN_OPS:
                    raise self.fail(f"{where}.{name}", f"unknown operator {op!r} (known: {', '.join(WHEN_OPS)})")
                if op == "in" and not isinstance(operand, list):
                    raise self.fail(f"{where}.{name}.in", "must be a list")
                if op in ("gt", "ge", "lt", "le") and (
                    isinstance(operand, bool) or not isinstance(operand, (int, float))
                ):
                    raise self.fail(f"{where}.{name}.{op}", "must be a number")
                if op == "present" and not isinstance(operand, bool):
                    raise self.fail(f"{where}.{name}.present", "must be true or false")
                tests.append(WhenTest(name, op, operand))
            elif test is None or isinstance(test, (str, int, float, bool)):
                tests.append(WhenTest(name, "eq", test))
            else:
                raise self.fail(f"{where}.{name}", f"must be a value or an operator mapping, not {_type_name(test)}")
        return tuple(tests)

    def example(self, value: object, where: str) -> Example:
        if isinstance(value, str):
            if not value.strip():
                raise self.fail(where, "must not be empty")
            return Example(value)
        data = self.mapping(value, where)
        self.only(data, where, ("text", "captures", "remedy_contains"))
        if "text" not in data:
            raise self.fail(f"{where}.text", "missing")
        text = self.string(data["text"], f"{where}.text")
        captures_raw = self.mapping(data.get("captures") or {}, f"{where}.captures")
        captures = {k: self.string(v, f"{where}.captures.{k}", allow_empty=True) for k, v in captures_raw.items()}
        contains = self.strings(data.get("remedy_contains"), f"{where}.remedy_contains")
        return Example(text, captures, contains)


def _type_name(value: object) -> str:
    if value is None:
        return "nothing"
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )


def parse_signature(data: object, path: str, layer: str | None = None) -> Signature:
    """Build a Signature from parsed YAML, or raise SignatureError naming the bad field.

    `layer` is the folder the file sits in (relative to its database root); when given, the
    file's `layer` field may be omitted and must agree with it when present.
    """
    r = _Reader(path)
    if data is None:
        raise r.fail("", "the file is empty")
    doc = r.mapping(data, "(top level)")
    r.only(doc, "", FIELD_ORDER)
    for key in REQUIRED:
        if key not in doc:
            raise r.fail(key, "missing")

    sig_id = r.string(doc["id"], "id")
    if not ID_RE.match(sig_id):
        raise r.fail("id", f"must be kebab-case (a-z, 0-9, single hyphens), not {sig_id!r}")
    kind = r.choice(doc["kind"], "kind", KINDS)
    severity = r.choice(doc["severity"], "severity", SEVERITIES)
    declared_layer = r.string(doc["layer"], "layer") if "layer" in doc else None
    if layer is not None and declared_layer is not None and declared_layer != layer:
        raise r.fail("layer", f"is {declared_layer!r} but the file sits in the folder {layer!r}")
    final_layer = declared_layer or layer or "user"
    default_verdict = {"cause": "fix-then-restart"}.get(kind, "investigate")
    verdict = r.choice(doc.get("verdict", default_verdict), "verdict", VERDICTS)
    frameworks = r.strings(doc.get("frameworks"), "frameworks")
    symptom_of = r.strings(doc.get("symptom_of"), "symptom_of")
    if symptom_of and kind != "symptom":
        raise r.fail("symptom_of", "only a signature of kind symptom names the causes it echoes")
    only_with_failure = doc.get("only_with_failure", False)
    if not isinstance(only_with_failure, bool):
        raise r.fail("only_with_failure", "must be true or false")

    match = r.mapping(doc["match"], "match")
    r.only(match, "match", ("any", "all", "not"))
    if "any" not in match:
        raise r.fail("match.any", "missing")
    any_, any_literals, any_all, any_not = _parse_any(r, match["any"])
    all_raw = match.get("all") or []
    not_raw = match.get("not") or []
    if not isinstance(all_raw, list):
        raise r.fail("match.all", f"must be a list, not {_type_name(all_raw)}")
    if not isinstance(not_raw, list):
        raise r.fail("match.not", f"must be a list, not {_type_name(not_raw)}")
    all_ = tuple(r.condition(c, f"match.all[{i}]", "traceback") for i, c in enumerate(all_raw))
    not_ = tuple(r.condition(c, f"match.not[{i}]", "line") for i, c in enumerate(not_raw))

    facts_raw = r.mapping(doc.get("facts") or {}, "facts")
    facts: list[tuple[str, tuple[str, ...]]] = []
    for name, patterns in facts_raw.items():
        if not NAME_RE.match(name):
            raise r.fail(f"facts.{name}", "a fact name is a Python identifier")
        facts.append((name, r.strings(patterns, f"facts.{name}", allow_empty_list=False)))

    title = r.text(doc["title"], "title")
    if "\n" in title.en or "\n" in title.zh:
        raise r.fail("title", "must be one line")
    why = r.text(doc["why"], "why")
    remedy = _parse_remedy(r, doc["remedy"])
    references = r.strings(doc["references"], "references", allow_empty_list=False)
    falsepositives = r.strings(doc.get("falsepositives"), "falsepositives")

    examples = r.mapping(doc["examples"], "examples")
    r.only(examples, "examples", ("match", "no_match", "todo"))
    for key in ("match", "no_match"):
        raw = examples.get(key)
        if not isinstance(raw, list) or not raw:
            raise r.fail(f"examples.{key}", "must list at least one example")
    ex_match = tuple(r.example(e, f"examples.match[{i}]") for i, e in enumerate(examples["match"]))
    ex_no = tuple(r.example(e, f"examples.no_match[{i}]") for i, e in enumerate(examples["no_match"]))
    todo = r.strings(examples.get("todo"), "examples.todo")

    return Signature(
        id=sig_id, title=title, kind=kind, severity=severity, layer=final_layer, verdict=verdict,
        frameworks=frameworks, symptom_of=symptom_of, only_with_failure=only_with_failure,
        any=any_, any_literals=any_literals, any_all=any_all, any_not=any_not, all=all_, not_=not_,
        facts=tuple(facts), why=why, remedy=remedy, references=references,
        falsepositives=falsepositives, examples_match=ex_match, examples_no_match=ex_no,
        todo=todo, path=path,
    )


_Conds = tuple[tuple[Condition, ...], ...]


def _parse_any(r: _Reader, value: object) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...], _Conds, _Conds]:
    """`match.any`: regexes, each a string or `{regex, literals, all, not}`.

    `literals` replaces the literal derived from the regex: use it when the regex's own required text
    is a common word (`loss`, `step:`) but every real match also holds a rare string (`: nan`). `all` and
    `not` hold for this pattern alone, beside the signature's own `match.all` / `match.not`.
    """
    if isinstance(value, str):
        value = [value]
    if not isinstance(value, list) or not value:
        raise r.fail("match.any", "must list at least one regex")
    patterns: list[str] = []
    literals: list[tuple[str, ...]] = []
    alls: list[tuple[Condition, ...]] = []
    nots: list[tuple[Condition, ...]] = []
    for i, item in enumerate(value):
        where = f"match.any[{i}]"
        if not isinstance(item, dict):
            patterns.append(r.string(item, where))
            literals.append(())
            alls.append(())
            nots.append(())
            continue
        data = r.mapping(item, where)
        r.only(data, where, ("regex", "literals", "all", "not"))
        if "regex" not in data:
            raise r.fail(f"{where}.regex", "missing")
        patterns.append(r.string(data["regex"], f"{where}.regex"))
        declared = r.strings(data.get("literals"), f"{where}.literals") if "literals" in data else ()
        for j, lit in enumerate(declared):
            if len(lit) < 3:
                raise r.fail(f"{where}.literals[{j}]", "a literal needs 3 or more characters to filter lines")
        literals.append(declared)
        for key, default, out in (("all", "traceback", alls), ("not", "line", nots)):
            raw = data.get(key) or []
            if not isinstance(raw, list):
                raise r.fail(f"{where}.{key}", f"must be a list, not {_type_name(raw)}")
            out.append(tuple(r.condition(c, f"{where}.{key}[{k}]", default) for k, c in enumerate(raw)))
    return tuple(patterns), tuple(literals), tuple(alls), tuple(nots)


def _parse_remedy(r: _Reader, value: object) -> tuple[RemedyVariant, ...]:
    if isinstance(value, dict):
        return (RemedyVariant((), r.text(value, "remedy")),)
    if not isinstance(value, list) or not value:
        raise r.fail("remedy", "must be a text ({en, zh}) or a non-empty list of variants")
    variants: list[RemedyVariant] = []
    for i, item in enumerate(value):
        where = f"remedy[{i}]"
        data = r.mapping(item, where)
        r.only(data, where, ("when", "en", "zh"))
        when = r.when(data["when"], f"{where}.when") if "when" in data else ()
        text = r.text({k: v for k, v in data.items() if k != "when"}, where)
        variants.append(RemedyVariant(when, text))
    if variants[-1].when:
        raise r.fail(f"remedy[{len(variants) - 1}]", "the last variant must have no `when` (it is the default)")
    return tuple(variants)


def placeholder_names(text: str) -> set[str]:
    """The `{name}` placeholders a template uses (fallbacks and filters aside)."""
    return {m.group(1) for m in PLACEHOLDER_RE.finditer(text) if m.group(1)}
