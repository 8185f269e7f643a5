"""The first screen answers (issue 14): the end of the report holds the lead's title, where and first step, then one
summary line; nothing is cut mid-word without an ellipsis; the key evidence line is whole; live modes speak once,
and say what they are doing."""

from __future__ import annotations

import io
import itertools
import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from rich.cells import cell_len

from diagnoser.cli import main
from diagnoser.console import Warner, input_sources
from diagnoser.eval import Case, find_cases
from diagnoser.match.database import Database
from diagnoser.modes.batch import diagnose
from diagnoser.report.contract import to_json
from diagnoser.report.text import render_text
from diagnoser.report.wrap import wrap

from .conftest import SAMPLES

SAMPLE = SAMPLES / "chatlearn" / "cuda-oom-fsdp-packing.log"
# PyTorch's caching-allocator message, verbatim as posted in huggingface/trl#3436: its advice is at the end
OOM = ("[rank5]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 1.96 GiB. GPU 5 has a total capacity "
       "of 23.43 GiB of which 210.06 MiB is free. Including non-PyTorch memory, this process has 0 bytes memory in "
       "use. Of the allocated memory 20.12 GiB is allocated by PyTorch, and 1.21 GiB is reserved by PyTorch but "
       "unallocated. If reserved but unallocated memory is large try setting "
       "PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory "
       "Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")


def text_report(args: list[str], capsys: pytest.CaptureFixture[str], columns: int = 80) -> str:
    os.environ["COLUMNS"] = str(columns)
    try:
        main(args)
    finally:
        del os.environ["COLUMNS"]
    out, _err = capsys.readouterr()
    return out


_REPORTS: dict[str, tuple[dict[str, Any], str]] = {}


def case_report(case: Case, db: Database) -> tuple[dict[str, Any], str]:
    """A case's JSON report and its text report at 80 columns, from one scan."""
    key = str(case.expected_path)
    if key not in _REPORTS:
        args = [str(a) for a in case.expected.get("args", [])]
        status = args[args.index("--job-status") + 1] if "--job-status" in args else None
        sources = input_sources([case.input], Warner("en"))
        report = diagnose(db, sources, "en", job_status=status, jobs=1)
        out = io.StringIO()
        render_text(report, out, color=False, width=80)
        _REPORTS[key] = (to_json(report), out.getvalue())
    return _REPORTS[key]


def joined(text: str) -> str:
    """The words of a text whatever its line breaks (panel borders and indents dropped)."""
    return " ".join(line.strip("│ ").strip() for line in text.splitlines())


FAILING = [c for c in find_cases(SAMPLES) if c.expected.get("root_cause")]


@pytest.mark.parametrize("case", FAILING, ids=[c.name for c in FAILING])
def test_the_last_screen_answers(case: Case, db: Database) -> None:
    report, out = case_report(case, db)
    lines = out.rstrip("\n").splitlines()
    assert max(cell_len(line) for line in lines) <= 80
    last = joined("\n".join(lines[-24:]))
    rc = report["root_cause"]
    assert joined(rc["title"]) in last, "the root cause's title is not on the last screen"
    if rc["first"]["rank"] is not None:
        assert f"rank {rc['first']['rank']}" in last
    step = next((x.strip() for x in rc["remedy"].splitlines() if x.strip().startswith("1.")), "")
    if step:
        assert joined(step)[:60] in last, "the first remedy step is not on the last screen"
    start = max(i for i, line in enumerate(lines) if line.startswith("root cause: "))
    summary = joined("\n".join(lines[start:]))
    assert start >= len(lines) - 2, "the summary is the last line (wrapped at most once)"
    assert summary.startswith(f"root cause: {rc['id']}") and f"{report['stats']['lines']:,} line" in summary


CASES = find_cases(SAMPLES)


