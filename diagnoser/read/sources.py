"""Readers: stdin, plain and gzip files, folders → physical lines (bounded length, decoded)."""

from __future__ import annotations

import codecs
import gzip
import io
import sys
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

from ..errors import InputError
from ..i18n import Msg
from .errorfile import MAX_ERROR_FILE, error_file_text

MAX_LINE = 64 * 1024  # bytes of one line kept for matching; the rest is skipped
TRUNCATED = " …[line cut at 64 KiB]"
GZIP_MAGIC = b"\x1f\x8b"
UTF16_BOMS = (b"\xff\xfe", b"\xfe\xff")  # what Windows tools (PowerShell's `>`, Notepad) begin a UTF-16 file with


def is_utf16(head: bytes) -> bool:
    """A byte-order mark, and NUL bytes in the text after it as ASCII letters have in UTF-16 (a log is mostly ASCII):
    invalid UTF-8 may begin with the same two bytes."""
    if head[:2] not in UTF16_BOMS:
        return False
    body = head[2:514]
    return len(body) >= 2 and body.count(0) * 4 >= len(body)


@dataclass(frozen=True, slots=True)
class Source:
    """A named input: a file path, or standard input when `path` is None."""

    name: str
    path: Path | None = None
    rank: int | None = None  # what the file's name tells (lines may say otherwise)
    explicit: bool = True  # named on the command line (not found by a folder walk)
    role: str = "worker"  # worker | driver | ray | kernel
    host: str | None = None
    # what the path told beyond that (read/layout.py): torchelastic local rank, its node's run folder, the
    # attempt, a Ray worker's pid, and the kind of file (log | elastic-error | flight-recorder)
    local_rank: int | None = None
    group: str | None = None
    attempt: int | None = None
    pid: int | None = None
    kind: str = "log"

    @property
    def is_stdin(self) -> bool:
        return self.path is None


def lines_before(path: Path, offset: int) -> int:
    """How many lines end before byte `offset` (a split part's first line number; a followed file's
    line count when it is first seen)."""
    count = 0
    buf = bytearray(1 << 20)  # read into one buffer: a new 16 MB bytes per read cost a third more (page faults)
    with open(path, "rb", buffering=0) as fh:
        remaining = offset
        while remaining > 0:
            got = fh.readinto(buf if remaining >= len(buf) else memoryview(buf)[:remaining])
            if not got:
                break
            count += buf.count(b"\n", 0, got)
            remaining -= got
    return count


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


def line_text(raw: bytes, cut: bool = False) -> str:
    """One physical line as text for matching: at most MAX_LINE bytes, and a cut line says so."""
    if len(raw) >= MAX_LINE:
        raw, cut = raw[:MAX_LINE], True
    return decode(raw) + TRUNCATED if cut else decode(raw)


class _CrToLf(io.RawIOBase):
    """Reads a file whose lines end in a lone CR (classic Mac) as if they ended in LF."""

    def __init__(self, inner: BinaryIO) -> None:
        self.inner = inner

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray) -> int:  # type: ignore[override]
        data = self.inner.read(len(buffer))
        data = data.replace(b"\r", b"\n")
        buffer[: len(data)] = data
        return len(data)

    def close(self) -> None:
        self.inner.close()
        super().close()


class _Utf16ToUtf8(io.RawIOBase):
    """Reads a UTF-16 file (with its byte-order mark) as UTF-8: every reader after this one sees ordinary lines."""

    def __init__(self, inner: BinaryIO) -> None:
        self.inner = inner
        self.decoder = codecs.getincrementaldecoder("utf-16")(errors="replace")
        self.pending = b""
        self.eof = False

    def readable(self) -> bool:
        return True

    def readinto(self, buffer: bytearray) -> int:  # type: ignore[override]
        while not self.pending and not self.eof:
            data = self.inner.read(1 << 16)
            self.eof = not data
            self.pending = self.decoder.decode(data, final=self.eof).encode("utf-8", errors="replace")
        n = min(len(buffer), len(self.pending))
        buffer[:n] = self.pending[:n]
        self.pending = self.pending[n:]
        return n

    def close(self) -> None:
        self.inner.close()
        super().close()


