"""A worker that sees no GPU: what a Ray actor created without num_gpus gets (Ray sets CUDA_VISIBLE_DEVICES to the
empty string for it), or a job whose CUDA_VISIBLE_DEVICES names nothing. Run with CUDA_VISIBLE_DEVICES=""."""
import os

import torch
from torch import nn

print(f"CUDA_VISIBLE_DEVICES={os.environ.get('CUDA_VISIBLE_DEVICES')!r} cuda available: {torch.cuda.is_available()}",
      flush=True)
model = nn.Linear(1024, 1024)
model = model.cuda()
print("model on the GPU (not expected)", flush=True)
