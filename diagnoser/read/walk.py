"""Walk a job's log folder: which files are logs (per-rank, Ray session, pod, kernel) and what each one is.

A file's rank, role and host are read from its name and the folders above it (`log_3.txt`,
`worker-1/dmesg.txt`, `raylet.out`, `dlc-xxx-master-0.log`); lines inherit them unless their own
prefixes say otherwise.
"""

from __future__ import annotations

import os
from collections.abc import Callable, Container
from pathlib import Path

from ..errors import InputError
from ..i18n import Msg
from ..safe import shown_path
from .layout import KERNEL_NAMES, PathIdentity, identify, sibling_identities
from .sources import GZIP_MAGIC, Source, is_utf16

SNIFF_BYTES = 8192
MAX_SKIPPED = 1 << 16  # non-log paths --follow remembers, not to sniff them at every listing
LOG_SUFFIXES = {".log", ".out", ".err", ".txt", ".stdout", ".stderr", ".gz", ".trace"}
NOT_LOGS = {
    ".py", ".pyc", ".so", ".o", ".json", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".md", ".rst", ".html",
    ".png", ".jpg", ".jpeg", ".gif", ".svg", ".pdf", ".pt", ".pth", ".bin", ".safetensors", ".ckpt",
    ".npy", ".npz", ".pkl", ".tar", ".zip", ".whl", ".csv", ".parquet", ".arrow", ".sh", ".lock", ".db",
}
def _sniff_binary(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            head = fh.read(SNIFF_BYTES)
    except OSError:
        return False  # unreadable files are reported when they are opened
    if head.startswith(GZIP_MAGIC) or is_utf16(head):
        return False
    return b"\x00" in head


def is_log_name(path: Path) -> bool | None:
    """True for log-like names, False for known non-logs, None when only the content can tell."""
    name = path.name.lower()
    suffixes = [s for s in path.suffixes if not s[1:].isdigit()]
    last = suffixes[-1].lower() if suffixes else ""
    if last in LOG_SUFFIXES or "log" in name or KERNEL_NAMES.match(name):
        return True
    if last in NOT_LOGS:
        return False
    return None


def describe(path: Path, root: Path | None = None) -> tuple[int | None, str, str | None]:
    """(rank, role, host) as far as the file's name and folders tell."""
    ident = identify(path, root)
    return ident.rank, ident.role, ident.host


def source_of(path: Path, ident: PathIdentity, explicit: bool) -> Source:
    return Source(shown_path(path), path, rank=ident.rank, role=ident.role, host=ident.host, explicit=explicit,
                  local_rank=ident.local_rank, group=ident.group, attempt=ident.attempt, pid=ident.pid,
                  kind=ident.kind)


def expand(folder: Path, warn: Callable[[str], None]) -> list[Source]:
    """The log files below `folder`, sorted by path; skipped files are summed up in one warning."""
    paths: list[Path] = []
    idents: list[PathIdentity] = []
    skipped: list[str] = []
    unreadable: list[str] = []  # folders os.walk could not list: said, never skipped in silence

    def cannot_list(exc: OSError) -> None:
        unreadable.append(f"{shown_path(exc.filename or folder)} ({exc.strerror or exc})")

    for dirpath, dirnames, filenames in os.walk(folder, onerror=cannot_list):
        dirnames[:] = sorted(d for d in dirnames if _walked(d))
        for fname in sorted(filenames):
            path = Path(dirpath) / fname
            if not _candidate(path):
                continue
            ident = identify(path, folder)
            if ident.kind == "log" and (is_log_name(path) is False or _sniff_binary(path)):
                skipped.append(str(path.relative_to(folder)))
                continue
            paths.append(path)
            idents.append(ident)
    found = [source_of(p, ident, False) for p, ident in zip(paths, sibling_identities(paths, idents), strict=True)]
    if skipped:
        sample = ", ".join(skipped[:3]) + (", …" if len(skipped) > 3 else "")
        warn(Msg("warn_skipped_files", path=folder, n=len(skipped), sample=sample))
    if unreadable:
        sample = ", ".join(unreadable[:3]) + (", …" if len(unreadable) > 3 else "")
        warn(Msg("warn_unreadable_dirs", n=len(unreadable), sample=sample))
    return found


def _walked(dirname: str) -> bool:
    return not dirname.startswith(".") and dirname != "__pycache__"


def _candidate(path: Path) -> bool:
    name = path.name
    return not name.startswith(".") and not name.endswith(".expected.yaml") and path.is_file()


def follow_walk(folder: Path, known: Container[Path], skipped: set[Path],
                cannot_list: Callable[[str, str], None]) -> list[Path]:
    """The log files below `folder` for `--follow`'s listing, again and again: the same rules as `expand`, but a
    path `known` (followed already) or `skipped` (not a log, said once) is not looked at again."""
    found: list[Path] = []

    def unlisted(exc: OSError) -> None:
        cannot_list(shown_path(exc.filename or folder), str(exc.strerror or exc))

    for dirpath, dirnames, filenames in os.walk(folder, onerror=unlisted):
        dirnames[:] = sorted(d for d in dirnames if _walked(d))
        for fname in sorted(filenames):
            path = Path(dirpath) / fname
            if path in known:
                found.append(path)
            elif path not in skipped and _candidate(path):
                if identify(path, folder).kind == "log" and (is_log_name(path) is False or _sniff_binary(path)):
                    if len(skipped) < MAX_SKIPPED:
                        skipped.add(path)
                    continue
                found.append(path)
    return found


def file_sources(paths: list[Path]) -> list[Source]:
    """Sources for the paths named on the command line (folders are expanded by the folder walk)."""
    out: list[Source] = []
    for p in paths:
        if str(p) == "-":
            out.append(Source("<stdin>", None))
        elif not os.path.lexists(p):
            raise InputError(Msg("err_no_such_path", path=p))
        else:
            out.append(source_of(p, identify(p) if p.is_file() else PathIdentity(), True))
    return out
