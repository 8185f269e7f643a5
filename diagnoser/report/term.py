"""The one way a terminal console is made: plain text when not a terminal, log text never read as emoji, lines
never soft-wrapped by the terminal (the renderers wrap them). A reader that goes away (`| head`) is handled below
it, by the command's output (diagnoser/output.py)."""

from __future__ import annotations

import os
from typing import TextIO

from rich.console import Console

from ..safe import to_int

MIN_WIDTH, MAX_WIDTH = 40, 1000  # COLUMNS=0 printed an empty report; a huge one pads every line to it


def report_width(width: int | None = None) -> int | None:
    """The width asked for (or COLUMNS), within MIN_WIDTH..MAX_WIDTH; None: the terminal's (rich's default)."""
    if width is None:
        width = to_int(os.environ.get("COLUMNS"))
    return None if width is None else min(max(width, MIN_WIDTH), MAX_WIDTH)


def terminal(out: TextIO, color: bool, width: int | None = None) -> Console:
    return Console(file=out, no_color=not color, force_terminal=color if color else None, highlight=False,
                   width=report_width(width), emoji=False, soft_wrap=False)
