"""Fill remedy templates from captures and facts; pick the variant whose `when` holds; never fail."""

from __future__ import annotations

import re
from collections.abc import Mapping

from .signature import PLACEHOLDER_RE, RemedyVariant, Text, WhenTest

_TRUE = {"true", "yes", "on", "1", "enabled"}
_FALSE = {"false", "no", "off", "0", "disabled", "none"}


def _number(value: str) -> float | None:
    try:
        return float(value.replace(",", "").replace("_", ""))
    except ValueError:
        return None


def _normal(value: object) -> object:
    """A value as `when` compares it: booleans and numbers by meaning, text case-insensitively."""
    if isinstance(value, bool) or value is None:
        return value
    if isinstance(value, (int, float)):
        return float(value)
    text = str(value).strip().strip("'\"")
    low = text.lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    number = _number(text)
    return number if number is not None else low


def holds(test: WhenTest, values: Mapping[str, str]) -> bool:
    present = test.name in values
    if test.op == "present":
        return present == bool(test.value)
    if not present:
        return False
    have = _normal(values[test.name])
    if test.op == "in":
        return have in [_normal(v) for v in test.value]
    want = _normal(test.value)
    if test.op == "eq":
        return have == want
    if test.op == "ne":
        return have != want
    if not isinstance(have, float) or isinstance(have, bool) or not isinstance(want, float):
        return False
    return {"gt": have > want, "ge": have >= want, "lt": have < want, "le": have <= want}[test.op]


def choose(variants: tuple[RemedyVariant, ...], values: Mapping[str, str]) -> Text:
    for variant in variants:
        if all(holds(t, values) for t in variant.when):
            return variant.text
    return variants[-1].text


def _apply_filter(value: str, name: str) -> str:
    number = _number(value)
    if name in ("half", "double") and number is not None:
        result = number / 2 if name == "half" else number * 2
        if number.is_integer():
            result = max(1, int(result)) if name == "half" else int(result)
        return str(result)
    if name == "upper":
        return value.upper()
    if name == "lower":
        return value.lower()
    return value


def fill(template: str, values: Mapping[str, str]) -> str:
    """`{name}` → value; `{name|text}` → text when missing; `{name:half}` halves a number."""

    def sub(m: re.Match[str]) -> str:
        token = m.group(0)
        if token == "{{":
            return "{"
        if token == "}}":
            return "}"
        if token.startswith("$"):
            return token
        name, flt, fallback = m.group(1), m.group(2), m.group(3)
        value = values.get(name)
        if value is None or value == "":
            return fallback if fallback is not None else f"<{name}>"
        return _apply_filter(value, flt) if flt else value

    return PLACEHOLDER_RE.sub(sub, template)


def render_remedy(variants: tuple[RemedyVariant, ...], values: Mapping[str, str], lang: str) -> str:
    return fill(choose(variants, values).get(lang), values)
