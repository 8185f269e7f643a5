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
