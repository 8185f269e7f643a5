"""A small FSDP2 (fully_shard) training job under torchrun with NCCL. MODE=oom: the sequence length jumps at
step 4 and the step runs out of memory (in the forward pass, on the H100); MODE=healthy: 20 steps, a checkpoint,
a clean exit."""
import os

import torch
import torch.distributed as dist
from torch import nn
from torch.distributed.fsdp import fully_shard

mode = os.environ.get("MODE", "healthy")
rank = int(os.environ["RANK"])
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
dist.init_process_group("nccl")
torch.manual_seed(0)
layers = nn.ModuleList(nn.TransformerEncoderLayer(2048, 16, 8192, batch_first=True) for _ in range(8))
model = nn.Sequential(*layers).cuda()
for layer in layers:
    fully_shard(layer)
fully_shard(model)
opt = torch.optim.AdamW(model.parameters(), lr=1e-4)
steps = 8 if mode == "oom" else 20
for step in range(1, steps + 1):
    seq = 65536 if mode == "oom" and step >= 4 else 512
    x = torch.randn(8, seq, 2048, device="cuda")
    loss = model(x).pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad()
    if rank == 0:
        print(f"step {step}/{steps} | seq_len {seq} | loss {loss.item():.4f} | "
              f"mem {torch.cuda.max_memory_allocated() / 2**30:.2f} GiB", flush=True)
if rank == 0:
    torch.save({"step": steps}, "/tmp/ckpt.pt")
    print(f"saved checkpoint to /tmp/ckpt.pt at step {steps}", flush=True)
dist.destroy_process_group()
