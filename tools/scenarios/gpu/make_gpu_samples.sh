#!/bin/bash
# Make real CUDA/NCCL failures on one GPU (torch, transformers, cupy, torchrun) and keep what each printed.
#   OUT=/tmp/gpu tools/scenarios/gpu/make_gpu_samples.sh
# Each scenario writes $OUT/<name>.log (stdout and stderr together, as `python x.py 2>&1 | tee` would);
# the torchrun ones also keep torchrun's per-rank --log-dir. Then $OUT/gpu-samples.tar.gz holds them all.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/gpu}
PY=${PY:-python3}
export PYTHONUNBUFFERED=1
mkdir -p "$OUT/logs"
one() { local name=$1; shift; echo "== $name"; timeout 90 "$@" > "$OUT/logs/$name.log" 2>&1; echo "exit $?" >> "$OUT/logs/$name.exit"; }
nvidia-smi > "$OUT/logs/nvidia-smi.txt" 2>&1
one train-oom "$PY" "$HERE/train_oom.py"
one build-oom "$PY" "$HERE/build_oom.py"
one generate-oom "$PY" "$HERE/generate_oom.py"
one device-assert "$PY" "$HERE/device_assert.py"
one illegal-address "$PY" "$HERE/illegal_address.py"
TR="$PY -m torch.distributed.run --nnodes 1 --nproc-per-node 2 --master-port"
NCCL_DEBUG=WARN one nccl-duplicate-gpu $TR 29701 --log-dir "$OUT/logs/nccl-duplicate-gpu.d" --tee 3 "$HERE/nccl_ranks.py"
TR1="$PY -m torch.distributed.run --nnodes 1 --nproc-per-node 1 --master-port"
MODE=oom NCCL_DEBUG=WARN one fsdp-forward-oom-torchrun $TR1 29703 "$HERE/fsdp_train.py"
MODE=healthy NCCL_DEBUG=INFO one fsdp-healthy-torchrun $TR1 29704 "$HERE/fsdp_train.py"
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True one train-oom-expandable-segments "$PY" "$HERE/train_oom.py"
tar -C "$OUT" -czf "$OUT/gpu-samples.tar.gz" logs
ls -la "$OUT/logs"
