"""Plan how the fast path finds, in one or a few passes over a byte block, every line holding a literal.

CPython has no multi-string search, but its regex engine scans fast for a pattern whose first character
must come from a small set: it skips every byte outside the set in a tight C loop. So each literal is
cut at its rarest byte (rare in ordinary log lines: see background.txt), and those pieces form one trie
regex whose first characters are all rare: one pass finds every line holding any of them. The few
literals made only of common bytes (`: nan`, `=inf`) are covered by a small set of strings chosen by
cost (search time plus how many ordinary lines hold them) and searched with `bytes.find`.
"""

from __future__ import annotations

import hashlib
import heapq
import json
import os
import re
from collections import Counter
from collections.abc import Iterable
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path

THRESHOLDS = (0.003, 0.006, 0.01, 0.015)  # byte rarities tried for trie starts
PIECE = 16  # bytes a trie piece keeps from its rare byte on
MIN_PIECE = 4  # a shorter piece would match too many ordinary lines
MAX_PIECE_SHARE = 0.01  # a piece found on more ordinary lines than this is no use: the literal is a pass
LINES_PER_GB = 7e6
CHECK_SECONDS = 6e-6  # what one candidate line costs (find its start, check its literals)


@dataclass(frozen=True, slots=True)
class SearchPlan:
    """`trie` finds lines holding a rare-byte piece, `passes` the rest; `groups` says which literals
    each piece or pass string stands for (a candidate line is confirmed against those)."""

    trie: re.Pattern[bytes] | None
    passes: tuple[bytes, ...]
    groups: dict[bytes, tuple[bytes, ...]]

    def covers_in(self, line: bytes) -> set[bytes]:
        """Every piece and pass string the line holds (overlapping ones too)."""
        found = {c for c in self.passes if c in line}
        if self.trie is not None:
            pos = 0
            while (m := self.trie.search(line, pos)) is not None:
                found.add(m.group())
                pos = m.start() + 1
        return found

    def confirmed(self, line: bytes, covers: Iterable[bytes], ignore: frozenset[bytes] = frozenset()) -> bool:
        """Whether the line holds a literal (not in `ignore`) that one of its cover strings stands for."""
        groups = self.groups
        return any(lit in line and lit not in ignore for c in covers for lit in groups.get(c, ()))


@lru_cache(maxsize=1)
def _background() -> tuple[bytes, tuple[float, ...], int]:
    text = Path(__file__).with_name("background.txt").read_bytes()
    body = b"\n".join(x for x in text.split(b"\n") if not x.startswith(b"#"))
    counts = Counter(body)
    total = max(1, len(body))
    return body, tuple(counts.get(b, 0) / total for b in range(256)), max(1, body.count(b"\n"))


def byte_rarity(b: int) -> float:
    """How often a byte occurs in ordinary log text (a share of all bytes)."""
    return _background()[1][b]


@lru_cache(maxsize=65536)
def _line_share(s: bytes) -> float:
    body, _rarity, lines = _background()
    return body.count(s) / lines


def _pass_cost(s: bytes) -> float:
    # seconds per GB: one bytes.find pass (long needles skip further) plus the lines it makes candidates
    return 0.2 + 1.8 / len(s) + _line_share(s) * LINES_PER_GB * CHECK_SECONDS


def _trie_pattern(pieces: Iterable[bytes]) -> bytes:
    # the engine tries the alternatives in order: the more common first bytes go first
    trie: dict[int | None, dict] = {}  # type: ignore[type-arg]
    for piece in pieces:
        node = trie
        for ch in piece:
            node = node.setdefault(ch, {})
        node[None] = {}

    def emit(node: dict) -> bytes:  # type: ignore[type-arg]
        if None in node:
            return b""  # a shorter piece ends here: matching it is enough
        keys = sorted((k for k in node if k is not None), key=lambda k: (-byte_rarity(k), k))
        alts = [re.escape(bytes([ch])) + emit(node[ch]) for ch in keys]
        return alts[0] if len(alts) == 1 else b"(?:" + b"|".join(alts) + b")"

    return emit(trie)


def _weighted_cover(literals: list[bytes]) -> dict[bytes, list[bytes]]:
    """Greedy weighted set cover of the literals by their substrings of 3 to 8 bytes."""
    candidates: dict[bytes, set[int]] = {}
    for i, lit in enumerate(literals):
        if len(lit) <= 3:
            candidates.setdefault(lit, set()).add(i)
            continue
        for size in range(3, min(8, len(lit)) + 1):
            for start in range(len(lit) - size + 1):
                candidates.setdefault(lit[start:start + size], set()).add(i)
    cost = {c: _pass_cost(c) for c in candidates}
    heap = [(-len(ids) / cost[c], c) for c, ids in candidates.items()]
    heapq.heapify(heap)
    uncovered = set(range(len(literals)))
    chosen: dict[bytes, list[bytes]] = {}
    while uncovered and heap:
        _neg, cand = heapq.heappop(heap)
        gain = candidates[cand] & uncovered
        if not gain:
            continue
        score = len(gain) / cost[cand]
        if heap and score < -heap[0][0] - 1e-12:
            heapq.heappush(heap, (-score, cand))
            continue
        chosen[cand] = [literals[i] for i in sorted(gain)]
        uncovered -= gain
    return chosen


