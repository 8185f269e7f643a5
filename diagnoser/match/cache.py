"""The compiled database, cached on disk: what a start-up would otherwise spend parsing YAML, validating every
signature, deriving each regex's gate and compiling the literal search.

The cache is a file in $XDG_CACHE_HOME/diagnoser (default ~/.cache/diagnoser) named by a key: a SHA-256
over the cache format, the package version and the text of its own code, the Python, `regex` and
Hyperscan versions, and the path and bytes of every signature file read. A change to any of them is a
new key, so a stale entry is never read. The file is JSON in a format this module alone writes: the
signatures as plain records of the schema's own types (no object of any other type can come out of it),
the gates, and the search engines' compiled databases; a header holds the SHA-256 of the rest, so a
truncated or corrupt file is noticed and rebuilt. A file that cannot be read or written is skipped:
the database is then built as without a cache.
"""

from __future__ import annotations

import base64
import contextlib
import dataclasses
import hashlib
import json
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .. import __version__
from .schema import Condition, Example, FramePattern, MetricClause, RemedyVariant, Signature, Text, WhenTest

FORMAT = 1
MAGIC = b"diagnoser-db"
KEEP = 8  # cache files kept (other keys: other signature folders, older versions)
_TYPES: dict[str, type] = {c.__name__: c for c in (Signature, Text, Condition, WhenTest, RemedyVariant, Example,
                                                   FramePattern, MetricClause)}


def folder() -> Path | None:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "diagnoser" if base and base != "~" else None


def _version(name: str) -> str:
    """The version of a module already imported (reading package metadata costs more than the whole lookup)."""
    return str(getattr(sys.modules.get(name), "__version__", "-"))


def _code_digest() -> bytes:
    """The package's own code and data files: a checkout that changed them is another build."""
    digest = hashlib.sha256()
    stack = [os.path.dirname(os.path.dirname(os.path.abspath(__file__)))]  # the diagnoser package
    while stack:
        node = stack.pop()
        for child in sorted(os.scandir(node), key=lambda c: c.name):
            if child.is_dir():
                if child.name not in ("__pycache__", "signatures"):
                    stack.append(child.path)
            elif child.name.endswith((".py", ".txt")):
                with open(child.path, "rb") as fh:
                    digest.update(child.name.encode() + b"\0" + fh.read() + b"\0")
    return digest.digest()


def key(files: Iterable[tuple[str, bytes]], engine: str) -> str:
    """The cache key of a database built from `files` (name, bytes, in the order they are read)."""
    digest = hashlib.sha256()
    for part in (str(FORMAT), __version__, sys.version, _version("regex"), _version("hyperscan"), engine):
        digest.update(part.encode() + b"\0")
    digest.update(_code_digest())
    for name, data in files:
        digest.update(name.encode("utf-8", "surrogateescape") + b"\0" + hashlib.sha256(data).digest())
    return digest.hexdigest()


def load(cache_key: str) -> dict[str, Any] | None:
    """The payload stored under `cache_key`, or None when there is none or it is not intact."""
    base = folder()
    if base is None:
        return None
    try:
        raw = (base / f"db-{cache_key[:40]}.json").read_bytes()
    except OSError:
        return None
    head, _, body = raw.partition(b"\n")
    parts = head.split(b" ")
    if len(parts) != 3 or parts[0] != MAGIC or parts[1] != cache_key.encode():
        return None
    if hashlib.sha256(body).hexdigest().encode() != parts[2]:
        return None  # cut short or changed on disk
    try:
        data = json.loads(body)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def store(cache_key: str, payload: dict[str, Any]) -> None:
    """Write the payload (atomically: a reader sees the old file or the whole new one)."""
    base = folder()
    if base is None:
        return
    try:
        body = json.dumps(payload, ensure_ascii=False, separators=(",", ":")).encode("utf-8")
    except (TypeError, ValueError):
        return  # a value JSON cannot hold (a YAML date): no cache for this database
    head = b" ".join((MAGIC, cache_key.encode(), hashlib.sha256(body).hexdigest().encode()))
    path = base / f"db-{cache_key[:40]}.json"
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        base.mkdir(parents=True, exist_ok=True)
        tmp.write_bytes(head + b"\n" + body)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        return
    _prune(base)


def _prune(base: Path) -> None:
    with contextlib.suppress(OSError):
        old = sorted(base.glob("db-*.json"), key=lambda p: p.stat().st_mtime, reverse=True)[KEEP:]
        for p in old:
            p.unlink()


# -- the records: tagged JSON of the schema's own dataclasses, nothing else ------------------------------
def encode(value: Any) -> Any:
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        name = type(value).__name__
        if _TYPES.get(name) is not type(value):
            raise TypeError(f"not a record this cache stores: {name}")
        return {"@": name, **{f.name: encode(getattr(value, f.name)) for f in dataclasses.fields(value)}}
    if isinstance(value, tuple):
        return {"@t": [encode(v) for v in value]}
    if isinstance(value, list):
        return [encode(v) for v in value]
    if isinstance(value, dict):
        return {"@d": [[encode(k), encode(v)] for k, v in value.items()]}
    if value is None or isinstance(value, (str, int, float, bool)):
        return value
    raise TypeError(f"cannot cache a {type(value).__name__}")


def decode(value: Any) -> Any:
    if isinstance(value, list):
        return [decode(v) for v in value]
    if isinstance(value, dict):
        if "@t" in value:
            return tuple(decode(v) for v in value["@t"])
        if "@d" in value:
            return {decode(k): decode(v) for k, v in value["@d"]}
        cls = _TYPES[value["@"]]  # KeyError for anything else: the caller rebuilds
        return cls(**{k: decode(v) for k, v in value.items() if k != "@"})
    return value


def blob(data: bytes) -> str:
    return base64.b64encode(data).decode("ascii")


def unblob(text: str) -> bytes:
    return base64.b64decode(text.encode("ascii"), validate=True)
