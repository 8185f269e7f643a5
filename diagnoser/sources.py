"""Readers: stdin, plain and gzip files, folders → physical lines (bounded length, decoded)."""

from __future__ import annotations

import gzip
import io
import os
import sys
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from .errors import InputError

MAX_LINE = 64 * 1024  # bytes of one line kept for matching; the rest is skipped
TRUNCATED = " …[line cut at 64 KiB]"
GZIP_MAGIC = b"\x1f\x8b"


@dataclass(frozen=True, slots=True)
class Source:
    """A named input: a file path, or standard input when `path` is None."""

    name: str
    path: Path | None = None
    rank: int | None = None  # what the file's name tells (lines may say otherwise)
    role: str = "worker"  # worker | driver | ray | kernel
    host: str | None = None

    @property
    def is_stdin(self) -> bool:
        return self.path is None


def decode(data: bytes) -> str:
    """UTF-8, else GB18030 (Chinese setups), else UTF-8 with replacement characters."""
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        pass
    try:
        return data.decode("gb18030")
    except UnicodeDecodeError:
        return data.decode("utf-8", errors="replace")


def open_binary(source: Source) -> BinaryIO:
    """Open a source for reading bytes; gzip is recognised by its magic bytes, not its name."""
    if source.path is None:
        raw: BinaryIO = sys.stdin.buffer
        head = raw.peek(2)[:2] if isinstance(raw, io.BufferedReader) else b""
        if head == GZIP_MAGIC:
            return gzip.GzipFile(fileobj=raw, mode="rb")  # type: ignore[return-value]
        return raw
    try:
        fh = open(source.path, "rb")  # noqa: SIM115 - closed by the caller
    except FileNotFoundError:
        raise InputError(f"{source.name}: no such file") from None
    except IsADirectoryError:
        raise InputError(f"{source.name}: is a folder") from None
    except PermissionError:
        raise InputError(f"{source.name}: permission denied") from None
    except OSError as exc:
        raise InputError(f"{source.name}: cannot open: {exc.strerror or exc}") from None
    try:
        head = fh.read(2)
        fh.seek(0)
    except OSError:
        head = b""  # a FIFO or other unseekable file: read it as it comes
        return fh
    if head == GZIP_MAGIC:
        return gzip.GzipFile(fileobj=fh, mode="rb")  # type: ignore[return-value]
    return fh


def iter_lines(fh: BinaryIO, counter: Callable[[int], None] | None = None,
               warn: Callable[[str], None] | None = None, name: str = "") -> Iterator[tuple[int, str]]:
    """(line number, decoded text) for each physical line; lines longer than MAX_LINE are cut.

    Memory stays bounded by MAX_LINE whatever the input: the rest of an over-long line is read in
    MAX_LINE pieces and dropped. A corrupt gzip stream ends the source with a warning.
    """
    lineno = 0
    try:
        while True:
            data = fh.readline(MAX_LINE)
            if not data:
                return
            lineno += 1
            size = len(data)
            cut = False
            if len(data) == MAX_LINE and not data.endswith(b"\n"):
                cut = True
                while True:
                    rest = fh.readline(MAX_LINE)
                    size += len(rest)
                    if not rest or rest.endswith(b"\n"):
                        break
            if counter is not None:
                counter(size)
            text = decode(data.rstrip(b"\n"))
            yield lineno, (text + TRUNCATED) if cut else text
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        if warn is not None:
            warn(f"{name}: compressed data is corrupt or cut short after line {lineno} ({exc}); "
                 "the rest of this file is skipped")
    except OSError as exc:
        if warn is not None:
            warn(f"{name}: read error after line {lineno}: {exc.strerror or exc}; the rest is skipped")


def read_guarded(read: Callable[[], int], warn: Callable[[str], None], name: str) -> int:
    """Run a whole-file read; a corrupt gzip or a read error ends the source with a warning."""
    try:
        return read()
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        warn(f"{name}: compressed data is corrupt or cut short ({exc}); the rest of this file is skipped")
    except OSError as exc:
        warn(f"{name}: read error: {exc.strerror or exc}; the rest is skipped")
    return 0


def file_sources(paths: list[Path]) -> list[Source]:
    """Sources for the paths named on the command line (folders are expanded by the folder walk)."""
    out: list[Source] = []
    for p in paths:
        if str(p) == "-":
            out.append(Source("<stdin>", None))
        elif not os.path.lexists(p):
            raise InputError(f"{p}: no such file or folder")
        else:
            from .walk import describe

            rank, role, host = describe(p) if p.is_file() else (None, "worker", None)
            out.append(Source(str(p), p, rank=rank, role=role, host=host))
    return out
