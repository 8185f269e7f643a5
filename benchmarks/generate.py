"""Write a big, realistic, deterministic RL training log with a few real errors at known places.

    python benchmarks/generate.py --size 1G --out /tmp/bench.log

The log looks like a verl/ChatLearn job printed through Ray and torchrun: a config dump, vLLM and
NCCL start-up noise, eight interleaved ranks with Ray and [rankN]: prefixes, ANSI colour, \\r progress
bars, benign warnings, metrics lines; then, at known lines, a CUDA OOM traceback on one rank (straddling
a 16 MiB block edge), the NCCL watchdog echoes of the other ranks, and Ray's ActorDiedError at the
driver. It prints where it put them (JSON) so the benchmark can check the findings.
"""

from __future__ import annotations

import argparse
import json
import random
import sys

BLOCK = 16 << 20

HEADER = """+ python3 -m verl.trainer.main_ppo algorithm.adv_estimator=grpo data.train_batch_size=1024 \
actor_rollout_ref.model.path=/mnt/models/Qwen3-8B actor_rollout_ref.actor.ppo_mini_batch_size=256 \
actor_rollout_ref.actor.ppo_micro_batch_size_per_gpu=8 actor_rollout_ref.rollout.tensor_model_parallel_size=2 \
actor_rollout_ref.rollout.gpu_memory_utilization=0.6 trainer.n_gpus_per_node=8 trainer.nnodes=1
2025-07-01 10:00:02,118\tINFO worker.py:1888 -- Started a local Ray instance. View the dashboard at \x1b[1m\x1b[32m127.0.0.1:8265 \x1b[39m\x1b[22m
(TaskRunner pid=2100) {'actor_rollout_ref': {'actor': {'clip_ratio': 0.2, 'grad_clip': 1.0, 'ppo_epochs': 1,
(TaskRunner pid=2100)                                  'ppo_micro_batch_size_per_gpu': 8, 'ppo_mini_batch_size': 256},
(TaskRunner pid=2100)                        'model': {'path': '/mnt/models/Qwen3-8B', 'use_remove_padding': True},
(TaskRunner pid=2100)                        'rollout': {'gpu_memory_utilization': 0.6, 'tensor_model_parallel_size': 2}},
(TaskRunner pid=2100)  'data': {'max_prompt_length': 1024, 'max_response_length': 4096, 'train_batch_size': 1024},
(TaskRunner pid=2100)  'trainer': {'n_gpus_per_node': 8, 'nnodes': 1, 'save_freq': 20, 'total_epochs': 15}}
"""

WORDS = ("actor", "critic", "rollout", "reward", "advantage", "entropy", "kl", "clipfrac", "response_length",
         "prompt_length", "throughput", "timing_s", "update_actor", "gen", "old_log_prob", "ref", "values")


def noise_lines(rng: random.Random, n: int, step0: int) -> list[str]:
    """Ordinary lines of a healthy run (no failure in them)."""
    out: list[str] = []
    for i in range(n):
        r = rng.randrange(8)
        ray = f"\x1b[36m(WorkerDict pid={3100 + r}, ip=10.0.0.{7 + r // 4})\x1b[0m "
        step = step0 + i // 40
        k = rng.randrange(20)
        if k < 7:
            metrics = " - ".join(f"{rng.choice(WORDS)}/{rng.choice(WORDS)}:{rng.random():.4f}" for _ in range(8))
            out.append(f"(TaskRunner pid=2100) step:{step} - actor/pg_loss:{rng.random():.4f} - "
                       f"actor/grad_norm:{rng.random() * 3:.3f} - {metrics}")
        elif k < 10:
            out.append(ray + f"Processed prompts:  {i % 100}%|████▌     | {i % 512}/512 [00:21<00:21,  3.01it/s, "
                       f"est. speed input: 410.22 toks/s, output: 2281.91 toks/s]\r" * 2)
        elif k < 12:
            out.append(f"{ray}[rank{r}]:[W701 10:{step % 60:02d}:{i % 60:02d}.112833000 ProcessGroupNCCL.cpp:4561] "
                       f"[PG ID 0 PG GUID 0(default_pg) Rank {r}] using GPU {r} to perform barrier as devices used "
                       "by this process are currently unknown.")
        elif k < 14:
            out.append(f"{ray}INFO 07-01 10:{step % 60:02d}:{i % 60:02d} [scheduler.py:1203] Running: {rng.randrange(64)} "
                       f"reqs, Swapped: 0 reqs, Pending: {rng.randrange(32)} reqs, GPU KV cache usage: "
                       f"{rng.random() * 100:.1f}%, CPU KV cache usage: 0.0%.")
        elif k < 15:
            out.append(f"{ray}/usr/local/lib/python3.10/dist-packages/torch/distributed/fsdp/_state_dict_utils.py:"
                       "773: UserWarning: When using ``NO_SHARD`` for ``ShardingStrategy``, full_state_dict will be "
                       "returned.")
        elif k < 16:
            out.append(f"{ray}dlc1a2b3c-master-0:{3100 + r}:{3200 + r} [{r}] NCCL INFO Channel {i % 32:02d}/0 : "
                       f"{r}[{r}] -> {(r + 1) % 8}[{(r + 1) % 8}] via P2P/CUMEM/read")
        else:
            out.append(f"{ray}[2025-07-01 10:{step % 60:02d}:{i % 60:02d},{i % 1000:03d} ChatLearn-policy_trainer "
                       f"10.0.0.7 RANK:{r}] (fsdp_module.py 470): INFO micro batch {i % 16}/16 done, "
                       f"memory allocated: {30 + rng.random():.2f} GiB")
    return out


