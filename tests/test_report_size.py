"""The report's size is bounded whatever the log (issue 19): thousands of distinct errors with long messages on
hundreds of ranks, and a 60 KB key line, give a JSON report under 2 MiB and a text or Markdown report under 64 KiB (256 KiB with --verbose)
(the top kinds with their counts, the rest summed up in one line)."""

from __future__ import annotations

import io

from diagnoser.match.database import Database
from diagnoser.modes.batch import diagnose_text
from diagnoser.report.contract import to_json
from diagnoser.report.markdown import render_markdown
from diagnoser.report.model import MAX_KEY_CHARS
from diagnoser.report.text import render_text
from diagnoser.safe import json_dumps

OOM = ("torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity of 79.15 "
       "GiB of which 1.00 GiB is free. ")
ADVICE = "If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True"
KINDS = 520  # more than the 500 kinds listed
RANKS = 600


def _hostile() -> str:
    out = [f"[rank0]: {OOM}{'x' * 60_000}{ADVICE}"]
    for i in range(KINDS):
        rank = i % RANKS
        out += [f"[rank{rank}]: Traceback (most recent call last):",
                f'[rank{rank}]:   File "/very/long/path/{"d" * 3000}/w{i}.py", line {i}, in f{i}',
                f"[rank{rank}]:     g{i}()",
                f"[rank{rank}]: Kind{i}Error: distinct failure {i} {'m' * 10_000}"]
    for rank in range(RANKS):  # one kind seen on every rank
        out.append(f"[rank{rank}]: Kind7Error: distinct failure 7 {'m' * 10_000}")
    return "\n".join(out) + "\n"


def test_a_report_of_thousands_of_distinct_errors_stays_small(db: Database) -> None:
    report = diagnose_text(db, _hostile())
    data = to_json(report)
    size = len(json_dumps(data).encode())
    assert size < 2 << 20, size  # was 7.3 MB: 500 kinds of 10 KB messages and 3 KB frames, 600 rank rows
    assert report.root_cause is not None and report.root_cause.sig.id == "cuda-oom"
    key = next(e for e in data["root_cause"]["evidence"] if "CUDA out of memory" in e)  # type: ignore[index]
    assert len(key) <= MAX_KEY_CHARS and key.endswith(ADVICE)  # the advice at its end is kept
    assert data["stats"]["unlisted"] > 0  # type: ignore[index]
    for verbose, bound in ((False, 64 << 10), (True, 256 << 10)):  # before: 78 KB, and 397 KB verbose
        text = io.StringIO()
        render_text(report, text, color=False, width=120, verbose=verbose)
        assert len(text.getvalue().encode()) < bound
        assert len(render_markdown(report, verbose=verbose).encode()) < bound  # 71 KB before (a 60 KB line)
