"""The on-disk cache of the compiled database (match/cache.py, issue 13): what it holds comes back as it was
built, and a cache file that is cut short, changed, or holds anything but plain values and the schema's own
records is never trusted: the database is built again from the signature files."""

from __future__ import annotations

import hashlib
import marshal
from pathlib import Path
from typing import Any

import pytest

from diagnoser.match import cache
from diagnoser.match.database import builtin_root, load_database, load_signatures, signature_files
from diagnoser.search.engine import engine_name


@pytest.fixture(scope="module")
def built(tmp_path_factory: pytest.TempPathFactory) -> tuple[str, bytes, list[Any]]:
    """A cache written by a first load: (key, the file's bytes, the signatures as read from YAML)."""
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("XDG_CACHE_HOME", str(tmp_path_factory.mktemp("dbcache")))
        load_database()
        key = cache.key(signature_files([builtin_root()]), engine_name())
        path = _path(key)
        assert path.is_file()
        return key, path.read_bytes(), load_signatures()


def _path(key: str) -> Path:
    folder = cache.folder()
    assert folder is not None
    return folder / f"db-{key[:40]}.bin"


def _write(key: str, body: bytes) -> None:
    head = b" ".join((cache.MAGIC, key.encode(), hashlib.sha256(body).hexdigest().encode()))
    path = _path(key)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(head + b"\n" + body)


def _body(raw: bytes) -> bytes:
    return raw.partition(b"\n")[2]


