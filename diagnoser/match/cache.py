"""The compiled database, cached on disk: what a start-up would otherwise spend parsing YAML, validating every
signature, deriving each regex's gate and compiling the literal search.

The cache is a file in $XDG_CACHE_HOME/diagnoser (default ~/.cache/diagnoser) named by a key: a SHA-256
over the cache format, the package version and the text of its own code, the Python, `regex` and
Hyperscan versions, and the path and bytes of every signature file read. A change to any of them is a
new key, so a stale entry is never read. The file is a header line (a magic word, the key, the SHA-256
of the rest) and a `marshal` body of plain values only: str, int, float, bool, None, bytes, tuples,
lists and dicts, never pickle. `marshal` runs nothing it reads, and what comes out is checked as it is
turned back into records (`decode`): the schema's own record types by name, the plain values above,
anything else (a code object, a set, a record of another type, a wrong number of fields) is an error and
the database is built again. Each regex's compiled form is kept too, as plain values (the fields `regex`'s own
pickling support describes a pattern by, its compiled code as bytes; see lazyre.py), each marshalled again on its
own, unpacked and checked when its pattern is first compiled: the `regex` module makes the pattern from them again
(one it refuses, or of another shape, is compiled from its text). A form is code for the regex engine, which
does not check it as a parser would (garbage code crashed it here), and the SHA-256 tells a damaged file, not one
written on purpose: the forms are read only from a file of the user's own that no one else may write (the file is
written 0600), as a place anyone else could write to would otherwise let them crash the command; so are the
serialised Hyperscan databases (from any other file they are compiled again from the literals). A truncated or
corrupt file fails the SHA-256 and is rebuilt; a file that cannot be read or written is skipped: the database is
then built as without a cache.
"""

from __future__ import annotations

import contextlib
import dataclasses
import hashlib
import itertools
import marshal
import os
import sys
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from .. import __version__
from ..usercache import folder, private, write_private
from .literals import Gate
from .schema import Condition, Example, FramePattern, MetricClause, RemedyVariant, Signature, Text, WhenTest

FORMAT = 3
MAGIC = b"diagnoser-db3"
KEEP = 8  # cache files kept (other keys: other signature folders, older versions)
_TYPES: dict[str, type] = {c.__name__: c for c in (Signature, Text, Condition, WhenTest, RemedyVariant, Example,
                                                   FramePattern, MetricClause)}


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
        with open(base / f"db-{cache_key[:40]}.bin", "rb") as fh:
            owned = private(os.fstat(fh.fileno()))
            raw = fh.read()
    except OSError:
        return None
    head, _, body = raw.partition(b"\n")
    parts = head.split(b" ")
    if len(parts) != 3 or parts[0] != MAGIC or parts[1] != cache_key.encode():
        return None
    if hashlib.sha256(body).hexdigest().encode() != parts[2]:
        return None  # cut short or changed on disk
    try:
        data = marshal.loads(body)
    except (EOFError, ValueError, TypeError):
        return None
    if type(data) is not dict:
        return None
    if not owned:  # the regexes' compiled forms and the serialised Hyperscan databases are code for an engine
        data.pop("regexes", None)  # that does not check it: only from a file of the user's own
        data["engines"] = {}  # (compiled again from the literals)
    return data


def store(cache_key: str, payload: dict[str, Any]) -> None:
    """Write the payload (atomically: a reader sees the old file or the whole new one)."""
    base = folder()
    if base is None:
        return
    try:
        _check(payload)
        body = marshal.dumps(payload)
    except (TypeError, ValueError):
        return  # a value the cache does not hold (a YAML date): no cache for this database
    head = b" ".join((MAGIC, cache_key.encode(), hashlib.sha256(body).hexdigest().encode()))
    # the user's own to read and write (what load() wants of a file it reads the compiled regex forms from)
    if write_private(base / f"db-{cache_key[:40]}.bin", head + b"\n" + body):
        _prune(base)


def _prune(base: Path) -> None:
    with contextlib.suppress(OSError):
        old = sorted(base.glob("db-*.*"), key=lambda p: p.stat().st_mtime, reverse=True)[KEEP:]
        for p in old:
            p.unlink()


