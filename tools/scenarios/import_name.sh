#!/bin/bash
# Make CPython print the three forms of "ImportError: cannot import name" (no GPU, no network):
#   OUT=/tmp/imp PY=/path/to/python tools/scenarios/import_name.sh
#   import-name-version.log    a name the installed module does not define (`from json import nothing`: what an
#                              older or newer transformers/vLLM gives code written for another release)
#   import-name-unknown.log    a folder without __init__.py named like the package, in the working directory
#                              (a namespace package: "(unknown location)")
#   import-name-circular.log   a script named like the package it imports (vllm.py running `from vllm import LLM`)
set -u
OUT=${OUT:-/tmp/imp}
PY=${PY:-python3}
mkdir -p "$OUT/unknown/vllm" "$OUT/circular" || exit 1
"$PY" -c "from json import nothing" > "$OUT/import-name-version.log" 2>&1
(cd "$OUT/unknown" && "$PY" -c "from vllm import LLM") > "$OUT/import-name-unknown.log" 2>&1
printf 'from vllm import LLM\n' > "$OUT/circular/vllm.py"
(cd "$OUT/circular" && "$PY" vllm.py) > "$OUT/import-name-circular.log" 2>&1
tail -n 1 "$OUT"/import-name-*.log
