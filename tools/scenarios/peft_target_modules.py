"""Make PEFT refuse LoRA target modules the model does not have (CPU, no download):

    /path/to/venv/bin/python tools/scenarios/peft_target_modules.py > peft-target-modules.log 2>&1   (torch + peft)

A two-layer model whose linear layers are fc_in and fc_out, given target_modules=["q_proj", "v_proj"] (the names of
a Llama-style attention): PEFT raises "Target modules {...} not found in the base model."
"""

from __future__ import annotations

import torch
from peft import LoraConfig, get_peft_model


class Model(torch.nn.Module):
    def __init__(self) -> None:
        super().__init__()
        self.fc_in = torch.nn.Linear(8, 8)
        self.fc_out = torch.nn.Linear(8, 8)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return self.fc_out(self.fc_in(x))


if __name__ == "__main__":
    get_peft_model(Model(), LoraConfig(target_modules=["q_proj", "v_proj"], r=4))
