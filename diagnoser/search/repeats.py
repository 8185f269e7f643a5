"""Copies of a line that change nothing once it was read (read/marks.py REPEAT_FREE_LITERALS): NCCL prints a
communicator-init line for every communicator of every rank, each the same but for the communicator's address.
The fast search feeds the first copy; a later one is skipped like a line holding no literal.

A copy is the same line but for the digits of its hex numbers (`0x...`) after its `NCCL INFO `, each of the same
length and case: its prefixes, read as bytes, are the same, so it is told to the same writer; its mark's regex
reads a communicator's address only by its length and case, so it reads the same fields (rank, size, device, bus
id). The first copy is remembered only when the scanner found it to be what such a line must be (one logical line
of NCCL's chatter, read by a settled normaliser: match/scanner.py repeat_free), so the copies skipped are those of
a line that changed nothing but the book, where a copy changes nothing."""

from __future__ import annotations

import re

from ..lazyre import lazy_re
from ..read.marks import REPEAT_FREE_LITERALS

_HEX = lazy_re(rb"0x[0-9a-fA-F]+")


def _shape(m: re.Match[bytes]) -> bytes:
    """A hex number as a copy may differ from it: its length, and whether it holds an upper-case digit."""
    token = m.group()
    return b"0x%d%s" % (len(token), b"" if token.islower() else b"U")


MAX_KEYS = 8192  # copies remembered per source (then forgotten at once: a line is fed again, nothing else)


class Repeats:
    """The lines of one source already read whose copies change nothing."""

    def __init__(self) -> None:
        self.keys: set[bytes] = set()

    @staticmethod
    def key(raw: bytes, found: frozenset[str]) -> bytes | None:
        """What a copy of the physical line `raw` (holding the literals `found`) has in common with it; None when its
        copies may change something."""
        if not found or not found <= REPEAT_FREE_LITERALS or b"\r" in raw:
            return None
        at = raw.find(b" NCCL INFO ")
        if at < 0:
            return None
        return raw[:at] + _HEX.sub(_shape, raw[at:])

    def remember(self, key: bytes) -> None:
        if len(self.keys) >= MAX_KEYS:
            self.keys.clear()
        self.keys.add(key)
