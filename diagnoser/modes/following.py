"""`diagnose --follow`: the files followed as they grow, their new lines diagnosed live. What a file gained is
read in pieces of whole lines and goes through the fast search's gate as it was read (LiveSession.feed_piece),
as batch and `diagnose run` read theirs: only the lines that can matter reach the per-line path."""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path

from ..read.follow import Follower
from ..read.startmarks import Marks
from .live import LiveSession


def follow(paths: list[Path], session: LiveSession, from_start: bool, warn: Callable[[str], None],
           poll: float = 0.25, start: Marks | None = None) -> None:
    """Follow until interrupted (KeyboardInterrupt) or told to stop (StopLive); `start`: where each file ended when
    the command started (read from there, so nothing written while it started is lost)."""
    follower = Follower(paths, from_start, warn, start=start)
    try:
        while True:
            got_any = False
            for tail, first, got in follower.poll():
                got_any = True
                session.feed_piece(tail.name, first, got, tail.rank, tail.host, tail.role)
            session.watching(len(follower.tails))
            session.tick()
            if not got_any:
                # sooner when polling is cheap (a rotated file may live 50 ms), or when a stream goes quiet
                time.sleep(min(poll, follower.pause(), session.until_quiet(time.monotonic())))
    finally:
        follower.close()

