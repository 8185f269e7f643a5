"""The remedy fits this job (issue 14): the framework the log comes from names the settings, and the phase the error
happened in (the model being built, the rollout, a log-prob pass, the training step) picks the steps.

Every line is real: the heads of the shipped samples (their provenance is in their .expected.yaml; the TRL one is a
real run of tools/trl_grpo_cpu.py) and tracebacks users posted, named where they are used.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from diagnoser.match.database import Database
from diagnoser.modes.batch import diagnose_text

SAMPLES = Path(__file__).resolve().parent.parent / "sample_logs"

# https://github.com/verl-project/verl/issues/2828 (verl, FSDP, one-step-off-policy): the OOM line and its frames
OOM_LINE = (
    "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 13.91 GiB. GPU 0 has a total capacity of 79.11 GiB"
    " of which 8.85 GiB is free. Process 23444 has 70.25 GiB memory in use. Of the allocated memory 60.49 GiB is"
    " allocated by PyTorch, and 6.77 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is"
    " large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation"
    " for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)")
VERL_LOG_PROB = '''\
  File "/verl/verl/workers/fsdp_workers.py", line 782, in compute_log_prob
    output, entropys = self.actor.compute_log_prob(data=data, calculate_entropy=True)
  File "/verl/verl/utils/profiler/performance.py", line 89, in f
    return self.log(decorated_function, *args, **kwargs)
  File "/verl/verl/utils/profiler/performance.py", line 102, in log
    output = func(*args, **kwargs)
  File "/verl/verl/workers/actor/dp_actor.py", line 332, in compute_log_prob
    entropy, log_probs = self._forward_micro_batch(
  File "/verl/verl/workers/actor/dp_actor.py", line 266, in _forward_micro_batch
    entropy = verl_F.entropy_from_logits(logits)  # (bsz, response_length)
  File "/verl/verl/utils/torch_functional.py", line 148, in entropy_from_logits
    entropy = torch.logsumexp(logits, dim=-1) - torch.sum(pd * logits, dim=-1)
''' + OOM_LINE

# https://github.com/McGill-NLP/llm2vec/issues/52: out of memory while transformers loads the checkpoint shards
# (from_pretrained), a progress bar printed into the traceback as it was
BUILD = '''\
  File "/home/slwanna/miniconda3/envs/test_mteb/lib/python3.10/site-packages/transformers/models/auto/auto_factory.py", line 558, in from_pretrained
    return model_class.from_pretrained(
  File "/home/slwanna/miniconda3/envs/test_mteb/lib/python3.10/site-packages/transformers/modeling_utils.py", line 3677, in from_pretrained
    ) = cls._load_pretrained_model(
  File "/home/slwanna/miniconda3/envs/test_mteb/lib/python3.10/site-packages/transformers/modeling_utils.py", line 4104, in _load_pretrained_model
    new_error_msgs, offload_index, state_dict_index = _load_state_dict_into_meta_model(
  File "/home/slwanna/miniconda3/envs/test_mteb/lib/python3.10/site-packages/transformers/modeling_utils.py", line 886, in _load_state_dict_into_meta_model
Loading checkpoint shards:   0%|                                                                                                      | 0/4 [00:02<?, ?it/s]
    set_module_tensor_to_device(model, param_name, param_device, **set_module_kwargs)
  File "/home/slwanna/miniconda3/envs/test_mteb/lib/python3.10/site-packages/accelerate/utils/modeling.py", line 400, in set_module_tensor_to_device
    new_value = value.to(device)
RuntimeError: CUDA error: out of memory'''

# https://github.com/vllm-project/vllm/issues/27508: vLLM's sampler (the engine, generating) ran out of memory
ROLLOUT = '''\
(EngineCore_DP0 pid=8884)   File "/opt/conda/envs/vllm_env/lib/python3.13/site-packages/torch/nn/modules/module.py", line 1784, in _call_impl
(EngineCore_DP0 pid=8884)     return forward_call(*args, **kwargs)
(EngineCore_DP0 pid=8884)   File "/opt/conda/envs/vllm_env/lib/python3.13/site-packages/vllm/v1/sample/sampler.py", line 86, in forward
(EngineCore_DP0 pid=8884)     logits = logits.to(torch.float32)
(EngineCore_DP0 pid=8884) torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 786.00 MiB. GPU 0 has a total capacity of 79.11 GiB of which 140.75 MiB is free. Process 3270336 has 78.96 GiB memory in use.'''

# https://github.com/markingprowlik/EasyR1/issues/9 (EasyR1, a verl fork): Ray names the remote method that failed
TRAIN_RAY = '''\
  File "/workspaces/EasyR1/verl/trainer/ray_trainer.py", line 657, in fit
    actor_output = self.actor_rollout_ref_wg.update_actor(batch)
  File "/workspaces/EasyR1/verl/single_controller/ray/base.py", line 47, in func
    output = ray.get(output)
ray.exceptions.RayTaskError(OutOfMemoryError): ray::WorkerDict.actor_rollout_ref_update_actor() (pid=118848, ip=10.130.71.7, actor_id=b2ba64f62469495ea505301701000000, repr=<verl.single_controller.ray.base.WorkerDict object at 0x7b8aac2e25c0>)'''

MICRO_BATCH_KEYS = ("ppo_micro_batch_size_per_gpu", "--micro_train_batch_size", "per_device_train_batch_size",
                    "train_micro_batch_size", "--micro-batch-size")


def _head(path: str, stop: str | None = None) -> list[str]:
    """A shipped sample's lines, up to (not with) the first line holding `stop`."""
    lines = (SAMPLES / path).read_text(encoding="utf-8").splitlines()
    if stop is not None:
        lines = lines[:next(i for i, x in enumerate(lines) if stop in x)]
    return lines


