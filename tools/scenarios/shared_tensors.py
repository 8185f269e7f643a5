"""Make safetensors refuse two weights that share one tensor (CPU, no download):

    /path/to/venv/bin/python tools/scenarios/shared_tensors.py > shared-tensors.log 2>&1   (torch + safetensors)

An embedding and an output head tied to the same tensor, saved with save_file: "Some tensors share memory, ...".
"""

from __future__ import annotations

import tempfile
from pathlib import Path

import torch
from safetensors.torch import save_file

if __name__ == "__main__":
    weight = torch.zeros(4, 4)
    save_file({"model.embed_tokens.weight": weight, "lm_head.weight": weight},
              str(Path(tempfile.mkdtemp()) / "model.safetensors"))
