#!/bin/bash
# Make wandb print why wandb.init() fails on a cluster worker (no GPU needed; run where the W&B server cannot be
# reached, as this project's sandbox):
#   OUT=/tmp/wb PY=/path/to/venv/bin/python tools/scenarios/wandb_init.sh   (a Python with wandb installed)
#   wandb-no-key.log      no API key, stdin not a terminal
#   wandb-unreachable.log an API key (a dummy one), no route to the server
set -u
OUT=${OUT:-/tmp/wb}
PY=${PY:-python3}
mkdir -p "$OUT" && cd "$OUT" || exit 1
init='import wandb; wandb.init(project="verl_grpo_example_gsm8k", name="qwen2_7b_function_rm")'
env -u WANDB_API_KEY HOME="$OUT/home" timeout 120 "$PY" -c "$init" < /dev/null > wandb-no-key.log 2>&1
env HOME="$OUT/home" WANDB_API_KEY=0123456789abcdef0123456789abcdef01234567 timeout 150 "$PY" -c "$init" < /dev/null \
  > wandb-unreachable.log 2>&1
ls -la "$OUT"
