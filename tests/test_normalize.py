"""The normaliser: ANSI (also broken forms), \\r redraws, prefixes, timestamps, streams."""

from __future__ import annotations

import pytest

from diagnoser.read.normalize import Normalizer, strip_ansi


def one(raw: str):  # type: ignore[no-untyped-def]
    lines = Normalizer("x").lines(1, raw)
    assert len(lines) == 1, lines
    return lines[0]


@pytest.mark.parametrize(("raw", "text"), [
    ("\x1b[36m(WorkerDict pid=123, ip=10.0.0.7)\x1b[0m Traceback (most recent call last):",
     "Traceback (most recent call last):"),
    ("[36m(WorkerDict pid=123, ip=10.0.0.7)[0m boom", "boom"),  # ESC byte lost
    ("#033[31mERROR#033[0m bad", "ERROR bad"),
    ("[megatron_strategy.py] keep", "[megatron_strategy.py] keep"),  # "[m" is not a colour code
    ("\x1b]0;title\x07plain", "plain"),
])
def test_ansi(raw: str, text: str) -> None:
    assert one(raw).text == text


def test_raw_keeps_prefixes_but_not_colour() -> None:
    line = one("\x1b[36m(WorkerDict pid=123, ip=10.0.0.7)\x1b[0m boom")
    assert line.raw == "(WorkerDict pid=123, ip=10.0.0.7) boom"


def test_ray_prefix_fields_and_dedup_suffix() -> None:
    line = one("(ActorWorker(actor_train-0-G0) pid=4321, ip=10.0.0.7) Loading shards done [repeated 7x across cluster]")
    assert line.text == "Loading shards done"
    assert (line.actor, line.pid, line.host, line.repeat) == ("ActorWorker(actor_train-0-G0)", 4321, "10.0.0.7", 7)


def test_ray_service_prefixes() -> None:
    assert one("(raylet) A worker died").text == "A worker died"
    assert one("(raylet, ip=10.0.0.8) A worker died").host == "10.0.0.8"
    assert one("(autoscaler +1m16s) Tip: use").text == "Tip: use"


def test_skypilot_run_prefixes() -> None:
    # SkyPilot's (sky/skylet): one node "(task, pid=N)", several "(worker1, rank=1, pid=N, ip=X)"; that rank is the node's
    line = one("\x1b[36m(task, pid=3369)\x1b[0m [rank7]:   File \"/a.py\", line 3, in f")
    assert (line.text, line.rank, line.pid, line.actor) == ('  File "/a.py", line 3, in f', 7, 3369, "task")
    line = one("(worker3, rank=3, pid=16415, ip=10.105.0.7) RuntimeError: boom")
    assert (line.text, line.rank, line.pid, line.host) == ("RuntimeError: boom", None, 16415, "10.105.0.7")


def test_parenthesised_text_is_not_a_prefix() -> None:
    assert one("(1) The process is killed by SIGKILL by OOM killer").text.startswith("(1) The process")


@pytest.mark.parametrize(("raw", "rank", "text"), [
    ("[rank3]: Traceback (most recent call last):", 3, "Traceback (most recent call last):"),
    ('[rank3]:   File "x.py", line 1, in f', 3, '  File "x.py", line 1, in f'),
    ("[rank1]:[E501 10:22:34.112833000 ProcessGroupNCCL.cpp:632] [Rank 1] Watchdog caught", 1, "[Rank 1] Watchdog caught"),
    ("[default5]:Fatal Python error: Segmentation fault", 5, "Fatal Python error: Segmentation fault"),
    ("[1,3]<stderr>:RuntimeError: boom", 3, "RuntimeError: boom"),
    ("10.0.0.1: [rank0]: Traceback (most recent call last):", 0, "Traceback (most recent call last):"),
    ("[default0]:[rank12]:[E817 17:40:34.227531918 ProcessGroupNCCL.cpp:1515] [PG 0 (default_pg) Rank 12] x", 12,
     "[PG 0 (default_pg) Rank 12] x"),
])
def test_rank_prefixes(raw: str, rank: int, text: str) -> None:
    line = one(raw)
    assert (line.rank, line.text) == (rank, text)


def test_childfailederror_index_lines_survive() -> None:
    assert one("  [0]:").text == "  [0]:"
    assert one("[0]:").text == "[0]:"


