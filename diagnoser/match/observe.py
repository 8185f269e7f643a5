"""What a job looked like, read from its logs: framework, model, parallel sizes, batch settings, checkpoints.

These are built-in facts (the same mechanism as a signature's `facts`), each a regex with a named group
read from config dumps, launch lines and progress messages. Job facts keep the first value seen; a
checkpoint keeps the last one saved, so the report can say what a restart loses.
"""

from __future__ import annotations

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
    name: str
    pattern: str
    mode: str = "first"  # "first": keep the first value seen; "last": keep the last


FRAMEWORK_MARKERS: tuple[tuple[str, str], ...] = (
    # (framework, a literal its logs print); the first listed that appears names the job's framework
    ("chatlearn", r"(?P<fw_chatlearn>ChatLearn|chatlearn_log|chatlearn/entrypoint\.py)"),
    ("roll", r"(?P<fw_roll>rlvr_pipeline\.py|agentic_pipeline\.py|roll\.pipeline|roll/pipeline|\[DRIVER \d+ / \d+\])"),
    ("verl", r"(?P<fw_verl>verl\.trainer|verl/trainer|\(TaskRunner pid=|\(WorkerDict pid=)"),
    ("openrlhf", r"(?P<fw_openrlhf>openrlhf\.cli|openrlhf/|OpenRLHF)"),
    ("pai-megatron-patch", r"(?P<fw_pai_megatron_patch>megatron_patch|Pai-Megatron-Patch)"),
    ("megatron", r"(?P<fw_megatron>-{10,} arguments -{10,}|megatron\.training|megatron/training)"),
    ("deepspeed", r"(?P<fw_deepspeed>deepspeed\.launcher|DeepSpeed info: version|\[deepspeed\])"),
)

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

OBSERVATIONS: tuple[Observation, ...] = JOB + CHECKPOINT


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
