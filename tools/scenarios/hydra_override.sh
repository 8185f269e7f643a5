#!/bin/bash
# Make Hydra print what a verl-style launch prints when a command-line override does not fit the config (no GPU, no
# network): a config with verl's shape, composed the way verl's main_ppo composes it (struct mode), then
#   OUT=/tmp/hy PY=/path/to/venv/bin/python tools/scenarios/hydra_override.sh   (a Python with hydra-core installed)
#   hydra-no-such-key.log   an override of a key the config does not have (actor_rollout_ref.rollout.n on a config whose
#                           rollout has no n)
#   hydra-key-exists.log    a + override of a key the config already has
#   hydra-ok.log            a valid override: the app prints its config and exits 0
set -u
OUT=${OUT:-/tmp/hy}
PY=${PY:-python3}
mkdir -p "$OUT/app/config" && cd "$OUT/app" || exit 1
cat > config/ppo_trainer.yaml <<'YAML'
actor_rollout_ref:
  actor:
    ppo_mini_batch_size: 256
    freeze_vision_tower: false
  rollout:
    name: vllm
    gpu_memory_utilization: 0.5
trainer:
  total_epochs: 15
YAML
cat > main_ppo.py <<'PY'
import hydra
from omegaconf import OmegaConf


@hydra.main(config_path="config", config_name="ppo_trainer", version_base=None)
def main(config):
    print(OmegaConf.to_yaml(config))


if __name__ == "__main__":
    main()
PY
"$PY" main_ppo.py actor_rollout_ref.rollout.n=16 > "$OUT/hydra-no-such-key.log" 2>&1
"$PY" main_ppo.py +actor_rollout_ref.actor.freeze_vision_tower=True > "$OUT/hydra-key-exists.log" 2>&1
"$PY" main_ppo.py actor_rollout_ref.rollout.gpu_memory_utilization=0.6 > "$OUT/hydra-ok.log" 2>&1
tail -n +1 "$OUT"/hydra-*.log