@pytest.mark.parametrize(("raw", "time", "text"), [
    ("2025-07-01 10:00:02,118\tINFO worker.py:1888 -- Started", "2025-07-01T10:00:02.118", "INFO worker.py:1888 -- Started"),
    ("[2025-07-01 10:12:33,904 ChatLearn-policy_trainer 10.0.0.7 RANK:3] (decorator.py 37): ERROR x",
     "2025-07-01T10:12:33.904", "x"),
    ('[2025-07-01 10:12:33,904 ChatLearn] (decorator.py 37): ERROR   File "a.py", line 1, in f',
     "2025-07-01T10:12:33.904", '  File "a.py", line 1, in f'),
    ("[2026-01-01 10:00:00] [rlvr_pipeline.py (487)] [INFO] [DRIVER 0 / 1][PID 1234] pipeline step 0",
     "2026-01-01T10:00:00", "pipeline step 0"),
    ("2024-05-01T12:00:01.123456Z something", "2024-05-01T12:00:01.123456", "something"),
    ("[2024-05-01 12:00:01,123 I 1234 5678] node_manager.cc:123: msg", "2024-05-01T12:00:01.123",
     "node_manager.cc:123: msg"),
    ("[Wed May  1 12:00:01 2024] NVRM: Xid (PCI:0000:3b:00): 79", "2024-05-01T12:00:01", "NVRM: Xid (PCI:0000:3b:00): 79"),
    # a log export that quotes the time (verl issue 2968)
    ('"2025-08-07T21:02:33+08:00"   File "/data1/verl-main/verl/trainer/main_ppo.py", line 40, in main',
     "2025-08-07T21:02:33", 'File "/data1/verl-main/verl/trainer/main_ppo.py", line 40, in main'),
])
def test_timestamps(raw: str, time: str, text: str) -> None:
    line = one(raw)
    assert (line.time, line.text) == (time, text)


def test_yearless_timestamp_takes_the_year_seen_before() -> None:
    n = Normalizer("x")
    n.lines(1, "2024-12-01 10:00:00,000 INFO start")
    line = n.lines(2, "[rank0]:[E1201 10:22:34.112833000 ProcessGroupNCCL.cpp:632] x")[0]
    assert line.time == "2024-12-01T10:22:34.112833" and line.ts is not None


def test_lines_of_one_second_share_its_reading_but_not_their_fraction_or_year() -> None:
    """A time prefix's date is read once per second and year (prefixes.clock): a line keeps its own fraction of a
    second, and a year-less one read before and after the head's year differs."""
    from diagnoser.read.prefixes import timegm
    n = Normalizer("x")
    before = n.lines(1, "[rank0]:[E1201 10:22:34.100000000 ProcessGroupNCCL.cpp:632] a")[0]
    n.lines(2, "2024-13-40 10:00:00 INFO no such day, but its year is the head's")
    after = n.lines(3, "[rank0]:[E1201 10:22:34.250000000 ProcessGroupNCCL.cpp:632] b")[0]
    whole = n.lines(4, "[rank0]:[E1201 10:22:34 ProcessGroupNCCL.cpp:632] c")[0]
    assert (before.time, before.ts) == ("12-01T10:22:34.100000", None)
    assert (after.time, after.ts) == ("2024-12-01T10:22:34.250000", timegm(2024, 12, 1, 10, 22, 34) + 0.25)
    assert (whole.time, whole.ts) == ("2024-12-01T10:22:34", timegm(2024, 12, 1, 10, 22, 34))
    assert n.lines(5, "2024-13-40 10:00:00 INFO again")[0].time is None


def test_syslog_kernel_line_gives_host() -> None:
    line = one("May  1 12:00:01 node-3 kernel: [12345.678901] NVRM: Xid (PCI:0000:3b:00): 79, pid=1")
    assert line.host == "node-3" and line.text.startswith("NVRM: Xid")


def test_progress_redraws_collapse_and_glued_error_is_found() -> None:
    raw = ("Loading:  10%|█         | 1/10 [00:01<00:09]\rLoading:  50%|█████     | 5/10 [00:05<00:05]"
           "\rTraceback (most recent call last):")
    texts = [x.text for x in Normalizer("x").lines(1, raw)]
    assert texts == ["Traceback (most recent call last):"]
    glued = "Epoch 0:   6%|██ | 32040/500150 [00:10<02:30, 3000it/s][E ProcessGroupNCCL.cpp:458] [Rank 0] Watchdog caught"
    assert [x.text for x in Normalizer("x").lines(1, glued)] == ["[Rank 0] Watchdog caught"]


