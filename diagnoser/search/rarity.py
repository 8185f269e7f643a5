"""How common a literal is on the ordinary lines of a healthy run: what a gate should be chosen by.

A rule's regex usually requires several literals (`ImportError: ` and `transformer_engine`); the fast
search looks for one of them (the gate) and checks the others only on the lines it finds. The gate must
be the literal ordinary lines hold least, not the longest: `transformer_engine` is in every Transformer
Engine warning, `ImportError: ` in no healthy log. The estimate is the share of the lines of
background.txt (ordinary lines of healthy runs) holding the literal, plus a prior for what that small
corpus cannot tell: a bare lower-case word or identifier (`packing`, `transformer_engine`, a module
or config key) turns up in paths, config dumps and warnings; a phrase with capitals, spaces or
punctuation (`Error: `, `Watchdog caught`) is rarer the longer it is.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from functools import lru_cache
from pathlib import Path

from ..lazyre import lazy_re

_WORD = lazy_re(r"[a-z0-9_]+")
WORD_PRIOR = 1e-3  # a bare lower-case identifier: as common as a frequent config key
PHRASE_PRIOR = 2e-6  # anything else, per character short of 24


@lru_cache(maxsize=1)
def _background() -> tuple[bytes, int]:
    text = Path(__file__).with_name("background.txt").read_bytes()
    body = b"\n".join(x for x in text.split(b"\n") if not x.startswith(b"#"))
    return body, max(1, body.count(b"\n"))


@lru_cache(maxsize=65536)
def line_share(literal: bytes) -> float:
    """The share of background lines holding `literal` (an over-estimate when it occurs twice in a line)."""
    body, lines = _background()
    return body.count(literal) / lines


def estimate(literal: str) -> float:
    """The expected share of ordinary log lines holding `literal`."""
    prior = WORD_PRIOR if _WORD.fullmatch(literal) else PHRASE_PRIOR * max(1, 24 - len(literal))
    return line_share(literal.encode("utf-8")) + prior


def set_cost(alternatives: Iterable[str]) -> float:
    """The share of lines holding any of `alternatives` (the gate holds when one of them is there)."""
    return sum(estimate(a) for a in alternatives)


def rarest(sets: Sequence[Sequence[str]]) -> int:
    """The index of the set of alternatives ordinary lines hold least (ties: the longer shortest literal)."""
    return min(range(len(sets)), key=lambda i: (set_cost(sets[i]), -min(len(a) for a in sets[i]), sorted(sets[i])))
