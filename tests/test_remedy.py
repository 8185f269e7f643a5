"""Remedy templates: placeholders, fallbacks, filters, `when` variants; a missing value never fails."""

from __future__ import annotations

import pytest

from diagnoser.errors import SignatureError
from diagnoser.judge.remedy import choose, fill, holds, verdict_of
from diagnoser.match.parse import parse_signature
from diagnoser.match.schema import RemedyVariant, Text, WhenTest


@pytest.mark.parametrize(("template", "values", "out"), [
    ("lower it from {n} to {n:half}", {"n": "32768"}, "lower it from 32768 to 16384"),
    ("double {n:double}", {"n": "3"}, "double 6"),
    ("half of one is {n:half}", {"n": "1"}, "half of one is 1"),
    ("now {n|unknown}", {}, "now unknown"),
    ("now {n}", {}, "now <n>"),
    ("{{literal}} and ${PIPESTATUS[0]} and ${RANK}", {}, "{literal} and ${PIPESTATUS[0]} and ${RANK}"),
    ("{x:half}", {"x": "abc"}, "abc"),
    ("{x:upper}", {"x": "abc"}, "ABC"),
])
def test_fill(template: str, values: dict[str, str], out: str) -> None:
    assert fill(template, values) == out


@pytest.mark.parametrize(("test", "values", "result"), [
    (WhenTest("packing", "eq", True), {"packing": "True"}, True),
    (WhenTest("packing", "eq", True), {"packing": "false"}, False),
    (WhenTest("packing", "eq", False), {"packing": "False"}, True),
    (WhenTest("tp", "gt", 1), {"tp": "2"}, True),
    (WhenTest("tp", "gt", 1), {"tp": "1"}, False),
    (WhenTest("tp", "gt", 1), {}, False),
    (WhenTest("tp", "gt", 1), {"tp": "two"}, False),
    (WhenTest("tp", "present", False), {}, True),
    (WhenTest("code", "in", [-9, 137]), {"code": "-9"}, True),
    (WhenTest("kind", "eq", "OOM"), {"kind": "oom"}, True),
    (WhenTest("kind", "ne", "oom"), {"kind": "segv"}, True),
    (WhenTest("tp", "le", 1), {"tp": "1"}, True),
    (WhenTest("tp", "gt", 0), {"tp": "1"}, True),
    (WhenTest("n", "eq", 1), {"n": "1"}, True),
    (WhenTest("n", "eq", 0), {"n": "1"}, False),
    (WhenTest("flag", "eq", True), {"flag": "1"}, True),
    (WhenTest("x", "eq", None), {"x": "None"}, True),
])
def test_when(test: WhenTest, values: dict[str, str], result: bool) -> None:
    assert holds(test, values) is result


def test_choose_first_matching_else_default() -> None:
    variants = (
        RemedyVariant((WhenTest("packing", "eq", True),), Text("on", "开")),
        RemedyVariant((WhenTest("packing", "eq", False),), Text("off", "关")),
        RemedyVariant((), Text("unknown", "未知")),
    )
    assert choose(variants, {"packing": "true"}).en == "on"
    assert choose(variants, {"packing": "0"}).en == "off"
    assert choose(variants, {}).en == "unknown"
    assert choose(variants, {"packing": "maybe"}).zh == "未知"


def test_a_variant_can_name_its_own_verdict() -> None:
    variants = (
        RemedyVariant((WhenTest("usage_reason", "present", True),), Text("misuse", "误用"), "fix-then-restart"),
        RemedyVariant((), Text("network", "网络")),
    )
    assert verdict_of(variants, {"usage_reason": "invalid usage"}, "restart") == "fix-then-restart"
    assert verdict_of(variants, {}, "restart") == "restart"


def test_a_variant_verdict_outside_the_known_ones_is_refused() -> None:
    doc = {"id": "x-err", "title": {"en": "t", "zh": "t"}, "kind": "cause", "severity": "error",
           "match": {"any": ["XErr: boom"]}, "why": {"en": "w", "zh": "w"}, "references": ["here"],
           "examples": {"match": ["XErr: boom"], "no_match": ["fine"]},
           "remedy": [{"when": {"a": {"present": True}}, "verdict": "reboot", "en": "r", "zh": "r"},
                      {"en": "d", "zh": "d"}]}
    with pytest.raises(SignatureError, match=r"remedy\[0\]\.verdict"):
        parse_signature(doc, "x-err.yaml", "user")


def test_every_message_of_the_tool_has_both_languages_with_the_same_placeholders() -> None:
    import string

    from diagnoser.i18n import _MESSAGES

    def fields(text: str) -> set[str]:
        return {f for _, f, _, _ in string.Formatter().parse(text) if f}

    for key, entry in _MESSAGES.items():
        assert set(entry) == {"en", "zh"}, key
        assert fields(entry["en"]) == fields(entry["zh"]), key
        assert not any("\u4e00" <= ch <= "\u9fff" for ch in entry["en"]), key
