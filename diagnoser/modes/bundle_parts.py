"""The pieces of a maintainer's bundle that come from the log files themselves: each rank's first error with the
lines around it, and the flight-recorder / py-spy artifacts in the job's folders. Redacted where they are read
(on each node, with --ray), bounded in size, and never read through a link that leaves the folders given or from
a file that holds credentials.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from dataclasses import dataclass, field
from itertools import islice
from pathlib import Path

from ..judge.findings import Location
from ..lazyre import lazy_re
from ..read.sources import Source, decode, open_binary
from ..report.redact import Redactor

CONTEXT_BEFORE = 20
CONTEXT_AFTER = 10
LINE_CHARS = 500
MAX_EXCERPTS = 64
MAX_ARTIFACT = 8 << 20  # bytes of one artifact kept
MAX_ARTIFACTS_BYTES = 24 << 20
MAX_ARTIFACTS = 64
MAX_WALK = 20_000  # files looked at for artifacts
SNIFF = 4096

# Files that hold credentials, never read into a bundle whatever folder they are in: Ray's token
# (~/.ray/auth_token), netrc (where wandb keeps its key), Hugging Face's token, cloud and git credentials, env
# files, private keys.
SECRET_FILES = lazy_re(r"^(?:auth_token|\.?_?netrc|token|credentials|\.git-credentials|\.env(?:\..*)?|"
                          r"id_(?:rsa|dsa|ecdsa|ed25519)(?:\.pub)?|.*\.(?:pem|key|p12|pfx|jks|keystore))$", re.I)
# PyTorch's flight recorder dumps one file per rank (TORCH_FR_DUMP_TEMP_FILE, default /tmp/nccl_trace_rank_<N>,
# torch/csrc/distributed/c10d/FlightRecorder*.cpp) and `fr_trace` reads them; py-spy dumps are text
# ("Process <pid>: <cmd>" then "Python v<version> (<path>)", py-spy's dump output).
FLIGHT_RECORDER = lazy_re(r"(?:^|[_.-])trace_rank_\d+|^fr_trace|flight_?recorder", re.I)
PYSPY_NAME = lazy_re(r"py[-_]?spy", re.I)
PYSPY_HEAD = lazy_re(rb"^Process \d+: .*\r?\nPython v\d")


@dataclass(slots=True)
class Excerpt:
    """The lines around one error, redacted."""

    source: str
    line: int  # the error's line
    lines: list[tuple[int, str]]  # (line number, redacted text)


@dataclass(slots=True)
class Artifact:
    """A dump file taken into the bundle."""

    name: str  # the file's name (made safe when written)
    source: str  # where it was found
    kind: str  # flight-recorder | py-spy
    data: bytes
    truncated: bool = False


@dataclass(slots=True)
class Parts:
    """What goes into a bundle, and what was left out."""

    excerpts: list[Excerpt] = field(default_factory=list)
    artifacts: list[Artifact] = field(default_factory=list)
    left_out: list[str] = field(default_factory=list)  # what was not taken, and why (names only)
    redacted: Counter[str] = field(default_factory=Counter)

    def merge(self, other: Parts) -> None:
        self.excerpts.extend(other.excerpts)
        self.artifacts.extend(other.artifacts)
        self.left_out.extend(other.left_out)
        self.redacted.update(other.redacted)


def inside(path: Path, roots: list[Path]) -> bool:
    """The file, links resolved, is under one of the roots (links resolved too): no link leads out of them."""
    try:
        real = Path(os.path.realpath(path))
    except (OSError, ValueError):
        return False
    for root in roots:
        top = Path(os.path.realpath(root))
        if real == top or top in real.parents:
            return True
    return False


def safe_sources(sources: list[Source], roots: list[Path]) -> list[Source]:
    """The sources a bundle may read: no credentials file, no link out of the folders given."""
    return [s for s in sources if s.path is None or (not SECRET_FILES.match(s.path.name) and inside(s.path, roots))]


def _excerpt(source: Source, line: int, redactor: Redactor) -> Excerpt | None:
    first = max(1, line - CONTEXT_BEFORE)
    try:
        with open_binary(source) as fh:
            raw = list(islice(fh, first - 1, line + CONTEXT_AFTER))
    except (OSError, EOFError, ValueError):
        return None
    redactor.in_key = False
    lines = []
    for n, data in enumerate(raw, start=first):
        text = decode(data.rstrip(b"\r\n")[: LINE_CHARS * 4])
        text = redactor.line(text)  # before cutting: a secret is never left half there
        lines.append((n, text if len(text) <= LINE_CHARS else text[:LINE_CHARS] + " …"))
    return Excerpt(source.name, line, lines) if lines else None


def excerpts(where: list[Location], sources: list[Source], redactor: Redactor) -> list[Excerpt]:
    """The lines around each location (each rank's first error), read again from its file."""
    by_name = {s.name: s for s in sources if s.path is not None}
    out: list[Excerpt] = []
    seen: set[tuple[str, int]] = set()
    for loc in where:
        source = by_name.get(loc.source)
        if source is None or (loc.source, loc.line) in seen or loc.line < 1 or len(out) >= MAX_EXCERPTS:
            continue
        seen.add((loc.source, loc.line))
        piece = _excerpt(source, loc.line, redactor)
        if piece is not None:
            out.append(piece)
    return out


def _kind(path: Path) -> str | None:
    if FLIGHT_RECORDER.search(path.name):
        return "flight-recorder"
    if PYSPY_NAME.search(path.name):
        return "py-spy"
    if path.suffix.lower() in (".txt", ".log", ".out", ".dump", ""):
        try:
            with open(path, "rb") as fh:
                if PYSPY_HEAD.match(fh.read(SNIFF)):
                    return "py-spy"
        except OSError:
            return None
    return None


def _walk(roots: list[Path]) -> list[Path]:
    found: list[Path] = []
    for root in roots:
        if root.is_file():
            found.append(root)
            continue
        for dirpath, dirnames, filenames in os.walk(root):  # links to folders are not followed
            dirnames.sort()
            for name in sorted(filenames):
                found.append(Path(dirpath) / name)
                if len(found) >= MAX_WALK:
                    return found
    return found


def artifacts(roots: list[Path], source_name: str, redactor: Redactor) -> tuple[list[Artifact], list[str]]:
    """Flight-recorder dumps (kept as they are, unless they hold something secret-shaped) and py-spy dumps
    (redacted), found under the roots."""
    out: list[Artifact] = []
    left_out: list[str] = []
    total = 0
    for path in _walk(roots):
        if path.is_symlink() or not path.is_file() or SECRET_FILES.match(path.name) or not inside(path, roots):
            continue
        kind = _kind(path)
        if kind is None:
            continue
        if len(out) >= MAX_ARTIFACTS or total >= MAX_ARTIFACTS_BYTES:
            left_out.append(f"{path.name}: over the bundle's size limit")
            continue
        try:
            with open(path, "rb") as fh:
                data = fh.read(MAX_ARTIFACT + 1)
        except OSError as exc:
            left_out.append(f"{path.name}: {exc.strerror or exc}")
            continue
        truncated = len(data) > MAX_ARTIFACT
        data = data[:MAX_ARTIFACT]
        if kind == "py-spy":
            data = redactor.text(decode(data)).encode("utf-8")
        else:
            probe = Redactor()
            probe.text(data.decode("latin-1"))
            if probe.counts:  # a binary dump cannot be redacted in place: leave it out
                left_out.append(f"{path.name}: holds something shaped like a secret")
                redactor.counts.update(probe.counts)
                continue
        total += len(data)
        out.append(Artifact(path.name, f"{source_name}{path}", kind, data, truncated))
    return out, left_out
