"""diagnoser: read the logs of a failed RL-for-LLM training job and say what went wrong and what to change."""

from __future__ import annotations

import gc

__version__ = "0.1.0"

_gc_paused = False


def pause_gc() -> None:
    """The command's start-up (its modules, their classes, the signature database) makes tens of thousands of objects
    that live as long as the process and no garbage worth a cycle collection: the cyclic collector waits until its
    first database is built (build_database calls `started`). About 2% of a 40-line diagnosis here (issue 13)."""
    global _gc_paused
    if gc.isenabled():
        gc.disable()
        _gc_paused = True


def started() -> None:
    """The database is built: what exists now stays for the whole run, so later collections leave it out
    (gc.freeze), and the collector runs again. Nothing when `pause_gc` did not pause it (a caller in-process)."""
    global _gc_paused
    if _gc_paused:
        _gc_paused = False
        gc.freeze()
        gc.enable()
