"""What the fast search feeds while the scanner waits on lines, and that the report stays the line-by-line one.

- While a hit waits for its `within` window to pass, only the lines that hold a literal of the window conditions
  still undecided (a line without one cannot meet them), not every line of the window: a dense log with a window
  hit every few hundred lines fed 9,221 of 17,677 lines for that alone. Checked with the window line near the
  hit, at the window's far end, split by a colour code, or missing.
- While a traceback is open on the lines without a transport prefix, not the lines of a Ray prefix the
  normaliser already knows (any other line may continue it)."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pytest

from diagnoser.match import scanner
from diagnoser.read import normalize

from .test_fastpath import _json, _noise, count_fed, small_blocks  # noqa: F401  (small_blocks: a fixture)

# dlc-port-exhausted: a bind failure counts only with a PAI-DLC port-manager line within 200 lines (match.all);
# the host name line holds no gate literal of any signature's `any`, so only the window makes it matter
BIND = "OSError: [Errno 98] Address already in use"
DLC_HOST = "\x1b[36m(RayTrainWorker pid=3105, ip=10.0.0.8)\x1b[0m host {host} joined the cluster"
# host-oom-killed: Ray's memory monitor line does not count when checkpoint loading is printed within 150 lines
RAY_OOM = ("Memory on the node (IP: 10.0.0.8, ID: 5f1e) where the task (actor ID: 8a2b, name=WorkerDict.__init__, "
           "pid=3105, memory used=61.2GB) was running was 118.4GB / 124.0GB (0.955), which exceeds the memory usage "
           "threshold of 0.95.")
LOADING = "\x1b[36m(WorkerDict pid=3105, ip=10.0.0.8)\x1b[0m Loading checkpoint shards:  50%|#####     | 2/4"


def _ids(report: str) -> set[str]:
    return {f["id"] for f in json.loads(report)["findings"]}


@pytest.mark.parametrize("case", ["all-near", "all-far", "all-split", "all-missing", "all-before", "all-splitbefore",
                                  "not-near", "not-missing", "not-before"])
def test_a_window_feeds_only_the_lines_of_its_literals(db, small_blocks, monkeypatch: pytest.MonkeyPatch,  # type: ignore[no-untyped-def]  # noqa: F811
                                                       tmp_path: Path, case: str) -> None:
    rng = random.Random(23)
    kind, where = case.split("-")
    lines = _noise(rng, 160)
    if where.endswith("before"):  # the window line 100 lines before the hit: lent back by the fast search
        host = "dlc1a2b3c-wo\x1b[0mrker-1" if where == "splitbefore" else "dlc1a2b3c-worker-1"
        lines[60] = DLC_HOST.format(host=host) if kind == "all" else LOADING
    lines.append(BIND if kind == "all" else RAY_OOM)
    hit = len(lines)
    after = {"near": 5, "far": 190 if kind == "all" else 145, "split": 100}.get(where, -1)
    for k in range(400):
        lines += _noise(rng, 1)
        if k == after:
            if kind == "not":
                lines.append(LOADING)
            else:
                host = "dlc1a2b3c-wo\x1b[0mrker-1" if where == "split" else "dlc1a2b3c-worker-1"
                lines.append(DLC_HOST.format(host=host))
    log = tmp_path / "window.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fed = count_fed(monkeypatch)
    fast = _json(db, [log], fast=True)
    fed = fed[:]  # the fast scan's (the line-by-line one below feeds every line)
    in_window = [n for n in fed if hit < n <= hit + 200]
    assert len(in_window) < 80, len(in_window)  # not the 200 lines of the window
    assert fast == _json(db, [log], fast=False)
    sig = "dlc-port-exhausted" if kind == "all" else "host-oom-killed"
    assert (sig in _ids(fast)) == (where != "missing") ^ (kind == "not")
    if where.endswith("before"):
        assert 61 not in fed  # lent, not fed


def test_an_unprefixed_traceback_skips_the_lines_of_known_ray_prefixes(db, small_blocks,  # type: ignore[no-untyped-def]  # noqa: F811
                                                                       monkeypatch: pytest.MonkeyPatch,
                                                                       tmp_path: Path) -> None:
    from diagnoser.read import grouper
    monkeypatch.setattr(scanner, "STALE_TB", 700)
    monkeypatch.setattr(grouper, "STALE_TB", 700)
    rng = random.Random(29)
    actor = "\x1b[36m(WorkerDict pid={pid}, ip=10.0.0.{ip})\x1b[0m step {k} loss {loss:.3f}"
    lines = [actor.format(pid=300 + r, ip=r, k=0, loss=0.5) for r in range(8)]  # each prefix seen once
    lines += ["Traceback (most recent call last):", '  File "/w/train.py", line 10, in <module>']
    first = len(lines)
    for k in range(600):
        r = rng.randrange(8)
        lines.append(actor.format(pid=300 + r, ip=r, k=k, loss=rng.random()))
        if k == 100:
            lines.append("    loss.backward()")  # the traceback goes on, between other writers' lines
        if k == 300:
            lines.append("(NewActor pid=999, ip=10.0.0.9) a prefix not seen before")  # fed: not known yet
    lines.append("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.")
    log = tmp_path / "loose.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    fed = count_fed(monkeypatch)
    fast = _json(db, [log], fast=True)
    fed = fed[:]  # the fast scan's (the line-by-line one below feeds every line)
    # from the line where the normaliser has settled (srun labels ruled out after SRUN_PREAMBLE lines)
    body = [n for n in fed if n > first + normalize.SRUN_PREAMBLE]
    assert len(body) < 20, len(body)  # not the 550 lines of other writers
    texts = log.read_text(encoding="utf-8").splitlines()
    assert {texts[n - 1] for n in body} >= {"    loss.backward()", "(NewActor pid=999, ip=10.0.0.9) a prefix not seen before"}
    assert fast == _json(db, [log], fast=False)
    assert "cuda-oom" in _ids(fast)


def test_a_stretch_cleaned_once_gives_the_lines_each_needle_search_gives() -> None:
    """region_hits (a window's look-back: many needles, a short stretch) cleans the stretch once; stream_hits looks
    for each needle split by what the cleaning removes. The same lines on texts built from colour codes, lost and
    written-out ESC bytes, control characters and needles split by them."""
    from diagnoser.read.prefixes import clean_bytes
    from diagnoser.search.streams import region_hits, stream_hits

    rng = random.Random(31)
    pieces = [b"abc", b"\x1b[36m", b"[0m", b"\n", b"ab", b"c", b"\x07", b"[rank1]:", b"[ra", b"nk1]:", b"#033[1m",
              b"x", b"^[[2K", b"\\x1b[3m", b"\\e[0m", b"033", b"[", b"5m", b"\x1b]0;t\x07", b"(A pid=1)", b"(A pi",
              b"d=1)", b" ", "é".encode()]
    for _ in range(20_000):
        region = b"".join(rng.choice(pieces) for _ in range(rng.randrange(1, 30))) + b"\n"
        needles = tuple(rng.sample([b"abc", b"[rank1]:", b"bca", b"(A pid=1)", b"c[0"], rng.randrange(1, 4)))
        assert region_hits(region, needles) == stream_hits(region, needles), (region, needles)
        assert clean_bytes(region) == _clean_by_hint(region)


def _clean_by_hint(data: bytes) -> bytes:
    """clean_bytes as it was written before its hint was looked for by parts: with _OTHER_HINT_RE."""
    from diagnoser.read.prefixes import _ESC_BYTES_RE, _OTHER_BYTES_RE, _OTHER_HINT_RE, CONTROL_BYTES

    data = _ESC_BYTES_RE.sub(b"", data) if b"\x1b" in data else data
    data = _OTHER_BYTES_RE.sub(b"", data) if _OTHER_HINT_RE.search(data) is not None else data
    return data.translate(None, CONTROL_BYTES)


@pytest.mark.parametrize("case", ["plain", "split", "srun"])
def test_a_hits_context_normalises_only_the_lines_of_its_stream(db, small_blocks,  # type: ignore[no-untyped-def]  # noqa: F811
                                                                 monkeypatch: pytest.MonkeyPatch, tmp_path: Path,
                                                                 case: str) -> None:
    """A hit outside a traceback shows the lines before it of its own stream (within 15 lines): of the lines the
    fast search did not feed, only those holding that stream's prefix once cleaned are normalised. Its context lines
    may have the prefix split by a colour code; a file with srun labels (the label is part of the stream) too."""
    rng = random.Random(31)
    me = "\x1b[36m(WorkerDict pid=4242, ip=10.0.0.9)\x1b[0m"
    split = "\x1b[36m(WorkerDict pid=42\x1b[0m42, ip=10.0.0.9)\x1b[0m"
    lines = _noise(rng, 300)
    for k in range(12):  # the stream's own lines among other streams' lines, just before the hit
        lines.append(f"{split if case == 'split' and k % 2 else me} loading shard {k} of 12")
        lines += _noise(rng, 1)
    lines.append(f"{me} torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 0 has a total "
                 "capacity of 79.15 GiB of which 1.00 GiB is free.")
    lines += _noise(rng, 200)
    if case == "srun":
        lines = [f"{3 if 'pid=42' in x else i % 3}: {x}" for i, x in enumerate(lines)]  # the stream's task: 3
    log = tmp_path / "context.log"
    log.write_text("\n".join(lines) + "\n", encoding="utf-8")
    normalised: list[int] = []
    real = normalize.Normalizer.lines

    def counting(self: normalize.Normalizer, lineno: int, raw: str) -> list[normalize.LogLine]:
        normalised.append(lineno)
        return real(self, lineno, raw)

    monkeypatch.setattr(normalize.Normalizer, "lines", counting)
    fast = _json(db, [log], fast=True)
    hit = next(i for i, x in enumerate(lines, 1) if "OutOfMemoryError" in x)
    near = [n for n in normalised if hit - 15 <= n < hit]
    assert fast == _json(db, [log], fast=False)
    assert "loading shard 11 of 12" in fast  # the context is there (the report quotes it)
    assert len(near) <= 8, near  # the stream's 7 lines in reach (and the hit's own), not all 15
