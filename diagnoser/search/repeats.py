"""Copies of a line that change nothing once it was read (read/marks.py REPEAT_FREE_LITERALS): NCCL prints a
communicator-init line for every communicator of every rank, each the same but for the communicator's address. The
fast search feeds the first copy; a later one is skipped like a line holding no literal.

A copy is the same line but for the digits of its lower-case hex numbers (`0x...`) after its `NCCL INFO `, each of
the same length. Its prefixes, read as bytes, are the same, so it is told to the same writer. What follows
`NCCL INFO ` holds only letters, digits, spaces and `._:/,()=+-` (no colour code, redraw or progress bar: the normaliser
leaves it as it is), and the patterns that read it (the mark's, the traceback grouper's) read a hex number as any
run of hex digits of its length, so they read a copy as they read the first. The first copy is remembered only when
the scanner found it to be what such a line must be (match/scanner.py repeat_free: one logical line of NCCL's
chatter, read by a settled normaliser, starting no traceback and no py-spy stack), with its stream; a copy is
skipped only while that stream holds no traceback and its last line would not make the next one's ignored
(read/grouper.py plain). Then a copy changes nothing but the book, which keeps a writer's biggest communicator: the
same size again changes nothing."""

from __future__ import annotations

import re

from ..lazyre import lazy_re
from ..read.marks import REPEAT_FREE_LITERALS

_HEX = lazy_re(rb"0x[0-9a-f]+")
_ANY = bytes.maketrans(b"0123456789abcdef", b"0" * 16)  # each hex digit as any
_PLAIN = b"abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789 ._:/,()=+-"
MAX_KEYS = 8192  # copies remembered per source (then forgotten at once: a line is fed again, nothing else)


def _digits(m: re.Match[bytes]) -> bytes:
    return m.group().translate(_ANY)


class Repeats:
    """The lines of one source already read whose copies change nothing, each with its stream."""

    def __init__(self, lean: frozenset[str]) -> None:
        self.free = REPEAT_FREE_LITERALS & lean  # a literal some rule or reader names is not free (a user's signature)
        self.keys: dict[bytes, str] = {}

    def key(self, raw: bytes, found: frozenset[str]) -> bytes | None:
        """What a copy of the physical line `raw` (holding the literals `found`, as read) has in common with it; None
        when its copies may change something."""
        if not found or not found <= self.free:
            return None
        at = raw.find(b" NCCL INFO ")
        if at < 0 or raw[at:].translate(None, _PLAIN):  # not only plain text after it
            return None
        return raw[:at] + _HEX.sub(_digits, raw[at:])

    def remember(self, key: bytes, stream: str) -> None:
        if len(self.keys) >= MAX_KEYS:
            self.keys.clear()
        self.keys[key] = stream