def open_binary(source: Source) -> BinaryIO:
    """Open a source for reading bytes. gzip is recognised by its magic bytes, not its name; a file whose
    lines end in a lone CR is read as if they ended in LF. Pipes and FIFOs are read as they come (peeked,
    never rewound)."""
    if source.path is None:
        fh: BinaryIO = sys.stdin.buffer
    else:
        try:
            fh = open(source.path, "rb", buffering=1 << 16)  # noqa: SIM115 - closed by the caller
        except FileNotFoundError:
            raise InputError(Msg("err_no_such_file", path=source.name)) from None
        except IsADirectoryError:
            raise InputError(Msg("err_is_folder", path=source.name)) from None
        except PermissionError:
            raise InputError(Msg("err_permission", path=source.name)) from None
        except OSError as exc:
            raise InputError(Msg("err_cannot_open", path=source.name, reason=exc.strerror or exc)) from None
    try:
        head = fh.peek(1 << 16) if isinstance(fh, io.BufferedReader) else b""
    except OSError:
        head = b""
    if head[:2] == GZIP_MAGIC:
        return gzip.GzipFile(fileobj=fh, mode="rb")  # type: ignore[return-value]
    if source.kind == "elastic-error":
        data = fh.read(MAX_ERROR_FILE + 1)
        fh.close()
        return io.BytesIO(error_file_text(data) if len(data) <= MAX_ERROR_FILE else data[:MAX_ERROR_FILE])
    if is_utf16(head):  # its NUL bytes would hide every line from the literal search
        return io.BufferedReader(_Utf16ToUtf8(fh), buffer_size=1 << 16)  # type: ignore[return-value,type-var]
    if b"\n" not in head and head.count(b"\r") >= 2:
        return io.BufferedReader(_CrToLf(fh), buffer_size=1 << 16)  # type: ignore[return-value,type-var]
    return fh


BINARY_SNIFF = 8192
BINARY_SHARE = 0.3  # share of control bytes (not tab, line ends, form feed, backspace, ESC) that makes it binary
_CONTROLS = bytes(b for b in range(32) if b not in (8, 9, 10, 11, 12, 13, 27)) + b"\x7f"


def looks_binary(fh: BinaryIO) -> bool:
    """The first 8 KiB (as read: a gzip file's content) are mostly control bytes: the input is a program, a model
    file or an archive, not text. A log with a few NUL bytes (a crash, a pty) is still text. The bytes are peeked,
    not consumed; inputs that cannot be peeked are read as text."""
    peek = getattr(fh, "peek", None)
    if peek is None:
        return False
    try:
        head = peek(BINARY_SNIFF)[:BINARY_SNIFF]
    except (OSError, EOFError, zlib.error, gzip.BadGzipFile):
        return False
    if not head:
        return False
    controls = len(head) - len(head.translate(None, _CONTROLS))
    return controls > BINARY_SHARE * len(head)


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
            yield lineno, line_text(data.rstrip(b"\n"), cut)
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        if warn is not None:
            warn(Msg("warn_corrupt_at", name=name, line=lineno, reason=exc) if lineno
                 else Msg("warn_corrupt", name=name, reason=exc))
    except OSError as exc:
        if warn is not None:
            warn(Msg("warn_read_at", name=name, line=lineno, reason=exc.strerror or exc))


class SalvagingReader:
    """Reads a compressed stream in small pieces, so that corrupt or cut-short data keeps what came before it:
    a read that meets the error returns the data read so far, and the next one raises the error."""

    PIECE = 1 << 16

    def __init__(self, inner: BinaryIO) -> None:
        self.inner = inner
        self.error: BaseException | None = None

    def read(self, size: int = -1) -> bytes:
        if self.error is not None:
            error, self.error = self.error, None
            raise error
        out: list[bytes] = []
        got = 0
        while size < 0 or got < size:
            try:
                data = self.inner.read(self.PIECE if size < 0 else min(self.PIECE, size - got))
            except (EOFError, zlib.error, gzip.BadGzipFile, OSError) as exc:
                if not out:
                    raise
                self.error = exc
                break
            if not data:
                break
            out.append(data)
            got += len(data)
        return b"".join(out)


def read_guarded(read: Callable[[], int], warn: Callable[[str], None], name: str) -> int:
    """Run a whole-file read; a corrupt gzip or a read error ends the source with a warning."""
    try:
        return read()
    except (EOFError, zlib.error, gzip.BadGzipFile) as exc:
        warn(Msg("warn_corrupt", name=name, reason=exc))
    except OSError as exc:
        warn(Msg("warn_read", name=name, reason=exc.strerror or exc))
    return 0