def test_segments_after_cr_keep_the_prefix_identity() -> None:
    raw = "(WorkerDict pid=9, ip=10.0.0.1) step 1\rRuntimeError: boom"
    lines = Normalizer("x").lines(1, raw)
    assert [x.text for x in lines] == ["step 1", "RuntimeError: boom"]
    assert {x.stream for x in lines} == {lines[0].stream} and lines[1].pid == 9


def test_logger_prefix_does_not_split_the_stream() -> None:
    n = Normalizer("x")
    a = n.lines(1, "(PolicyTrainer pid=3, ip=10.0.0.7) [2025-07-01 10:12:33,904 ChatLearn-p 10.0.0.7 RANK:3] (d.py 3): ERROR x")[0]
    assert a.text == "x"
    b = n.lines(2, "(PolicyTrainer pid=3, ip=10.0.0.7) Traceback (most recent call last):")[0]
    assert a.stream == b.stream and a.rank == 3


def test_strip_ansi_is_idempotent_on_plain_text() -> None:
    assert strip_ansi("plain [1] text") == "plain [1] text"


def test_srun_label_is_stripped_and_the_rank_prefix_after_it_read() -> None:
    line = Normalizer("x").lines(1, "4: [rank4]: RuntimeError: cuDNN Error: Tensor strides not set")[0]
    assert line.text == "RuntimeError: cuDNN Error: Tensor strides not set" and line.rank == 4


def _texts(lines: list[str]) -> list[str]:
    n = Normalizer("x")
    return [n.lines(i, raw)[0].text for i, raw in enumerate(lines, start=1)]


def test_a_numbered_listing_loses_its_gutter() -> None:
    # ROLL issue 436's paste (an editor's right-aligned numbers), and `cat -n`'s tab
    pasted = ["   1 (DynamicSamplingScheduler) Traceback (most recent call last):",
              '   2   File ".../roll/distributed/scheduler/generate_scheduler.py", line 478, in __init__',
              "   3     self.get_next_dataset_item()", "   4 AttributeError: 'DynamicSampli"]
    assert _texts(pasted)[1:] == ['  File ".../roll/distributed/scheduler/generate_scheduler.py", line 478, in __init__',
                                  "    self.get_next_dataset_item()", "AttributeError: 'DynamicSampli"]
    assert _texts(["     7\tTraceback (most recent call last):", "     8\tValueError: x"]) == \
        ["Traceback (most recent call last):", "ValueError: x"]
    # left-aligned numbers count once three lines in a row are numbered n, n + 1, n + 2
    assert _texts(["12 a", "13 b", "14 c", "15 ValueError: x"])[3] == "ValueError: x"


def test_numbers_that_are_no_gutter_stay() -> None:
    # a run of numbers must begin in the first lines (GUTTER_PREAMBLE)
    numbered = ["1 a", "5 b", "9 c", "20 d", "25 e", "30 f", "31 g", "32 h", "33 i"]
    assert _texts(numbered) == numbered
    assert _texts(["step 1", "step 2", "step 3", "100 prompts done"])[3] == "100 prompts done"


def test_prefix_candidates_strip_as_trying_every_pattern(monkeypatch: pytest.MonkeyPatch) -> None:
    """Only the prefix patterns that can match a line's first two characters are tried (prefixes.candidates): every
    sample line normalises exactly as when each pattern of its first character's group is tried in turn."""
    from pathlib import Path

    from diagnoser.read import normalize, prefixes

    root = Path(__file__).resolve().parents[1] / "sample_logs"
    lines = [line for path in sorted(root.rglob("*.log"))
             for line in path.read_text(encoding="utf-8", errors="replace").splitlines()]
    lines += ["[rank", "[r", "(", "I0325 20:57:27.620000 2606 api.py:869] x", "node-3: y", "Sep  1 10:00:00 h k: z"]

    def every(text: str) -> tuple[object, ...] | None:
        first = text[0]
        group = {"[": prefixes.BRACKET, "(": prefixes.PAREN}.get(first) or (
            prefixes.DIGIT if first.isdigit() else prefixes.ALPHA if first.isalpha() else ())
        return group or None

    def normalised() -> list[list[tuple[object, ...]]]:
        n = Normalizer("x")
        return [[(x.text, x.stream, x.rank, x.host, x.actor, x.pid, x.time, x.lrank) for x in n.lines(i, raw)]
                for i, raw in enumerate(lines, 1)]

    fast = normalised()
    monkeypatch.setattr(normalize, "prefix_candidates", every)
    assert normalised() == fast
