#!/usr/bin/env python3
# ruff: noqa: E501
"""Write the training-health samples of sample_logs/health/: per-step metric logs of RL-for-LLM frameworks, a
healthy run and a run going bad for each print format.

    python tools/make_metric_samples.py        # needs tqdm and orjson (pip install tqdm orjson)

Deterministic (seeded): rerunning rewrites the same bytes. The LINE FORMATS are the frameworks' own (each
formatter names the source function it mirrors: verl aggregate_logger.concat_dict_to_str and FileLogger (orjson),
ROLL StdoutTracker, OpenRLHF ppo_trainer/ppo_actor, Megatron-LM training_log, ChatLearn MetricManager.log and its
training_log copy, transformers ProgressCallback (TRL), NeMo-RL grpo_train); tools/check_metric_samples.py
re-renders the verl and ROLL lines with those frameworks' own code and compares them byte for byte. The VALUES
are synthetic: they drift and jitter the way real runs do, and each bad run follows a story (the step its trouble
starts at, the metric) told in the provenance of its *.expected.yaml. The TRL crash tail is the traceback the
real TRL GRPOTrainer printed here (sample_logs/health/trl-grpo-cpu-real-nan.log, made by tools/trl_grpo_cpu.py).
"""
from __future__ import annotations

import datetime as dt
import json
import math
import os
import pprint
import random

import orjson
from tqdm import tqdm

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
OUT = os.path.join(ROOT, "sample_logs", "health")
NAN = float("nan")
MAX_BYTES = 60 * 1024


# ----------------------------------------------------------------------------------------------
# value helpers
# ----------------------------------------------------------------------------------------------
def f32(x: float) -> float:
    """A value that went through a float32 tensor and .item() (what frameworks log)."""
    if x != x or x in (math.inf, -math.inf):
        return x
    import struct

    return struct.unpack("f", struct.pack("f", x))[0]


def lerp(a, b, t):
    return a + (b - a) * max(0.0, min(1.0, t))


def frac(num: int, den: int) -> float:
    return num / den


class Run:
    """Base quantities of one run, per step.  Frameworks map them to their own metric names."""

    def __init__(self, seed: int, steps: int, *, max_len: int, batch: int):
        self.r = random.Random(seed)
        self.steps = steps
        self.max_len = max_len
        self.batch = batch
        self.rows: list[dict] = []

    def noise(self, rel):
        return 1.0 + self.r.gauss(0.0, rel)

    def healthy(self, *, ent0=0.62, ent1=0.41, rew0=0.30, rew1=0.62, len0=620.0, len1=790.0,
                gn=0.32, step_s=96.0, mism=0.0032, kl1=0.004, warm=1.55):
        r = self.r
        for s in range(1, self.steps + 1):
            t = (s - 1) / max(1, self.steps - 1)
            row = {}
            row["entropy"] = max(0.02, lerp(ent0, ent1, t) * self.noise(0.035))
            row["score"] = min(0.98, max(0.0, lerp(rew0, rew1, t ** 0.7) + r.gauss(0, 0.028)))
            row["len"] = max(40.0, lerp(len0, len1, t) * self.noise(0.04))
            row["clip"] = max(0.0, min(1.0, 0.012 + 0.025 * t + r.gauss(0, 0.008)))
            g = gn * math.exp(r.gauss(0, 0.22))
            if r.random() < 0.05:
                g *= r.uniform(2.0, 3.6)  # ordinary spikes seen in healthy runs
            row["grad_norm"] = g
            row["ppo_kl"] = 10 ** r.uniform(-4.1, -2.9) * (1 if r.random() < 0.8 else -0.3)
            row["kl_loss"] = max(1e-5, lerp(0.0004, kl1, t) * self.noise(0.12))
            row["pg_loss"] = r.gauss(0.0, 0.012)
            row["clipfrac"] = max(0.0, 0.0018 + r.gauss(0, 0.0007))
            row["mism"] = max(0.0008, mism * self.noise(0.08))
            row["is_mean"] = 1.0 + r.gauss(0, 0.004)
            row["ess"] = min(1.0, 0.985 + r.gauss(0, 0.004))
            st = step_s * self.noise(0.035) * (len0 + (row["len"] - len0) * 0.8) / len0
            if s == 1:
                st *= warm  # warm-up: CUDA graphs, compile, first weight sync
            row["step_time"] = st
            row["gen_time"] = st * 0.52 * self.noise(0.03)
            self.rows.append(row)
        return self

    # in-place modifiers for the stories of the bad runs ---------------------------------------
    def mismatch_then_nan(self, start: int, nan_at: int, grad_offset: int = 12, grad_rate: float = 1.5):
        """Training-inference mismatch grows from `start`, grad norm follows, NaN at `nan_at`."""
        for s, row in enumerate(self.rows, 1):
            if s >= start:
                k = s - start
                row["mism"] = 0.0033 * (1.105 ** k) * self.noise(0.05)
                row["is_mean"] = 1.0 - min(0.45, 0.004 * (1.12 ** k))
                row["ess"] = max(0.05, 0.985 - 0.006 * (1.13 ** k))
            if s >= start + grad_offset:
                k = s - (start + grad_offset)
                row["grad_norm"] = 0.32 * (grad_rate ** k) * self.noise(0.15)
            if s >= nan_at:
                for key in ("entropy", "grad_norm", "ppo_kl", "kl_loss", "pg_loss", "mism", "is_mean", "ess"):
                    row[key] = NAN
                row["score"] = 0.0
                row["len"] = float(self.max_len)
                row["clip"] = 1.0
                row["clipfrac"] = 0.0
        return self

    def entropy_then_reward_collapse(self, start: int, rate: float = 0.085, delay: int = 10,
                                     reward_rate: float = 0.035):
        e0 = self.rows[start - 1]["entropy"]
        for s, row in enumerate(self.rows, 1):
            if s >= start:
                k = s - start
                row["entropy"] = max(0.004, e0 * math.exp(-rate * k) * self.noise(0.05))
                row["kl_loss"] = row["kl_loss"] * (1 + 0.09 * k)
            if s >= start + delay:
                k = s - (start + delay)
                row["score"] = max(0.0, row["score"] * math.exp(-reward_rate * k))
                row["len"] = max(60.0, row["len"] * math.exp(-0.03 * k))
                row["clip"] = 0.0
        return self

    def length_to_cap_kl_blowup(self, start: int):
        for s, row in enumerate(self.rows, 1):
            if s >= start:
                k = s - start
                row["len"] = min(self.max_len * 0.985, row["len"] * (1.075 ** k))
                row["clip"] = min(0.97, 0.03 * (1.19 ** k))
                row["kl_loss"] = row["kl_loss"] * (1.21 ** k)
                row["score"] = max(0.02, row["score"] * (1 - 0.022 * k) if k > 6 else row["score"])
                row["step_time"] = row["step_time"] * row["len"] / 700.0
        return self

    def straggler(self, start: int, length: int, factor: float = 3.0):
        for s, row in enumerate(self.rows, 1):
            if start <= s < start + length:
                f = factor * self.noise(0.03)
                row["step_time"] *= f
                row["gen_time"] *= f  # the slow rank holds up the whole step (rollout included)
        return self

    def grad_spike_then_nan(self, start: int, nan_at: int):
        for s, row in enumerate(self.rows, 1):
            if s >= start:
                k = s - start
                row["grad_norm"] = row["grad_norm"] * (1.6 ** k)
            if s >= nan_at:
                row["grad_norm"] = NAN
                row["pg_loss"] = NAN
        return self


