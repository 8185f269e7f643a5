"""Make torch.distributed.checkpoint refuse a checkpoint that does not fit the model (CPU, one process, no GPU):

    OUT=/tmp/dcp /path/to/venv/bin/python tools/scenarios/dcp_mismatch.py   (a Python with torch installed)

writes $OUT/dcp-size-mismatch.log (an embedding saved with 151936 rows, loaded into one of 152064: a resized vocabulary)
and $OUT/dcp-missing-key.log (a model saved plain, loaded under torch.compile's `_orig_mod.` prefix), each the
traceback the load prints.
"""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

CHILD = r'''
import sys, tempfile
import torch
import torch.distributed.checkpoint as dcp

class Model(torch.nn.Module):
    def __init__(self, vocab):
        super().__init__()
        self.embed_tokens = torch.nn.Embedding(vocab, 16)
        self.lm_head = torch.nn.Linear(16, vocab, bias=False)

case = sys.argv[1]
path = tempfile.mkdtemp()
dcp.save({"model": Model(151936).state_dict()}, checkpoint_id=path)
if case == "size":
    state = {"model": Model(152064).state_dict()}
else:
    state = {"model": {"_orig_mod." + k: v for k, v in Model(151936).state_dict().items()}}
dcp.load(state, checkpoint_id=path)
'''


def main() -> int:
    out = Path(os.environ.get("OUT", "/tmp/dcp"))
    out.mkdir(parents=True, exist_ok=True)
    for case, name in (("size", "dcp-size-mismatch.log"), ("key", "dcp-missing-key.log")):
        with open(out / name, "w", encoding="utf-8") as fh:
            subprocess.run([sys.executable, "-c", CHILD, case], stdout=fh, stderr=subprocess.STDOUT, check=False)
        print((out / name).read_text(encoding="utf-8")[-1500:])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
