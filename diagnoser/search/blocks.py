"""An input read in blocks of whole lines, for the fast search (feeder.py)."""

from __future__ import annotations

from collections.abc import Callable, Iterator
from typing import BinaryIO

from ..read.sources import MAX_LINE


def pieces(fh: BinaryIO, count: Callable[[int], None], size: int) -> Iterator[tuple[bytes, bool]]:
    """The input as blocks of whole lines (True), read `size` bytes at a time (each read told to `count`), and the
    cut heads of over-long lines (False)."""
    carry = b""
    long_head: bytes | None = None  # the first MAX_LINE bytes of a line still being read past
    while True:
        chunk = fh.read(size)
        if not chunk:
            break
        count(len(chunk))
        if long_head is not None:
            nl = chunk.find(b"\n")
            if nl < 0:
                continue  # still inside the over-long line
            yield long_head, False
            long_head, chunk = None, chunk[nl + 1:]
        end = chunk.rfind(b"\n")
        if end < 0:
            data = carry + chunk if carry else chunk
            if len(data) >= MAX_LINE:
                long_head, carry = data[:MAX_LINE], b""
            else:
                carry = data
            continue
        if carry:  # the block copied once, not joined then cut
            block = b"".join((carry, memoryview(chunk)[: end + 1]))
        else:
            block = chunk if end + 1 == len(chunk) else chunk[: end + 1]
        carry = chunk[end + 1:]
        yield block, True
        if len(carry) >= MAX_LINE:
            long_head, carry = carry[:MAX_LINE], b""
    if long_head is not None:
        yield long_head, False
    elif carry:
        yield carry + b"\n", True
