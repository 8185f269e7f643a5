#!/bin/bash
# Run the real software (torch/gloo on CPU, torchrun, Ray, py-spy, Slurm) into the job folders of
# sample_logs/jobs/forensics-*: each a failure whose culprit rank is known because we caused it.
#
#   JOB=/opt/job VENV=/opt/venv OUT=/tmp/samples tools/scenarios/make_samples.sh [scenario ...]
#
# JOB: where worker.py and ray_gloo.py are copied and run from (the paths the logs show); VENV: a virtualenv
# with torch (CPU wheel), ray and py-spy; slurm_* scenarios need a running Slurm (slurmctld + slurmd) with srun
# and sbatch on the PATH. Each scenario writes $OUT/<name>/; pids, ports and times differ on every run, the
# culprit does not. See README.md beside this script for what each one is.
set -u
HERE=$(cd "$(dirname "$0")" && pwd)
JOB=${JOB:-/opt/job}
VENV=${VENV:-/opt/venv}
OUT=${OUT:-/tmp/samples}
TORCHRUN=$VENV/bin/torchrun
PY=$VENV/bin/python
mkdir -p "$JOB" && cp "$HERE/worker.py" "$HERE/ray_gloo.py" "$JOB/"
W=$JOB/worker.py
export OMP_NUM_THREADS=1 PYTHONUNBUFFERED=1

fresh() { rm -rf "${OUT:?}/$1"; mkdir -p "$OUT/$1"; echo "== $1"; }
tr1() { # one node, 4 workers; $1 run id, $2 port, rest: torchrun flags
  local id=$1 port=$2; shift 2
  "$TORCHRUN" --nnodes 1 --nproc-per-node 4 --rdzv-backend c10d --rdzv-endpoint 127.0.0.1:"$port" \
    --rdzv-id "$id" "$@" "$W"
}

torchelastic_2nodes() { # two agents sharing one --log-dir; global rank 3 (node 1, local 1) stuck in compute
  local s=forensics-torchelastic-2nodes; fresh $s
  for n in 0 1; do
    mkdir -p "$OUT/$s/node$n"
    LOGLEVEL=INFO FAULT=stuck CULPRIT=3 PG_TIMEOUT_S=5 "$TORCHRUN" --nnodes 2 --node-rank $n --nproc-per-node 2 \
      --rdzv-backend c10d --rdzv-endpoint 127.0.0.1:29613 --rdzv-id $s --max-restarts 0 \
      --log-dir "$OUT/$s/logs" --redirects 3 --tee 3 "$W" > "$OUT/$s/node$n/torchrun.log" 2>&1 &
  done
  wait
}

ray_session() { # Ray actors in a gloo group, rank 2 stuck; the driver's console and the session's worker files
  local s=forensics-ray-session; fresh $s; mkdir -p "$OUT/$s/session_latest/logs"
  local tmp; tmp=$(mktemp -d /tmp/rayjob.XXXX)
  (cd "$JOB" && RAY_TEMP_DIR=$tmp timeout 600 "$PY" ray_gloo.py > "$OUT/$s/driver.log" 2>&1)
  cp "$tmp"/session_latest/logs/worker-*.out "$tmp"/session_latest/logs/worker-*.err "$OUT/$s/session_latest/logs/"
  rm -rf "$tmp"
}

slurm_srun_label() { # srun --label, 12 tasks (labels " 0:" .. "11:"), one rank per task; rank 10 SIGKILLs itself
  local s=forensics-slurm-srun-label; fresh $s
  cat > "$JOB/srun_label.sbatch" <<EOF
#!/bin/bash
#SBATCH --ntasks=12
#SBATCH --output=$OUT/$s/slurm-%j.out
export MASTER_ADDR=127.0.0.1 MASTER_PORT=29614 FAULT=sigkill CULPRIT=10 PG_TIMEOUT_S=10 OMP_NUM_THREADS=1
srun --label $PY -u $W
EOF
  sbatch --wait "$JOB/srun_label.sbatch"
}

slurm_time_limit() { # srun --label, 4 tasks; rank 3 waits in a collective nobody else enters; the 1-minute limit ends it
  local s=forensics-slurm-time-limit; fresh $s
  cat > "$JOB/time_limit.sbatch" <<EOF
#!/bin/bash
#SBATCH --ntasks=4
#SBATCH --time=1
#SBATCH --output=$OUT/$s/slurm-%j.out
export MASTER_ADDR=127.0.0.1 MASTER_PORT=29615 FAULT=hang CULPRIT=3 PG_TIMEOUT_S=600 OMP_NUM_THREADS=1
srun --label $PY -u $W
EOF
  sbatch --wait "$JOB/time_limit.sbatch"
}

