"""The report's way out: standard output may be closed, on a full disk, a pipe whose reader left, or a
terminal that cannot encode every character. None of these is a traceback, and a report that was cut
short never looks whole: the command says so in one line on stderr and exits with EXIT_OUTPUT.
"""

from __future__ import annotations

import contextlib
import errno
import io
import os
import sys
from typing import Any, TextIO

EXIT_OUTPUT = 74  # sysexits' EX_IOERR: the report could not be written whole


class Output(io.TextIOBase):
    """Standard output for the report: the first write error is remembered instead of raised mid-report.

    After an error nothing more is written (the report is already incomplete), and the file descriptor is
    pointed at /dev/null so that the interpreter's own flush at exit cannot fail a second time.
    """

    def __init__(self, stream: TextIO | None) -> None:
        super().__init__()
        self.stream = stream
        self.error: OSError | None = None if stream is not None else OSError(errno.EBADF, os.strerror(errno.EBADF))

    # -- the TextIO a renderer writes to -----------------------------------------------------------
    def write(self, s: str) -> int:
        if self.error is None and self.stream is not None:
            try:
                buffer = getattr(self.stream, "buffer", None)
                if buffer is None:
                    self.stream.write(s)
                else:  # bytes written whole, or an error: TextIOWrapper drops what a short write left over
                    self.stream.flush()
                    write_all(buffer, s.encode(self.encoding, "replace"))
            except (OSError, ValueError) as exc:
                self._fail(exc)
        return len(s)

    def flush(self) -> None:
        if self.error is None and self.stream is not None:
            try:
                self.stream.flush()
            except (OSError, ValueError) as exc:
                self._fail(exc)

    def isatty(self) -> bool:
        try:
            return self.error is None and self.stream is not None and self.stream.isatty()
        except (OSError, ValueError):
            return False

    def fileno(self) -> int:
        if self.stream is None:
            raise io.UnsupportedOperation("standard output is closed")
        return self.stream.fileno()

    def writable(self) -> bool:
        return True

    @property
    def encoding(self) -> str:  # type: ignore[override]
        return getattr(self.stream, "encoding", None) or "utf-8"

    @property
    def errors(self) -> str | None:  # type: ignore[override]
        return getattr(self.stream, "errors", None)

    @property
    def buffer(self) -> Any:
        """The byte stream below (diagnose run copies the command's output to it), None when closed."""
        return getattr(self.stream, "buffer", None) if self.error is None else None

    # -- what went wrong -------------------------------------------------------------------------------
    @property
    def reader_left(self) -> bool:
        """The reader of a pipe went away (`| head`): nothing to tell, the reader has what it wanted."""
        return self.error is not None and self.error.errno == errno.EPIPE

    @property
    def failed(self) -> bool:
        """The report (or part of it) could not be written, for a reason the user must hear about."""
        return self.error is not None and not self.reader_left

    def reason(self) -> str:
        err = self.error
        if err is None:
            return ""
        return err.strerror or str(err)

    def _fail(self, exc: Exception) -> None:
        self.error = exc if isinstance(exc, OSError) else OSError(errno.EBADF, os.strerror(errno.EBADF))
        with contextlib.suppress(OSError, ValueError, AttributeError, io.UnsupportedOperation):
            fd = self.stream.fileno()  # type: ignore[union-attr]
            null = os.open(os.devnull, os.O_WRONLY)
            os.dup2(null, fd)
            os.close(null)


def write_all(buffer: Any, data: bytes) -> None:
    """Write all of `data` to a binary stream and flush it, or raise the error that stopped it.

    A BufferedWriter returns a short count when the disk fills up (or the file-size limit is reached) part
    way, and raises only on the next write; a caller that ignores the count loses the rest in silence.
    """
    view = memoryview(data)
    while view:
        n = buffer.write(view)
        if not n:
            raise OSError(errno.EAGAIN, os.strerror(errno.EAGAIN))
        view = view[n:]
    buffer.flush()


def encodable(stream: TextIO | None) -> None:
    """A terminal that cannot encode a character (LANG=C without UTF-8, a latin-1 console) shows a
    replacement for it instead of failing with UnicodeEncodeError."""
    reconfigure = getattr(stream, "reconfigure", None)
    encoding = (getattr(stream, "encoding", None) or "").lower().replace("-", "").replace("_", "")
    if reconfigure is not None and encoding not in ("utf8", "utf8sig"):
        with contextlib.suppress(ValueError, OSError, TypeError):
            reconfigure(errors="replace")


def stderr_or_null() -> TextIO:
    """stderr, or /dev/null when it is closed (print(file=None) would write to stdout instead)."""
    if sys.stderr is None:
        sys.stderr = open(os.devnull, "w", encoding="utf-8")  # noqa: SIM115 - lives as long as the process
    return sys.stderr