def clock(start: dt.datetime):
    t = [start]

    def now(advance: float = 0.0):
        t[0] = t[0] + dt.timedelta(seconds=advance)
        return t[0]

    return now


def bar(desc, n, total, elapsed, ncols=None, postfix=None, unit="it"):
    return tqdm.format_meter(n, total, elapsed, ncols=ncols, prefix=desc, postfix=postfix, unit=unit)


def tqdm_postfix(d: dict) -> str:
    """tqdm.set_postfix(ordered_dict): numbers through tqdm.format_num, joined ', '."""
    return ", ".join(f"{k}={tqdm.format_num(v) if isinstance(v, (int, float)) else str(v).strip()}"
                     for k, v in d.items())


def write(name: str, text: str):
    os.makedirs(OUT, exist_ok=True)
    path = os.path.join(OUT, name)
    with open(path, "w", encoding="utf-8", newline="") as f:
        f.write(text)
    size = len(text.encode("utf-8"))
    flag = "" if size <= MAX_BYTES else "  <-- over 60 KB"
    print(f"{name:40s} {size:7d} bytes{flag}")


# ----------------------------------------------------------------------------------------------
# verl console: verl/utils/logger/aggregate_logger.py concat_dict_to_str + LocalLogger.log
# ----------------------------------------------------------------------------------------------
class NP:
    """A numpy-2 float64 scalar as pprint.pformat shows it: np.float64(x)."""

    def __init__(self, v):
        self.v = float(v)


def verl_value_new(v) -> str:
    # pprint.pformat(v) for python floats/ints is repr(v); numpy>=2 scalars repr as np.float64(...)
    if isinstance(v, NP):
        return f"np.float64({v.v!r})"
    return repr(v)


def verl_value_old(v) -> str:
    # verl <= 0.4.x: output.append(f"{k}:{v:.3f}")
    if isinstance(v, NP):
        v = v.v
    return f"{v:.3f}"


def verl_line(step: int, metrics: dict, old: bool) -> str:
    fmt = verl_value_old if old else verl_value_new
    return " - ".join([f"step:{step}"] + [f"{k}:{fmt(v)}" for k, v in metrics.items()])