@pytest.mark.parametrize("case", CASES, ids=[c.name for c in CASES])
def test_nothing_is_cut_mid_word(case: Case, db: Database) -> None:
    report, out = case_report(case, db)
    words = set(re.findall(r"[\w.\-/:]+", out))
    for f in report["findings"]:
        assert f["id"] in words, f"{f['id']} is split or cut in the report"
    if report["root_cause"]:  # a panel's title wraps, it is never cut at the border
        assert joined(report["root_cause"]["title"]) in joined(out)
    lines = [line.strip(" │") for line in out.splitlines()]
    for name in {Path(s).name for f in report["findings"] for s in f["sources"]}:
        if len(name) > 60:  # longer than a line leaves room for: it cannot stay whole
            continue
        for line, after in itertools.pairwise(lines):  # whole, or shortened with an ellipsis; never broken in two
            last = line.split(" ")[-1].rsplit("/", 1)[-1]
            rest = after.strip().split(" ")[0]
            assert not (last and rest and last != name and name.startswith(last + rest[:3])), \
                f"{name} is split: {line!r} / {after!r}"
    for name in {Path(f["first"]["source"]).name for f in report["findings"]}:  # where each finding was first seen
        assert len(name) > 60 or any(name in line for line in lines) or any(
            re.search(re.escape(name[:8]) + r"\S*…", line) for line in lines), f"{name} is not shown whole"
    for line in out.splitlines():  # a table cell cut short says so
        assert not re.search(r"\w-$", line.rstrip(" │")), f"a word breaks at the end of: {line!r}"


