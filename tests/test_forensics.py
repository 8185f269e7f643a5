"""Cross-rank forensics: who wrote each line (layouts, srun labels, NCCL prefixes), the marks read from the real
text, the safe flight-recorder reader, py-spy stacks, noise that is not a failure, bounded memory, and the
culprit in every mode."""

from __future__ import annotations

import json
import pickle
from pathlib import Path

import pytest

from diagnoser.judge import book as book_module
from diagnoser.modes.pipeline import Pipeline
from diagnoser.read import activity
from diagnoser.read.errorfile import error_file_text
from diagnoser.read.flightrec import DumpError, load_dump
from diagnoser.read.layout import identify, sibling_identities
from diagnoser.read.marks import busid_to_pci, probe, self_rank
from diagnoser.read.normalize import Normalizer
from diagnoser.read.pyspy import PySpyReader


# -- who wrote it --------------------------------------------------------------------------------------------
@pytest.mark.parametrize(("rel", "expect"), [
    ("logs/run_ab12cd34/attempt_1/3/stderr.log", {"local_rank": 3, "attempt": 1, "group": "/j/logs/run_ab12cd34",
                                                  "rank": None, "kind": "log"}),
    ("logs/run_ab12cd34/attempt_0/0/error.json", {"local_rank": 0, "attempt": 0, "kind": "elastic-error"}),
    ("session_latest/logs/worker-0d7607570b45036904d7ea2ecf03fe35a79f9399ad81f37cafbfdca2-01000000-2311.out",
     {"pid": 2311, "role": "ray"}),
    ("fr/nccl_trace_rank_7", {"kind": "flight-recorder", "rank": 7}),
    ("fr/json/nccl_trace_rank_12.json", {"kind": "flight-recorder", "rank": 12}),
    ("node10/train.log", {"host": "node10"}),
    ("node1/train.log", {"host": "node1"}),
    ("10.0.0.12/rank3.log", {"host": "10.0.0.12", "rank": 3}),
    ("host-10.0.0.1/train.log", {"host": None}),  # not a piece of a name
    ("kern_node03.log", {"host": "node03", "role": "kernel"}),
    ("train.restart2.log", {"attempt": 2}),
])
def test_identify(rel: str, expect: dict) -> None:  # type: ignore[type-arg]
    ident = identify(Path("/j") / rel, Path("/j"))
    for key, value in expect.items():
        assert getattr(ident, key) == value, (rel, key)


def test_srun_output_patterns_give_rank_or_host() -> None:
    def run(names: list[str]) -> list[tuple[int | None, str | None]]:
        paths = [Path("/j") / n for n in names]
        out = sibling_identities(paths, [identify(p, Path("/j")) for p in paths])
        return [(i.rank, i.host) for i in out]
    assert run([f"job-77-{t}.out" for t in range(12)]) == [(t, None) for t in range(12)]  # %t
    assert run(["train-gpu017.out", "train-gpu018.out"]) == [(None, "gpu017"), (None, "gpu018")]  # %N
    assert run([f"py-spy-{p}.txt" for p in (27524, 27525)]) == [(None, None)] * 2  # pids are not task ids
    assert run(["app.log.1", "app.log.2"]) == [(None, None)] * 2  # rotated copies


def test_srun_label_prefix() -> None:
    n = Normalizer("x")
    lines = [n.lines(i, t)[0] for i, t in enumerate(
        [" 0: [2026-11-25 23:28:43] rank 0/12", " 9: hello", "10: [rank10]: boom",
         "srun: error: vm: task 10: Killed", " 3: [default1]:[rank7]: x"], 1)]
    assert [(x.rank, x.task) for x in lines] == [(0, 0), (9, 9), (10, 10), (None, None), (7, 3)]
    assert lines[4].lrank == 1
    plain = Normalizer("y")
    got = [plain.lines(i, t)[0] for i, t in enumerate(["1: first item", "just text", "2: second"], 1)]
    # one labelled-looking line is not srun's: no task id (its label is still stripped as a logger prefix)
    assert got[2].rank is None and got[2].task is None and got[2].text == "second"