# -- the records: the schema's own dataclasses as [type name, *fields], nothing else ------------------------
_ATOMS = frozenset((str, int, float, bool, type(None)))


def _check(value: Any) -> None:
    """Raise TypeError unless `value` is made of the plain values a cache file may hold."""
    t = type(value)
    if t in _ATOMS or t is bytes:
        return
    if t is tuple or t is list:
        for v in value:
            _check(v)
    elif t is dict:
        for k, v in value.items():
            _check(k)
            _check(v)
    else:
        raise TypeError(f"cannot cache a {t.__name__}")


def encode(value: Any) -> Any:
    """A record as a list [type name, *fields in order], a list as [None, *items]; tuples, dicts and atoms as they
    are (their items encoded)."""
    t = type(value)
    if t in _ATOMS:
        return value
    if t is tuple:
        return tuple(encode(v) for v in value)
    if t is list:
        return [None, *(encode(v) for v in value)]
    if t is dict:
        return {encode(k): encode(v) for k, v in value.items()}
    name = t.__name__
    if _TYPES.get(name) is not t:
        raise TypeError(f"cannot cache a {name}")
    return [name, *(encode(getattr(value, f.name)) for f in dataclasses.fields(value))]


def decode(value: Any) -> Any:
    """What `encode` wrote, checked: anything it cannot have written raises TypeError (or KeyError: a record type
    that is not the schema's), so the caller builds the database again."""
    t = type(value)
    if t in _ATOMS:
        return value
    # an atom is taken as it is where it stands (most values are strings: a call for each cost half the decoding)
    if t is tuple:
        return tuple([v if type(v) in _ATOMS else decode(v) for v in value])
    if t is list:
        if not value:
            raise TypeError("an empty list is no record")
        head = value[0]
        items = [v if type(v) in _ATOMS else decode(v) for v in itertools.islice(value, 1, None)]
        if head is None:
            return items
        if type(head) is not str:
            raise TypeError("a record's type is a name")
        return _TYPES[head](*items)  # TypeError when the fields do not fit
    if t is dict:
        return {decode(k): decode(v) for k, v in value.items()}
    raise TypeError(f"not a value the cache holds: {t.__name__}")


Forms = tuple[str, dict[str, bytes]]  # the `regex` version, and each pattern's compiled form (lazyre.packed_form)


def pack(signatures: Iterable[Signature], gates: dict[str, Gate | None], engines: dict[str, bytes],
         forms: Forms = ("", {})) -> dict[str, Any]:
    """The payload of a database: its signatures, the gates derived for its patterns, the compiled engines, the
    compiled forms of its regexes."""
    return {"signatures": tuple(encode(s) for s in signatures),
            "gates": {k: None if g is None else (g.literals, g.fold, g.also) for k, g in gates.items()},
            "engines": engines, "regexes": forms}


def unpack(data: dict[str, Any]) -> tuple[tuple[Signature, ...], dict[str, Gate | None], dict[str, bytes], Forms]:
    """What `pack` wrote, checked (TypeError, KeyError or ValueError when it is anything else; a regex form's own
    fields are checked where it is used, compiled.remember_forms)."""
    gates = {k: None if g is None else _gate(*g) for k, g in _table(data["gates"]).items()}
    signatures = decode(data["signatures"])
    if type(signatures) is not tuple or not all(type(s) is Signature for s in signatures):
        raise TypeError("not a tuple of signatures")
    engines = _table(data["engines"])
    if not all(type(v) is bytes for v in engines.values()):
        raise TypeError("a compiled engine is bytes")
    version, forms = data.get("regexes", ("", {}))
    if type(version) is not str or not all(type(v) is bytes for v in _table(forms).values()):
        raise TypeError("not the compiled forms of regexes")
    return signatures, gates, engines, (version, forms)


def _table(value: Any) -> dict[str, Any]:
    if type(value) is not dict or not all(type(k) is str for k in value):
        raise TypeError("not a table by name")
    return value


def _gate(literals: Any, fold: Any, also: Any) -> Gate:
    if type(fold) is not bool or not _strings(literals) or type(also) is not tuple or not all(map(_strings, also)):
        raise TypeError("not a gate")
    return Gate(literals, fold, also)


def _strings(value: Any) -> bool:
    return type(value) is tuple and all(type(x) is str for x in value)
