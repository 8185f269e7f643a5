"""Two torchrun ranks on one GPU with NCCL: both use cuda:0 in one all_reduce, and NCCL refuses
(duplicate GPU), the error a job with a wrong CUDA_VISIBLE_DEVICES or local-rank mapping gets."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist

rank = int(os.environ["RANK"])
torch.cuda.set_device(0)
dist.init_process_group("nccl", timeout=timedelta(seconds=int(os.environ.get("PG_TIMEOUT_S", "15"))))
t = torch.ones(1 << 20, device="cuda")
print(f"rank {rank}: all_reduce", flush=True)
dist.all_reduce(t)
torch.cuda.synchronize()
print(f"rank {rank}: done {t[0].item()}", flush=True)
dist.destroy_process_group()
