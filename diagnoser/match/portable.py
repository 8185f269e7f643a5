"""A compiled database as plain data that another process turns back into the same database in a fraction of a
second: the database cache's own form (the signatures as records, each pattern's gate, the compiled literal
search). `diagnose --ray` sends it to every node, which would otherwise validate and compile every signature
again (seconds of CPU per node, on nodes that are busy training)."""

from __future__ import annotations

from .database import Database, _from_cache, _to_cache, build_database
from .literals import Gate


def portable(db: Database) -> dict[str, object]:
    """`db` as plain data (signatures, gates, compiled engines) for `rebuild`."""
    gates: dict[str, Gate | None] = {}
    build_database([cs.sig for cs in db.signatures], check_refs=False, checked=False, gates=gates)
    return _to_cache(db, gates)


def rebuild(data: dict[str, object]) -> Database:
    """The database `portable` described: its regexes were checked where it was built, and compile on first use;
    a compiled search engine this machine cannot load is compiled again here."""
    return _from_cache(data)
