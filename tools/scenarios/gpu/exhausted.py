"""The GPU's memory held by tensors the caching allocator keeps, then a library that allocates on its own asks for
more. MODE=nccl: the first NCCL collective (the communicator's buffers) under torchrun, world size 1.
MODE=cublas: the first matrix product (the cuBLAS handle and its workspace)."""
import os
from datetime import timedelta

import torch

mode = os.environ.get("MODE", "nccl")
torch.cuda.set_device(int(os.environ.get("LOCAL_RANK", "0")))
a = torch.ones(64, 64, device="cuda")
held = []
for chunk in (1 << 30, 1 << 26, 1 << 22, 1 << 20):
    while True:
        try:
            held.append(torch.empty(chunk, dtype=torch.uint8, device="cuda"))
        except torch.OutOfMemoryError:
            break
free, total = torch.cuda.mem_get_info()
print(f"holding {sum(h.numel() for h in held) / 2**30:.2f} GiB in {len(held)} tensors; "
      f"{free / 2**20:.1f} MiB of {total / 2**30:.1f} GiB free", flush=True)
if mode == "nccl":
    import torch.distributed as dist

    dist.init_process_group("nccl", timeout=timedelta(seconds=30))
    dist.all_reduce(a)
    torch.cuda.synchronize()
    print("all_reduce done (not expected)", flush=True)
    dist.destroy_process_group()
else:
    b = a @ a
    torch.cuda.synchronize()
    print(f"matmul done {b[0, 0].item()} (not expected)", flush=True)
