"""Walk a job's log folder: which files are logs (per-rank, Ray session, pod, kernel) and what each one is.

A file's rank, role and host are read from its name and the folders above it (`log_3.txt`,
`worker-1/dmesg.txt`, `raylet.out`, `dlc-xxx-master-0.log`); lines inherit them unless their own
prefixes say otherwise.
"""

from __future__ import annotations

import os
import re
from collections.abc import Callable
from pathlib import Path

from ..errors import InputError
from ..i18n import Msg
from ..safe import shown_path
from .sources import GZIP_MAGIC, Source

SNIFF_BYTES = 8192
LOG_SUFFIXES = {".log", ".out", ".err", ".txt", ".stdout", ".stderr", ".gz", ".trace"}
NOT_LOGS = {
    ".py", ".pyc", ".so", ".o", ".json", ".yaml", ".yml", ".toml", ".ini", ".cfg", ".md", ".rst", ".html",
    ".png", ".jpg", ".jpeg", ".gif", ".svg", ".pdf", ".pt", ".pth", ".bin", ".safetensors", ".ckpt",
    ".npy", ".npz", ".pkl", ".tar", ".zip", ".whl", ".csv", ".parquet", ".arrow", ".sh", ".lock", ".db",
}
KERNEL_NAMES = re.compile(r"^(?:dmesg|kern|kernel|syslog|messages|journal)", re.I)
RAY_NAMES = re.compile(r"^(?:raylet|gcs_server|python-core-(?:driver|worker)|job-driver|dashboard|monitor|"
                       r"log_monitor|runtime_env|worker-[0-9a-f]{8,})", re.I)
HOST_RE = re.compile(r"(?<![\w.-])((?:[A-Za-z0-9][\w.-]*?-)?(?:master|worker|node|host)-?\d+|"
                     r"\d{1,3}(?:\.\d{1,3}){3})(?![\w])", re.I)
RANK_RES = (
    re.compile(r"log_rank_.*?_(\d+)_\d+", re.I),  # ROLL: log_rank_<worker>_<rank>_<world>.log
    re.compile(r"(?:^|[_.\-])(?:log|rank|local_rank|proc|gpu)[_\-]?(\d+)(?=[_.\-]|$)", re.I),
)


def _sniff_binary(path: Path) -> bool:
    try:
        with open(path, "rb") as fh:
            head = fh.read(SNIFF_BYTES)
    except OSError:
        return False  # unreadable files are reported when they are opened
    if head.startswith(GZIP_MAGIC):
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
    name = path.name
    rel = path.relative_to(root) if root is not None and path.is_relative_to(root) else Path(name)
    role = "worker"
    if KERNEL_NAMES.match(name):
        role = "kernel"
    elif RAY_NAMES.match(name):
        role = "ray"
    elif re.search(r"driver|master|head", name, re.I):
        role = "driver"
    host = None
    for part in reversed(rel.parts):
        m = HOST_RE.search(part)
        if m is not None:
            host = m.group(1)
            break
    rank = None
    if role != "kernel":
        for rx in RANK_RES:
            m = rx.search(name)
            if m is not None:
                rank = int(m.group(1))
                break
    return rank, role, host


def expand(folder: Path, warn: Callable[[str], None]) -> list[Source]:
    """The log files below `folder`, sorted by path; skipped files are summed up in one warning."""
    found: list[Source] = []
    skipped: list[str] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
        for fname in sorted(filenames):
            path = Path(dirpath) / fname
            if fname.startswith(".") or fname.endswith(".expected.yaml") or not path.is_file():
                continue
            verdict = is_log_name(path)
            if verdict is False or _sniff_binary(path):
                skipped.append(str(path.relative_to(folder)))
                continue
            rank, role, host = describe(path, folder)
            found.append(Source(shown_path(path), path, rank=rank, role=role, host=host, explicit=False))
    if skipped:
        sample = ", ".join(skipped[:3]) + (", …" if len(skipped) > 3 else "")
        warn(Msg("warn_skipped_files", path=folder, n=len(skipped), sample=sample))
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
            rank, role, host = describe(p) if p.is_file() else (None, "worker", None)
            out.append(Source(shown_path(p), p, rank=rank, role=role, host=host))
    return out
