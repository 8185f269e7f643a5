"""Following growing files (tail -F): appends, partial lines, rotation, truncation, new and deleted files."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from diagnoser.__main__ import main as diagnoser_main
from diagnoser.read import follow as follow_mod
from diagnoser.read import startmarks
from diagnoser.read.follow import Follower
from diagnoser.read.sources import MAX_LINE
from diagnoser.read.tail import one_by_one


def lines(f: Follower) -> list[tuple[str, int, str]]:
    return [(Path(t.name).name, n, text) for t, n, text in one_by_one(f.poll())]


def append(path: Path, text: str) -> None:
    with open(path, "a", encoding="utf-8") as fh:
        fh.write(text)


@pytest.fixture
def quick(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(follow_mod, "IDLE_FLUSH", 0.05)


def test_starts_at_the_end_and_follows_appends(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text("old 1\nold 2\n")
    f = Follower([log], from_start=False, warn=print)
    assert lines(f) == []
    append(log, "new 3\n")
    assert lines(f) == [("train.log", 3, "new 3")]  # line numbers count what was there before


def test_from_start(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text("a\nb\n")
    assert lines(Follower([log], from_start=True, warn=print)) == [("train.log", 1, "a"), ("train.log", 2, "b")]


def test_partial_line_waits_for_its_newline_then_idle_flush(tmp_path: Path, quick: None) -> None:
    log = tmp_path / "train.log"
    log.write_text("")
    f = Follower([log], from_start=True, warn=print)
    append(log, "step:2 - actor/pg")
    assert lines(f) == []
    append(log, "_loss:0.1\nhalf")
    assert lines(f) == [("train.log", 1, "step:2 - actor/pg_loss:0.1")]
    time.sleep(0.1)
    assert lines(f) == [("train.log", 2, "half")]  # the writer died mid-line: told after a short idle


def test_rotation_reads_the_rest_of_the_old_file_first_and_never_twice(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text("")
    f = Follower([tmp_path], from_start=True, warn=print, rescan_every=0)
    append(log, "one\n")
    assert lines(f) == [("train.log", 1, "one")]
    append(log, "two\n")  # written before the rotation, not yet read
    os.rename(log, tmp_path / "train.log.1")
    append(log, "three\n")
    got = lines(f) + lines(f) + lines(f)
    assert [x[2] for x in got] == ["two", "three"]
    assert lines(f) == []  # the renamed old file is not read again as a new one


def test_truncation_reads_again_from_the_start(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text("aaaaaaaaaa\nbbbbbbbbbb\n")
    f = Follower([log], from_start=True, warn=print)
    assert len(lines(f)) == 2
    with open(log, "w") as fh:  # copytruncate
        fh.write("")
    assert lines(f) == []
    append(log, "after\n")
    assert [x[2] for x in lines(f) + lines(f)] == ["after"]


def test_new_file_in_a_followed_folder_is_read_from_its_start(tmp_path: Path) -> None:
    (tmp_path / "rank0.log").write_text("x\n")
    f = Follower([tmp_path], from_start=False, warn=print, rescan_every=0)
    assert lines(f) == []
    (tmp_path / "rank1.log").write_text("first\nsecond\n")
    assert lines(f) == [("rank1.log", 1, "first"), ("rank1.log", 2, "second")]


def test_deleted_file_is_drained_and_no_error(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text("")
    f = Follower([log], from_start=True, warn=print)
    append(log, "last words\n")
    log.unlink()
    assert lines(f) == [("train.log", 1, "last words")]
    assert lines(f) == []


def test_over_long_line_is_cut_and_memory_stays_bounded(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text("")
    f = Follower([log], from_start=True, warn=print)
    append(log, "x" * (MAX_LINE + 10_000))
    assert lines(f) == []
    assert len(f.tails[log].partial) <= MAX_LINE
    append(log, "y" * 5000 + "\nnext\n")
    got = lines(f)
    assert got[0][2].startswith("x" * 100) and got[0][2].endswith("cut at 64 KiB]") and got[1][2] == "next"


def test_follow_exits_at_the_first_root_cause(tmp_path: Path) -> None:
    """End to end: a writer appends to a followed folder; --exit-on cause stops diagnose with status 1."""
    log = tmp_path / "rank3.log"
    log.write_text("step:1 - actor/pg_loss:0.1\n")
    env = {**os.environ, "NO_COLOR": "1"}
    # --from-start: whenever diagnose gets going, the appended line is read (no race with its start-up)
    proc = subprocess.Popen([sys.executable, "-m", "diagnoser", "--follow", str(tmp_path), "--exit-on", "cause",
                             "--from-start"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    time.sleep(1.0)
    append(log, "[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a "
                "total capacity of 79.15 GiB of which 1.00 GiB is free.\n")
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 1, err
    assert "cuda-oom" in out and "Root cause" in out


def test_follow_reports_a_hang(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text("")
    proc = subprocess.Popen([sys.executable, "-m", "diagnoser", "--follow", str(tmp_path), "--hang-after", "2s",
                             "--format", "jsonl", "--from-start"], stdout=subprocess.PIPE, text=True)
    append(log, "step:1 - actor/pg_loss:0.1\n")
    deadline = time.time() + 60
    seen = ""
    assert proc.stdout is not None
    while time.time() < deadline:
        seen = proc.stdout.readline()
        if '"job-hang"' in seen:
            break
    proc.terminate()
    proc.communicate(timeout=30)
    assert '"job-hang"' in seen and "step:1" in seen
    assert proc.returncode == 143


@pytest.mark.parametrize("signame", ["SIGHUP", "SIGQUIT", "SIGUSR1"])
def test_a_stop_signal_ends_follow_with_its_report(tmp_path: Path, signame: str) -> None:
    # they killed --follow without a report (the default action of each); now each stops it like SIGTERM does
    signum = getattr(signal, signame)
    log = tmp_path / "rank3.log"
    log.write_text("[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a "
                   "total capacity of 79.15 GiB of which 1.00 GiB is free.\n")
    proc = subprocess.Popen([sys.executable, "-m", "diagnoser", "--follow", str(tmp_path), "--format", "jsonl",
                             "--from-start"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    assert proc.stdout is not None
    deadline = time.time() + 60
    while time.time() < deadline and '"cuda-oom"' not in proc.stdout.readline():
        pass
    proc.send_signal(signum)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 128 + signum, err
    assert '"event": "summary"' in out and "Traceback" not in err


def test_follow_never_reads_its_own_output_file(tmp_path: Path) -> None:
    # `diagnose -F DIR > DIR/report.log`: the report is a log in the followed folder, and its evidence lines were read
    # back as new failures (each printed again, read again)
    log = tmp_path / "rank3.log"
    log.write_text("[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a "
                   "total capacity of 79.15 GiB of which 1.00 GiB is free.\n")
    report = tmp_path / "report.log"
    with open(report, "wb") as out:
        proc = subprocess.Popen([sys.executable, "-m", "diagnoser", "--follow", str(tmp_path), "--format", "jsonl",
                                 "--from-start"], stdout=out, stderr=subprocess.PIPE, text=True)
        deadline = time.time() + 60
        while time.time() < deadline and '"cuda-oom"' not in report.read_text():
            time.sleep(0.2)
        time.sleep(2.5)  # more than a rescan of the folder (1 s)
        proc.terminate()
        _out, err = proc.communicate(timeout=60)
    text = report.read_text()
    assert '"cuda-oom"' in text and "report.log: diagnose writes its own output there" in err
    assert '"source": "' + str(report) not in text and text.count('"event": "finding"') == 1, text


def test_a_deleted_file_is_released_once_drained(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    # every followed file stayed open, deleted ones too: a job that makes and deletes files ran us out of handles
    monkeypatch.setattr(follow_mod, "RELEASE_AFTER", 0.0)
    f = Follower([tmp_path], from_start=True, warn=print, rescan_every=0.0)
    for i in range(50):
        log = tmp_path / f"worker{i}.log"
        log.write_text(f"line of {i}\n")
        assert lines(f) == [(log.name, 1, f"line of {i}")]
        log.unlink()
        assert lines(f) == []
    assert len(f.tails) == 0
    again = tmp_path / "worker7.log"  # a new file at an old name is new: read from its start
    again.write_text("back again\n")
    assert lines(f) == [("worker7.log", 1, "back again")]
    f.close()


OOM = ("[rank3]: torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 3 has a total capacity "
       "of 79.15 GiB of which 1.00 GiB is free.\n")


def test_lines_written_while_it_starts_are_read(tmp_path: Path) -> None:
    log = tmp_path / "train.log"
    log.write_text("old 1\n")
    start = startmarks.take([str(tmp_path)])  # when the command started
    append(log, "written while diagnose started\n")
    (tmp_path / "rank1.log").write_text("a new file\n")
    f = Follower([tmp_path], from_start=False, warn=print, start=start)
    assert sorted(lines(f)) == [("rank1.log", 1, "a new file"), ("train.log", 2, "written while diagnose started")]
    assert lines(Follower([log], from_start=False, warn=print)) == []  # without the marks: from the end, as before


def test_follow_loses_nothing_written_while_it_starts(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                     capsys: pytest.CaptureFixture[str]) -> None:
    """The console script's own entry, no --from-start: the OOM line is written just after the command started,
    while it still imports and loads its signatures; it is read (before, --follow began at the file's end then and
    reported a hang instead)."""
    log = tmp_path / "rank3.log"
    log.write_text("step:1 - actor/pg_loss:0.1\n")
    take_at_start = startmarks.take_at_start

    def started(args: list[str]) -> None:
        take_at_start(args)
        append(log, OOM)  # the job writes on while diagnose starts up

    monkeypatch.setattr(startmarks, "take_at_start", started)
    code = diagnoser_main(["--follow", str(log), "--exit-on", "cause", "--hang-after", "5s", "--format", "jsonl"])
    out = capsys.readouterr().out
    assert code == 1 and '"cuda-oom"' in out and '"job-hang"' not in out


def test_follow_waits_for_a_file_that_does_not_exist_yet(tmp_path: Path) -> None:
    log = tmp_path / "rank3.log"
    proc = subprocess.Popen([sys.executable, "-m", "diagnoser", "--follow", str(log), "--exit-on", "cause"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env={**os.environ, "NO_COLOR": "1"})
    assert proc.stderr is not None
    deadline, said = time.time() + 120, ""
    while time.time() < deadline and "waiting for it" not in said:
        said = proc.stderr.readline()  # diagnose says it waits, then the file appears
    log.write_text("step:1 - actor/pg_loss:0.1\n" + OOM)
    try:
        out, err = proc.communicate(timeout=120)
    finally:
        proc.kill()
    assert "does not exist yet; waiting for it (as tail -F does)" in said
    assert proc.returncode == 1 and "cuda-oom" in out, err
