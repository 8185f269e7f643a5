"""The one place that knows the YAML shape of a signature file: typed reads with `path: field: problem` errors."""

from __future__ import annotations

import regex

from .literals import nesting_problem
from .schema import (
    DEFAULT_ROLE,
    FIELD_ORDER,
    ID_RE,
    KIND_ROLES,
    KINDS,
    NAME_RE,
    REQUIRED,
    ROLES,
    SEVERITIES,
    VERDICTS,
    Condition,
    MetricClause,
    RemedyVariant,
    Signature,
)
from .yamlread import YamlReader, type_name


def parse_signature(data: object, path: str, layer: str | None = None) -> Signature:
    """Build a Signature from parsed YAML, or raise SignatureError naming the bad field.

    `layer` is the folder the file sits in (relative to its database root); when given, the
    file's `layer` field may be omitted and must agree with it when present.
    """
    r = YamlReader(path)
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
    role = r.choice(doc.get("role", DEFAULT_ROLE[kind]), "role", ROLES)
    if role not in KIND_ROLES[kind]:
        raise r.fail("role", f"a {kind} has the role {' or '.join(KIND_ROLES[kind])}, not {role!r}")
    declared_layer = r.string(doc["layer"], "layer") if "layer" in doc else None
    if layer is not None and declared_layer is not None and declared_layer != layer:
        raise r.fail("layer", f"is {declared_layer!r} but the file sits in the folder {layer!r}")
    final_layer = declared_layer or layer or "user"
    default_verdict = {"cause": "fix-then-restart"}.get(kind, "investigate")
    verdict = r.choice(doc.get("verdict", default_verdict), "verdict", VERDICTS)
    frameworks = r.strings(doc.get("frameworks"), "frameworks")
    symptom_of = r.strings(doc.get("symptom_of"), "symptom_of")
    if symptom_of and kind != "symptom":
        raise r.fail("symptom_of", "only a signature of kind symptom names the causes it echoes (or confirms)")
    only_with_failure = doc.get("only_with_failure", False)
    if not isinstance(only_with_failure, bool):
        raise r.fail("only_with_failure", "must be true or false")

    if ("match" in doc) == ("metric" in doc):
        raise r.fail("match", "a signature has either `match` (log lines) or `metric` (a health rule), not both"
                     if "match" in doc else "missing (or `metric` for a health rule)")
    metric = _parse_metric(r, doc["metric"]) if "metric" in doc else ()
    leads_to = r.strings(doc.get("leads_to"), "leads_to")
    if leads_to and not metric:
        raise r.fail("leads_to", "only a health rule (`metric`) names the failures its trend leads to")
    match = r.mapping(doc.get("match") or {"any": []}, "match")
    r.only(match, "match", ("any", "all", "not", "frames"))
    if "any" not in match:
        raise r.fail("match.any", "missing")
    any_, any_literals, any_all, any_not = _parse_any(r, match["any"]) if not metric else ((), (), (), ())
    all_raw = match.get("all") or []
    not_raw = match.get("not") or []
    if not isinstance(all_raw, list):
        raise r.fail("match.all", f"must be a list, not {type_name(all_raw)}")
    if not isinstance(not_raw, list):
        raise r.fail("match.not", f"must be a list, not {type_name(not_raw)}")
    all_ = tuple(r.condition(c, f"match.all[{i}]", "traceback") for i, c in enumerate(all_raw))
    not_ = tuple(r.condition(c, f"match.not[{i}]", "line") for i, c in enumerate(not_raw))
    frames = r.frames(match["frames"], "match.frames") if "frames" in match else ()

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
        todo=todo, path=path, role=role, frames=frames, metric=metric, leads_to=leads_to,
    )


_Conds = tuple[tuple[Condition, ...], ...]


def _parse_any(r: YamlReader, value: object) -> tuple[tuple[str, ...], tuple[tuple[str, ...], ...], _Conds, _Conds]:
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
                raise r.fail(f"{where}.{key}", f"must be a list, not {type_name(raw)}")
            out.append(tuple(r.condition(c, f"{where}.{key}[{k}]", default) for k, c in enumerate(raw)))
    return tuple(patterns), tuple(literals), tuple(alls), tuple(nots)