def verl_metrics(row: dict, step: int, *, epoch: int, max_len: int, batch: int, prompt_mean: float,
                 old: bool, r: random.Random, with_corr: bool, lean: bool = False) -> dict:
    """Key order of RayPPOTrainer.fit (verl/trainer/ppo/ray_trainer.py): balance_batch, old_log_prob
    (actor/entropy, debug metrics), rollout_corr (adv stage), update_actor (reduce_metrics -> numpy),
    training/*, compute_data_metrics, compute_timing_metrics, compute_throughout_metrics."""
    n = batch
    L = row["len"]
    resp_tokens = int(L * n)
    prompt_tokens = int(prompt_mean * n)
    tot = resp_tokens + prompt_tokens
    dp = 8
    m: dict = {}
    per = tot / dp
    lo, hi = int(per * 0.93), int(per * 1.07)
    if not lean:  # trainer.balance_batch=True (default) adds global_seqlen/*
      m["global_seqlen/min"] = lo
      m["global_seqlen/max"] = hi
      m["global_seqlen/minmax_diff"] = hi - lo
      m["global_seqlen/balanced_min"] = int(per)
      m["global_seqlen/balanced_max"] = int(per) + 1
      m["global_seqlen/mean"] = per
    if old:
        m["actor/entropy_loss"] = f32(row["entropy"])
    else:
        m["actor/entropy"] = f32(row["entropy"])
        m["perf/mfu/actor_infer"] = f32(0.21 * (1 + r.gauss(0, 0.03)))
    mism = row["mism"]
    m["training/rollout_probs_diff_valid"] = 1
    m["training/rollout_probs_diff_max"] = f32(min(1.0, mism * 140 * (1 + r.gauss(0, 0.1))))
    m["training/rollout_probs_diff_mean"] = f32(mism)
    m["training/rollout_probs_diff_std"] = f32(mism * 2.9 * (1 + r.gauss(0, 0.05)))
    if not old:
        m["training/rollout_actor_probs_pearson_corr"] = f32(max(-1.0, 1 - mism * 0.3) if mism == mism else NAN)
    if with_corr:
        kl = (1 - row["is_mean"]) * 0.8 if row["is_mean"] == row["is_mean"] else NAN
        m["rollout_corr/training_ppl"] = f32(1.31 * (1 + r.gauss(0, 0.01)))
        m["rollout_corr/training_log_ppl"] = f32(0.27 * (1 + r.gauss(0, 0.02)))
        m["rollout_corr/kl"] = f32(kl + 0.0004)
        m["rollout_corr/k3_kl"] = f32(abs(kl) * 0.9 + 0.0003)
        m["rollout_corr/rollout_ppl"] = f32(1.31 * (1 + r.gauss(0, 0.01)))
        m["rollout_corr/rollout_log_ppl"] = f32(0.27 * (1 + r.gauss(0, 0.02)))
        m["rollout_corr/log_ppl_diff"] = f32(kl * 0.7 + r.gauss(0, 0.0003))
        m["rollout_corr/log_ppl_abs_diff"] = f32(abs(kl) * 0.9 + 0.002)
        m["rollout_corr/ppl_ratio"] = f32(1 + kl * 0.7)
        m["rollout_corr/chi2_token"] = f32(abs(kl) * 2.1 + 0.003)
        m["rollout_corr/rollout_is_mean"] = f32(row["is_mean"])
        m["rollout_corr/rollout_is_max"] = 2.0
        m["rollout_corr/rollout_is_min"] = f32(0.02 + r.random() * 0.05)
        m["rollout_corr/rollout_is_std"] = f32(0.04 + (1 - row["ess"]) * 0.6 if row["ess"] == row["ess"] else NAN)
        m["rollout_corr/rollout_is_eff_sample_size"] = f32(row["ess"])
        m["rollout_corr/rollout_is_ratio_fraction_high"] = f32(0.0004 + (1 - row["ess"]) * 0.05 if row["ess"] == row["ess"] else NAN)
        m["rollout_corr/rollout_is_ratio_fraction_low"] = f32(0.0011 + (1 - row["ess"]) * 0.09 if row["ess"] == row["ess"] else NAN)
    # update_actor -> reduce_metrics -> np.mean / np.max -> numpy scalars
    m["actor/pg_loss"] = NP(row["pg_loss"])
    m["actor/kl_loss"] = NP(row["kl_loss"])
    m["actor/kl_coef"] = NP(0.001)
    m["actor/pg_clipfrac"] = NP(row["clipfrac"] if row["pg_loss"] == row["pg_loss"] else 0.0)
    m["actor/ppo_kl"] = NP(row["ppo_kl"])
    m["actor/pg_clipfrac_lower"] = NP(0.0 if r.random() < 0.7 else 2.3e-05 * r.random())
    m["actor/grad_norm"] = NP(row["grad_norm"])
    m["perf/mfu/actor"] = NP(0.31 * (1 + r.gauss(0, 0.02)))
    m["perf/max_memory_allocated_gb"] = NP(61.83148765563965)
    m["perf/max_memory_reserved_gb"] = NP(71.455078125)
    m["perf/cpu_memory_used_gb"] = NP(118.2 + r.random() * 3)
    m["actor/lr"] = NP(1e-06)
    m["training/global_step"] = step
    m["training/epoch"] = epoch
    sc = round(row["score"] * n) / n
    m["critic/score/mean"] = sc
    m["critic/score/max"] = 1.0
    m["critic/score/min"] = 0.0
    m["critic/rewards/mean"] = sc
    m["critic/rewards/max"] = 1.0
    m["critic/rewards/min"] = 0.0
    adv0 = 0.0 if sc in (0.0, 1.0) else 1.7888543605804443
    m["critic/advantages/mean"] = f32(r.gauss(0, 1e-8)) if adv0 else 0.0
    m["critic/advantages/max"] = adv0
    m["critic/advantages/min"] = -adv0
    m["critic/returns/mean"] = m["critic/advantages/mean"]
    m["critic/returns/max"] = adv0
    m["critic/returns/min"] = -adv0
    Lm = round(L * n) / n
    m["response_length/mean"] = Lm
    m["response_length/max"] = float(max_len) if row["clip"] > 0 else float(int(L * 1.9))
    m["response_length/min"] = float(max_len) if row["clip"] >= 1.0 else float(int(L * 0.18))
    m["response_length/clip_ratio"] = round(row["clip"] * n) / n
    if not old:
        for k in ("mean", "max", "min", "clip_ratio"):
            m[f"response_length_non_aborted/{k}"] = m[f"response_length/{k}"]
        m["response/aborted_ratio"] = 0.0
    m["prompt_length/mean"] = round(prompt_mean * n) / n
    m["prompt_length/max"] = 412.0
    m["prompt_length/min"] = 61.0
    m["prompt_length/clip_ratio"] = 0.0
    st = row["step_time"]
    gen = row["gen_time"]
    m["timing_s/gen"] = gen
    m["timing_s/reward"] = 0.9 + r.random() * 0.6
    m["timing_s/old_log_prob"] = st * 0.09 * (1 + r.gauss(0, 0.02))
    m["timing_s/ref"] = st * 0.085 * (1 + r.gauss(0, 0.02))
    m["timing_s/adv"] = 0.2 + r.random() * 0.1
    m["timing_s/update_actor"] = st * 0.24 * (1 + r.gauss(0, 0.02))
    m["timing_s/update_weights"] = 2.7 + r.random() * 0.5
    m["timing_s/step"] = st
    m["timing_per_token_ms/gen"] = gen * 1000 / resp_tokens
    m["timing_per_token_ms/update_actor"] = m["timing_s/update_actor"] * 1000 / tot
    m["timing_per_token_ms/ref"] = m["timing_s/ref"] * 1000 / tot
    m["timing_per_token_ms/adv"] = m["timing_s/adv"] * 1000 / tot
    m["perf/total_num_tokens"] = tot
    m["perf/time_per_step"] = st
    m["perf/throughput"] = tot / (st * dp)
    if old:  # keys that did not exist in verl <= 0.4 console lines
        for k in ("actor/kl_coef", "perf/cpu_memory_used_gb", "timing_s/update_weights"):
            m.pop(k, None)
    if lean:
        # a leaner but real configuration/version: trainer.balance_batch=False (no global_seqlen/*),
        # actor.use_kl_loss=False and no reference model (no actor/kl_*, timing_s/ref), verl of mid/late 2025
        # (before response_length_non_aborted/*, response/aborted_ratio and perf/mfu/actor_infer were added)
        for k in list(m):
            if k.startswith(("actor/kl_", "response_length_non_aborted/")) or k in (
                    "timing_s/ref", "timing_per_token_ms/ref", "response/aborted_ratio", "perf/mfu/actor_infer"):
                m.pop(k)
    return m


VERL_CONFIG = {
    "actor_rollout_ref": {
        "actor": {"clip_ratio": 0.2, "entropy_coeff": 0, "grad_clip": 1.0, "kl_loss_coef": 0.001,
                  "kl_loss_type": "low_var_kl", "loss_agg_mode": "token-mean",
                  "optim": {"lr": 1e-06, "lr_warmup_steps_ratio": 0.0, "weight_decay": 0.01},
                  "ppo_epochs": 1, "ppo_micro_batch_size_per_gpu": 4, "ppo_mini_batch_size": 64,
                  "strategy": "fsdp", "use_dynamic_bsz": True, "use_kl_loss": True},
        "model": {"enable_gradient_checkpointing": True, "path": "/mnt/data/models/Qwen2.5-7B-Instruct",
                  "use_remove_padding": True},
        "rollout": {"calculate_log_probs": True, "dtype": "bfloat16", "gpu_memory_utilization": 0.6,
                    "mode": "async", "n": 8, "name": "vllm", "temperature": 1.0,
                    "tensor_model_parallel_size": 2},
    },
    "algorithm": {"adv_estimator": "grpo", "kl_ctrl": {"kl_coef": 0.001, "type": "fixed"},
                  "norm_adv_by_std_in_grpo": True, "use_kl_in_reward": False},
    "data": {"max_prompt_length": 1024, "max_response_length": 4096, "train_batch_size": 128,
             "train_files": "/mnt/data/dapo-math-17k/train.parquet",
             "val_files": "/mnt/data/aime-2024/test.parquet"},
    "trainer": {"default_local_dir": "/mnt/ckpt/verl_grpo_qwen7b", "experiment_name": "qwen7b_grpo_dapo",
                "logger": ["console", "file"], "n_gpus_per_node": 8, "nnodes": 1,
                "project_name": "verl_grpo", "save_freq": 20, "test_freq": 10, "total_epochs": 1,
                "total_training_steps": None, "val_before_train": True},
}


