"""What a file's path says about who wrote it: rank, local rank, launcher attempt, pid, host, and what it is.

Layouts read (each from the launcher's own code):
- torchelastic `--log-dir`: `<log_dir>/<run_id>_<rand>/attempt_<N>/<local_rank>/{stdout,stderr}.log|error.json`
  (torch/distributed/elastic/multiprocessing/api.py; each node's agent makes its own `<run_id>_<rand>`, so the
  folder is the node and `<local_rank>` counts within it);
- Ray session files `worker-<worker id>-<job id>-<pid>.out|err` and `python-core-worker-<id>_<pid>.log`;
- srun `--output` patterns: `%t` (task id = rank) and `%N` (host) make files that differ in one field only;
- pod, node and address folders (`dlc…-worker-1/`, `node03/`, `10.0.0.7/`).
A host is taken only where a whole path component (or a whole field) is one, never a piece of one.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from pathlib import Path

from ..lazyre import lazy_re

KERNEL_NAMES = lazy_re(r"^(?:dmesg|kern|kernel|syslog|messages|journal)", re.I)
RAY_NAMES = lazy_re(r"^(?:raylet|gcs_server|python-core-(?:driver|worker)|job-driver|dashboard|monitor|"
                       r"log_monitor|runtime_env|worker-[0-9a-f]{8,})", re.I)
_IPV4 = r"(?:25[0-5]|2[0-4]\d|1?\d?\d)(?:\.(?:25[0-5]|2[0-4]\d|1?\d?\d)){3}"
# a whole component that names a machine: a pod or node name, or an IPv4 address
HOST_FULL = lazy_re(rf"(?:[A-Za-z0-9][\w.-]*?-)?(?:master|worker|node|host)-?\d+|{_IPV4}", re.I)
# a field that srun's %N put in a file name: a short host name (letters, then digits somewhere)
_HOSTISH = lazy_re(r"[A-Za-z][A-Za-z0-9-]*\d[A-Za-z0-9-]*|" + _IPV4)
RANK_RES = (
    lazy_re(r"log_rank_.*?_(\d+)_\d+", re.I),  # ROLL: log_rank_<worker>_<rank>_<world>.log
    lazy_re(r"(?:^|[_.\-])(?:log|rank|local_rank|proc|gpu)[_\-]?(\d+)(?=[_.\-]|$)", re.I),
)
ELASTIC_FILES = ("stdout.log", "stderr.log", "error.json", "filtered_stdout.log", "filtered_stderr.log")
_ATTEMPT = lazy_re(r"^attempt_(\d+)$")
_RESTART = lazy_re(r"(?:^|[_.\-])(?:attempt|restart|retry)[_\-]?(\d+)(?=[_.\-]|$)", re.I)
_RAY_WORKER = lazy_re(r"^(?:worker-[0-9a-f]{8,}-[0-9a-f]{8}-|python-core-worker-[0-9a-f]+_)(\d+)\.(?:out|err|log)$")
FR_NAME = lazy_re(r"trace_rank_(\d+)(?:\.json)?$")
_LOG_SUFFIX = lazy_re(r"(?:\.(?:log|out|err|txt|stdout|stderr|trace)(?:\.\d+)?)+(?:\.gz)?$", re.I)
MAX_DIGITS = 9  # a rank or pid read from a name is a number of sane width


@dataclass(frozen=True, slots=True)
class PathIdentity:
    """What a file's path says of who wrote it."""

    rank: int | None = None
    role: str = "worker"  # worker | driver | ray | kernel
    host: str | None = None
    local_rank: int | None = None  # torchelastic: the rank within its node's agent
    group: str | None = None  # torchelastic: the agent's run folder its local ranks count in (one per node)
    attempt: int | None = None  # torchelastic attempt_N, or a restart number in the name
    pid: int | None = None  # Ray worker files carry their process id
    kind: str = "log"  # log | elastic-error (torchelastic error.json) | flight-recorder


def _int(text: str) -> int | None:
    return int(text) if text.isdigit() and len(text) <= MAX_DIGITS else None


def host_of(component: str, is_file: bool = False) -> str | None:
    """The component when it is, as a whole, a machine's name or address (a file's name without its suffixes)."""
    stem = (_LOG_SUFFIX.sub("", component) or component) if is_file else component
    for candidate in (component, stem):
        if HOST_FULL.fullmatch(candidate):
            return candidate
    if "_" in stem:  # kern_node03, log_10.0.0.7: a field of the name, whole
        for field in stem.split("_"):
            if HOST_FULL.fullmatch(field):
                return field
    return None


def _role(name: str) -> str:
    if KERNEL_NAMES.match(name):
        return "kernel"
    if RAY_NAMES.match(name):
        return "ray"
    if re.search(r"driver|master|head", name, re.I):
        return "driver"
    return "worker"