def test_nccl_prefix_names_the_process() -> None:
    line = Normalizer("x").lines(1, "gpu-a800-node17:1903:2398 [1] NCCL INFO ncclCommInitRank comm 0x55d8c6b2a500 "
                                   "rank 1 nranks 8 cudaDev 1 nvmlDev 1 busId 2a000 commId 0x7c1e - Init COMPLETE")[0]
    assert (line.host, line.pid) == ("gpu-a800-node17", 1903)
    assert line.text.startswith("gpu-a800-node17:1903:2398 [1] NCCL INFO")  # signatures still see it whole
    (mark,) = probe(line.text)
    assert mark.fields["busid"] == "2a000" and busid_to_pci("2a000") == "0000:2a:00"
    assert busid_to_pci("1a1000") == "0001:a1:00"


# -- marks: every form from the real text ------------------------------------------------------------------------
@pytest.mark.parametrize(("text", "kind", "fields"), [
    ("[Rank 1] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=6463, OpType=ALLREDUCE, NumelIn=1, "
     "NumelOut=1, Timeout(ms)=1800000) ran for 1800017 milliseconds before timing out.",
     "wd_timeout", {"seq": "6463", "op": "ALLREDUCE", "timeout_ms": "1800000"}),
    ("[PG 0 Rank 2] Timeout at NCCL work: 1, last enqueued NCCL work: 1, last completed NCCL work: 76280750235782912.",
     "wd_progress", {"pg_uid": "0", "seq": "1", "enq": "1"}),
    ("[PG 0 (default_pg) Rank 1] Exception (either an error or timeout) detected by watchdog at work: 6463, last "
     "enqueued NCCL work: 6463, last completed NCCL work: 6462.", "wd_progress", {"pg_desc": "default_pg", "seq": "6463"}),
    ("[PG ID 0 PG GUID 0(default_pg) Rank 1]  failure detected by watchdog at work sequence id: 2635 PG status: last "
     "enqueued work: 2635, last completed work: 2634", "wd_progress", {"pg_guid": "0", "enq": "2635", "done": "2634"}),
    ("\t - To our best knowledge, ranks [3, 5] are the lagging ranks that caused this timeout. They never joined any "
     "collectives", "lagging", {"ranks": "3, 5"}),
    ("RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/unbound_buffer.cc:78] Timed out waiting "
     "5000ms for recv operation to complete", "gloo_timeout", {"ms": "5000", "dir": "recv"}),
    ("  exitcode  : -9 (pid: 14604)  (SIGKILL)", "cfe_exit", {"code": "-9", "pid": "14604", "sig": "SIGKILL"}),
    ("  rank      : 3 (local_rank: 1)", "cfe_rank", {"rank": "3", "local": "1"}),
    ("Sending process 14140 closing signal SIGTERM", "agent_term", {"pid": "14140"}),
    ("Received 15 death signal, shutting down workers", "agent_death", {"sig": "15"}),
    ("Received Signals.SIGTERM death signal, shutting down workers", "agent_death", {"sig": "Signals.SIGTERM"}),
    ("  global_ranks=[2, 3]", "rdzv", {"key": "global_ranks", "val": "[2, 3]"}),
    ("[default] Worker group FAILED. 1/1 attempts left; will restart worker group", "restart", {"left": "1"}),
    ("slurmstepd-vm: error: *** JOB 4 ON vm CANCELLED AT 2026-11-25T23:29:29 DUE TO TIME LIMIT ***",
     "sched_kill", {"reason": "TIME LIMIT", "node": "vm"}),
    ("srun: error: vm: tasks 0-9,11: Exited with exit code 1", "srun_task", {"host": "vm", "tasks": "0-9,11"}),
    ("NVRM: Xid (PCI:0000:3b:00): 79, pid=1234, name=python, GPU has fallen off the bus.", "xid",
     {"pci": "0000:3b:00", "xid": "79", "pid": "1234"}),
    ("Out of memory: Killed process 24967 (python3.11) total-vm:21734160kB, anon-rss:18342116kB", "oom_kill",
     {"pid": "24967", "comm": "python3.11"}),
    ("[after training is done] datetime: 2024-11-05 12:00:00 ", "success", {}),
    ("INFO 05-09 16:18:30 No available shared memory broadcast block found in 60 second.", "waiting", {"secs": "60"}),
])
def test_marks(text: str, kind: str, fields: dict[str, str]) -> None:
    marks = {m.kind: m.fields for m in probe(text)}
    assert kind in marks, marks
    for key, value in fields.items():
        assert marks[kind].get(key) == value, (key, marks[kind])