def make_verl_console(name: str, run: Run, *, old: bool, seed: int, total_steps: int, with_corr: bool,
                      ray_actor: str = "TaskRunner", lean: bool = False):
    r = random.Random(seed)
    pid = 2000 + r.randrange(90000)
    wpid = pid + 400 + r.randrange(300)
    P = f"({ray_actor} pid={pid}) "
    W = f"(WorkerDict pid={wpid}) "
    now = clock(dt.datetime(2025, 9, 14, 2, 11, 37))
    out = []
    out.append("ray init kwargs: {'num_cpus': None, 'runtime_env': {'env_vars': {'TOKENIZERS_PARALLELISM': "
               "'true', 'NCCL_DEBUG': 'WARN', 'VLLM_LOGGING_LEVEL': 'WARN', 'VLLM_ALLOW_RUNTIME_LORA_UPDATING': "
               "'true', 'CUDA_DEVICE_MAX_CONNECTIONS': '1', 'NCCL_CUMEM_ENABLE': '0'}}}")
    if not old:
        out.append(P + f"TaskRunner hostname: dlc1ybt0xq5c2fkn-master-0, PID: {pid}")
    for ln in pprint.pformat(VERL_CONFIG).splitlines():
        out.append(P + ln)
    out.append(P + "Using dataset class: RLHFDataset")
    out.append(P + f"Total training steps: {total_steps}")
    if not old:
        out.append(P + "Creating file logger at ./verl_grpo/qwen7b_grpo_dapo.jsonl")
    out.append(P + "Training from scratch")
    val0 = {"val-aux/aime-2024/reward/mean@1": NP(0.1333333333333333), "val-core/aime-2024/acc/mean@1": NP(0.1333333333333333)}
    s = "Initial validation metrics: {" + ", ".join(f"'{k}': {verl_value_new(v)}" for k, v in val0.items()) + "}"
    for ln in pprint.pformat(s).splitlines():
        out.append(P + ln)
    out.append(P + verl_line(0, val0, old))
    elapsed = 0.0
    for i, row in enumerate(run.rows, 1):
        m = verl_metrics(row, i, epoch=0, max_len=run.max_len, batch=run.batch * 8, prompt_mean=233.4,
                         old=old, r=r, with_corr=with_corr, lean=lean)
        extra = 0.0
        if i % 10 == 0 and row["entropy"] == row["entropy"]:
            acc = min(0.9, 0.13 + 0.0025 * i + r.gauss(0, 0.02))
            m_val = {"val-aux/aime-2024/reward/mean@1": NP(acc), "val-core/aime-2024/acc/mean@1": NP(acc)}
            items = list(m.items())
            cut = [k for k, _ in items].index("training/global_step")
            m = dict(items[:cut] + list(m_val.items()) + items[cut:])
            m["timing_s/testing"] = 41.2 + r.random() * 4
            extra += m["timing_s/testing"]
            out.append(P + "test_gen_batch meta info: {'eos_token_id': 151645, 'pad_token_id': 151643, "
                       "'recompute_log_prob': False, 'do_sample': False, 'validate': True, "
                       f"'global_steps': {i}}}")
            out.append(P + "validation generation end")
        if i % 20 == 0 and row["entropy"] == row["entropy"]:
            m["timing_s/save_checkpoint"] = 38.5 + r.random() * 6
            extra += m["timing_s/save_checkpoint"]
            folder = f"/mnt/ckpt/verl_grpo_qwen7b/global_step_{i}"
            out.append(P + f"local_global_step_folder: {folder}")
            ts = now(0).strftime("%Y-%m-%d %H:%M:%S")
            out.append(W + f"INFO:{ts},{r.randrange(1000):03d}:[Rank 0] Saved model to {folder}/actor/model_world_size_8_rank_0.pt")
            out.append(W + f"INFO:{ts},{r.randrange(1000):03d}:[Rank 0] Saved optim to {folder}/actor/optim_world_size_8_rank_0.pt")
        if old:
            m = {k: v for k, v in m.items() if not k.startswith("rollout_corr/")}
        out.append(P + verl_line(i, m, old))
        elapsed += row["step_time"] + extra + 3.0
        now(row["step_time"] + extra + 3.0)
        rate_fmt = bar("Training Progress", i, total_steps, elapsed, ncols=160)
        out.append(rate_fmt)
    return "\n".join(out) + "\n"


def make_verl_jsonl(run: Run, seed: int) -> str:
    """verl/utils/tracking.py FileLogger.log: orjson.dumps({"step": step, "data": data},
    option=orjson.OPT_SERIALIZE_NUMPY) + b"\\n" (NaN/inf become null)."""
    r = random.Random(seed)
    lines = []
    val0 = {"val-aux/openai/gsm8k/reward/mean@1": 0.5041698256254739, "val-core/openai/gsm8k/acc/mean@1": 0.5041698256254739}
    lines.append(orjson.dumps({"step": 0, "data": val0}).decode())
    for i, row in enumerate(run.rows, 1):
        m = verl_metrics(row, i, epoch=i // 58, max_len=run.max_len, batch=run.batch * 8, prompt_mean=104.2,
                         old=False, r=r, with_corr=False, lean=True)
        for k in [k for k in m if k.startswith("training/rollout_")]:
            m.pop(k)  # actor_rollout_ref.rollout.calculate_log_probs=False in this run
        # the file logger gets the same dict as the console; numpy scalars serialize as numbers
        data = {k: (v.v if isinstance(v, NP) else v) for k, v in m.items()}
        if i % 10 == 0:
            acc = max(0.0, min(0.9, 0.50 + 0.002 * i + r.gauss(0, 0.01)) * (row["score"] / 0.5 if row["score"] < 0.45 else 1))
            items = list(data.items())
            cut = [k for k, _ in items].index("training/global_step")
            data = dict([*items[:cut], ("val-aux/openai/gsm8k/reward/mean@1", acc), ("val-core/openai/gsm8k/acc/mean@1", acc),
                         *items[cut:]])
            data["timing_s/testing"] = 22.9 + r.random() * 2
        lines.append(orjson.dumps({"step": i, "data": data}, option=orjson.OPT_SERIALIZE_NUMPY).decode())
    return "\n".join(lines) + "\n"


# ----------------------------------------------------------------------------------------------
# ROLL: roll/utils/logging.py get_logger format + roll/utils/tracking.py StdoutTracker.log
# ----------------------------------------------------------------------------------------------
def roll_prefix(ts: dt.datetime, filename: str, lineno: int, pid: int, level="INFO") -> str:
    # fmt=f"[%(asctime)s] [%(filename)s (%(lineno)d)] [%(levelname)s] [%(WORKER_NAME)s %(RANK)s / %(WORLD_SIZE)s][PID {os.getpid()}] %(message)s"
    return f"[{ts.strftime('%Y-%m-%d %H:%M:%S')}] [{filename} ({lineno})] [{level}] [DRIVER 0 / 1][PID {pid}] "


