"""Typed reads of one signature file's YAML, each failing as `path: field: problem`."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ..errors import SignatureError
from ..lazyre import lazy_re
from .schema import (
    FILTERS,
    MATCHED_ON,
    NAME_RE,
    PLACEHOLDER_RE,
    WHEN_OPS,
    Condition,
    Example,
    FramePattern,
    Text,
    WhenTest,
)

_CJK = "\u3000-\u303f\u4e00-\u9fff\uff00-\uffef"
_SPACE_AFTER_PUNCT = lazy_re(r"([，。；：！？、）」』】》])[ \t]+")
_SPACE_BETWEEN_CJK = lazy_re(rf"(?<=[{_CJK}])[ \t]+(?=[{_CJK}])")


def tidy_chinese(text: str) -> str:
    """Chinese puts no space after its own punctuation or between two characters: the spaces a folded YAML
    block (`>-`) leaves where the source line broke are removed (a space beside Latin text stays)."""
    return _SPACE_BETWEEN_CJK.sub("", _SPACE_AFTER_PUNCT.sub(r"\1", text))


class YamlReader:
    """Typed access to one YAML mapping with `path: field: problem` errors."""

    def __init__(self, path: str) -> None:
        self.path = path

    def fail(self, where: str, message: str) -> SignatureError:
        return SignatureError(self.path, where, message)

    def mapping(self, value: object, where: str) -> dict[str, Any]:
        if not isinstance(value, dict):
            raise self.fail(where, f"must be a mapping, not {type_name(value)}")
        for key in value:
            if not isinstance(key, str):
                raise self.fail(where, f"keys must be strings, not {key!r}")
        return value

    def string(self, value: object, where: str, *, allow_empty: bool = False) -> str:
        if isinstance(value, bool) or not isinstance(value, (str, int, float)):
            raise self.fail(where, f"must be a string, not {type_name(value)}")
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
            raise self.fail(where, f"must be a list of strings, not {type_name(value)}")
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
        zh = tidy_chinese(self.string(data["zh"], f"{where}.zh").strip())
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
                raise self.fail(f"{where}.{name}", f"must be a value or an operator mapping, not {type_name(test)}")
        return tuple(tests)

    def example(self, value: object, where: str) -> Example:
        if isinstance(value, str):
            if not value.strip():
                raise self.fail(where, "must not be empty")
            return Example(value)
        data = self.mapping(value, where)
        self.only(data, where, ("text", "captures", "remedy_contains", "matched_on"))
        if "text" not in data:
            raise self.fail(f"{where}.text", "missing")
        text = self.string(data["text"], f"{where}.text")
        captures_raw = self.mapping(data.get("captures") or {}, f"{where}.captures")
        captures = {k: self.string(v, f"{where}.captures.{k}", allow_empty=True) for k, v in captures_raw.items()}
        contains = self.strings(data.get("remedy_contains"), f"{where}.remedy_contains")
        matched_on = self.choice(data["matched_on"], f"{where}.matched_on", MATCHED_ON) if "matched_on" in data else ""
        return Example(text, captures, contains, matched_on)

    def frames(self, value: object, where: str) -> tuple[tuple[FramePattern, ...], ...]:
        """`match.frames`: a list of frame sequences, each a list of `{file, function}` (regexes; one may be left
        out), outermost call first."""
        if not isinstance(value, list) or not value:
            raise self.fail(where, "must list at least one sequence of frames")
        out: list[tuple[FramePattern, ...]] = []
        for i, seq in enumerate(value):
            if not isinstance(seq, list) or not seq:
                raise self.fail(f"{where}[{i}]", "must be a list of frames ({file, function}), outermost call first")
            frames: list[FramePattern] = []
            for j, item in enumerate(seq):
                at = f"{where}[{i}][{j}]"
                data = self.mapping(item, at)
                self.only(data, at, ("file", "function"))
                if not data:
                    raise self.fail(at, "give a file or a function regex (or both)")
                frames.append(FramePattern(self.string(data["file"], f"{at}.file") if "file" in data else "",
                                           self.string(data["function"], f"{at}.function") if "function" in data
                                           else ""))
            out.append(tuple(frames))
        return tuple(out)


def type_name(value: object) -> str:
    if value is None:
        return "nothing"
    return {dict: "a mapping", list: "a list", str: "a string", bool: "a boolean"}.get(
        type(value), type(value).__name__
    )
