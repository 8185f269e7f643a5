"""Shared fixtures: the built-in database, paths of the project."""

from __future__ import annotations

import signal
from pathlib import Path

import pytest

from diagnoser.match.database import Database, load_database

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
SIGNATURES = ROOT / "signatures"
SHARED_IDS = ROOT.parent / "shared" / "signature-ids.md"

# A runner started in the background by a non-interactive shell (`nohup ... &`) ignores SIGINT, and so would every
# diagnose a test starts: the tests that stop one with Ctrl-C then saw it run on (five failed, one left a worker
# waiting on a FIFO). A handler, unlike an ignored signal, is not inherited across exec: the commands get the default.
if signal.getsignal(signal.SIGINT) is signal.SIG_IGN:
    signal.signal(signal.SIGINT, signal.default_int_handler)


@pytest.fixture(scope="session")
def db() -> Database:
    return load_database()


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Search plans are cached under $XDG_CACHE_HOME; the tests keep theirs to themselves."""
    import os
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache"))