def roll_metrics(row: dict, step: int, prev_total: float, r: random.Random, max_len: int, n_samples: int) -> dict:
    m: dict = {}
    m["time/step_total"] = prev_total  # rlvr_pipeline.py logs the PREVIOUS step's total (pre_step_total_time)
    m["time/step_model_update"] = 6.1 + r.random()
    m["time/step_generate"] = row["gen_time"]
    m["time/ref_log_probs_values"] = row["step_time"] * 0.07
    m["time/old_log_probs"] = row["step_time"] * 0.08
    m["system/global_step"] = step
    m["system/batch_size"] = n_samples
    m["system/samples"] = (step + 1) * n_samples
    m["system/tps"] = row["len"] * n_samples / row["step_time"]
    m["system/actor_train/tps_gpu"] = m["system/tps"] / 8 * 2.9
    m["token/prompt_length/mean"] = 191.3 + r.gauss(0, 4)
    m["token/response_length/mean"] = row["len"]
    m["token/response_length/max"] = float(max_len) if row["clip"] > 0 else row["len"] * 1.8
    m["token/response_length/min"] = row["len"] * 0.15
    m["token/total_response_length/clip"] = float(round(row["clip"] * n_samples))
    m["critic/entropy/mean"] = row["entropy"]
    m["critic/correct/mean"] = row["score"]
    m["critic/score/mean"] = row["score"]
    m["critic/score/max"] = 1.0
    m["critic/score/min"] = 0.0
    m["critic/rewards/mean"] = row["score"]
    m["critic/advantages/mean"] = r.gauss(0, 1e-8)
    m["critic/advantages/max"] = 2.4748737812042236
    m["critic/advantages/min"] = -2.4748737812042236
    lr = (1.0 + r.gauss(0, 0.0015)) if row["mism"] == row["mism"] else NAN
    d = row["mism"]
    for agg, scale in (("token", 1.0), ("geometric", 0.9), ("sequence", 30.0), ("segment", 4.0)):
        m[f"actor/train_infer_ratio_{agg}_mean@sum"] = (1.0 - (1.0 - row["is_mean"]) * scale * 0.6 + r.gauss(0, 0.001)) if lr == lr else NAN
        m[f"actor/train_infer_diff_{agg}_mean@sum"] = d * 3.1 * scale * (1 + r.gauss(0, 0.05))
    m["actor/pg_loss@sum"] = row["pg_loss"]
    m["actor/kl_loss@sum"] = row["kl_loss"]
    m["actor/total_loss@sum"] = row["pg_loss"] + 0.001 * row["kl_loss"] if row["pg_loss"] == row["pg_loss"] else NAN
    m["actor/approxkl@sum"] = abs(row["ppo_kl"]) * 0.9
    m["actor/policykl@sum"] = abs(row["ppo_kl"])
    m["actor/ppo_ratio_clipfrac@sum"] = row["clipfrac"]
    m["actor/ratio_mean@sum"] = 1.0 + r.gauss(0, 0.0005)
    m["actor/ratio_max@max"] = 1.27 + r.random() * 0.3
    m["actor/ratio_min@min"] = 0.71 + r.random() * 0.1
    m["actor/lr"] = 1e-06
    m["actor_train/grad_norm"] = row["grad_norm"]
    m["time/step_train"] = row["step_time"] * 0.28
    m["math_rule/critic/score/mean"] = row["score"]
    m["math_rule/token/response_length/mean"] = row["len"]
    return m


def make_roll(run: Run, seed: int, n_samples: int = 512, logging_steps: int = 10) -> str:
    r = random.Random(seed)
    pid = 3000 + r.randrange(60000)
    now = clock(dt.datetime(2025, 10, 9, 13, 4, 51))
    out = ["add logger: log_rank_DRIVER_0_1",
           "Created or verified log directory: ./output/logs",
           "Added logging to file: /workspace/ROLL/output/logs/log_rank_DRIVER_0_1.log"]
    out.append(roll_prefix(now(), "tracking.py", 170, pid) + "create tracker stdout, kwargs: {}")
    prev_total = 0
    for step, row in enumerate(run.rows):
        out.append(roll_prefix(now(), "rlvr_pipeline.py", 487, pid) + f"pipeline step {step} start...")
        out.append(roll_prefix(now(), "rlvr_pipeline.py", 495, pid) + f"pre_step_total_time: {prev_total}")
        m = roll_metrics(row, step, prev_total, r, run.max_len, n_samples)
        now(row["step_time"])
        stripped = {k.rsplit("@", 1)[0]: v for k, v in m.items()}
        out.append(roll_prefix(now(), "tracking.py", 161, pid) + "metrics_tag: " +
                   json.dumps({"step": step, "metrics": stripped}))
        if step % logging_steps == 0:
            ex = [{"prompt": "system\nPlease reason step by step, and put your final answer within \\boxed{}.\nuser\n"
                             "Let $f(x)=x^2-3x+2$. Find the sum of the roots of $f(f(x))=0$.\nassistant\n",
                   "response": "<think>\nFirst, find the roots of f: x^2-3x+2=(x-1)(x-2), so f(y)=0 when y=1 or y=2. ..."}]
            out.append(roll_prefix(now(), "rlvr_pipeline.py", 837, pid) + json.dumps(ex, ensure_ascii=False))
            out.append(roll_prefix(now(), "rlvr_pipeline.py", 838, pid) + json.dumps(m, ensure_ascii=False))
        out.append(roll_prefix(now(), "rlvr_pipeline.py", 840, pid) + f"pipeline step {step} finished")
        prev_total = row["step_time"]
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------------------------
# OpenRLHF v0.8.x: ppo_trainer.py logger.info(f"✨ Global step {steps}: {status}") (Ray actor PPOTrainer),
# ppo_actor.py pbar.set_postfix(short_status) (Ray actor PolicyModelActor); logging_utils _FORMAT
# ----------------------------------------------------------------------------------------------
def make_openrlhf(run: Run, seed: int, episodes_len: int) -> str:
    r = random.Random(seed)
    tpid = 10000 + r.randrange(50000)
    apid = tpid + 211
    now = clock(dt.datetime(2025, 6, 21, 9, 12, 3))
    T = f"(PPOTrainer pid={tpid}) "
    A = f"(PolicyModelActor pid={apid}) "
    out = []
    elapsed = 0.0
    for step, row in enumerate(run.rows, 1):
        n_mb = 8
        post = None
        kl = row["kl_loss"]
        ret = 0.0
        for _ in range(n_mb):
            post = {"act_loss": row["pg_loss"] + r.gauss(0, 0.01), "reward": row["score"] + r.gauss(0, 0.04),
                    "return": ret, "gen_len": row["len"] * (1 + r.gauss(0, 0.05)),
                    "tot_len": row["len"] * (1 + r.gauss(0, 0.05)) + 188.0, "kl": kl * (1 + r.gauss(0, 0.1)),
                    "act_lr": 1e-06}
        t_train = row["step_time"] * 0.3
        out.append(A + bar("Train epoch [1/1]", n_mb, n_mb, t_train, postfix=tqdm_postfix(post)))
        status = {"policy_loss": row["pg_loss"], "actor_lr": 1e-06, "response_length": row["len"],
                  "total_length": row["len"] + 188.0 + r.gauss(0, 2), "response_clip_ratio": row["clip"],
                  "score": row["score"], "reward": row["score"], "kl": kl, "group_reward_std": 0.31 + r.gauss(0, 0.01),
                  "return": 0.0}
        now(row["step_time"])
        ts = now().strftime("%m-%d %H:%M:%S")
        out.append(T + f"INFO {ts} ppo_trainer.py:525] ✨ Global step {step}: {status}")
        elapsed += row["step_time"]
        out.append(T + bar("Episode [1/1]", step, episodes_len, elapsed))
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------------------------
# Megatron-LM: megatron/training/training.py training_log (log_string)
# ----------------------------------------------------------------------------------------------
def megatron_line(ts: dt.datetime, it: int, train_iters: int, consumed: int, ms: float, lr: float, gbs: int,
                  losses: dict, loss_scale: float, grad_norm, skipped: int, nan_its: int, tflops: float) -> str:
    s = f" [{ts.strftime('%Y-%m-%d %H:%M:%S')}]"  # core_r0.11 format; newer adds .%f microseconds
    s += f' iteration {it:8d}/{train_iters:8d} |'
    s += f' consumed samples: {consumed:12d} |'
    s += f' elapsed time per iteration (ms): {ms:.1f} |'
    s += f' throughput per GPU (TFLOP/s/GPU): {tflops:.1f} |'
    s += f' learning rate: {lr:.6E} |'
    s += f' global batch size: {gbs:5d} |'
    for k, avg in losses.items():
        if avg >= 0.0:  # NaN fails this test: the loss field disappears from the line
            s += f' {k}: {avg:.6E} |'
    s += f' loss scale: {loss_scale:.1f} |'
    if grad_norm is not None:
        s += f' grad norm: {grad_norm:.3f} |'
    s += f' number of skipped iterations: {skipped:3d} |'
    s += f' number of nan iterations: {nan_its:3d} |'
    return s


