"""A GPU kernel fault while an NCCL collective is in flight, under torchrun (world size 1): torch's NCCL watchdog
polls the collective's end event, meets the sticky CUDA error first and takes the process down ("Process group
watchdog thread terminated with exception: CUDA error: ..."), the form most multi-GPU logs show.

FAULT=assert: a token id past the embedding table (device-side assert); FAULT=illegal: a cupy kernel writes through a
bad pointer; FAULT=misaligned: a cupy kernel writes an int at an odd address; FAULT=trap: a cupy kernel executes trap.
"""
import os
import time
from datetime import timedelta

import torch
import torch.distributed as dist

fault = os.environ.get("FAULT", "assert")
rank = int(os.environ["RANK"])
torch.cuda.set_device(int(os.environ["LOCAL_RANK"]))
dist.init_process_group("nccl", timeout=timedelta(seconds=60))
t = torch.ones(1 << 20, device="cuda")
for step in range(1, 3):
    dist.all_reduce(t)
    torch.cuda.synchronize()
    print(f"[rank {rank}] step {step} | all_reduce ok", flush=True)
print(f"[rank {rank}] step 3 | fault={fault}", flush=True)
if fault == "assert":
    emb = torch.nn.Embedding(32000, 64).cuda()
    out = emb(torch.tensor([[1, 2, 40000]], device="cuda"))
else:
    import cupy

    src = {
        "illegal": 'extern "C" __global__ void k(float* p) { p[(size_t)1 << 40] = 1.0f; }',
        "misaligned": 'extern "C" __global__ void k(float* p) { *(int*)((char*)p + 1) = 1; }',
        "trap": 'extern "C" __global__ void k(float* p) { if (p[0] > 0.0f) asm("trap;"); }',
    }[fault]
    cupy.RawKernel(src, "k")((1,), (1,), (cupy.asarray(t),))
dist.all_reduce(t)  # queued behind the faulting kernel: the watchdog sees the error on its end event
for _ in range(120):  # the main thread waits on the host; the watchdog reports first
    time.sleep(0.5)
print(f"[rank {rank}] still alive (not expected)", flush=True)