def identify(path: Path, root: Path | None = None) -> PathIdentity:
    """Who wrote the file, as far as its name and the folders above it (below `root`) tell."""
    name = path.name
    rel = path.relative_to(root) if root is not None and path.is_relative_to(root) else Path(name)
    parts = rel.parts
    role = _role(name)
    host = None
    for i, part in enumerate(reversed(parts)):
        host = host_of(part, is_file=i == 0)
        if host is not None:
            break
    rank = local_rank = group = attempt = pid = None
    kind = "log"
    if role != "kernel":
        for rx in RANK_RES:
            m = rx.search(name)
            if m is not None:
                rank = _int(m.group(1))
                break
    # torchelastic: .../<run>_<rand>/attempt_<N>/<local_rank>/<file>
    full = path.parts
    if name in ELASTIC_FILES and len(full) >= 4 and full[-2].isdigit() and _ATTEMPT.match(full[-3]):
        local_rank, attempt = _int(full[-2]), _int(_ATTEMPT.match(full[-3]).group(1))  # type: ignore[union-attr]
        group = str(Path(*full[:-3]))
        rank = None  # the folder counts local ranks; the global rank comes from the logs
        if name == "error.json":
            kind = "elastic-error"
    else:
        for part in parts:
            m = _RESTART.search(part)
            if m is not None:
                attempt = _int(m.group(1))
    m = _RAY_WORKER.match(name)
    if m is not None:
        pid = _int(m.group(1))
    if FR_NAME.search(name):
        kind, rank = "flight-recorder", _int(FR_NAME.search(name).group(1))  # type: ignore[union-attr]
    return PathIdentity(rank, role, host, local_rank, group, attempt, pid, kind)


def _field(names: list[str]) -> list[str] | None:
    """The one field in which names of the same pattern differ (srun's %t or %N), cut at separators."""
    if len(names) < 2 or len(set(names)) < len(names):
        return None
    first, last = min(names), max(names)
    pre = 0
    while pre < min(len(first), len(last)) and first[pre] == last[pre]:
        pre += 1
    # the common start may end inside the field ("node0" of node01, node02): back off to a separator
    while pre > 0 and names[0][pre - 1] not in "_.-":
        pre -= 1
    suf = 0
    shortest = min(len(n) for n in names) - pre
    while suf < shortest and len({n[len(n) - suf - 1] for n in names}) == 1:
        suf += 1
    while suf > 0 and names[0][len(names[0]) - suf] not in "_.-":
        suf -= 1
    if suf == 0 and pre > 0 and names[0][pre - 1] == ".":
        return None  # app.log.1, app.log.2: rotated copies of one file
    fields = [n[pre:len(n) - suf] for n in names]
    if any(not f or (any(c in f for c in "_.") and not re.fullmatch(_IPV4, f)) for f in fields):
        return None
    if any(n[:pre] != names[0][:pre] or n[len(n) - suf:] != names[0][len(names[0]) - suf:] for n in names):
        return None
    return fields


def sibling_identities(paths: list[Path], idents: list[PathIdentity]) -> list[PathIdentity]:
    """Files of one folder named by one pattern that differ in one field: srun --output %t (a number: the
    rank) or %N (a host name: the host). Files whose name already told their rank or host keep it."""
    groups: dict[tuple[str, str], list[int]] = {}
    for i, p in enumerate(paths):
        shape = re.sub(r"\d+", "#", p.name)
        groups.setdefault((str(p.parent), re.sub(r"[A-Za-z0-9-]+", "w", shape)), []).append(i)
    out = list(idents)
    for members in groups.values():
        todo = [i for i in members if idents[i].kind == "log" and idents[i].local_rank is None
                and idents[i].role in ("worker", "driver")]
        if len(todo) < 2:
            continue
        fields = _field([paths[i].name for i in todo])
        if fields is None:
            continue
        numbers = [int(f) for f in fields if f.isdigit() and len(f) <= 5]
        # task ids count from 0: a field of large numbers (pids, years, steps) is not one
        if len(numbers) == len(fields) and min(numbers) < 4 * len(numbers):
            for i, f in zip(todo, fields, strict=True):
                if out[i].rank is None and out[i].host != _LOG_SUFFIX.sub("", paths[i].name):
                    out[i] = replace(out[i], rank=_int(f))
        elif all(_HOSTISH.fullmatch(f) for f in fields):
            for i, f in zip(todo, fields, strict=True):
                if out[i].host is None:
                    # a number inside a host name ("gpu017") is no rank
                    rank = None if any(rx.search(f) for rx in RANK_RES) else out[i].rank
                    out[i] = replace(out[i], host=f, rank=rank)
    return out
