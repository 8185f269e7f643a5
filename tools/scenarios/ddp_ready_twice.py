"""Make DistributedDataParallel print "Expected to mark a variable ready only once" (CPU, gloo, no GPU): a module called
twice under reentrant activation checkpointing, with find_unused_parameters=True (what HF Trainer and TRL ran into with
gradient checkpointing on several GPUs). Run it under torchrun:

    torchrun --nproc_per_node 2 tools/scenarios/ddp_ready_twice.py > ddp-ready-twice.log 2>&1
"""

from __future__ import annotations

import torch
import torch.distributed as dist
from torch.utils.checkpoint import checkpoint


class Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.lin = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        x = checkpoint(self.lin, x, use_reentrant=True)
        return checkpoint(self.lin, x, use_reentrant=True)  # the same parameters, a second reentrant backward


def main() -> None:
    dist.init_process_group("gloo")
    model = torch.nn.parallel.DistributedDataParallel(Model(), find_unused_parameters=True)
    x = torch.randn(4, 8, requires_grad=True)
    model(x).sum().backward()
    print("no error", flush=True)


if __name__ == "__main__":
    main()