def test_self_rank_head_prints() -> None:
    assert self_rank("rank 2/4 host=vm pid=11055").fields == {"rank": "2", "pid": "11055"}  # type: ignore[union-attr]
    assert self_rank("env={'RANK': '3', 'LOCAL_RANK': '1'}").fields["rank"] == "3"  # type: ignore[union-attr]
    assert self_rank("NODE_RANK=1 MASTER_ADDR=x") is None


# -- artifacts ---------------------------------------------------------------------------------------------------
def test_error_json_is_read_as_its_traceback() -> None:
    doc = {"message": {"message": "RuntimeError: boom", "extraInfo": {
        "py_callstack": "Traceback (most recent call last):\n  File \"w.py\", line 1, in <module>\nRuntimeError: boom\n",
        "timestamp": "1795642187"}}}
    assert error_file_text(json.dumps(doc).encode()).decode().splitlines()[-1] == "RuntimeError: boom"
    assert error_file_text(b"not json") == b"not json"


class _Evil:
    def __reduce__(self):  # type: ignore[no-untyped-def]
        import os
        return (os.system, ("echo pwned",))


def test_flight_recorder_pickle_never_runs_code() -> None:
    good = {"version": "2.10", "pg_status": {"0": {"last_enqueued_collective": 2, "last_started_collective": -1,
                                                   "last_completed_collective": 2}}, "entries": []}
    assert load_dump(pickle.dumps(good, protocol=2))["version"] == "2.10"
    for evil in (pickle.dumps({"entries": [_Evil()]}, protocol=2), pickle.dumps(_Evil(), protocol=4)):
        with pytest.raises(DumpError, match="refused"):
            load_dump(evil)
    with pytest.raises(DumpError):
        load_dump(b"\x80\x02" + b"\x00" * 10)


def test_pyspy_main_thread() -> None:
    reader = PySpyReader()
    text = ["Process 21478: /opt/venv/bin/python3.11 -u /opt/job/worker.py", "Python v3.11.7 (/usr/bin/python3.11)", "",
            'Thread 21478 (idle): "MainThread"', "    main (worker.py:70)", "    <module> (worker.py:89)", ""]
    stacks = [s for s in (reader.feed(t) for t in text) if s is not None]
    assert len(stacks) == 1 and stacks[0].pid == 21478 and stacks[0].frames[0] == ("main", "worker.py", 70)


# -- noise, memory, modes ----------------------------------------------------------------------------------------
def test_errors_after_the_success_line_and_retried_ones_are_not_failures(db) -> None:  # type: ignore[no-untyped-def]
    lines = ["iteration 10/10 | loss 1.0", "[after training is done] datetime: 2024-11-05 12:00:00 ",
             "node1:123:456 [0] NCCL WARN Net : Connection closed by remote peer node2<55462>"]
    from diagnoser.modes.batch import diagnose_text
    report = diagnose_text(db, "\n".join(lines))
    assert not report.failed and report.forensics is not None
    assert [i[:2] for i in report.forensics.ignored] == [("nccl-error", "after-success")]
    retried = ["Traceback (most recent call last):", '  File "x.py", line 1, in f', "OSError: [Errno 28] No space left "
               "on device", "WARNING: save failed, retrying in 5 s (attempt 1/3)", "iteration 11/20 | loss 1.0"]
    report = diagnose_text(db, "\n".join(retried))
    assert not report.failed, [f.sig.id for f in report.findings]


