#!/bin/bash
# Make transformers print why it cannot load a checkpoint's config (no GPU, no network):
#   OUT=/tmp/hfcode PY=/path/to/python tools/scenarios/hf_model_code.sh
#   model-type-unknown.log     config.json names a model_type this transformers does not know (a release older than
#                              the model): "does not recognize this architecture" (4.3x and later; older: KeyError)
#   remote-code-refused.log    config.json's auto_map points at code shipped in the model folder, loaded without
#                              trust_remote_code=True (4.4x and later refuse; older ask "[y/N]" and, with no terminal,
#                              fail with EOFError)
#   remote-code-declined.log   the same, the prompt answered "N" (4.3x and before word the refusal differently)
#   remote-code-accepted.log   the same, the prompt answered "y": the prompt is printed and the config loads
# Run it once per transformers release whose wording you want (4.31, 4.45 and 5.24 were used for the examples).
set -u
OUT=${OUT:-/tmp/hfcode}
PY=${PY:-python3}
mkdir -p "$OUT/new-model" "$OUT/custom-code" || exit 1
printf '{"model_type": "qwen9", "architectures": ["Qwen9ForCausalLM"]}\n' > "$OUT/new-model/config.json"
printf '{"model_type": "mymodel", "auto_map": {"AutoConfig": "configuration_my.MyConfig"}}\n' \
  > "$OUT/custom-code/config.json"
printf 'from transformers import PretrainedConfig\nclass MyConfig(PretrainedConfig):\n    model_type = "mymodel"\n' \
  > "$OUT/custom-code/configuration_my.py"
"$PY" -c "from transformers import AutoConfig; AutoConfig.from_pretrained('$OUT/new-model')" \
  > "$OUT/model-type-unknown.log" 2>&1 < /dev/null
"$PY" -c "from transformers import AutoConfig; AutoConfig.from_pretrained('$OUT/custom-code')" \
  > "$OUT/remote-code-refused.log" 2>&1 < /dev/null
echo N | "$PY" -c "from transformers import AutoConfig; AutoConfig.from_pretrained('$OUT/custom-code')" \
  > "$OUT/remote-code-declined.log" 2>&1
echo y | "$PY" -c "from transformers import AutoConfig; AutoConfig.from_pretrained('$OUT/custom-code'); print('loaded')" \
  > "$OUT/remote-code-accepted.log" 2>&1
tail -n 2 "$OUT"/model-type-unknown.log "$OUT"/remote-code-refused.log
