"""Synthetic signatures for the benchmark: how the scan's cost grows with the size of the database.

Each synthetic signature names a failure no real log prints, with two patterns of the shapes real ones have
(an exception line with captures, a component's message with a literal phrase), so each brings its own
literals, as a user's or a health rule's would. Never shipped: the benchmark writes them to a folder and
passes it with --signatures.
"""

from __future__ import annotations

import random
from pathlib import Path

_SYLLABLES = ("ka", "zu", "mi", "ro", "te", "vax", "lo", "quen", "dri", "os", "pel", "yun", "bar", "tik", "wom")

_TEMPLATE = """id: synthetic-{k}
title:
  en: "Synthetic failure {k} of the {word} component"
  zh: "合成故障 {k}（{word} 组件）"
kind: cause
severity: error
layer: synthetic
verdict: investigate
match:
  any:
    - '{Word}Error{k}: (?P<what>\\w+) failed at step (?P<step>\\d+)'
    - 'the {word} unit reported fault code (?P<code>\\d+) on (?P<where>\\S+)'
why:
  en: "The {word} component failed ({{what|unknown}})."
  zh: "{word} 组件失败（{{what|unknown}}）。"
remedy:
  en: "Restart the {word} component."
  zh: "重启 {word} 组件。"
references:
  - https://example.invalid/synthetic
examples:
  match:
    - "{Word}Error{k}: reader failed at step 3"
  no_match:
    - "step 3 ok"
  todo: []
"""


def _word(rng: random.Random) -> str:
    return "".join(rng.choice(_SYLLABLES) for _ in range(3))


def write_signatures(folder: Path, per_builtin: int, seed: int = 7) -> int:
    """Write `per_builtin` synthetic signatures per built-in one into folder/synthetic/; return how many."""
    from diagnoser.match.database import load_database

    count = len(load_database().signatures) * per_builtin
    out = folder / "synthetic"
    out.mkdir(parents=True, exist_ok=True)
    for old in out.glob("*.yaml"):
        old.unlink()
    rng = random.Random(seed)
    for k in range(count):
        word = _word(rng)
        (out / f"synthetic-{k}.yaml").write_text(_TEMPLATE.format(k=k, word=word, Word=word.capitalize()),
                                                 encoding="utf-8")
    return count
