#!/bin/bash
# Make transformers and huggingface_hub print what a node that cannot get a model's files prints (no GPU needed):
#   OUT=/tmp/hf PY=/path/to/venv/bin/python tools/scenarios/hf_hub.sh   (a Python with transformers installed)
# Run where the Hub cannot be reached (a cluster node without internet access, or this project's sandbox):
#   hub-unreachable.log    a Hub id, no network and an empty cache
#   model-path-missing.log a local model folder that does not exist on this machine
set -u
OUT=${OUT:-/tmp/hf}
PY=${PY:-python3}
mkdir -p "$OUT"
export HF_HOME="$OUT/hf-home" PYTHONUNBUFFERED=1
load='import sys; from transformers import AutoTokenizer; AutoTokenizer.from_pretrained(sys.argv[1])'
timeout 120 "$PY" -c "$load" Qwen/Qwen2.5-0.5B-Instruct > "$OUT/hub-unreachable.log" 2>&1
timeout 60 "$PY" -c "$load" /mnt/models/Qwen2.5-7B-Instruct > "$OUT/model-path-missing.log" 2>&1
ls -la "$OUT"
