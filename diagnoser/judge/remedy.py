"""Fill remedy templates from captures and facts; pick the variant whose `when` holds; never fail."""

from __future__ import annotations

import re
from collections.abc import Mapping

from ..match.schema import PLACEHOLDER_RE, RemedyVariant, Text, WhenTest

_TRUE = {"true", "yes", "on", "1", "enabled"}
_FALSE = {"false", "no", "off", "0", "disabled", "none"}


def _number(value: str) -> float | None:
    try:
        return float(value.replace(",", "").replace("_", ""))
    except ValueError:
        return None


def _as_bool(value: object) -> bool | None:
    if isinstance(value, bool):
        return value
    low = str(value).strip().strip("'\"").lower()
    if low in _TRUE:
        return True
    if low in _FALSE:
        return False
    return None


def _as_number(value: object) -> float | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, (int, float)):
        return float(value)
    return _number(str(value).strip().strip("'\""))


def _equal(have: str, want: object) -> bool:
    """Compare as the wanted value's type: a YAML boolean by meaning, a number numerically, text case-blind."""
    if isinstance(want, bool):
        return _as_bool(have) is want
    if want is None:
        return have.strip().lower() in ("none", "null", "")
    if isinstance(want, (int, float)):
        number = _as_number(have)
        return number is not None and number == float(want)
    return have.strip().strip("'\"").lower() == str(want).strip().lower()


def holds(test: WhenTest, values: Mapping[str, str]) -> bool:
    present = test.name in values
    if test.op == "present":
        return present == bool(test.value)
    if not present:
        return False
    have = values[test.name]
    if test.op == "eq":
        return _equal(have, test.value)
    if test.op == "ne":
        return not _equal(have, test.value)
    if test.op == "in":
        return any(_equal(have, v) for v in test.value)
    number, want = _as_number(have), _as_number(test.value)
    if number is None or want is None:
        return False
    return {"gt": number > want, "ge": number >= want, "lt": number < want, "le": number <= want}[test.op]


def chosen(variants: tuple[RemedyVariant, ...], values: Mapping[str, str]) -> RemedyVariant:
    for variant in variants:
        if all(holds(t, values) for t in variant.when):
            return variant
    return variants[-1]


def choose(variants: tuple[RemedyVariant, ...], values: Mapping[str, str]) -> Text:
    return chosen(variants, values).text


def verdict_of(variants: tuple[RemedyVariant, ...], values: Mapping[str, str], default: str) -> str:
    """The signature's verdict, or the one its chosen remedy variant names for this case."""
    return chosen(variants, values).verdict or default


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
