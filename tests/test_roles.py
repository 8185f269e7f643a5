"""Causal roles and partial evidence in a report: a SIGKILL with no memory message is killed by a signal, a `Killed`
after an engine's own shutdown is teardown, a C++ `what()` message is the error, exceptions behind prefixes nobody
listed are read."""

from __future__ import annotations

from pathlib import Path

import pytest

from diagnoser.match.database import Database
from diagnoser.modes.batch import diagnose_text
from diagnoser.read.lone import lone_error

KERNEL_OOM = ("[44930.378157] Memory cgroup out of memory: Killed process 59249 (python) total-vm:38974820kB, "
              "anon-rss:98544kB, file-rss:319140kB, shmem-rss:6144kB")
BASH_KILLED = "run.sh: line 12: 17783 Killed                  python train.py"


def ids(db: Database, text: str) -> tuple[str | None, list[str]]:
    report = diagnose_text(db, text)
    return (report.root_cause.sig.id if report.root_cause else None), [f.sig.id for f in report.findings]


def test_a_sigkill_without_memory_evidence_is_not_host_oom(db: Database) -> None:
    root, found = ids(db, BASH_KILLED)
    assert root is None and found == ["killed-by-signal"]


def test_a_sigkill_with_memory_evidence_confirms_host_oom(db: Database) -> None:
    root, found = ids(db, KERNEL_OOM + "\n" + BASH_KILLED)
    assert root == "host-oom-killed" and found == ["host-oom-killed", "killed-by-signal"]
    report = diagnose_text(db, KERNEL_OOM + "\n" + BASH_KILLED)
    assert report.findings[1].sig.role == "confirmation"


def test_killed_after_an_engine_shutdown_is_teardown(db: Database) -> None:
    # SGLang's launcher SIGKILLs its own process tree after a child failed (engine.py sigquit_handler)
    text = ("AssertionError: fp8 tensor core is not supported in fa2 backend\n\n"
            "[2026-03-13 14:24:23] Received sigquit from a child process. It usually means the child failed.\n"
            "Killed")
    report = diagnose_text(db, text)
    assert report.root_cause is None and [f.sig.id for f in report.findings] == ["killed-in-teardown"]
    assert report.findings[0].sig.role == "teardown" and not report.findings[0].sig.is_failure
    assert report.unrecognized[0].exc_type == "AssertionError"
    assert not report.only_symptoms  # the unrecognised error is the headline, not the teardown


def test_the_what_message_of_a_cxx_terminate_is_the_error(db: Database) -> None:
    text = ("terminate called after throwing an instance of 'c10::Error'\n"
            "  what():  CUDA error: initialization error\n"
            "Exception raised from insert_events at /pytorch/c10/cuda/CUDACachingAllocator.cpp:717 "
            "(most recent call first):")
    report = diagnose_text(db, text)
    assert [(u.exc_type, u.message) for u in report.unrecognized] == [("c10::Error", "CUDA error: initialization error")]
    assert [f.sig.id for f in report.findings] == ["process-aborted"] and not report.only_symptoms


def test_a_known_what_message_is_its_signature(db: Database) -> None:
    text = ("terminate called after throwing an instance of 'c10::Error'\n"
            "  what():  CUDA error: an illegal memory access was encountered")
    root, _ = ids(db, text)
    assert root == "cuda-illegal-memory-access"
    assert not diagnose_text(db, text).unrecognized


@pytest.mark.parametrize(("line", "expected"), [
    ("4: [rank4]: RuntimeError: cuDNN Error: Tensor strides not set", ("RuntimeError", "cuDNN Error: Tensor strides not set")),
    ("2024-05-01 10:00:00.123 | ERROR    | trainer:step:12 - ValueError: bad shape", ("ValueError", "bad shape")),
    ("[2024-05-01 10:00:00.123] [worker] [error] RuntimeError: boom", ("RuntimeError", "boom")),
    ("[trainer-a]: KeyError: 'rename_key_'", ("KeyError", "'rename_key_'")),
    ("the job failed with ValueError: bad shape", None),  # prose, not a prefix
    ("2024-05-01 10:00:00 | INFO | retrying after ValueError: bad shape", None),  # logged as handled
    # Ray's raylet quoting the error it handled (a sentence before it, not a prefix)
    ("node_manager.cc:628: Failed to send exit request to worker : RpcError: RPC error: Socket closed rpc_code: 14.",
     None),
])
def test_an_exception_behind_a_prefix_nobody_listed(line: str, expected: tuple[str, str] | None) -> None:
    m = lone_error(line)
    assert (m.group("type"), m.group("msg")) == expected if expected else m is None


def test_advice_is_never_the_root_cause(db: Database) -> None:
    from diagnoser.judge.findings import Finding, Location
    from diagnoser.judge.rank import rank_findings, root_cause

    advice = next(cs.sig for cs in db.signatures if cs.sig.role == "advice")
    loc = Location("a.log", 1)
    assert root_cause(rank_findings([Finding(advice, 1, loc, loc, {}, ())])) is None