# each framework's own sample, cut before its own error (the TRL run whole: its error is not an OOM)
HEADS = {
    "verl": ("verl/vllm-kv-cache-v1-colocated.log", "Traceback"),
    "openrlhf": ("openrlhf/vllm-kv-cache-v0-max-seq-len.log", "Traceback"),
    "trl": ("health/trl-grpo-cpu-real-nan.log", None),
    "chatlearn": ("chatlearn/cuda-oom-fsdp-packing.log", "Traceback"),
}


def _oom_remedy(db: Database, text: str, lang: str = "en") -> tuple[str, str | None]:
    report = diagnose_text(db, text, lang)
    finding = next(f for f in report.findings if f.sig.id == "cuda-oom")
    return report.remedy["cuda-oom"], finding.captures.get("phase")


@pytest.mark.parametrize(("framework", "want", "value"), [
    ("verl", "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu", "(now 4; try 2)"),
    ("openrlhf", "--micro_train_batch_size", "now 1)"),
    ("trl", "per_device_train_batch_size", "gradient_checkpointing=True"),
    ("chatlearn", "models.policy_trainer.max_token_in_packing", "(now 32768; try 16384)"),
])
def test_the_same_oom_line_gets_the_settings_of_the_framework_it_ran_under(db: Database, framework: str, want: str,
                                                                           value: str) -> None:
    path, stop = HEADS[framework]
    text = "\n".join([*_head(path, stop), "", OOM_LINE])
    remedy, phase = _oom_remedy(db, text)
    assert phase is None  # the line alone does not say when: the framework's training-step steps
    assert want in remedy and value in remedy, remedy
    others = {"verl": "actor_rollout_ref.", "openrlhf": "--micro_train_batch_size", "trl": "per_device_train_batch_size",
              "chatlearn": "models.policy_trainer."}
    for other, key in others.items():
        if other != framework:
            assert key not in remedy, (other, remedy)
    zh, _ = _oom_remedy(db, text, "zh")
    assert want in zh and "显存" in zh


@pytest.mark.parametrize(("actor", "framework"), [
    ("TaskRunner", "verl"), ("WorkerDict", "verl"), ("ActorModelRayActor", "openrlhf"), ("LLMRayActor", None),
])
def test_a_ray_actor_of_the_frameworks_own_class_names_the_framework(db: Database, actor: str,
                                                                      framework: str | None) -> None:
    """A pasted excerpt often holds no path of the framework, only its Ray actors' prefixes, which the normaliser
    strips before any text marker is searched: the actor's class names the framework (verl's TaskRunner and
    WorkerDict, OpenRLHF's ActorModelRayActor), and the remedy is that framework's; an actor class several projects
    share (LLMRayActor: OpenRLHF and open-instruct) names none."""
    from diagnoser.match.observe import framework_of

    report = diagnose_text(db, f"({actor} pid=3101, ip=10.0.0.7) {OOM_LINE}", "en")
    assert framework_of(report.facts) == framework
    generic = diagnose_text(db, f"(LLMRayActor pid=3101, ip=10.0.0.7) {OOM_LINE}", "en").remedy["cuda-oom"]
    assert (report.remedy["cuda-oom"] == generic) == (framework is None)