def test_the_key_evidence_line_is_never_cut(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    log = tmp_path / "rank5.log"
    log.write_text("[rank5]: Traceback (most recent call last):\n"
                   '[rank5]:   File "/workspace/train.py", line 67, in <module>\n'
                   "[rank5]:     trainer.train()\n" + OOM + "\n")
    out = text_report([str(log)], capsys)
    assert "expandable_segments:True to avoid fragmentation." in joined(out)
    assert "cuda.html#environment-variables)" in joined(out).replace(" ", "")
    report = json.loads(text_report([str(log), "-f", "json"], capsys))
    key = report["root_cause"]["evidence"][report["root_cause"]["evidence_lines"].index(4)]
    assert key == OOM
    markdown = text_report([str(log), "-f", "markdown"], capsys)
    assert OOM in markdown


def test_secondary_findings_are_compact_unless_verbose(capsys: pytest.CaptureFixture[str]) -> None:
    watchdog_why = "A collective (all-reduce"
    out = text_report([str(SAMPLE)], capsys)
    assert "nccl-watchdog-timeout" in out and "(--verbose shows each in full)" in out
    verbose = text_report([str(SAMPLE), "--verbose"], capsys)
    assert verbose.count("Remedy") == 2 and verbose.count("Why") == 2
    def body(text: str) -> list[str]:
        return [line for line in text.splitlines() if not line.startswith("Scanned ")]

    assert body(text_report([str(SAMPLE), "--all"], capsys)) == body(verbose)
    del watchdog_why


def test_chinese_wraps_by_width() -> None:
    text = ("进程向 GPU 3 申请 4.64 GiB，而该卡 79.11 GiB 中只剩 3.02 GiB 空闲。在 RL 训练中，这通常发生在训练步"
            "（激活显存随 micro batch 大小和序列长度增长），或推理引擎在训练时仍占着显存。")
    lines = wrap(text, 40)
    assert all(cell_len(line) <= 40 for line in lines)
    assert all(cell_len(line) >= 34 for line in lines[:-1]), lines  # a line breaks where it is full, not at a space


def test_an_echo_never_leads_when_its_cause_was_read_from_the_same_lines(capsys: pytest.CaptureFixture[str],
                                                                         tmp_path: Path) -> None:
    # PyTorch ProcessGroupNCCL.cpp: the watchdog logs the exception that ended it, then rethrows it (what():); the CUDA
    # error is one no signature knows (cudaErrorLaunchTimeout, a display watchdog's)
    log = tmp_path / "rank3.log"
    log.write_text("[rank3]:[E1120 10:01:02.123456 ProcessGroupNCCL.cpp:1515] [PG 0 (default_pg) Rank 3] Process "
                   "group watchdog thread terminated with exception: CUDA error: the launch timed out and was terminated\n"
                   "terminate called after throwing an instance of 'c10::DistBackendError'\n"
                   "  what():  [PG 0 (default_pg) Rank 3] Process group watchdog thread terminated with exception: "
                   "CUDA error: the launch timed out and was terminated\n")
    out = text_report([str(log)], capsys)
    head = joined("\n".join(out.splitlines()[:12]))
    assert "First unrecognised error" in head and "the launch timed out" in head
    assert "Only symptoms were found" not in out
    assert joined("\n".join(out.splitlines()[-2:])).startswith("no root cause; first unrecognised error")


def test_an_error_that_echoes_the_root_cause_is_folded_into_it(capsys: pytest.CaptureFixture[str],
                                                               tmp_path: Path) -> None:
    # the rank whose GPU hit an uncorrectable ECC error then fails every CUDA call: one failure, not two
    log = tmp_path / "rank13.log"
    log.write_text("[rank13]: RuntimeError: CUDA error: uncorrectable ECC error encountered\n"
                   "[rank13]: Traceback (most recent call last):\n"
                   '[rank13]:   File "/workspace/train.py", line 90, in step\n'
                   "[rank13]: RuntimeError: CUDA error: unknown error\n")
    report = json.loads(text_report([str(log), "-f", "json"], capsys))
    assert report["root_cause"]["id"] == "gpu-ecc-error"
    assert [u["symptom_of"] for u in report["unrecognized"]] == [["gpu-ecc-error"]]
    out = text_report([str(log)], capsys)
    assert "Unrecognised errors" not in out and "CUDA error: unknown error (the same failure" in joined(out)


def test_a_cut_traceback_is_titled_by_its_last_frame(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    log = tmp_path / "worker.log"
    log.write_text("Traceback (most recent call last):\n"
                   '  File "/mnt/workspace/ChatLearn/chatlearn/launcher/dlc_utils.py", line 252, in start_exit_listener\n'
                   "    ray.get(actor.wait.remote())\n")
    out = text_report([str(log)], capsys)
    assert "traceback cut off in start_exit_listener (dlc_utils.py:252)" in out and "error: ?" not in out


def test_run_tells_a_finding_once() -> None:
    script = ("import sys; sys.stderr.write('torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. "
              "GPU 0 has a total capacity of 79.15 GiB of which 1.00 GiB is free.\\n'); sys.exit(1)")
    env = {**os.environ, "NO_COLOR": "1", "COLUMNS": "200"}
    proc = subprocess.run([sys.executable, "-m", "diagnoser", "run", "--", sys.executable, "-c", script],
                          capture_output=True, text=True, env=env, timeout=120, check=False)
    assert proc.stderr.count("A process asked CUDA for 2.00 GiB (GPU 0)") == 1  # the why, once
    assert proc.stderr.count("1. Lower the micro-batch") == 2  # the remedy in the report, and again as the first step
    assert "✗ [cause] CUDA out of memory" in proc.stderr


def test_follow_says_what_it_is_watching(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text("step 1\nstep 2\n")
    env = {**os.environ, "NO_COLOR": "1"}
    proc = subprocess.Popen([sys.executable, "-m", "diagnoser", "--follow", str(log), "--from-start"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    assert proc.stderr is not None
    deadline = time.time() + 60
    first = ""
    while time.time() < deadline and not first:
        first = proc.stderr.readline()
    proc.send_signal(signal.SIGINT)
    _out, err = proc.communicate(timeout=60)
    assert first.startswith("diagnose: watching 1 file(s)") and "Ctrl-C" in first, first + err


def test_a_progress_line_only_in_a_terminal() -> None:
    from diagnoser.console import TerminalProgress

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    for stream, shown in ((Tty(), True), (io.StringIO(), False)):
        progress = TerminalProgress(3, "en", stream)
        progress.started -= 5  # a scan that has run for a while
        progress.EVERY = 0
        progress.source_done()
        progress.add_bytes(10_000_000)
        progress.close()
        assert ("diagnose: scanning 1/3 file(s), 10 MB read" in stream.getvalue()) is shown
        assert stream.getvalue().endswith("\r\x1b[K") is shown  # cleared before the report