# vLLM's engine core logs the failed call and then its traceback (an OpenRLHF user's post, OpenRLHF issue 1193, cut
# inside that traceback's frames)
ENGINE_CALL = [
    '(LLMRayActor pid=585804) (EngineCore_DP0 pid=586112) ERROR 03-05 00:25:45 [core.py:1094] Invocation of collective_rpc method failed',
    '(LLMRayActor pid=585804) (EngineCore_DP0 pid=586112) ERROR 03-05 00:25:45 [core.py:1094] Traceback (most recent call last):',
    '(LLMRayActor pid=585804) (EngineCore_DP0 pid=586112) ERROR 03-05 00:25:45 [core.py:1094]   File "/home/jianh/.local/lib/python3.12/site-packages/vllm/v1/engine/core.py", line 1091, in _handle_client_request',
    '(LLMRayActor pid=585804) (EngineCore_DP0 pid=586112) ERROR 03-05 00:25:45 [core.py:1094]     result = method(*self._convert_msgspec_args(method, args))',
    '(LLMRayActor pid=585804) (EngineCore_DP0 pid=586112) ERROR 03-05 00:25:45 [core.py:1094]              ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^',
    '(LLMRayActor pid=585804) (EngineCore_DP0 pid=586112) ERROR 03-05 00:25:45 [core.py:1094]   File "/home/jianh/.local/lib/python3.12/site-packages/vllm/v1/engine/core.py", line 657, in collective_rpc',
    '(LLMRayActor pid=585804) (EngineCore_DP0 pid=586112) ERROR 03-05 00:25:45 [core.py:1094]     return self.model_executor.collective_rpc(method, timeout, args, kwargs)',
    '(LLMRayActor pid=585804) (EngineCore_DP0 pid=586112) ERROR 03-05 00:25:45 [core.py:1094]            ^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^^',
]


def test_a_cut_traceback_read_from_the_symptom_s_own_lines_does_not_lead(db: Database) -> None:
    # the traceback holds no error of its own: the symptom, with its remedy, leads; listed below as a cut traceback
    report = diagnose_text(db, "\n".join(ENGINE_CALL))
    assert report.lead.role == "symptom" and report.lead.finding is not None
    assert report.lead.finding.sig.id == "vllm-engine-call-failed"
    assert [u.exc_type for u in report.unrecognized] == ["?"]


def test_a_cut_traceback_before_the_symptom_still_leads(db: Database) -> None:
    # another process's traceback, cut, before the engine's failed call: it may be where the failure began
    other = ["Traceback (most recent call last):", '  File "/app/train.py", line 9, in step',
             "    loss = model(batch)", "step 7 done"]
    report = diagnose_text(db, "\n".join(other + ["x"] * 30 + ENGINE_CALL))
    assert report.lead.role == "unrecognized"


# `ray job submit`'s report of a failed job, quoting the driver's last logs: the block of OpenRLHF issue 400, its quoted
# error replaced by a written one that no signature knows
RAY_JOB_FAILED = ["---------------------------------------", "Job 'raysubmit_zrfUMAQcYUsi133j' failed",
                  "---------------------------------------", "",
                  "Status message: Job entrypoint command failed with exit code 1, last available logs (truncated to "
                  "20,000 chars):",
                  '  File "/usr/local/lib/python3.10/dist-packages/ray/_private/worker.py", line 861, in get_objects',
                  "    raise value.as_instanceof_cause()",
                  "ray.exceptions.RayTaskError(KeyError): ray::ActorModelRayActor.fit() (pid=59379, ip=0.0.0.0)",
                  '  File "/usr/local/lib/python3.10/dist-packages/openrlhf/trainer/ray/ppo_actor.py", line 336, in fit',
                  "    x = cfg['reward_model']", "KeyError: 'reward_model'"]


def test_the_error_a_failed_ray_job_quotes_leads_over_the_job_failure(db: Database) -> None:
    report = diagnose_text(db, "\n".join(RAY_JOB_FAILED))
    assert report.lead.role == "unrecognized" and report.lead.unrecognized is not None
    assert report.lead.unrecognized.exc_type == "KeyError"
    assert [f.sig.id for f in report.findings] == ["ray-job-failed"]
    # cut before the quoted logs, the job's failure leads with its remedy
    report = diagnose_text(db, "\n".join(RAY_JOB_FAILED[:3]))
    assert report.lead.role == "symptom" and report.lead.finding is not None
    assert report.lead.finding.sig.id == "ray-job-failed"


# torchrun 2.13's own report of a worker it saw die by SIGKILL (tools/scenarios/make_samples.sh baremetal_tee: rank 1
# SIGKILLs itself), the agent's "failed (exitcode: -9)" line through the ChildFailedError table
TORCHRUN_KILLED = (Path(__file__).parent.parent / "sample_logs/jobs/forensics-baremetal-tee/train.log")


def test_a_kill_torchrun_reports_leads_over_its_worker_failed(db: Database) -> None:
    """With no cause in the logs, the kill read beside torchrun's ChildFailedError report (its agent's
    "failed (exitcode: -9)", the table's "Signal 9 (SIGKILL) received by PID") leads: it says how the worker ended,
    where the report only says that it failed. Without those lines, a cascade leads (the other workers' gloo errors
    the table quotes), never torchrun's own ChildFailedError traceback: its table runs past the traceback's end, and
    it carries no error of its own."""
    lines = TORCHRUN_KILLED.read_text(encoding="utf-8").splitlines()[44:]
    report = diagnose_text(db, "\n".join(lines))
    assert report.root_cause is None and report.lead.finding is not None
    assert report.lead.finding.sig.id == "killed-by-signal"
    quiet = [x for x in lines if "exitcode: -9" not in x and "SIGKILL" not in x]
    report = diagnose_text(db, "\n".join(quiet))
    assert report.lead.role == "symptom" and report.lead.finding is not None
    assert report.lead.finding.sig.role == "cascade"
