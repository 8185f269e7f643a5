"""The user's cache folder ($XDG_CACHE_HOME/diagnoser, default ~/.cache/diagnoser), what may be read from it, and
the compiled code of the functions `dataclasses` writes for the package's classes (issue 13: start-up).

Every `@dataclass` writes the text of its `__init__`, `__repr__`, `__eq__`, ... and compiles it with `exec` (the
standard library's dataclasses.py): the package's ~80 classes spent about 50 ms of each start compiling those
texts. `install()` gives the dataclasses module an `exec` of its own, which takes the code of a text it has seen
before from a cache file instead of compiling the text again; `save()` writes what was compiled new. The code of a
text is what compiling that text gives (with the flags `exec` gives it), so every class is the same as without the
cache. The file is code Python runs, as a `__pycache__` file is: it is read only when it is the user's own and no
one else may write it (it is written 0600), for the same Python build (the file is named by it), and whole (a
SHA-256 of the rest heads it); any other file is not read, and each text is compiled as without a cache. It is
written like the database cache beside it, also where PYTHONDONTWRITEBYTECODE is set: that variable keeps
`__pycache__` folders out of source trees (containers set it by habit, and pip compiles an installed package's
bytecode all the same); this file lives in the user's cache folder.
"""

from __future__ import annotations

import contextlib
import hashlib
import marshal
import os
import sys
import zlib
from pathlib import Path
from types import CodeType
from typing import Any

MAGIC = b"diagnoser-code1"
MAX_TEXTS = 4096  # texts kept in the file (the package has a few hundred; other modes add theirs)


def folder() -> Path | None:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "diagnoser" if base and base != "~" else None


def private(st: os.stat_result) -> bool:
    """Whether a file is the user's own and no one else may write it (what the cache's code, the compiled regex
    forms and Hyperscan databases are read from: a SHA-256 tells a damaged file, not one written on purpose; such a
    file could only be the user's own doing)."""
    getuid = getattr(os, "getuid", None)
    return getuid is not None and st.st_uid == getuid() and not st.st_mode & 0o022


def write_private(path: Path, data: bytes) -> bool:
    """Write `data` to `path` atomically (a reader sees the old file or the whole new one), the user's own to read
    and write (0600). False when it could not be written."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        with contextlib.suppress(FileNotFoundError):
            tmp.unlink()  # left by a process of the same id that was killed while writing
        with open(os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600), "wb") as fh:
            fh.write(data)
        os.replace(tmp, path)
    except OSError:
        with contextlib.suppress(OSError):
            tmp.unlink()
        return False
    return True


_PACKAGE = (__package__ or "diagnoser").split(".")[0]
_CODES: dict[str, CodeType] = {}  # text -> its code, as read from the file
_USED: dict[str, CodeType] = {}  # the texts this run compiled or took from the file
_state = {"installed": False, "read": False}


def code_path() -> Path | None:
    """The file of this Python build's compiled dataclass code."""
    base = folder()
    build = zlib.crc32(f"{sys.version}|{sys.implementation.cache_tag}".encode())
    return None if base is None else base / f"code-{sys.implementation.cache_tag}-{build:08x}.bin"


def _read(path: Path) -> dict[str, CodeType]:
    try:
        with open(path, "rb") as fh:
            if not private(os.fstat(fh.fileno())):
                return {}
            raw = fh.read()
    except OSError:
        return {}
    head, _, body = raw.partition(b"\n")
    if head != MAGIC + b" " + hashlib.sha256(body).hexdigest().encode():
        return {}
    try:
        data = marshal.loads(body)
    except (EOFError, ValueError, TypeError):
        return {}
    if type(data) is not dict:
        return {}
    return {k: v for k, v in data.items() if type(k) is str and type(v) is CodeType}


def _ours(module: object) -> bool:
    return type(module) is str and (module == _PACKAGE or module.startswith(_PACKAGE + "."))


def _exec(source: Any, globals_: Any = None, locals_: Any = None, /) -> None:
    """`exec` as dataclasses.py calls it: the code of a text written for one of the package's classes (run in its
    module's globals) comes from the cache when it holds it; any other text is compiled as ever, and not kept."""
    if globals_ is None:  # what exec() without them runs in: its caller's (dataclasses.py always gives its own)
        caller = sys._getframe(1)
        globals_ = caller.f_globals
        if locals_ is None:
            locals_ = caller.f_locals
    if type(source) is str and type(globals_) is dict and _ours(globals_.get("__name__")):
        code = _USED.get(source) or _CODES.get(source)
        if code is None:
            # what exec() compiles a text to: no flags of this module (its `from __future__ import annotations`)
            code = compile(source, "<string>", "exec", dont_inherit=True)
        _USED[source] = code
        source = code
    exec(source, globals_, locals_)


def install() -> None:
    """Give the dataclasses module the cached `exec` (once); read the file now."""
    if _state["installed"]:
        return
    import dataclasses

    _state["installed"] = True
    path = code_path()
    if path is not None and hasattr(os, "getuid"):  # where a file's owner cannot be told (Windows), none is read
        _CODES.update(_read(path))
        _state["read"] = True
    vars(dataclasses)["exec"] = _exec  # found before the builtin by dataclasses.py's own code


def save() -> None:
    """Write the file again when this run compiled a text it did not hold (never where none could be read)."""
    path = code_path()
    if not _state["read"] or path is None or all(t in _CODES for t in _USED):
        return
    keep = dict(_USED)
    for text, code in _CODES.items():  # the texts of other modes' classes too, as far as there is room
        if len(keep) >= MAX_TEXTS:
            break
        keep.setdefault(text, code)
    try:
        body = marshal.dumps(keep)
    except ValueError:
        return
    if write_private(path, MAGIC + b" " + hashlib.sha256(body).hexdigest().encode() + b"\n" + body):
        _CODES.update(keep)
