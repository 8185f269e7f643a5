"""Two torchrun ranks on a node with one GPU, each selecting the GPU of its LOCAL_RANK: rank 1 asks for a device
that does not exist (--nproc-per-node larger than the node's GPUs, or a CUDA_VISIBLE_DEVICES narrower than the
launcher thinks), while rank 0 waits for it in the NCCL all_reduce until torchrun stops it."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist

rank = int(os.environ["RANK"])
local = int(os.environ["LOCAL_RANK"])
print(f"[rank {rank}] local_rank {local}, {torch.cuda.device_count()} visible GPU(s)", flush=True)
torch.cuda.set_device(local)
dist.init_process_group("nccl", timeout=timedelta(seconds=int(os.environ.get("PG_TIMEOUT_S", "30"))))
t = torch.ones(1 << 20, device="cuda")
dist.all_reduce(t)
torch.cuda.synchronize()
print(f"[rank {rank}] all_reduce done {t[0].item()}", flush=True)
dist.destroy_process_group()