def test_the_cache_gives_back_the_signatures_and_gates_it_was_built_from(
        built: tuple[str, bytes, list[Any]], tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    key, raw, fresh = built
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    _write(key, _body(raw))
    data = cache.load(key)
    assert data is not None
    signatures, gates, engines, _forms = cache.unpack(data)
    assert list(signatures) == fresh and gates and all(type(v) is bytes for v in engines.values())
    db = load_database()
    assert [cs.sig for cs in db.signatures] == fresh
    assert [r.gate for r in db.rules] == [gates["\0".join((r.pattern.pattern, *d))]
                                          for r, d in zip(db.rules, _declared(db), strict=True)]


def _declared(db: Any) -> list[tuple[str, ...]]:
    out = []
    for cs in db.signatures:
        for i in range(len(cs.sig.any)):
            out.append(tuple(cs.sig.any_literals[i]) if i < len(cs.sig.any_literals) else ())
    return out


def _tampered(payload: dict[str, Any], how: str) -> dict[str, Any]:
    sigs = list(payload["signatures"])
    first = list(sigs[0])
    if how == "code object in a record":
        first[-4] = (compile("raise SystemExit(9)", "cache", "exec"),)  # a field of the first signature
    elif how == "a set in a record":
        first[-4] = frozenset({"x"})
    elif how == "a record of another type":
        first[0] = "Database"
    elif how == "a field too many":
        first.append("extra")
    elif how == "a gate of the wrong shape":
        payload = {**payload, "gates": {k: ("not", "a", "gate") for k in payload["gates"]}}
    elif how == "an engine that is text":
        payload = {**payload, "engines": {k: "text" for k in payload["engines"]}}
    elif how == "regex forms that are text":
        payload = {**payload, "regexes": (payload["regexes"][0], {k: "text" for k in payload["regexes"][1]})}
    sigs[0] = first
    return {**payload, "signatures": tuple(sigs)}


@pytest.mark.parametrize("how", ["code object in a record", "a set in a record", "a record of another type",
                                 "a field too many", "a gate of the wrong shape", "an engine that is text",
                                 "regex forms that are text"])
def test_a_cache_holding_anything_else_is_refused(built: tuple[str, bytes, list[Any]], tmp_path: Path,
                                                   monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    key, raw, _fresh = built
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    payload = marshal.loads(_body(raw))
    assert cache.unpack(payload)  # the untouched payload is accepted
    _write(key, marshal.dumps(_tampered(payload, how)))  # a correct checksum: the content itself is checked
    data = cache.load(key)
    assert data is not None
    with pytest.raises((TypeError, KeyError, ValueError)):
        cache.unpack(data)


@pytest.mark.parametrize("how", ["cut short", "a byte changed", "another key", "no header", "empty"])
def test_a_damaged_cache_file_is_not_read(built: tuple[str, bytes, list[Any]], tmp_path: Path,
                                          monkeypatch: pytest.MonkeyPatch, how: str) -> None:
    key, raw, _fresh = built
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    path = _path(key)
    path.parent.mkdir(parents=True)
    damaged = {"cut short": raw[: len(raw) // 2], "a byte changed": raw[:-100] + bytes([raw[-100] ^ 1]) + raw[-99:],
               "another key": raw.replace(key.encode(), ("0" * 64).encode(), 1), "no header": _body(raw),
               "empty": b""}[how]
    path.write_bytes(damaged)
    assert cache.load(key) is None
    path.write_bytes(raw)
    assert cache.load(key) is not None


def test_a_refused_cache_is_built_again_and_rewritten(built: tuple[str, bytes, list[Any]], tmp_path: Path,
                                                      monkeypatch: pytest.MonkeyPatch) -> None:
    key, raw, fresh = built
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    _write(key, marshal.dumps(_tampered(marshal.loads(_body(raw)), "code object in a record")))
    db = load_database()
    assert [cs.sig for cs in db.signatures] == fresh
    data = cache.load(key)
    assert data is not None and list(cache.unpack(data)[0]) == fresh  # the good payload replaced the bad one


def test_the_key_follows_the_bytes_of_the_signature_files() -> None:
    files = signature_files([builtin_root()])
    assert cache.key(files, "x") == cache.key(list(files), "x")
    changed = [(files[0][0], files[0][1] + b"\n"), *files[1:]]
    assert cache.key(changed, "x") != cache.key(files, "x") != cache.key(files, "y")


def test_the_signature_files_are_named_and_shown_as_pathlib_names_them(tmp_path: Path,
                                                                        monkeypatch: pytest.MonkeyPatch) -> None:
    # signature_files builds the names as strings (pathlib cost two thirds of reading 590 files): each name in the
    # key and each name shown in an error must be what Path gives, under an absolute or a relative root
    from diagnoser.match import sigfile

    root = tmp_path / "mine"
    (root / "a" / "b").mkdir(parents=True)
    for rel in ("x.yaml", "a/y.yml", "a/b/z.yaml", "a/skip.expected.yaml", "a/notes.txt", "a/0.yaml"):
        (root / rel).write_text("id: x\n")
    seen: list[tuple[str, str]] = []
    monkeypatch.setattr(sigfile, "read_signature_file", lambda p, shown: seen.append((str(p), shown)) or b"")
    monkeypatch.chdir(tmp_path)
    for given in (root, Path("mine"), Path("./mine/"), Path(".")):
        if given == Path("."):
            monkeypatch.chdir(root)
        seen.clear()
        names = [name for name, _ in signature_files([Path("/nonexistent-root"), given])]
        paths = [given / rel for rel in ("x.yaml", "a/0.yaml", "a/y.yml", "a/b/z.yaml")]  # os.walk's order, sorted
        assert names == [f"1:{p}" for p in paths]
        assert seen == [(str(p), str(Path(given.name) / p.relative_to(given))) for p in paths]
        assert seen[-1][1] == ("a/b/z.yaml" if given == Path(".") else "mine/a/b/z.yaml")


def test_a_folder_that_is_not_one_is_told_before_any_file_is_read(tmp_path: Path) -> None:
    # load_checked reads every signature file once for both cache keys: a --signatures that is no folder is still the
    # error told, as it was when the database was loaded first, whatever the other folder holds
    from diagnoser.errors import SignatureError
    from diagnoser.modes.examples import load_checked

    bad = tmp_path / "bad" / "nccl"
    bad.mkdir(parents=True)
    (bad / "big.yaml").write_bytes(b"#" * (2 << 20))
    for order in ([tmp_path / "bad", tmp_path / "none"], [tmp_path / "none", tmp_path / "bad"]):
        with pytest.raises(SignatureError) as err:
            load_checked(order)
        assert str(tmp_path / "none") in str(err.value), err.value