def make_megatron(seed: int, iters: int, *, bad: bool) -> str:
    r = random.Random(seed)
    now = clock(dt.datetime(2025, 11, 3, 20, 41, 9, 120000))
    train_iters, gbs = 5000, 512
    out = ["> building GPT model ...",
           " > number of parameters on (tensor, pipeline) model parallel rank (0, 0): 1010835456",
           "done with setup ...",
           f"[after dataloaders are built] datetime: {now().strftime('%Y-%m-%d %H:%M:%S')} ",
           "training ..."]
    loss = 2.31
    base_ms = 4120.0
    spike_at, nan_at = 61, 68
    for it in range(1, iters + 1):
        ms = base_ms * (1 + r.gauss(0, 0.012))
        if it == 1:
            ms *= 3.4  # first iteration includes compile / NCCL warm-up
        if not bad and it in (50,):
            ms *= 1.35  # checkpoint-save iteration
        loss = loss * 0.9985 + r.gauss(0, 0.004)
        gn = 0.21 * math.exp(r.gauss(0, 0.12))
        lm = loss
        if bad and it >= spike_at:
            k = it - spike_at
            gn = 0.21 * (2.1 ** k) * (1 + r.gauss(0, 0.1))
            lm = loss + 0.05 * (1.7 ** k)
        if bad and it >= nan_at:
            gn, lm = NAN, NAN
        lr = min(3e-4, 3e-4 * it / 50)
        now(ms / 1000)
        out.append(megatron_line(now(), it, train_iters, it * gbs, ms, lr, gbs, {"lm loss": lm}, 1.0, gn,
                                 0, 0, 412.0 * base_ms / ms))
        if it == 1:
            out.append("[Rank 0] (after 1 iterations) memory (MB) | allocated: 23153.72 | max allocated: "
                       "51442.19 | reserved: 58112.00 | max reserved: 58112.00")
        if it % 50 == 0:
            out.append(f"saving checkpoint at iteration {it:7d} to /mnt/ckpt/qwen2.5-7b-cpt in torch_dist format")
            out.append(f"  successfully saved checkpoint from iteration {it:7d} to /mnt/ckpt/qwen2.5-7b-cpt [ t 1/2, p 1/1 ]")
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------------------------
# ChatLearn: chatlearn/utils/logger.py setup_logger format; schedule/metric_manager.py MetricManager.log;
# runtime/engine.py episode summary; algorithm/grpo_utils/megatron_utils/train_helper.py training_log
# ----------------------------------------------------------------------------------------------
def cl_prefix(ts: dt.datetime, filename: str, lineno: int, level="INFO") -> str:
    # '[%(asctime)s %(name)s] (%(filename)s %(lineno)d): %(levelname)s %(message)s' ; asctime = '%Y-%m-%d %H:%M:%S,mmm'
    return f"[{ts.strftime('%Y-%m-%d %H:%M:%S')},{ts.microsecond // 1000:03d} ChatLearn] ({filename} {lineno}): {level} "


