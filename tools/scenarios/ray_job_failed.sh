#!/bin/bash
# Make Ray's job CLI print what `ray job submit` prints when the job's entrypoint fails (no GPU, no network: a local
# head node on loopback):
#   OUT=/tmp/rj RAY=/path/to/venv/bin/ray PY=/path/to/venv/bin/python tools/scenarios/ray_job_failed.sh
#   ray-job-failed.log   an entrypoint that raises (exit code 1)
#   ray-job-killed.log   an entrypoint killed by SIGKILL (exit code -9 or 137, as the shell reports it)
#   ray-job-ok.log       an entrypoint that succeeds
#   ray-job-stopped.log  `ray job status` of a job stopped with `ray job stop`
set -u
OUT=${OUT:-/tmp/rj}
RAY=${RAY:-ray}
PY=${PY:-python3}
mkdir -p "$OUT" || exit 1
export RAY_USAGE_STATS_ENABLED=0
trap '"$RAY" stop --force > /dev/null 2>&1' EXIT
"$RAY" start --head --node-ip-address=127.0.0.1 --dashboard-host=127.0.0.1 --include-dashboard=true \
    --num-cpus=1 > "$OUT/ray-start.txt" 2>&1 || { cat "$OUT/ray-start.txt"; exit 1; }
export RAY_ADDRESS=http://127.0.0.1:8265
"$RAY" job submit -- "$PY" -c "import json; json.loads('{bad json')" > "$OUT/ray-job-failed.log" 2>&1
"$RAY" job submit -- "$PY" -c "import os, signal; os.kill(os.getpid(), signal.SIGKILL)" > "$OUT/ray-job-killed.log" 2>&1
"$RAY" job submit -- "$PY" -c "print('training done')" > "$OUT/ray-job-ok.log" 2>&1
"$RAY" job submit --submission-id stop_me --no-wait -- sleep 600 > /dev/null 2>&1
sleep 5
"$RAY" job stop stop_me > /dev/null 2>&1
"$RAY" job status stop_me > "$OUT/ray-job-stopped.log" 2>&1
tail -n 5 "$OUT"/ray-job-*.log