def _parse_remedy(r: YamlReader, value: object) -> tuple[RemedyVariant, ...]:
    if isinstance(value, dict):
        return (RemedyVariant((), r.text(value, "remedy")),)
    if not isinstance(value, list) or not value:
        raise r.fail("remedy", "must be a text ({en, zh}) or a non-empty list of variants")
    variants: list[RemedyVariant] = []
    for i, item in enumerate(value):
        where = f"remedy[{i}]"
        data = r.mapping(item, where)
        r.only(data, where, ("when", "verdict", "en", "zh"))
        when = r.when(data["when"], f"{where}.when") if "when" in data else ()
        verdict = r.choice(data["verdict"], f"{where}.verdict", VERDICTS) if "verdict" in data else None
        text = r.text({k: v for k, v in data.items() if k not in ("when", "verdict")}, where)
        variants.append(RemedyVariant(when, text, verdict))
    if variants[-1].when:
        raise r.fail(f"remedy[{len(variants) - 1}]", "the last variant must have no `when` (it is the default)")
    return tuple(variants)


_NUMBERS = ("above", "below", "above_median", "above_early", "below_early", "below_peak")
_COUNTS = {"window": (3, 60), "early": (1, 16), "smooth": (1, 32), "skip": (0, 1000), "sustain": (1, 32)}
_TESTS = (*_NUMBERS, "outside", "vanished")


def _parse_metric(r: YamlReader, value: object) -> tuple[MetricClause, ...]:
    """`metric`: a list of clauses `{names, [not_names], [divide_by], tests..., [window, early, smooth, skip,
    sustain]}`; a finding when any clause holds on some series. See MetricClause."""
    if isinstance(value, dict):
        value = [value]
    if not isinstance(value, list) or not value:
        raise r.fail("metric", "must be a clause or a non-empty list of clauses")
    out: list[MetricClause] = []
    for i, item in enumerate(value):
        where = f"metric[{i}]"
        data = r.mapping(item, where)
        r.only(data, where, ("names", "not_names", "divide_by", "excused_by", *_TESTS, *_COUNTS))
        if "names" not in data:
            raise r.fail(f"{where}.names", "missing")
        kw: dict[str, object] = {"names": r.strings(data["names"], f"{where}.names", allow_empty_list=False),
                                 "not_names": r.strings(data.get("not_names"), f"{where}.not_names"),
                                 "excused_by": r.strings(data.get("excused_by"), f"{where}.excused_by")}
        if "divide_by" in data:
            kw["divide_by"] = r.string(data["divide_by"], f"{where}.divide_by")
        for key in ("names", "not_names", "divide_by", "excused_by"):
            value = kw.get(key)
            patterns = (value,) if isinstance(value, str) else value if isinstance(value, tuple) else ()
            for pattern in patterns:
                _check_regex(r, pattern, f"{where}.{key}")
        for key in _NUMBERS:
            if key in data:
                kw[key] = _number(r, data[key], f"{where}.{key}")
        if "outside" in data:
            pair = data["outside"]
            if not isinstance(pair, list) or len(pair) != 2:
                raise r.fail(f"{where}.outside", "must be [low, high]")
            low, high = (_number(r, x, f"{where}.outside") for x in pair)
            if low >= high:
                raise r.fail(f"{where}.outside", "low must be below high")
            kw["outside"] = (low, high)
        if "vanished" in data:
            if data["vanished"] is not True:
                raise r.fail(f"{where}.vanished", "must be true (or left out)")
            kw["vanished"] = True
        elif kw["excused_by"]:
            raise r.fail(f"{where}.excused_by", "only a `vanished` test is excused")
        if not any(key in data for key in _TESTS):
            raise r.fail(where, f"needs a test: one of {', '.join(_TESTS)}")
        for key, (low_n, high_n) in _COUNTS.items():
            if key in data:
                n = data[key]
                if not isinstance(n, int) or isinstance(n, bool) or not low_n <= n <= high_n:
                    raise r.fail(f"{where}.{key}", f"must be a whole number from {low_n} to {high_n}")
                kw[key] = n
        out.append(MetricClause(**kw))  # type: ignore[arg-type]
    return tuple(out)


def _number(r: YamlReader, value: object, where: str) -> float:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or value != value:
        raise r.fail(where, f"must be a number, not {type_name(value)}")
    return float(value)


def _check_regex(r: YamlReader, pattern: str, where: str) -> None:
    """A metric key regex compiles (the database compiles it when a key first reaches it)."""
    problem = nesting_problem(pattern)
    if problem:
        raise r.fail(where, problem)
    try:
        regex.compile(pattern)
    except (regex.error, ValueError, OverflowError, RecursionError) as exc:
        raise r.fail(where, f"cannot compile: {exc}") from None
