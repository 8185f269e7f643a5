#!/bin/bash
# Make real CUDA/NCCL failures on one GPU (torch, transformers, cupy, torchrun) and keep what each printed.
#   OUT=/tmp/gpu tools/scenarios/gpu/make_gpu_samples.sh          (SET=first, more, faults or arch runs one part)
# Each scenario writes $OUT/<name>.log (stdout and stderr together, as `python x.py 2>&1 | tee` would);
# the torchrun ones also keep torchrun's per-rank --log-dir. Then $OUT/gpu-samples.tar.gz holds them all.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
OUT=${OUT:-/tmp/gpu}
PY=${PY:-python3}
export PYTHONUNBUFFERED=1
mkdir -p "$OUT/logs"
one() { local name=$1; shift; echo "== $name"; timeout "${STEP_TIMEOUT:-90}" "$@" > "$OUT/logs/$name.log" 2>&1; echo "exit $?" >> "$OUT/logs/$name.exit"; }
nvidia-smi > "$OUT/logs/nvidia-smi.txt" 2>&1
TR="$PY -m torch.distributed.run --nnodes 1 --nproc-per-node 2 --master-port"
TR1="$PY -m torch.distributed.run --nnodes 1 --nproc-per-node 1 --master-port"
TR4="$PY -m torch.distributed.run --nnodes 1 --nproc-per-node 4 --master-port"
first() {
one train-oom "$PY" "$HERE/train_oom.py"
one build-oom "$PY" "$HERE/build_oom.py"
one generate-oom "$PY" "$HERE/generate_oom.py"
one device-assert "$PY" "$HERE/device_assert.py"
one illegal-address "$PY" "$HERE/illegal_address.py"
NCCL_DEBUG=WARN one nccl-duplicate-gpu $TR 29701 --log-dir "$OUT/logs/nccl-duplicate-gpu.d" --tee 3 "$HERE/nccl_ranks.py"
MODE=oom NCCL_DEBUG=WARN one fsdp-forward-oom-torchrun $TR1 29703 "$HERE/fsdp_train.py"
MODE=healthy NCCL_DEBUG=INFO one fsdp-healthy-torchrun $TR1 29704 "$HERE/fsdp_train.py"
PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True one train-oom-expandable-segments "$PY" "$HERE/train_oom.py"
}
more() {
FR="$OUT/logs/nccl-watchdog-timeout-torchrun.fr"; mkdir -p "$FR"
MODE=timeout NCCL_DEBUG=WARN TORCH_NCCL_DUMP_ON_TIMEOUT=1 TORCH_NCCL_TRACE_BUFFER_SIZE=2000 TORCH_FR_BUFFER_SIZE=2000 \
  TORCH_NCCL_DEBUG_INFO_TEMP_FILE="$FR/nccl_trace_rank_" TORCH_FR_DUMP_TEMP_FILE="$FR/nccl_trace_rank_" \
  one nccl-watchdog-timeout-torchrun $TR1 29705 "$HERE/nccl_steps.py"
MODE=healthy NCCL_DEBUG=INFO one nccl-healthy-no-destroy-torchrun $TR1 29706 "$HERE/nccl_steps.py"
NCCL_DEBUG=WARN one device-ordinal-torchrun $TR 29707 --log-dir "$OUT/logs/device-ordinal-torchrun.d" --tee 3 \
  "$HERE/device_ordinal.py"
CUDA_VISIBLE_DEVICES="" one no-gpu-visible "$PY" "$HERE/no_gpu.py"
MODE=nccl NCCL_DEBUG=WARN one nccl-init-oom-torchrun $TR1 29708 "$HERE/exhausted.py"
MODE=cublas one cublas-first-matmul-oom "$PY" "$HERE/exhausted.py"
one culprit-oom-gloo-torchrun $TR4 29709 --log-dir "$OUT/logs/culprit-oom-gloo-torchrun.d" --redirects 3 \
  "$HERE/culprit_oom.py"
}
faults() {
for f in assert illegal misaligned trap; do
  FAULT=$f NCCL_DEBUG=WARN one watchdog-$f-torchrun $TR1 $((29710 + ${#f})) "$HERE/kernel_fault.py"
done
}
arch() {
one arch-mismatch-extension "$PY" "$HERE/arch_mismatch.py"
one flash-attn-missing "$PY" "$HERE/flash_attn_missing.py"
}
case "${SET:-all}" in first) first ;; more) more ;; faults) faults ;; arch) arch ;; *) first; more; faults; arch ;; esac
tar -C "$OUT" -czf "$OUT/gpu-samples.tar.gz" logs
ls -la "$OUT/logs"