@pytest.mark.parametrize(("text", "phase"), [
    (VERL_LOG_PROB, "log-prob"), (BUILD, "build"), (ROLLOUT, "rollout"), (TRAIN_RAY, "train"),
])
def test_the_phase_is_read_from_the_frames_of_real_tracebacks(db: Database, text: str, phase: str) -> None:
    assert _oom_remedy(db, text)[1] == phase


def test_an_oom_while_the_model_is_built_gets_no_micro_batch_advice(db: Database) -> None:
    remedy, phase = _oom_remedy(db, BUILD)
    assert phase == "build" and "will not help" in remedy
    assert not any(key in remedy for key in MICRO_BATCH_KEYS), remedy
    # the same under a verl job: verl's offload and parallel settings, still no micro-batch
    verl = "\n".join([*_head(*HEADS["verl"]), "", BUILD])
    remedy, _ = _oom_remedy(db, verl)
    assert "actor_rollout_ref.actor.fsdp_config.param_offload=True" in remedy
    assert not any(key in remedy for key in MICRO_BATCH_KEYS), remedy
    zh, _ = _oom_remedy(db, verl, "zh")
    assert "调小 micro batch 没有用" in zh and "ppo_micro_batch_size_per_gpu" not in zh


def test_verl_specific_phases_name_their_own_settings(db: Database) -> None:
    remedy, _ = _oom_remedy(db, VERL_LOG_PROB)
    assert "actor_rollout_ref.rollout.log_prob_micro_batch_size_per_gpu" in remedy
    assert "ppo_micro_batch_size_per_gpu" not in remedy
    rollout = "\n".join([*_head(*HEADS["verl"]), "", ROLLOUT])
    remedy, _ = _oom_remedy(db, rollout)
    assert "actor_rollout_ref.rollout.gpu_memory_utilization (now 0.25" in remedy
    assert "ppo_micro_batch_size_per_gpu" not in remedy
    remedy, _ = _oom_remedy(db, TRAIN_RAY)  # EasyR1's verl/trainer paths: verl's training step
    assert "actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu" in remedy


@pytest.mark.parametrize(("sample", "want", "not_want"), [
    ("verl/vllm-kv-cache-v1-colocated.log", ["actor_rollout_ref.rollout.gpu_memory_utilization (now 0.25",
                                             "to at most 13280"], ["--vllm_gpu_memory_utilization", "models.policy"]),
    ("openrlhf/vllm-kv-cache-v0-max-seq-len.log", ["--vllm_gpu_memory_utilization", "2048 + 30720"],
     ["actor_rollout_ref.", "models.policy"]),
])
def test_the_kv_cache_remedy_names_the_frameworks_own_settings(db: Database, sample: str, want: list[str],
                                                               not_want: list[str]) -> None:
    for lang in ("en", "zh"):
        report = diagnose_text(db, (SAMPLES / sample).read_text(encoding="utf-8"), lang)
        remedy = report.remedy["vllm-kv-cache-insufficient"]
        wanted = want if lang == "en" else [want[0].split(" (")[0]]  # the key is the same in Chinese
        assert all(w in remedy for w in wanted) and not any(n in remedy for n in not_want), remedy


# PyTorch's watchdog line as users posted it (signatures/nccl/nccl-watchdog-timeout.yaml's example), and the kernel's
# OOM-killer line (host-oom-killed's example): each under another framework's sample
WATCHDOG = ("[rank3]:[E626 06:24:44.903881913 ProcessGroupNCCL.cpp:616] [Rank 3] Watchdog caught collective operation"
            " timeout: WorkNCCL(SeqNum=808, OpType=ALLREDUCE, NumelIn=9801523, NumelOut=9801523, Timeout(ms)=600000)"
            " ran for 600020 milliseconds before timing out.")
