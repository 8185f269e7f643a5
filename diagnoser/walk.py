"""Walk a job's log folder: which files are logs (per-rank, Ray session, pod, kernel), in what order."""

from __future__ import annotations

import os
from collections.abc import Callable
from pathlib import Path

from .sources import GZIP_MAGIC, Source

SNIFF_BYTES = 8192
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
    if head.startswith(GZIP_MAGIC):
        return False
    return b"\x00" in head


def is_log_name(path: Path) -> bool | None:
    """True for log-like names, False for known non-logs, None when only the content can tell."""
    name = path.name.lower()
    suffixes = [s for s in path.suffixes if not s[1:].isdigit()]
    last = suffixes[-1].lower() if suffixes else ""
    if last in LOG_SUFFIXES or "log" in name or name.startswith(("dmesg", "kern", "syslog", "messages")):
        return True
    if last in NOT_LOGS:
        return False
    return None


def expand(folder: Path, warn: Callable[[str], None]) -> list[Source]:
    """The log files below `folder`, sorted by path; skipped files are summed up in one warning."""
    found: list[Source] = []
    skipped: list[str] = []
    for dirpath, dirnames, filenames in os.walk(folder):
        dirnames[:] = sorted(d for d in dirnames if not d.startswith(".") and d != "__pycache__")
        for fname in sorted(filenames):
            path = Path(dirpath) / fname
            if fname.startswith(".") or not path.is_file():
                continue
            verdict = is_log_name(path)
            if verdict is False or _sniff_binary(path):
                skipped.append(str(path.relative_to(folder)))
                continue
            found.append(Source(str(path), path))
    if skipped:
        sample = ", ".join(skipped[:3]) + (", …" if len(skipped) > 3 else "")
        warn(f"{folder}: skipped {len(skipped)} file(s) that are binary or not logs ({sample})")
    return found
