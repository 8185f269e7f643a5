"""Reading a signature file safely: a regular file of bounded size, UTF-8, no YAML aliases."""

from __future__ import annotations

import os
import stat
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from ..errors import SignatureError
from ..i18n import Msg

MAX_FILE_BYTES = 1 << 20  # a signature file is a few KiB; anything bigger is not one


def read_signature_file(path: str | Path, shown: str) -> bytes:
    """The bytes of a signature file: a regular file of at most MAX_FILE_BYTES, or a SignatureError.

    Opened without blocking (a FIFO would wait for a writer forever) and checked on the open handle (a link to
    /dev/zero is a device, read whole it never ends); never more than the limit is read.
    """
    try:
        fd = os.open(path, os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0))
    except OSError as exc:
        raise SignatureError(shown, "", Msg("err_sig_read", reason=exc.strerror or exc)) from None
    try:
        st = os.fstat(fd)
        if not stat.S_ISREG(st.st_mode):
            raise SignatureError(shown, "", Msg("err_sig_not_file"))
        if st.st_size > MAX_FILE_BYTES:
            raise SignatureError(shown, "", Msg("err_sig_too_big", kib=MAX_FILE_BYTES // 1024))
        chunks: list[bytes] = []
        size = 0
        while size <= MAX_FILE_BYTES:
            chunk = os.read(fd, MAX_FILE_BYTES + 1 - size)
            if not chunk:
                break
            chunks.append(chunk)
            size += len(chunk)
        if size > MAX_FILE_BYTES:  # it grew while read
            raise SignatureError(shown, "", Msg("err_sig_too_big", kib=MAX_FILE_BYTES // 1024))
        return b"".join(chunks)
    except OSError as exc:
        raise SignatureError(shown, "", Msg("err_sig_read", reason=exc.strerror or exc)) from None
    finally:
        os.close(fd)


def signature_text(raw: bytes, shown: str) -> str:
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise SignatureError(shown, "", Msg("err_sig_utf8", at=exc.start)) from None


def no_aliases(text: str, shown: str, loader: Any) -> None:
    """An alias repeats a part of the file wherever it is used: 869 bytes of nested aliases made a finding of
    2.1 GB. No signature needs one, so none is allowed (checked on the parser's events, before anything is
    built; a YAMLError goes to the caller, which reports it)."""
    import yaml

    if "*" in text and any(isinstance(e, yaml.AliasEvent) for e in yaml.parse(text, Loader=loader)):
        raise SignatureError(shown, "", Msg("err_sig_alias"))


def yaml_files(root: Path) -> Iterator[Path]:
    """The signature files under `root`, in reading order."""
    return map(Path, yaml_paths(root))


def yaml_paths(root: Path) -> Iterator[str]:
    """The signature files under `root`, in reading order, as the strings `str(path)` would give."""
    here = str(root) == "."  # pathlib names what is under "." without the "./" os.walk puts in front
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            if name.endswith((".yaml", ".yml")) and not name.endswith(".expected.yaml"):
                path = os.path.join(dirpath, name)
                yield path[2:] if here else path


def display_name(path: str | Path, root: Path) -> str:
    """How a signature file under `root` (one yaml_paths gave) is named in messages: the root folder's name, then its
    path below it, as pathlib gives them (made as strings: pathlib took two thirds of listing and reading 590 files)."""
    path, top = str(path), str(root)
    return os.path.join(root.name, path if top == "." else path[len(top):].lstrip(os.sep))


def signature_files(roots: Iterable[Path]) -> list[tuple[str, bytes]]:
    """(name, bytes) of every signature file under `roots`, in reading order: what a cache key covers."""
    return [(f"{n}:{p}", read_signature_file(p, display_name(p, root))) for n, root in enumerate(roots)
            for p in yaml_paths(root)]