def make_chatlearn(run: Run, seed: int) -> str:
    r = random.Random(seed)
    tpid = 20000 + r.randrange(40000)
    T = f"(MegatronPolicyTrainer pid={tpid}) "
    now = clock(dt.datetime(2025, 10, 23, 14, 33, 12, 451000))
    out = [cl_prefix(now(), "metric_manager.py", 46) + "tensorboard is disabled in engine.",
           cl_prefix(now(), "metric_manager.py", 65) + "wandb is disabled in engine."]
    consumed = 0
    gbs = run.batch * 8
    for ep, row in enumerate(run.rows, 1):
        consumed += gbs
        ent, kl_l, pg = row["entropy"], row["kl_loss"], row["pg_loss"]
        # train_helper.training_log: keys sorted (entropy_loss, kl_loss, pg_loss); elapsed_time is 0 there
        s = f" iteration {ep:8d}/infinity |"
        s += f" consumed samples: {consumed:12d} |"
        s += f" elapsed time per iteration (ms): {0.0:.1f} |"
        s += f" learning rate: {2e-06:.3E} |"
        s += f" global batch size: {gbs:5d} |"
        for k, v in (("entropy_loss", ent), ("kl_loss", kl_l), ("pg_loss", pg)):
            s += f" {k}: {v:.6E} |"
        s += f" loss scale: {1.0:.1f} |"
        s += " grad norm: {:.3f} |".format(row["grad_norm"])
        s += f" number of nan iterations: {0:3d} |"
        out.append(T + s)
        out.append(T + f"[Logger] datetime: {now().strftime('%Y-%m-%d %H:%M:%S.%f')} ")
        now(row["step_time"])
        sync = 11.2 + r.random()
        envt = row["gen_time"]
        train = row["step_time"] * 0.31
        episode = sync + envt + train + 4.0
        out.append(cl_prefix(now(), "engine.py", 392) +
                   f"chatlearn_log grpo episode summary, episode {ep} time (sec) | sync_parameters: {sync:.2f}(avg: {sync:.2f})"
                   f" | episode: {episode:.2f}(avg: {episode:.2f}) | train: {train:.2f}(avg: {train:.2f})"
                   f" | environment: {envt:.2f}(avg: {envt:.2f})")
        pol = {"entropy_loss": ent, "kl_loss": kl_l, "pg_loss": pg, "grad_norm": row["grad_norm"]}
        out.append(cl_prefix(now(), "metric_manager.py", 90) + f"step {ep} prefix policy_trainer: logging metric {pol}")
        roll = {"response_token_length": row["len"], "prompt_token_length": 187.3828125,
                "response_clip_ratio": round(row["clip"] * gbs) / gbs, "response_max": float(run.max_len) if row["clip"] > 0 else row["len"] * 2,
                "response_25_percentile": row["len"] * 0.55, "response_50_percentile": row["len"] * 0.9,
                "response_75_percentile": row["len"] * 1.3}
        out.append(cl_prefix(now(), "metric_manager.py", 90) + f"step {ep} prefix rollout: logging metric {roll}")
        out.append(cl_prefix(now(), "metric_manager.py", 90) + f"step {ep} prefix rule_reward: logging metric "
                   + str({"train_reward_score": row["score"]}))
        timers = {"sync_parameters": sync, "episode": episode, "train": train, "environment": envt,
                  "tps_throughput": (row["len"] + 187.4) * gbs / episode}
        out.append(cl_prefix(now(), "metric_manager.py", 90) + f"step {ep} prefix engine/timer_summary: logging metric {timers}")
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------------------------
# TRL GRPOTrainer.log -> transformers Trainer.log -> ProgressCallback.on_log -> tqdm.write(str(logs))
# transformers >= 5: floats are written f"{v:.4g}" (strings); <= 4.57 raw floats.
# ----------------------------------------------------------------------------------------------
def trl_logs(row: dict, step: int, steps_per_epoch: int, max_len: int, r: random.Random) -> dict:
    L = row["len"]
    d = {"loss": row["pg_loss"] + 0.04 * row["kl_loss"], "grad_norm": row["grad_norm"],
         "learning_rate": 1e-06 * (1 - step / 400), "num_tokens": float(int(step * 8 * 16 * (L + 180))),
         "completions/mean_length": L, "completions/min_length": float(int(L * 0.2)),
         "completions/max_length": float(max_len) if row["clip"] > 0 else float(int(L * 1.8)),
         "completions/clipped_ratio": round(row["clip"] * 128) / 128,
         "completions/mean_terminated_length": L * (1 - row["clip"] * 0.5),
         "completions/min_terminated_length": float(int(L * 0.2)),
         "completions/max_terminated_length": float(int(min(max_len - 1, L * 1.7))),
         "rewards/accuracy_reward/mean": row["score"], "rewards/accuracy_reward/std": 0.45 + r.gauss(0, 0.02),
         "reward": row["score"], "reward_std": 0.41 + r.gauss(0, 0.02),
         "frac_reward_zero_std": max(0.0, min(1.0, 0.2 + r.gauss(0, 0.05))),
         "kl": row["kl_loss"], "entropy": row["entropy"],
         "clip_ratio/low_mean": 0.0, "clip_ratio/high_mean": 0.0, "clip_ratio/region_mean": 0.0,
         "clip_ratio/low_min": 0.0, "clip_ratio/high_max": 0.0,
         "step_time": row["step_time"], "epoch": round(step / steps_per_epoch, 4)}
    return d


def trl_fmt(logs: dict, new: bool) -> str:
    if not new:
        return str(logs)
    return str({k: (f"{v:.4g}" if isinstance(v, float) else v) for k, v in logs.items()})


def make_trl(run: Run, seed: int, total: int, new: bool = True) -> str:
    r = random.Random(seed)
    out = ["\r" + bar("", 0, total, 0.0)]
    elapsed = 0.0
    prev = None
    for step, row in enumerate(run.rows, 1):
        elapsed += row["step_time"]
        b = bar("", step, total, elapsed)
        seg = ("\r" + prev if prev else "") + "\r" + b + "\r" + " " * len(b) + "\r"
        logs = trl_logs(row, step, 2000, run.max_len, r)
        out.append(seg + trl_fmt(logs, new) + "\n")
        prev = b
    return "".join(out)


# ----------------------------------------------------------------------------------------------
# NeMo-RL: nemo_rl/algorithms/grpo.py grpo_train console block + algorithms/utils.py print_performance_metrics
# ----------------------------------------------------------------------------------------------
def make_nemo(run: Run, seed: int, max_steps: int, gkl) -> str:
    r = random.Random(seed)
    out = ["", "=" * 60, " " * 18 + "SETUP COMPLETE", f"  Total setup time: {187.4:.1f}s", "=" * 60, ""]
    out.append(f"\n{'=' * 25} Epoch {1}/{1} {'=' * 25}")
    for step, row in enumerate(run.rows, 1):
        out.append(f"\n{'=' * 25} Step {step}/{max_steps} {'=' * 25}")
        out.append("▶ Preparing batch...")
        out.append("▶ Generating responses for batch of size 512...")
        out.append("▶ Processing rewards...,")
        out.append("▶ Computing advantages...")
        out.append("▶ Preparing for logprob inference...")
        out.append("▶ Computing logprobs...")
        out.append("▶ Preparing for training...")
        out.append("▶ Training policy...")
        out.append("\n📊 Training Results:")
        out.append(f"  • Loss: {row['pg_loss']:.4f}")
        out.append(f"  • Generation KL Error: {gkl(step, row):.4f}")
        out.append(f"  • Avg Reward: {row['score']:.4f}")
        out.append(f"  • Mean Generation Length: {row['len']:.4f}")
        out.append("\n⏱️  Timing:")
        tot = row["step_time"]
        parts = {"generation": row["gen_time"], "policy_training": tot * 0.27, "policy_and_reference_logprobs": tot * 0.11,
                 "prepare_for_generation/total": 4.1 + r.random(), "prepare_for_generation/transfer_and_update_weights": 2.2 + r.random() * 0.4,
                 "logprob_inference_prep": 1.9 + r.random() * 0.3, "training_prep": 1.4 + r.random() * 0.2,
                 "data_processing": 0.31 + r.random() * 0.05, "reward_calculation": 0.84 + r.random() * 0.2}
        if step % 10 == 0:
            parts["checkpointing"] = 29.5 + r.random() * 3
        total = tot + (parts.get("checkpointing", 0.0))
        out.append(f"  • Total step time: {total:.2f}s")
        for k, v in sorted(parts.items(), key=lambda kv: kv[1], reverse=True):
            out.append(f"  • {k}: {v:.2f}s ({v / total * 100:.1f}%)")
        toks = (row["len"] + 211.0) * 512
        out.append("\n🔍 Performance Metrics:")
        out.append(f"  • Mean Total Tokens per Sample: {row['len'] + 211.0:.2f}")
        out.append("  • Throughputs (per GPU):")
        out.append(f"    - E2E (Samples/sec/gpu): {512 / total / 16:.2f}")
        out.append(f"    - E2E (Tokens/sec/gpu): {toks / total / 16:.2f}")
    return "\n".join(out) + "\n"


