"""Four torchrun ranks sharing one GPU, gradients averaged over gloo (CPU tensors), so that one rank's real CUDA OOM
has real echoes: at step CULPRIT_STEP rank CULPRIT gets a sample of SEQ tokens and runs out of GPU memory in the
forward pass; the other ranks are left in the gloo all_reduce and fail when its sockets close."""
import os
from datetime import timedelta

import torch
import torch.distributed as dist
from torch import nn

rank = int(os.environ["RANK"])
culprit = int(os.environ.get("CULPRIT", "2"))
culprit_step = int(os.environ.get("CULPRIT_STEP", "3"))
dist.init_process_group("gloo", timeout=timedelta(seconds=int(os.environ.get("PG_TIMEOUT_S", "60"))))
torch.manual_seed(rank)
model = nn.Sequential(nn.Linear(4096, 4096), nn.GELU(), nn.Linear(4096, 4096)).cuda().bfloat16()
opt = torch.optim.SGD(model.parameters(), lr=1e-4)
for step in range(1, 8):
    tokens = int(os.environ.get("SEQ", str(4 << 20))) if (rank == culprit and step == culprit_step) else 2048
    x = torch.randn(tokens, 4096, device="cuda", dtype=torch.bfloat16)
    loss = model(x).float().pow(2).mean()
    loss.backward()
    for p in model.parameters():
        g = p.grad.float().cpu()
        dist.all_reduce(g)
        p.grad.copy_(g / dist.get_world_size())
    opt.step()
    opt.zero_grad(set_to_none=True)
    print(f"[rank {rank}] step {step} | tokens {tokens} | loss {loss.item():.4f}", flush=True)
dist.destroy_process_group()