OOM = """Traceback (most recent call last):
  File "/workspace/verl/verl/single_controller/ray/base.py", line 663, in func
    return getattr(self.worker_dict[key], name)(*args, **kwargs)
  File "/workspace/verl/verl/workers/fsdp_workers.py", line 591, in update_actor
    metrics = self.actor.update_policy(data=data)
  File "/workspace/verl/verl/workers/actor/dp_actor.py", line 393, in update_policy
    loss.backward()
torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 4.64 GiB. GPU 3 has a total capacity of 79.11 GiB of which 3.02 GiB is free. Including non-PyTorch memory, this process has 76.08 GiB memory in use. Of the allocated memory 68.87 GiB is allocated by PyTorch, and 5.93 GiB is reserved by PyTorch but unallocated. If reserved but unallocated memory is large try setting PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True to avoid fragmentation.  See documentation for Memory Management  (https://pytorch.org/docs/stable/notes/cuda.html#environment-variables)"""


def watchdog(rank: int) -> str:
    return (f"(WorkerDict pid={3100 + rank}, ip=10.0.0.7) [rank{rank}]:[E701 10:22:34.112833000 "
            f"ProcessGroupNCCL.cpp:632] [Rank {rank}] Watchdog caught collective operation timeout: "
            f"WorkNCCL(SeqNum=1553, OpType=_REDUCE_SCATTER_BASE, NumelIn=209715200, NumelOut=26214400, "
            f"Timeout(ms)=600000) ran for 600049 milliseconds before timing out.")


def parse_size(text: str) -> int:
    units = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}
    text = text.strip().upper().rstrip("B")
    if text and text[-1] in units:
        return int(float(text[:-1]) * units[text[-1]])
    return int(text)


def generate(out_path: str, size: int, seed: int) -> dict[str, object]:
    rng = random.Random(seed)
    pool = noise_lines(rng, 40000, 0)  # a pool of distinct lines, rotated to fill the file
    written = 0
    lineno = 0
    injected: dict[str, object] = {}
    # a 16 MiB block edge near the middle (the middle itself in a small log)
    oom_at = max(size // 2 // BLOCK, 1) * BLOCK if size > 2 * BLOCK else size // 2
    echo_gap = min(4 << 20, size // 8)
    oom_done = echoes_done = False
    with open(out_path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write(HEADER)
        written += len(HEADER.encode())
        lineno += HEADER.count("\n")
        chunk_no = 0
        while written < size:
            start = (chunk_no * 7919) % len(pool)
            chunk = pool[start:] + pool[:start]
            chunk_no += 1
            for line in chunk:
                if not oom_done and written + 600 >= oom_at:
                    prefix = "(WorkerDict pid=3103, ip=10.0.0.7) "
                    tb = "\n".join(prefix + x for x in OOM.splitlines()) + "\n"
                    injected["oom_line"] = lineno + OOM.count("\n") + 1
                    injected["oom_offset"] = written
                    fh.write(tb)
                    written += len(tb.encode())
                    lineno += tb.count("\n")
                    oom_done = True
                if oom_done and not echoes_done and written >= oom_at + echo_gap:
                    block = "\n".join(watchdog(r) for r in (0, 1, 2, 4, 5, 6, 7)) + "\n"
                    injected["watchdog_first_line"] = lineno + 1
                    fh.write(block)
                    written += len(block.encode())
                    lineno += block.count("\n")
                    echoes_done = True
                text = line + "\n"
                fh.write(text)
                written += len(text.encode())
                lineno += 1
                if written >= size:
                    break
        tail = ("ray.exceptions.ActorDiedError: The actor died unexpectedly before finishing this task.\n"
                "\tclass_name: WorkerDict\n\tactor_id: 8f1c6a7e1d2b3c4d5e6f708101000000\n\tpid: 3103\n")
        fh.write(tail)
        written += len(tail.encode())
        lineno += tail.count("\n")
    injected.update({"bytes": written, "lines": lineno, "expected_root_cause": "cuda-oom",
                     "expected_ids": ["cuda-oom", "nccl-watchdog-timeout"]})
    return injected


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--size", default="1G", help="about how big (e.g. 50M, 1G)")
    ap.add_argument("--out", required=True)
    ap.add_argument("--seed", type=int, default=1)
    args = ap.parse_args(argv)
    info = generate(args.out, parse_size(args.size), args.seed)
    print(json.dumps(info))
    return 0


if __name__ == "__main__":
    sys.exit(main())
