"""What a job looked like, read from its logs: framework, model, parallel sizes, batch settings, checkpoints.

These are built-in facts (the same mechanism as a signature's `facts`), each a regex with a named group
read from config dumps, launch lines and progress messages. Job facts keep the first value seen; a
checkpoint keeps the last one saved, so the report can say what a restart loses.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass

# A config value in any of the shapes these frameworks print it:
#   Megatron arguments dump  "  tensor_model_parallel_size ...................... 2"
#   YAML / hydra dump        "tensor_model_parallel_size: 2"
#   command line / xtrace    "actor_rollout_ref.rollout.tensor_model_parallel_size=2", "--nnodes 2"
_SEP = r"""["']?\s*(?:[:=]|\.{2,})\s*["']?"""


def _key(names: str, group: str, value: str = r"\d+") -> str:
    return rf"""(?<![\w])(?:[\w.]*\.|--)?(?:{names}){_SEP}(?P<{group}>{value})\b"""


@dataclass(frozen=True, slots=True)
class Observation:
    """A fact every job's logs may tell (not a signature's own)."""

    name: str
    pattern: str
    mode: str = "first"  # "first": keep the first value seen; "last": keep the last


FRAMEWORK_MARKERS: tuple[tuple[str, str], ...] = (
    # (framework, a literal its logs print); the first listed that appears names the job's framework
    ("chatlearn", r"(?P<fw_chatlearn>ChatLearn|chatlearn_log|chatlearn/entrypoint\.py)"),
    ("roll", r"(?P<fw_roll>rlvr_pipeline\.py|agentic_pipeline\.py|roll\.pipeline|roll/pipeline)"),
    ("verl", r"(?P<fw_verl>verl\.trainer|verl/trainer|verl/workers/)"),
    ("openrlhf", r"(?P<fw_openrlhf>openrlhf\.cli|openrlhf/|OpenRLHF)"),
    # ms-swift before TRL: its GRPO runs on TRL's trainer, so its tracebacks show trl/trainer/ frames too
    ("ms-swift", r"(?P<fw_ms_swift>\[INFO:swift\]|swift/(?:cli|llm|trainers|rlhf_trainers|megatron)/)"),
    ("trl", r"(?P<fw_trl>trl/trainer/|trl\.trainer|trl/scripts/)"),
    ("pai-megatron-patch", r"(?P<fw_pai_megatron_patch>megatron_patch|Pai-Megatron-Patch)"),
    ("megatron", r"(?P<fw_megatron>-{10,} arguments -{10,}|megatron\.training|megatron/training)"),
    ("deepspeed", r"(?P<fw_deepspeed>deepspeed\.launcher|DeepSpeed info: version|\[deepspeed\])"),
    # vLLM served on its own (last: an RL job that runs vLLM for its rollout is named by its own markers above)
    ("vllm", r"(?P<fw_vllm>vLLM API server version|vllm/entrypoints/|vllm/engine/|vllm/v1/engine/|vllm\.engine\.|"
             r"vllm\.v1\.engine\.)"),
)



# The Ray actors a framework's own classes run as, and the processes its logger names. Their prefix ("(TaskRunner
# pid=..., ip=...)", "[DRIVER 0 / 1][PID 51567]") is gone from the text the markers above are searched in (the
# normaliser strips it), so the scanner reads the actor the normaliser parsed from it, in the head of each source: a
# pasted excerpt often shows no path of the framework.
ACTOR_FRAMEWORKS: dict[str, str] = {
    # verl (trainer/main_ppo.py TaskRunner, single_controller/ray WorkerDict, experimental/agent_loop AgentLoopWorker)
    "TaskRunner": "verl", "WorkerDict": "verl", "AgentLoopWorker": "verl",
    # OpenRLHF (trainer/ray/ppo_actor.py, ppo_critic.py, launcher.py)
    "ActorModelRayActor": "openrlhf", "CriticModelRayActor": "openrlhf", "ReferenceModelRayActor": "openrlhf",
    "RewardModelRayActor": "openrlhf",
    # ROLL's logger prefix "[initialize.py (46)] [INFO] [DRIVER 0 / 1][PID 51567] " (read/prefixes.py), its driver's
    # (its workers are named by the job's own cluster names: actor_train-0-G0, ...)
    "DRIVER": "roll",
}


def framework_of(facts: Mapping[str, object]) -> str | None:
    """The job's framework: the first of FRAMEWORK_MARKERS whose marker the input printed."""
    return next((fw for fw, _ in FRAMEWORK_MARKERS if f"fw_{fw.replace('-', '_')}" in facts), None)


JOB: tuple[Observation, ...] = (
    *(Observation(f"fw_{fw.replace('-', '_')}", pattern) for fw, pattern in FRAMEWORK_MARKERS),
    Observation("job_model", r"""Initializing an? (?:V\d )?LLM engine[^\n]*? with config: """
                             r"""model=['"](?P<job_model>[^'"]+)"""),
    Observation("job_model", _key(r"model_name_or_path|pretrain|pretrained_model_name_or_path|model\.path|"
                                  r"model_path|hf_model_path", "job_model", r"""[^\s'",}]+""")),
    Observation("job_tp", _key(r"tensor_model_parallel_size", "job_tp")),
    Observation("job_pp", _key(r"pipeline_model_parallel_size", "job_pp")),
    Observation("job_cp", _key(r"context_parallel_size", "job_cp")),
    Observation("job_ep", _key(r"expert_model_parallel_size", "job_ep")),
    Observation("job_dp", _key(r"data_parallel_size", "job_dp")),
    Observation("job_world_size", _key(r"world_size|WORLD_SIZE", "job_world_size")),
    Observation("job_nnodes", _key(r"nnodes|NNODES|num_nodes", "job_nnodes")),
    Observation("job_gpus_per_node", _key(r"nproc_per_node|n_gpus_per_node|num_gpus_per_node|gpus_per_node",
                                          "job_gpus_per_node")),
    Observation("job_global_batch_size", _key(r"global_batch_size|train_global_batch_size|train_batch_size",
                                              "job_global_batch_size")),
    Observation("job_micro_batch_size", _key(r"micro_batch_size|train_micro_batch_size|"
                                             r"ppo_micro_batch_size_per_gpu", "job_micro_batch_size")),
    Observation("job_rollout_batch_size", _key(r"rollout_batch_size", "job_rollout_batch_size")),
)

CHECKPOINT: tuple[Observation, ...] = (
    # Megatron-LM (every version): "  successfully saved checkpoint from iteration     200 to /mnt/ckpt"
    Observation("last_checkpoint", r"successfully saved checkpoint (?:from|at) iteration\s+(?P<ckpt_step>\d+) "
                                   r"to (?P<ckpt_path>\S+)", "last"),
    # ROLL: "save checkpoint-100 to ./output/actor_train-0-G0/checkpoint-100"
    Observation("last_checkpoint", r"save checkpoint-(?P<ckpt_step>\d+) to (?P<ckpt_path>\S+)", "last"),
    # ChatLearn engine: "chatlearn_log save checkpoint episode 3, train iteration 40 done"
    Observation("last_checkpoint", r"save checkpoint episode \d+, train iteration (?P<ckpt_step>\d+) done", "last"),
    # ChatLearn FSDP module: "save checkpoint to /mnt/output/exp/save_model/policy_trainer/50"
    Observation("last_checkpoint", r"(?<![\w-])save checkpoint to (?P<ckpt_path>\S*?(?P<ckpt_step>\d+)?/?)\s*$",
                "last"),
    # verl: "local_global_step_folder: /ckpts/exp/global_step_100" and the SFT trainer's "Saving checkpoint to:"
    Observation("last_checkpoint", r"(?P<ckpt_started>local_global_step_folder|Saving checkpoint to): "
                                   r"(?P<ckpt_path>\S*?global_step_?(?P<ckpt_step>\d+)\S*)", "last"),
    # DeepSpeed: "[Torch] Checkpoint global_step100 is ready now!"
    Observation("last_checkpoint", r"Checkpoint (?P<ckpt_path>global_step(?P<ckpt_step>\d+)) is ready now", "last"),
)

VERSIONS: tuple[Observation, ...] = (
    # the versions a job's logs print (the first one seen), for the report's facts and a maintainer's bundle
    # Ray's GCS at start (src/ray/gcs/gcs_server_main.cc): "Ray cluster metadata ray_version=2.60.0 ray_commit=..."
    Observation("version_ray", r"Ray cluster metadata ray_version=(?P<version_ray>\d+\.\d+[\w.+-]*)"),
    # vLLM's engine (vllm/engine/llm_engine.py, vllm/v1/engine): "Initializing a V0 LLM engine (v0.8.5.post1) with
    # config: ...", older "Initializing an LLM engine (v0.6.5) with config: ..."
    Observation("version_vllm", r"Initializing an? (?:V\d )?LLM engine \(v(?P<version_vllm>\d+\.\d+[\w.+-]*)\)"),
    # NCCL_DEBUG=INFO (src/init.cc): "NCCL INFO NCCL version 2.21.5+cuda12.4"
    Observation("version_nccl", r"NCCL INFO NCCL version (?P<version_nccl>\d+\.\d+\.\d+[\w.+-]*)"),
    # DeepSpeed's engine (deepspeed/runtime/engine.py): "DeepSpeed info: version=0.15.0, git-hash=..., git-branch=..."
    Observation("version_deepspeed", r"DeepSpeed info: version=(?P<version_deepspeed>\d+\.\d+[\w.+-]*?),"),
    # ChatLearn (chatlearn/utils/...initialize.py): "init chatlearn done, version 1.2.0"
    Observation("version_chatlearn", r"init chatlearn done, version (?P<version_chatlearn>\d+\.\d+[\w.+-]*)"),
    # PyTorch's collect_env (torch/utils/collect_env.py): "PyTorch version: 2.4.0+cu121"
    Observation("version_torch", r"^PyTorch version: (?P<version_torch>\d+\.\d+[\w.+-]*)"),
    # a Hugging Face config printed whole (PretrainedConfig.__repr__): '"transformers_version": "4.51.3"'
    Observation("version_transformers", r'"transformers_version": "(?P<version_transformers>\d+\.\d+[\w.+-]*)"'),
    # nvidia-smi's header: "| NVIDIA-SMI 550.54.15    Driver Version: 550.54.15    CUDA Version: 12.4     |"
    Observation("version_nvidia_driver", r"Driver Version: (?P<version_nvidia_driver>\d+\.\d+(?:\.\d+)?)"),
    Observation("version_cuda", r"Driver Version: [\d.]+\s+CUDA Version: (?P<version_cuda>\d+\.\d+)"),
)

OBSERVATIONS: tuple[Observation, ...] = JOB + CHECKPOINT + VERSIONS


# A line that says training moved on; a live session that sees none for long reports a hang.
PROGRESS = (
    r"\bstep:\d+ - "  # verl metrics
    r"|^\s*iteration\s+\d+/\s*\d+ \|"  # Megatron
    r"|Training Progress: +\d+%"  # verl tqdm
    r"|\bepisode \d+"  # ChatLearn
    r"|pipeline step \d+"  # ROLL
    r"|Global step \d+"  # OpenRLHF
    r"|\b(?:global_)?step[=: ]\s*\d+"  # generic
    r"|\d{1,3}%\|[^|]*\| *\d+/\d+ \["  # a tqdm bar
)