dlc_pods() { # two "pods" (one torchrun agent each, --tee 3, no --log-dir): global rank 2 (worker pod, local 0) raises
  local s=forensics-dlc-pods; fresh $s
  local pod n
  for n in 0 1; do
    if [ $n = 0 ]; then pod=dlc1fz8jw3kp2xq-master-0; else pod=dlc1fz8jw3kp2xq-worker-0; fi
    mkdir -p "$OUT/$s/$pod"
    FAULT=raise CULPRIT=2 PG_TIMEOUT_S=5 "$TORCHRUN" --nnodes 2 --node-rank $n --nproc-per-node 2 \
      --rdzv-backend c10d --rdzv-endpoint 127.0.0.1:29616 --rdzv-id $s --max-restarts 0 --tee 3 "$W" \
      > "$OUT/$s/$pod/$pod.log" 2>&1 &
  done
  wait
}

baremetal_tee() { # one node, torchrun --tee 3 to a console file; rank 1 SIGKILLed (as the OOM killer does)
  local s=forensics-baremetal-tee; fresh $s
  FAULT=sigkill CULPRIT=1 PG_TIMEOUT_S=5 tr1 $s 29617 --max-restarts 0 --tee 3 > "$OUT/$s/train.log" 2>&1
}

torchrun_hang() { # rank 3 waits in a second group's collective, 0-2 in the default one; `timeout` ends torchrun;
                  # every rank writes its flight-recorder dump (pickle and JSON) while it hangs
  local s=forensics-torchrun-hang; fresh $s; mkdir -p "$OUT/$s/fr/json"
  TORCH_FR_BUFFER_SIZE=2000 TORCH_FR_DUMP_TEMP_FILE="$OUT/$s/fr/nccl_trace_rank_" \
  FR_JSON_PREFIX="$OUT/$s/fr/json/nccl_trace_rank_" FR_DUMP_AFTER_S=10 FAULT=hang CULPRIT=3 PG_TIMEOUT_S=600 \
    timeout -s TERM 90 "$TORCHRUN" --nnodes 1 --nproc-per-node 4 --rdzv-backend c10d \
    --rdzv-endpoint 127.0.0.1:29618 --rdzv-id $s --max-restarts 0 --tee 3 "$W" > "$OUT/$s/train.log" 2>&1
}

torchrun_pyspy() { # rank 2 stuck in compute, the others wait in all_reduce; py-spy dump of every worker, then SIGTERM
  local s=forensics-torchrun-pyspy; fresh $s
  LOGLEVEL=INFO FAULT=stuck CULPRIT=2 PG_TIMEOUT_S=600 timeout -s TERM 300 \
    "$TORCHRUN" --nnodes 1 --nproc-per-node 4 --rdzv-backend c10d --rdzv-endpoint 127.0.0.1:29619 \
    --rdzv-id $s --max-restarts 0 --tee 3 "$W" > "$OUT/$s/train.log" 2>&1 &
  local tp=$! i agent pid
  for i in $(seq 240); do grep -q "stuck in compute" "$OUT/$s/train.log" && break; sleep 1; done
  sleep 5
  agent=$(pgrep -P $tp | head -1)
  for pid in $(pgrep -P "$agent"); do
    "$VENV/bin/py-spy" dump --native --pid "$pid" > "$OUT/$s/py-spy-$pid.txt" 2>&1
  done
  kill -TERM $tp 2>/dev/null
  wait $tp
}

torchrun_restart() { # two workers, rank 1 raises at step 3 in every attempt; torchrun restarts the group twice
  local s=forensics-torchrun-restart; fresh $s
  FAULT=raise CULPRIT=1 PG_TIMEOUT_S=20 "$TORCHRUN" --nnodes 1 --nproc-per-node 2 \
    --rdzv-backend c10d --rdzv-endpoint 127.0.0.1:29620 --rdzv-id $s --max-restarts 2 \
    --log-dir "$OUT/$s/logs" --redirects 3 --tee 3 "$W" > "$OUT/$s/torchrun.log" 2>&1
}

torchrun_segv() { # one node, torchrun --tee 3 to a console file; rank 1 crashes in C (faulthandler prints it)
  local s=forensics-torchrun-segv; fresh $s
  FAULT=segv CULPRIT=1 PG_TIMEOUT_S=5 tr1 $s 29622 --max-restarts 0 --tee 3 > "$OUT/$s/train.log" 2>&1
}

healthy() { # no fault; rank 0 ends with Megatron-LM's success line
  local s=forensics-healthy; fresh $s
  SUCCESS=megatron FAULT=none PG_TIMEOUT_S=5 STEPS=4 tr1 $s 29621 --max-restarts 0 --tee 3 > "$OUT/$s/train.log" 2>&1
}

all="torchelastic_2nodes ray_session slurm_srun_label slurm_time_limit dlc_pods baremetal_tee torchrun_hang torchrun_pyspy torchrun_restart torchrun_segv healthy"
[ $# -eq 0 ] && set -- $all
for s in "$@"; do "$s"; done
