"""A training loop whose micro-batch does not fit: torch's own CUDA OOM, raised in the forward pass.

The batch doubles each step (a misread `micro_batch_size`), so the failing step and size are known.
"""
import torch
from torch import nn

torch.manual_seed(0)
model = nn.Sequential(*[nn.Sequential(nn.Linear(8192, 8192), nn.GELU()) for _ in range(8)]).cuda().bfloat16()
opt = torch.optim.AdamW(model.parameters(), lr=1e-5)
batch = 1024
for step in range(1, 100):
    x = torch.randn(batch, 8192, device="cuda", dtype=torch.bfloat16)
    loss = model(x).float().pow(2).mean()
    loss.backward()
    opt.step()
    opt.zero_grad(set_to_none=True)
    print(f"step {step} | micro_batch_size {batch} | loss {loss.item():.4f}", flush=True)
    batch *= 4
