"""The phase of the job an error happened in, read from its traceback's frames: the model being built or loaded,
the rollout (generation), a forward-only log-prob pass, or the training step.

The remedy depends on it: an out-of-memory error while the model is built is not fixed by a smaller micro-batch,
one in the rollout engine is the engine's memory share, one in the training step is the micro-batch. The frames are
the real call paths of the frameworks (verl's fsdp_workers / dp_actor, OpenRLHF's ppo_actor, TRL's GRPOTrainer,
Megatron-LM's training.py, vLLM and SGLang, transformers, DeepSpeed) and Ray's `ray::Actor.method()` headlines,
which name the remote method (verl's `WorkerDict.actor_rollout_ref_update_actor`).
"""

from __future__ import annotations

from ..lazyre import lazy
from ..read.frames import frames_of
from ..read.normalize import LogLine
from .schema import Signature

# a Ray task headline: "RayTaskError(OutOfMemoryError): ray::WorkerDict.actor_rollout_ref_generate_sequences() (pid"
_RAY_METHOD = lazy(r"\bray::[\w.]{0,200}?\.(?P<func>\w{1,120})\(\)")

# (phase, file regex or None, function regex or None); a frame is in a phase when both given regexes search true.
# Checked in this order over all the frames: the rollout engine's own frames win (a vLLM engine built inside
# verl's init_model fails in the rollout engine), then building, then the training step, then a log-prob pass.
_RULES: tuple[tuple[str, str | None, str | None], ...] = (
    ("rollout", r"(?:^|/)(?:vllm|sglang)/", None),
    ("rollout", r"transformers/generation/", None),
    ("rollout", None, r"(?:^|_)(?:generate|generate_sequences|generate_batch|async_generate|_generate|rollout|"
                      r"wake_up|_dummy_run|_dummy_sampler_run|profile_run)$"),
    ("build", None, r"^(?:from_pretrained|_load_pretrained_model|init_model|_build_model_optimizer|build_model|"
                    r"_build_model|get_model|setup_model_and_optimizer|model_provider|load_checkpoint|"
                    r"fully_shard|apply_fsdp2|_configure_optimizer|_configure_zero_optimizer|create_model)$"),
    ("build", None, r"(?:^|_)init_model(?:_from_pretrained)?$"),
    ("build", r"torch/distributed/fsdp/", r"^__init__$"),
    # a module being constructed: a model class's or torch.nn layer's __init__ (transformers 5.17 on an H100:
    # LlamaForCausalLM.__init__ -> LlamaMLP.__init__ -> nn.Linear.__init__ -> torch.empty, sample_logs/gpu/build-oom)
    ("build", r"(?:transformers/models/[^/]+/modeling_\w+|torch/nn/modules/\w+)\.py$", r"^__init__$"),
    ("build", r"deepspeed/__init__\.py$", r"^initialize$"),
    ("train", None, r"(?:^|_)(?:update_actor|update_critic|update_policy|update_critic_model|backward|train_step|"
                    r"training_step_impl|compute_loss|ppo_train|train_batch|forward_backward_no_pipelining|"
                    r"forward_backward_pipelining_with_interleaving|forward_backward_pipelining_without_interleaving|"
                    r"train_step_megatron)$"),
    ("train", r"torch/optim/", None),
    ("log-prob", None, r"(?:^|_)(?:compute_log_prob|compute_ref_log_prob|compute_values|compute_rm_score|"
                       r"_get_per_token_logps|_get_per_token_logps_and_entropies|make_experience|"
                       r"make_experience_list|compute_logprobs)$"),
    # transformers' Trainer loop (TRL, ms-swift): the training step, when no frame above said more
    ("train", r"transformers/trainer\.py$", r"^(?:training_step|_inner_training_loop)$"),
)
_COMPILED = tuple((phase, lazy(f) if f else None, lazy(fn) if fn else None)
                  for phase, f, fn in _RULES)
PHASES = ("build", "rollout", "log-prob", "train")


def phase_of(lines: list[LogLine]) -> str | None:
    """The phase these traceback lines were in, or None when their frames do not say."""
    calls: list[tuple[str, str]] = [(f.file, f.function) for f in frames_of(lines)]
    for line in lines:
        if "ray::" in line.text:
            m = _RAY_METHOD.search(line.text)
            if m is not None:
                calls.append(("", m.group("func")))
    if not calls:
        return None
    for phase, file_rx, func_rx in _COMPILED:
        for file, func in calls:
            if (file_rx is None or file_rx.search(file)) and (func_rx is None or func_rx.search(func)):
                return phase
    return None


def wants_phase(sig: Signature) -> bool:
    """A signature whose remedy has a variant for a phase: only its hits pay for reading the frames."""
    return any(t.name == "phase" for variant in sig.remedy for t in variant.when)