def _split(literals: list[bytes], rare: float) -> tuple[dict[bytes, list[bytes]], list[bytes]]:
    """Trie pieces (keyed by piece) for the literals that have a rare byte, and the rest."""
    pieces: dict[bytes, list[bytes]] = {}
    common: list[bytes] = []
    for lit in literals:
        # pieces start at a rare byte and go on for a while; the one ordinary lines hold least wins
        starts = [i for i in range(len(lit) - MIN_PIECE + 1) if byte_rarity(lit[i]) < rare]
        if not starts:
            common.append(lit)
            continue
        best = min(starts, key=lambda i: (_line_share(lit[i:i + PIECE]), byte_rarity(lit[i])))
        if _line_share(lit[best:best + PIECE]) > MAX_PIECE_SHARE:
            common.append(lit)
            continue
        pieces.setdefault(lit[best:best + PIECE], []).append(lit)
    return pieces, common


def _trie_cost(pieces: dict[bytes, list[bytes]]) -> float:
    # seconds per GB: the first-byte scan, a branch test at every position whose byte starts a piece,
    # and the candidate lines the pieces make
    density = sum(byte_rarity(b) for b in {p[0] for p in pieces})
    shares = sum(_line_share(p) for p in pieces)
    return 2.0 + 100.0 * density + shares * LINES_PER_GB * CHECK_SECONDS if pieces else 0.0


def _cache_dir() -> Path | None:
    base = os.environ.get("XDG_CACHE_HOME") or os.path.join(os.path.expanduser("~"), ".cache")
    return Path(base) / "diagnoser" if base else None


def _cache_key(literals: frozenset[str]) -> str:
    digest = hashlib.sha256(_background()[0])
    for lit in sorted(literals):
        digest.update(lit.encode("utf-8") + b"\0")
    digest.update(repr((THRESHOLDS, PIECE, MIN_PIECE, MAX_PIECE_SHARE)).encode())
    return digest.hexdigest()[:32]


@lru_cache(maxsize=64)
def plan_search(literals: frozenset[str]) -> SearchPlan:
    """The plan for finding every line that holds one of `literals`.

    Planning reads the background corpus and takes a moment, so plans are cached in memory and on
    disk (~/.cache/diagnoser, or $XDG_CACHE_HOME); a cache that cannot be read or written is skipped.
    """
    folder = _cache_dir()
    path = folder / f"plan-{_cache_key(literals)}.json" if folder is not None else None
    if path is not None:
        try:
            data = json.loads(path.read_text(encoding="latin-1"))
            trie = re.compile(data["trie"].encode("latin-1")) if data["trie"] is not None else None
            groups = {k.encode("latin-1"): tuple(v.encode("latin-1") for v in vs) for k, vs in data["groups"].items()}
            return SearchPlan(trie, tuple(p.encode("latin-1") for p in data["passes"]), groups)
        except (OSError, ValueError, KeyError, TypeError, AttributeError, re.error):
            pass
    plan = _plan(literals)
    if path is not None:
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
            tmp = path.with_suffix(f".{os.getpid()}.tmp")
            tmp.write_text(json.dumps({
                "trie": plan.trie.pattern.decode("latin-1") if plan.trie is not None else None,
                "passes": [p.decode("latin-1") for p in plan.passes],
                "groups": {k.decode("latin-1"): [v.decode("latin-1") for v in vs] for k, vs in plan.groups.items()},
            }), encoding="latin-1")
            os.replace(tmp, path)
        except OSError:
            pass
    return plan


def _plan(literals: frozenset[str]) -> SearchPlan:
    ordered = sorted({x.encode("utf-8") for x in literals})
    best: tuple[float, dict[bytes, list[bytes]], dict[bytes, list[bytes]]] | None = None
    for rare in THRESHOLDS:
        pieces, common = _split(ordered, rare)
        passes = _weighted_cover(common)
        cost = _trie_cost(pieces) + sum(_pass_cost(c) for c in passes)
        if best is None or cost < best[0]:
            best = (cost, pieces, passes)
    assert best is not None
    _cost, pieces, passes = best
    groups: dict[bytes, list[bytes]] = {}
    trie = None
    if pieces:
        trie = re.compile(_trie_pattern(pieces))
        for piece, lits in pieces.items():
            # a literal is confirmed through the piece the trie reports, which may be a shorter one
            owner = next((p for p in sorted(pieces, key=len) if piece.startswith(p)), piece)
            groups.setdefault(owner, []).extend(lits)
    for c, lits in passes.items():
        groups.setdefault(c, []).extend(lits)
    return SearchPlan(trie, tuple(sorted(passes, key=len)), {c: tuple(v) for c, v in groups.items()})
