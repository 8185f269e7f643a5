"""Shared fixtures: the built-in database, paths of the project."""

from __future__ import annotations

from pathlib import Path

import pytest

from diagnoser.match.database import Database, load_database

ROOT = Path(__file__).resolve().parent.parent
SAMPLES = ROOT / "sample_logs"
SIGNATURES = ROOT / "signatures"
SHARED_IDS = ROOT.parent / "shared" / "signature-ids.md"


@pytest.fixture(scope="session")
def db() -> Database:
    return load_database()


@pytest.fixture(autouse=True, scope="session")
def _private_cache(tmp_path_factory: pytest.TempPathFactory) -> None:
    """Search plans are cached under $XDG_CACHE_HOME; the tests keep theirs to themselves."""
    import os
    os.environ["XDG_CACHE_HOME"] = str(tmp_path_factory.mktemp("cache"))
