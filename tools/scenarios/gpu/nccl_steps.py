"""NCCL all_reduce steps under torchrun on one GPU.

MODE=timeout: at step 4 the collective is queued behind a GPU kernel that runs for minutes (torch.cuda._sleep), as
a collective waits on a rank stuck elsewhere, so torch's NCCL watchdog fires after PG_TIMEOUT_S and takes the process
down: torch's own collective-timeout text, and its flight-recorder dump where TORCH_NCCL_DUMP_ON_TIMEOUT asks.
MODE=healthy: ten steps and a clean exit that never calls destroy_process_group (torch warns at exit, nothing fails).
"""
import os
from datetime import timedelta

import torch
import torch.distributed as dist

mode = os.environ.get("MODE", "timeout")
rank = int(os.environ["RANK"])
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
dist.init_process_group("nccl", timeout=timedelta(seconds=int(os.environ.get("PG_TIMEOUT_S", "10"))))
t = torch.ones(1 << 20, device="cuda")
steps = 10 if mode == "healthy" else 3
for step in range(1, steps + 1):
    dist.all_reduce(t)
    torch.cuda.synchronize()
    t.fill_(1.0)
    print(f"[rank {rank}] step {step} | all_reduce ok | loss {1.0 / step:.4f}", flush=True)
if mode == "healthy":
    print(f"[rank {rank}] training finished", flush=True)
else:
    print(f"[rank {rank}] step 4 | a kernel that runs for minutes, then the all_reduce", flush=True)
    torch.cuda._sleep(int(os.environ.get("SLEEP_CYCLES", str(2_000_000_000 * 180))))
    dist.all_reduce(t)
    torch.cuda.synchronize()  # does not return: the watchdog ends the process first
    print(f"[rank {rank}] step 4 done (not expected)", flush=True)
