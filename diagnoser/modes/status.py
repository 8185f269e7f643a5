"""What `--follow` is doing, on stderr: said once when following starts, then (in a terminal only) kept up to date
on one line that is cleared before anything else is written; and the durations a live session is given."""

from __future__ import annotations

import contextlib
import time
from typing import TextIO

import regex

from ..i18n import Msg, msg


class StatusLine:
    EVERY = 1.0  # seconds between updates of the line

    def __init__(self, out: TextIO, lang: str) -> None:
        self.out, self.lang = out, lang
        self.at = 0.0
        self.shown = False

    def show(self, files: int, lines: int, findings: int) -> None:
        now = time.monotonic()
        if not self.at:
            self.at = now
            self._write(msg("watching", self.lang, files=files, lines=lines) + "\n")
            return
        if not getattr(self.out, "isatty", lambda: False)() or now - self.at < self.EVERY:
            return
        self.at = now
        self._write("\r\x1b[K" + msg("watching_status", self.lang, files=files, lines=f"{lines:,}",
                                        findings=findings))
        self.shown = True

    def clear(self) -> None:
        if self.shown:
            self._write("\r\x1b[K")
            self.shown = False

    def _write(self, text: str) -> None:
        with contextlib.suppress(OSError, ValueError):
            self.out.write(text)
            self.out.flush()


def parse_duration(text: str) -> float:
    """`600`, `90s`, `10m`, `1.5h`; `0` or `off` turns the limit off."""
    value = text.strip().lower()
    if value in ("0", "off", "none", "no"):
        return 0.0
    m = regex.fullmatch(r"(\d+(?:\.\d+)?)\s*(s|sec|m|min|h|hr)?", value)
    if m is None:
        raise ValueError(Msg("err_duration", text=text))
    unit = {"s": 1, "sec": 1, "m": 60, "min": 60, "h": 3600, "hr": 3600}.get(m.group(2) or "s", 1)
    return float(m.group(1)) * unit
