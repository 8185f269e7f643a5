"""PyTorch flight-recorder dumps (one per rank, pickle or JSON), read without torch and without running code.

The dump is a dict (torch/csrc/distributed/c10d/FlightRecorderDetail.hpp `dump_dict` / `dump_json`): `version`,
`pg_config` ({group name: {name, desc, ranks "[0, 1]"}}, or {pg id: [ranks]} in 2.3), `pg_status` (2.5+:
{pg id: {last_enqueued_collective, last_started_collective, last_completed_collective}}) and `entries`
(`process_group` (name, desc), `collective_seq_id` (2.3: `seq_id`), `profiling_name` (`nccl:all_reduce`),
`input_sizes`, `input_dtypes`, `output_sizes`, `output_dtypes`, `state`, `retired`, `is_p2p`, `frames`).
A pickle is written by torch's own pickler with plain containers only; one whose opcodes could build any
object (GLOBAL, REDUCE, ... below) is refused before loading, and the loader refuses every class anyway.
"""

from __future__ import annotations

import io
import json
import pickle
from dataclasses import dataclass, field
from typing import Any

MAX_DUMP = 64 << 20  # bytes
MAX_ENTRIES = 4096  # the newest entries kept per dump (torch's default ring holds 2000)
# opcodes that import, call or build an object: a dump needs none of them
REFUSED = frozenset({"GLOBAL", "STACK_GLOBAL", "REDUCE", "INST", "OBJ", "NEWOBJ", "NEWOBJ_EX", "BUILD",
                     "EXT1", "EXT2", "EXT4", "PERSID", "BINPERSID"})


class DumpError(ValueError):
    """The file is not a flight-recorder dump that can be read safely."""


@dataclass(frozen=True, slots=True)
class Entry:
    """One collective of a flight-recorder dump."""

    pg: str  # the group's name (GUID), the same on every rank of the group
    desc: str
    seq: int  # collective_seq_id within the group (p2p entries: p2p_seq_id)
    op: str
    in_sizes: str
    out_sizes: str
    dtypes: str
    pending: bool  # not completed (gloo never marks completion: not retired)
    p2p: bool
    frame: str  # the innermost frame: "all_reduce (distributed_c10d.py:3245)"


@dataclass(slots=True)
class Dump:
    """One rank's flight-recorder dump."""

    rank: int
    source: str
    version: str = ""
    status: dict[str, tuple[int, int, int]] = field(default_factory=dict)  # pg id -> enqueued, started, completed
    groups: dict[str, tuple[str, list[int] | None]] = field(default_factory=dict)  # pg name -> (desc, ranks)
    entries: list[Entry] = field(default_factory=list)


class _NoClasses(pickle.Unpickler):
    def find_class(self, module: str, name: str) -> Any:
        raise pickle.UnpicklingError(f"class {module}.{name} refused")

    def persistent_load(self, pid: Any) -> Any:
        raise pickle.UnpicklingError("persistent id refused")


def load_dump(data: bytes) -> dict[str, Any]:
    """The dump's dict, from pickle or JSON bytes, or DumpError."""
    if len(data) > MAX_DUMP:
        raise DumpError(f"larger than {MAX_DUMP >> 20} MiB")
    if data[:1] == b"\x80":
        try:
            import pickletools

            for op, _arg, _pos in pickletools.genops(io.BytesIO(data)):
                if op.name in REFUSED:
                    raise DumpError(f"pickle opcode {op.name} refused (a dump builds no objects)")
            doc = _NoClasses(io.BytesIO(data)).load()
        except DumpError:
            raise
        except (pickle.UnpicklingError, ValueError, EOFError, IndexError, KeyError, TypeError, MemoryError,
                RecursionError, OverflowError) as exc:
            raise DumpError(f"not a readable pickle: {exc}") from None
    else:
        try:
            doc = json.loads(data.decode("utf-8", errors="replace"))
        except (ValueError, RecursionError) as exc:
            raise DumpError(f"not JSON: {exc}") from None
    if not isinstance(doc, dict) or ("entries" not in doc and "pg_status" not in doc):
        raise DumpError("no flight-recorder keys (entries, pg_status)")
    return doc


def _int(value: Any, default: int = -1) -> int:
    if isinstance(value, bool):
        return default
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.lstrip("-").isdigit() and len(value) < 19:
        return int(value)
    return default


def _ranks(value: Any) -> list[int] | None:
    if isinstance(value, list):
        out = [_int(v) for v in value[:100000]]
    elif isinstance(value, str):
        out = [_int(v.strip()) for v in value.strip("[] ").split(",") if v.strip()][:100000]
    else:
        return None
    return [r for r in out if r >= 0] or None


def _frame(frames: Any) -> str:
    if isinstance(frames, list) and frames and isinstance(frames[0], dict):
        f = frames[0]
        name = str(f.get("filename", "")).rsplit("/", 1)[-1]
        return f"{f.get('name', '?')} ({name}:{f.get('line', '?')})"
    return ""


def parse_dump(doc: dict[str, Any], rank: int, source: str) -> Dump:
    dump = Dump(rank, source, str(doc.get("version", "")))
    status = doc.get("pg_status")
    if isinstance(status, dict):
        for pg, s in list(status.items())[:4096]:
            if isinstance(s, dict):
                dump.status[str(pg)] = (_int(s.get("last_enqueued_collective")), _int(s.get("last_started_collective")),
                                        _int(s.get("last_completed_collective")))
    config = doc.get("pg_config")
    if isinstance(config, dict):
        for name, c in list(config.items())[:4096]:
            if isinstance(c, dict):
                dump.groups[str(c.get("name", name))] = (str(c.get("desc", "")), _ranks(c.get("ranks")))
            else:  # 2.3: {pg id: [ranks]}
                dump.groups[str(name)] = ("", _ranks(c))
    entries = doc.get("entries")
    if isinstance(entries, list):
        for e in entries[-MAX_ENTRIES:]:
            if not isinstance(e, dict):
                continue
            group = e.get("process_group")
            pg, desc = (str(group[0]), str(group[1])) if isinstance(group, (list, tuple)) and len(group) == 2 \
                else (str(e.get("pg_id", "")), "")
            p2p = bool(e.get("is_p2p", False))
            seq = _int(e.get("p2p_seq_id") if p2p else e.get("collective_seq_id", e.get("seq_id")))
            state = str(e.get("state", ""))
            dtypes = f"{e.get('input_dtypes', '')}->{e.get('output_dtypes', '')}"
            dump.entries.append(Entry(pg, desc, seq, str(e.get("profiling_name", "")), str(e.get("input_sizes", "")),
                                      str(e.get("output_sizes", "")), dtypes,
                                      state != "completed" and not e.get("retired", False), p2p,
                                      _frame(e.get("frames"))))
    return dump


def read_dump(data: bytes, rank: int, source: str) -> Dump:
    return parse_dump(load_dump(data), rank, source)