def test_memory_stays_bounded_with_many_ranks(db, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:  # type: ignore[no-untyped-def]
    # the caps are lowered so that a small log crosses them (the real ones: 1,024 writers per file, 16,384 in all)
    monkeypatch.setattr(book_module, "MAX_WRITERS", 300)
    monkeypatch.setattr(activity, "MAX_KEYS", 200)
    log = tmp_path / "huge.log"
    with open(log, "w") as fh:
        for r in range(2000):
            fh.write(f"[rank{r}]:[E1118 20:32:23.957372583 ProcessGroupNCCL.cpp:2168] [PG ID 0 PG GUID 0(default_pg) "
                     f"Rank {r}]  failure detected by watchdog at work sequence id: 5 PG status: last enqueued work: "
                     f"5, last completed work: 4\n")
    pipeline = Pipeline(db)
    from diagnoser.read.sources import Source
    pipeline.add(pipeline.scan(Source(str(log), log), 0, fast=False))
    book = pipeline.collector.forensics
    assert 0 < len(book.writers) <= 300 and book.dropped >= 2000 - 300


def test_kernel_line_joined_by_host_and_time(db, tmp_path: Path) -> None:  # type: ignore[no-untyped-def]
    # an Xid whose pid is no rank's and whose GPU no rank printed: the rank of that host that stopped just before it
    # (not the one that only lost its peer); dmesg line from sample_logs/host/gpu-fell-off-bus-xid79-dmesg.log
    node = tmp_path / "node03"
    node.mkdir()
    (node / "rank0.log").write_text(
        "[2025-07-17 14:01:50] rank 0/2 host=node03 pid=101\n[2025-07-17 14:02:36] rank 0: step 3/6 loss=1.0000\n"
        "[rank0]: RuntimeError: [/__w/pytorch/pytorch/third_party/gloo/gloo/transport/tcp/pair.cc:553] Connection "
        "closed by peer [127.0.0.1]:11678. This is typically caused by a remote worker crashing. Check the logs of "
        "the remote worker before reporting an error. GLHF!\n")
    (node / "rank1.log").write_text(
        "[2025-07-17 14:01:50] rank 1/2 host=node03 pid=102\n[2025-07-17 14:02:37] rank 1: step 3/6 loss=1.0000\n")
    (node / "dmesg.txt").write_text("[Thu Jul 17 14:02:38 2025] NVRM: Xid (PCI:0000:3b:00): 79, pid=428817, "
                                    "name=python3, GPU has fallen off the bus.\n")
    from diagnoser.modes.batch import diagnose
    from diagnoser.read.walk import expand
    from diagnoser.report.contract import to_json
    report = diagnose(db, expand(tmp_path, lambda _m: None), "en")
    culprit = to_json(report)["culprit"]
    assert (culprit["rank"], culprit["host"], culprit["error"]) == (1, "node03", "gpu-fell-off-bus")
    assert report.forensics is not None and report.forensics.culprit is not None
    row = report.forensics.culprit.row
    assert row is not None and row.kernel is not None and "Xid 79" in row.kernel[0]


def test_culprit_host_is_the_one_its_error_was_printed_on(db) -> None:  # type: ignore[no-untyped-def]
    # two clusters that each count ranks from 0 (a rollout engine's and a trainer's): both processes report rank 13
    # (NCCL "comm ... rank 13 nranks 32" lines), the rollout's first, so the rank's row has its host and GPU; the
    # trainer's OOM makes rank 13 the culprit, and the host to name is the trainer's
    from diagnoser.modes.batch import diagnose_text
    from diagnoser.report.contract import forensics_json
    from diagnoser.report.ranks import culprit_line
    vllm, trainer = "(VLLMPolicyInference pid=25411, ip=10.0.137.33)", "(PolicyTrainer pid=42886, ip=10.1.181.102)"
    lines = [
        f"{vllm} w3:25411:25421 [5] NCCL INFO comm 0xa38014dfebe rank 13 nranks 32 cudaDev 5 nvmlDev 5 busId c8000 "
        "commId 0x188d71cd47692a9 - Init COMPLETE",
        "(VLLMPolicyInference pid=25410, ip=10.0.137.33) w3:25410:25420 [4] NCCL INFO comm 0xa38014dfebf rank 12 "
        "nranks 32 cudaDev 4 nvmlDev 4 busId b8000 commId 0x188d71cd47692a9 - Init COMPLETE",
        f"{trainer} w1:42886:43179 [5] NCCL INFO ncclCommInitRank comm 0xf63bde65fcf rank 13 nranks 32 cudaDev 5 "
        "nvmlDev 5 busId 2d000 commId 0x8cb9b5a088fbf2 - Init START",
        f"{trainer} Traceback (most recent call last):",
        f'{trainer}   File "/workspace/Megatron-LM/megatron/training/training.py", line 1180, in train_step',
        f"{trainer}     loss.backward()",
        f"{trainer} torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB. GPU 5 has a total "
        "capacity of 79.33 GiB of which 1.02 GiB is free.",
    ]
    report = diagnose_text(db, "\n".join(lines))
    assert report.failed and report.forensics is not None and report.forensics.culprit is not None
    assert report.forensics.culprit.rank == 13
    head = culprit_line(report) or ""
    assert "host 10.1.181.102" in head and "10.0.137.33" not in head and "GPU" not in head, head
    culprit = forensics_json(report)["culprit"]
    assert isinstance(culprit, dict) and (culprit["host"], culprit["gpu"]) == ("10.1.181.102", None)


def test_the_actor_ray_says_died_is_the_culprit_when_no_rank_failed(db) -> None:  # type: ignore[no-untyped-def]
    # Ray's ActorDiedError (python/ray/exceptions.py) names the dead actor's pid and node on lines of their own; the
    # rank with that pid on that node is the one that stopped with no error of its own, not any other silent rank
    from diagnoser.modes.batch import diagnose_text
    from diagnoser.report.ranks import culprit_line
    t5, t6 = "(PolicyTrainer pid=2603, ip=10.0.66.32)", "(PolicyTrainer pid=2711, ip=10.0.66.33)"
    lines = [
        f"{t5} w1:2603:2700 [5] NCCL INFO ncclCommInitRank comm 0xf63bde65fcf rank 5 nranks 8 cudaDev 5 nvmlDev 5 "
        "busId 4b000 commId 0x8cb9b5a088fbf2 - Init START",
        f"{t6} w2:2711:2800 [6] NCCL INFO ncclCommInitRank comm 0xf63bde65fd0 rank 6 nranks 8 cudaDev 6 nvmlDev 6 "
        "busId 5b000 commId 0x8cb9b5a088fbf2 - Init START",
        f"{t6} loading state_dict shard 1 of 4", f"{t5} loading state_dict shard 2 of 4",
        "Traceback (most recent call last):",
        '  File "/usr/local/lib/python3.10/dist-packages/ray/_private/worker.py", line 919, in get_objects',
        "    raise value.as_instanceof_cause()",
        "ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.",
        "\tclass_name: PolicyTrainer", "\tactor_id: afbd67f9619699cfe1988ad9f06c144a", "\tpid: 2603",
        "\tname: policy_trainer_5", "\tnamespace: 8ee99041922e28ca3bc30807b523b5fc56c2184f134c3e029e98d086",
        "\tip: 10.0.66.32",
        "The actor is dead because its worker process has died. Worker exit type: SYSTEM_ERROR Worker exit detail: "
        "Worker unexpectedly exits with a connection error code 2. End of file.",
    ]
    report = diagnose_text(db, "\n".join(lines))
    c = report.forensics.culprit if report.forensics is not None else None
    assert c is not None and (c.rank, c.reason) == (5, "killed")
    assert "rank 5 (host 10.0.66.32" in (culprit_line(report) or "")
    # the same pid on another node is another process: nobody is named, not even with a rank waiting in a collective
    # (a dead actor that is no rank of these logs is not replaced by a guess among the silent ranks)
    watchdog = (f"{t6} [rank6]:[E1126 18:42:00.272000 2711 ProcessGroupNCCL.cpp:616] [Rank 6] Watchdog caught "
                "collective operation timeout: WorkNCCL(SeqNum=72481, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, "
                "Timeout(ms)=600000) ran for 600031 milliseconds before timing out.")
    for extra in ([], [watchdog]):
        other = diagnose_text(db, "\n".join([*lines, *extra]).replace("\tip: 10.0.66.32", "\tip: 10.0.66.99"))
        assert other.forensics is None or other.forensics.culprit is None, extra