# ----------------------------------------------------------------------------------------------
def trl_crash_tail() -> str:
    """The traceback real transformers/TRL printed here after NaN weights (sample_logs/health/trl-grpo-cpu-real-nan.log,
    paths already generalised), as if printed by a training script of the user's."""
    with open(os.path.join(OUT, "trl-grpo-cpu-real-nan.log"), "rb") as fh:
        src = fh.read().decode()
    tb = src[src.index("Traceback (most recent call last):"):]
    tb = tb.replace('"/workspace/trl_grpo_cpu.py", line 71', '"/workspace/train_grpo.py", line 96')
    return tb.split("\r")[0]


def main():
    print(f"writing to {OUT}")
    # verl console, new format (verl >= 0.5: pprint.pformat; numpy 2 -> np.float64(...)), lean config
    h = Run(11, 24, max_len=4096, batch=16).healthy(len0=1480, len1=1650, step_s=212.0)
    write("verl-console-healthy.log", make_verl_console("h", h, old=False, seed=111, total_steps=200,
                                                        with_corr=False, lean=True))
    b = Run(13, 24, max_len=4096, batch=16).healthy(len0=1480, len1=1650, step_s=212.0)
    b.mismatch_then_nan(start=5, nan_at=22, grad_offset=9)
    write("verl-console-mismatch-grad-nan.log", make_verl_console("b", b, old=False, seed=113, total_steps=200,
                                                    with_corr=False, lean=True))
    # verl console, old format (verl <= 0.4: f"{v:.3f}"): healthy / mismatch -> grad norm -> NaN
    h = Run(14, 28, max_len=4096, batch=16).healthy(len0=1480, len1=1690, step_s=212.0)
    write("verl-v04-console-healthy.log", make_verl_console("h", h, old=True, seed=114, total_steps=200, with_corr=False))
    b = Run(12, 28, max_len=4096, batch=16).healthy(len0=1480, len1=1690, step_s=212.0)
    b.mismatch_then_nan(start=6, nan_at=25, grad_rate=1.65)
    write("verl-v04-console-mismatch-grad-nan.log", make_verl_console("b", b, old=True, seed=112, total_steps=200, with_corr=False))
    # verl JSONL file logger (lean config): healthy / entropy collapse -> reward collapse
    h = Run(21, 35, max_len=1024, batch=16).healthy(ent0=0.58, ent1=0.46, len0=260, len1=296, step_s=61.0)
    write("verl-file-logger-healthy.jsonl", make_verl_jsonl(h, 121))
    b = Run(22, 35, max_len=1024, batch=16).healthy(ent0=0.58, ent1=0.46, len0=260, len1=296, step_s=61.0)
    b.entropy_then_reward_collapse(start=8, rate=0.13, delay=10, reward_rate=0.08)
    write("verl-file-logger-entropy-reward-collapse.jsonl", make_verl_jsonl(b, 122))
    # ROLL (track_with: stdout; logging_steps: 10): healthy / train-infer mismatch + straggler steps
    h = Run(31, 20, max_len=8192, batch=64).healthy(len0=2100, len1=2400, step_s=305.0)
    write("roll-rlvr-healthy.log", make_roll(h, 131, logging_steps=10))
    b = Run(32, 20, max_len=8192, batch=64).healthy(len0=2100, len1=2400, step_s=305.0)
    b.straggler(start=12, length=5, factor=3.0)
    for s, row in enumerate(b.rows, 1):
        if s >= 6:
            k = s - 6
            row["mism"] = 0.0032 * (1.2 ** k)
            row["is_mean"] = 1.0 - min(0.3, 0.0025 * (1.25 ** k))
    write("roll-rlvr-mismatch-straggler.log", make_roll(b, 132, logging_steps=10))
    # OpenRLHF v0.8: healthy / response length to the cap + KL blow-up + reward collapse
    h = Run(41, 70, max_len=4096, batch=16).healthy(len0=700, len1=900, step_s=150.0)
    write("openrlhf-healthy.log", make_openrlhf(h, 141, episodes_len=117))
    b = Run(42, 70, max_len=4096, batch=16).healthy(len0=700, len1=900, step_s=150.0)
    b.length_to_cap_kl_blowup(start=26)
    write("openrlhf-length-kl-reward.log", make_openrlhf(b, 142, episodes_len=117))
    # Megatron-LM training_log (Pai-Megatron-Patch prints the same): healthy / grad norm spike -> NaN
    write("megatron-healthy.log", make_megatron(51, 110, bad=False))
    write("megatron-grad-spike-loss-vanished.log", make_megatron(52, 74, bad=True))
    # ChatLearn GRPO (Megatron backend): healthy / entropy collapse (-> reward) + episode time tripling
    h = Run(61, 34, max_len=2048, batch=64).healthy(len0=520, len1=640, step_s=180.0)
    write("chatlearn-grpo-healthy.log", make_chatlearn(h, 161))
    b = Run(62, 34, max_len=2048, batch=64).healthy(len0=520, len1=640, step_s=180.0)
    b.entropy_then_reward_collapse(start=8, rate=0.15, delay=10, reward_rate=0.09)
    b.straggler(start=27, length=4, factor=3.0)
    write("chatlearn-grpo-entropy-reward-straggler.log", make_chatlearn(b, 162))
    # TRL GRPO (transformers >= 5 progress output): healthy / entropy collapse + KL blow-up + grad NaN -> crash
    h = Run(71, 64, max_len=1024, batch=16).healthy(ent0=0.71, ent1=0.54, len0=300, len1=350, step_s=41.0, gn=0.9)
    write("trl-grpo-healthy.log", make_trl(h, 171, total=500))
    b = Run(72, 56, max_len=1024, batch=16).healthy(ent0=0.71, ent1=0.54, len0=300, len1=350, step_s=41.0, gn=0.9)
    b.entropy_then_reward_collapse(start=22, rate=0.12, delay=12, reward_rate=0.05)
    for s, row in enumerate(b.rows, 1):
        if s >= 28:
            row["kl_loss"] = 0.004 * (1.3 ** (s - 28))
        if s >= 46:
            row["grad_norm"] = 0.9 * (1.9 ** (s - 46))
        if s >= 56:
            row["grad_norm"] = NAN
    write("trl-grpo-entropy-kl-grad-nan-crash.log", make_trl(b, 172, total=500) + trl_crash_tail())
    # NeMo-RL GRPO console block: healthy / generation KL error rising + reward collapse + slow steps
    h = Run(81, 45, max_len=4096, batch=32).healthy(len0=900, len1=1100, step_s=118.0)
    write("nemo-rl-grpo-healthy.log", make_nemo(h, 181, 45, lambda s, row: 0.0009 + abs(random.Random(s).gauss(0, 0.0002))))
    b = Run(82, 45, max_len=4096, batch=32).healthy(len0=900, len1=1100, step_s=118.0)
    for s, row in enumerate(b.rows, 1):
        if s >= 30:
            row["score"] = max(0.0, row["score"] * math.exp(-0.09 * (s - 30)))
    b.straggler(start=34, length=6, factor=2.8)
    write("nemo-rl-grpo-genkl-reward-straggler.log", make_nemo(b, 182, 45, lambda s, row: 0.0009 * (1.0 if s < 14 else 1.24 ** (s - 14))))


if __name__ == "__main__":
    main()
