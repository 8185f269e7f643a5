"""The failures printed by the real software on a GPU (sample_logs/gpu, made by tools/scenarios/gpu): the phase read
from their frames picks the remedy, and NCCL's "invalid usage" is a fix-then-restart, not a transient restart."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from diagnoser.cli import main

GPU = Path(__file__).resolve().parent.parent / "sample_logs" / "gpu"


def report(name: str, capsys: pytest.CaptureFixture[str]) -> dict:  # type: ignore[type-arg]
    main([str(GPU / name), "--format", "json", "--lang", "en"])
    return json.loads(capsys.readouterr().out)  # type: ignore[no-any-return]


@pytest.mark.parametrize(("name", "phase"), [
    ("build-oom.log", "build"),  # modeling_llama __init__ -> nn.Linear __init__: the model being built
    ("generate-oom.log", "rollout"),  # transformers generate -> _sample -> _prefill
    ("train-oom.log", None),  # a bare training loop: the frames do not say
])
def test_the_phase_of_a_real_cuda_oom(name: str, phase: str | None, capsys: pytest.CaptureFixture[str]) -> None:
    root = report(name, capsys)["root_cause"]
    assert root["id"] == "cuda-oom"
    assert root["captures"].get("phase") == phase
    if phase in ("build", "rollout"):
        assert "micro_batch_size_per_gpu" not in root["remedy"]  # a smaller micro-batch does not help there
    else:
        assert "micro" in root["remedy"]


def test_nccl_invalid_usage_is_configuration(capsys: pytest.CaptureFixture[str]) -> None:
    r = report("nccl-duplicate-gpu.log", capsys)
    assert r["root_cause"]["id"] == "nccl-error"
    assert r["root_cause"]["verdict"] == "fix-then-restart"
    assert r["verdict"] == "fix-then-restart"


JOBS = GPU.parent / "jobs"


def test_a_real_culprit_job_counts_every_rank(capsys: pytest.CaptureFixture[str]) -> None:
    """torchrun's --log-dir names ranks by folder (attempt_0/<local_rank>/): rank 0's files hold no [rankN]: prefix
    (it was stopped before it printed an error), yet the job had four ranks and the table resolved all four."""
    main([str(JOBS / "gpu-culprit-oom-gloo-torchrun"), "--format", "json", "--lang", "en"])
    r = json.loads(capsys.readouterr().out)
    assert r["root_cause"]["id"] == "cuda-oom"
    assert r["culprit"]["rank"] == 2
    assert r["job"]["ranks_seen"] == 4
    assert sorted(row["rank"] for row in r["ranks"]) == [0, 1, 2, 3]


def test_a_console_counts_the_ranks_its_prefixes_name(capsys: pytest.CaptureFixture[str]) -> None:
    r = report("device-ordinal-torchrun.log", capsys)  # [default0]: and [default1]: (torchrun --tee 3)
    assert r["job"]["ranks_seen"] == 2
    assert r["culprit"]["rank"] == 1


@pytest.mark.parametrize(("name", "words"), [
    ("nccl-init-oom-torchrun.log", ["outside PyTorch's caching allocator", "device_id=torch.device"]),
    ("cublas-first-matmul-oom.log", ["CUBLAS_STATUS_ALLOC_FAILED", "nvidia-smi"]),
    ("no-gpu-visible.log", ["num_gpus", "RAY_ACCEL_ENV_VAR_OVERRIDE_ON_ZERO=0"]),
    ("device-ordinal-torchrun.log", ["LOCAL_RANK", "nvidia-smi -L"]),
])
def test_the_remedy_fits_the_real_failure(name: str, words: list[str], capsys: pytest.CaptureFixture[str]) -> None:
    root = report(name, capsys)["root_cause"]
    for w in words:
        assert w in root["remedy"], (name, w)