# ... and at SeqNum 1, the first collective of its group: a rank that never came, or ranks that cannot connect
FIRST = ("[rank0]:[E1218 20:27:21.426415540 ProcessGroupNCCL.cpp:629] [Rank 0] Watchdog caught collective operation"
         " timeout: WorkNCCL(SeqNum=1, OpType=BROADCAST, NumelIn=131072000, NumelOut=131072000,"
         " Timeout(ms)=600000) ran for 600081 milliseconds before timing out.")
OOM_KILLER = ("2024-04-29T14:55:41,678628+02:00 pool invoked oom-killer: gfp_mask=0x6200ca(GFP_HIGHUSER_MOVABLE),"
              " order=0, oom_score_adj=0")


@pytest.mark.parametrize(("sample", "line", "sig_id", "want", "not_want"), [
    ("health/trl-grpo-cpu-real-nan.log", WATCHDOG, "nccl-watchdog-timeout", "raise ddp_timeout",
     ["actor_rollout_ref.", "--distributed-timeout-minutes"]),
    ("pai-megatron/gpu-ecc-error-xid48-dmesg.log", WATCHDOG, "nccl-watchdog-timeout",
     "--distributed-timeout-minutes", ["actor_rollout_ref.", "ddp_timeout"]),  # its dump names the setting
    ("pai-megatron/gpu-ecc-error-xid48-dmesg.log", FIRST, "nccl-watchdog-timeout", "NCCL_SOCKET_IFNAME",
     ["raise distributed_timeout_minutes", "lower SeqNum than"]),
    ("openrlhf/vllm-kv-cache-v0-max-seq-len.log", OOM_KILLER, "host-oom-killed", "--ref_reward_offload",
     ["data.dataloader_num_workers", "actor_rollout_ref."]),
    ("health/trl-grpo-cpu-real-nan.log", OOM_KILLER, "host-oom-killed", "--offload_optimizer",
     ["data.dataloader_num_workers", "--adam_offload"]),
])
def test_timeouts_and_host_memory_name_the_frameworks_own_settings(db: Database, sample: str, line: str, sig_id: str,
                                                                   want: str, not_want: list[str]) -> None:
    text = "\n".join([*_head(sample), "", line])
    remedy = diagnose_text(db, text).remedy[sig_id]
    assert want in remedy and not any(n in remedy for n in not_want), remedy
    assert want.split()[-1] in diagnose_text(db, text, "zh").remedy[sig_id]


def test_an_oom_of_vllm_served_on_its_own_gets_the_engine_arguments(db: Database) -> None:
    # https://github.com/vllm-project/vllm/issues/15039: the engine's OOM repr and the server's echo, no frames
    text = (
        "ERROR 03-19 10:55:18 [serving_chat.py:677] vllm.engine.multiprocessing.MQEngineDeadError: Engine loop is not"
        " running. Inspect the stacktrace to find the original error: OutOfMemoryError('CUDA out of memory. Tried to"
        " allocate 128.00 MiB. GPU 0 has a total capacity of 79.33 GiB of which 16.00 MiB is free. Process 36891 has"
        " 79.29 GiB memory in use.').")
    report = diagnose_text(db, text)
    assert report.story.job.get("framework") == "vllm"
    remedy = report.remedy["cuda-oom"]
    assert "--gpu-memory-utilization" in remedy and "--max-num-seqs" in remedy, remedy
    assert not any(key in remedy for key in MICRO_BATCH_KEYS), remedy


def test_roll_s_logger_prefix_names_roll(db: Database) -> None:
    """ROLL's logger puts "[DRIVER 0 / 1][PID n]" before the driver's lines (ROLL issue 263); the normaliser strips it
    as a prefix, so its actor, not the text, names the framework."""
    from diagnoser.match.observe import framework_of

    text = ("[2025-11-23 22:52:41] [initialize.py (46)] [INFO] [DRIVER 0 / 1][PID 51567] Starting ray cluster: ray start "
            "--head --port=6379\n" + OOM_LINE)
    assert framework_of(diagnose_text(db, text, "en").facts) == "roll"
