"""The compiled dataclass code kept in the user's cache (diagnoser/usercache.py): the classes are the same with it as
without it, and a file that is not the user's own, not private, damaged or cut short is not read."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from diagnoser import usercache

ROOT = Path(__file__).resolve().parent.parent

# Every dataclass of the package, each generated method's code and annotations, printed as JSON. With `install`,
# the cached exec is installed first; the run reports how many texts it compiled and how many the file held.
_FINGERPRINT = r"""
import dataclasses, importlib, json, pkgutil, sys
import diagnoser
from diagnoser import usercache
if sys.argv[1] == "install":
    usercache.install()
out = {}
for info in pkgutil.walk_packages(diagnoser.__path__, "diagnoser."):
    if info.name.endswith("__main__") or ".modes.ray" in info.name:
        continue  # ray: an optional extra
    mod = importlib.import_module(info.name)
    for name, cls in vars(mod).items():
        if isinstance(cls, type) and dataclasses.is_dataclass(cls) and cls.__module__ == info.name:
            for meth in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__"):
                f = cls.__dict__.get(meth)
                code = getattr(f, "__code__", None)
                if code is None:
                    continue
                out[f"{info.name}.{name}.{meth}"] = [code.co_code.hex(), repr(code.co_consts), code.co_names,
                    code.co_varnames, code.co_flags, repr(getattr(f, "__annotations__", None)),
                    repr(f.__defaults__), repr(f.__kwdefaults__)]
before = len(usercache._USED)
@dataclasses.dataclass(frozen=True)
class Other:  # another module's class (this script's): compiled as ever, not kept
    a: int
    b: str = "x"
assert Other(1) == Other(1) and len(usercache._USED) == before, "another module's class was kept"
from_file = len(usercache._CODES)
compiled = [t for t in usercache._USED if t not in usercache._CODES]  # the texts this run compiled
usercache.save()
print(json.dumps({"classes": out, "compiled": len(compiled), "from_file": from_file}))
"""


def _run(mode: str, cache: Path, dont_write: bool = False) -> dict[str, object]:
    env = dict(os.environ, XDG_CACHE_HOME=str(cache), PYTHONPATH=str(ROOT))
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if dont_write:
        env["PYTHONDONTWRITEBYTECODE"] = "1"
    done = subprocess.run([sys.executable, "-c", _FINGERPRINT, mode], env=env, capture_output=True, text=True,
                          timeout=120, check=True)
    result: dict[str, object] = json.loads(done.stdout)
    return result


def test_classes_are_the_same_with_the_cached_code(tmp_path: Path) -> None:
    plain = _run("plain", tmp_path)
    first = _run("install", tmp_path)  # compiles every text, writes the file
    second = _run("install", tmp_path)  # takes every text from the file
    assert plain["classes"], "no dataclass found"
    assert first["classes"] == plain["classes"]
    assert second["classes"] == plain["classes"]
    assert first["compiled"] and not first["from_file"]
    assert second["compiled"] == 0 and second["from_file"]


def _write_file(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    _run("install", tmp_path)
    path = usercache.code_path()
    assert path is not None and path.is_file()
    assert path.stat().st_mode & 0o777 == 0o600
    assert usercache._read(path), "the file just written is read"
    return path


def test_a_file_others_may_write_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = _write_file(tmp_path, monkeypatch)
    path.chmod(0o666)
    assert usercache._read(path) == {}
    path.chmod(0o620)
    assert usercache._read(path) == {}


@pytest.mark.parametrize("damage", ["cut", "flip", "head", "not-a-dict"])
def test_a_damaged_file_is_not_read(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, damage: str) -> None:
    path = _write_file(tmp_path, monkeypatch)
    data = path.read_bytes()
    if damage == "cut":
        data = data[: len(data) // 2]
    elif damage == "flip":
        data = data[:-100] + bytes([data[-100] ^ 0xFF]) + data[-99:]
    elif damage == "head":
        data = b"other-magic" + data[data.index(b" "):]
    else:
        import hashlib
        import marshal

        body = marshal.dumps([1, 2, 3])
        data = usercache.MAGIC + b" " + hashlib.sha256(body).hexdigest().encode() + b"\n" + body
    path.write_bytes(data)
    path.chmod(0o600)
    assert usercache._read(path) == {}


def test_written_where_python_writes_no_bytecode(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """PYTHONDONTWRITEBYTECODE keeps __pycache__ out of source trees (containers set it by habit): the cache lives in
    the user's cache folder, as the database cache does, and is written all the same."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    assert _run("install", tmp_path, dont_write=True)["compiled"]
    assert not _run("install", tmp_path, dont_write=True)["compiled"]  # the second run reads what the first wrote
    path = usercache.code_path()
    assert path is not None and path.is_file()


def test_neither_read_nor_written_where_owners_cannot_be_told(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without os.getuid (Windows) no file could ever be trusted: none is read, so none is written either (it would
    be written again on every run)."""
    import dataclasses

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path))
    monkeypatch.delattr(usercache.os, "getuid")
    monkeypatch.setattr(usercache, "_state", {"installed": False, "read": False})
    monkeypatch.setattr(usercache, "_USED", {})
    monkeypatch.setattr(usercache, "_CODES", {})
    before = vars(dataclasses).get("exec")
    try:
        usercache.install()
        usercache._USED["text"] = compile("x = 1", "<string>", "exec")
        usercache.save()
    finally:
        if before is None:
            vars(dataclasses).pop("exec", None)
        else:
            vars(dataclasses)["exec"] = before
    path = usercache.code_path()
    assert path is not None and not path.exists()


def test_exec_without_namespaces_runs_in_its_callers() -> None:
    """The cached exec given no namespaces runs the code where the builtin would: in its caller's globals and locals
    (dataclasses.py always passes its own; anything else calling the module's `exec` gets the same as before)."""
    marker = "usercache-test"
    seen: list[str] = []
    usercache._exec("seen.append(__name__ + ':' + marker)")  # `seen` and `marker` are this function's locals
    assert seen == [f"{__name__}:{marker}"]
    ns: dict[str, object] = {}
    usercache._exec("x = marker", {"marker": marker}, ns)
    assert ns["x"] == marker
