"""Run TRL's real GRPOTrainer (and HF Trainer logging) on CPU with a tiny random model, so the exact console form
of its per-step metric dicts can be seen: sample_logs/health/trl-grpo-cpu-real-*.log were made with it.

No download: the tokenizer is built here (word-level, tokenizers library) and the model is a randomly initialised
2-layer Llama. Needs torch, transformers, trl and datasets (made with transformers 5.24.0, trl 1.16.0, CPU torch).

    python tools/trl_grpo_cpu.py > healthy.log 2>&1                    # 6 healthy steps
    python tools/trl_grpo_cpu.py --nan-at 3 --steps 5 > nan.log 2>&1   # NaN gradients from step 3: then a crash

The samples have this machine's virtualenv paths replaced by /usr/local/lib/python3.11/site-packages and the
script's path by /workspace/trl_grpo_cpu.py.
"""
import argparse
import os

os.environ.setdefault("HF_HUB_OFFLINE", "1")
os.environ.setdefault("TRANSFORMERS_NO_ADVISORY_WARNINGS", "1")

import torch
from datasets import Dataset
from tokenizers import Tokenizer, models, pre_tokenizers
from transformers import LlamaConfig, LlamaForCausalLM, PreTrainedTokenizerFast, TrainerCallback
from trl import GRPOConfig, GRPOTrainer

ap = argparse.ArgumentParser()
ap.add_argument("--nan-at", type=int, default=0, help="poison the grads with inf from this step on")
ap.add_argument("--steps", type=int, default=6)
args = ap.parse_args()

words = ["the", "a", "cat", "dog", "sat", "on", "mat", "ran", "far", "big", "small", "red", "blue", "one", "two",
         "three", "four", "five", "yes", "no"]
vocab = {"<pad>": 0, "<eos>": 1, "<unk>": 2}
for w in words:
    vocab[w] = len(vocab)
tok = Tokenizer(models.WordLevel(vocab=vocab, unk_token="<unk>"))
tok.pre_tokenizer = pre_tokenizers.Whitespace()
tokenizer = PreTrainedTokenizerFast(tokenizer_object=tok, pad_token="<pad>", eos_token="<eos>", unk_token="<unk>")
tokenizer.padding_side = "left"

torch.manual_seed(0)
cfg = LlamaConfig(vocab_size=len(vocab), hidden_size=32, intermediate_size=64, num_hidden_layers=2,
                  num_attention_heads=4, num_key_value_heads=4, max_position_embeddings=128,
                  pad_token_id=0, eos_token_id=1, bos_token_id=1)
model = LlamaForCausalLM(cfg)
MODEL_DIR = "/tmp/tiny-llama-random"
model.save_pretrained(MODEL_DIR)
tokenizer.save_pretrained(MODEL_DIR)

prompts = [" ".join(words[i % len(words)] for i in range(k, k + 4)) for k in range(64)]
ds = Dataset.from_dict({"prompt": prompts})


def reward_len(completions, **kw):
    return [min(len(c.split()), 8) / 8.0 for c in completions]


class Poison(TrainerCallback):
    """From step --nan-at on, a backward hook turns one weight's gradient into NaN, so the
    trainer's own clip_grad_norm_ returns nan (as after an overflow in a real run)."""
    armed = False

    def on_train_begin(self, a, state, control, model=None, **kw):
        p = next(model.parameters())
        p.register_hook(lambda g: g * float("nan") if Poison.armed else g)

    def on_step_begin(self, a, state, control, **kw):
        Poison.armed = bool(args.nan_at) and state.global_step + 1 >= args.nan_at


conf = GRPOConfig(output_dir="/tmp/trl-grpo-cpu", per_device_train_batch_size=4, num_generations=4,
                  max_completion_length=12, logging_steps=1, max_steps=args.steps, report_to="none",
                  use_cpu=True, bf16=False, save_strategy="no", learning_rate=1e-3, beta=0.04,
                  disable_tqdm=False)
trainer = GRPOTrainer(model=MODEL_DIR, reward_funcs=reward_len, args=conf, train_dataset=ds,
                      processing_class=tokenizer, callbacks=[Poison()])
trainer.train()
