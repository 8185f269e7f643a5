"""A model asked for attn_implementation="flash_attention_2" where the flash-attn package is not installed: what a
verl, OpenRLHF or TRL actor prints when the image lacks flash-attn (a small Llama from its config, no download)."""
import torch
from transformers import AutoModelForCausalLM, LlamaConfig

config = LlamaConfig(hidden_size=256, intermediate_size=512, num_hidden_layers=2, num_attention_heads=4,
                     num_key_value_heads=4, vocab_size=1000)
model = AutoModelForCausalLM.from_config(config, attn_implementation="flash_attention_2", dtype=torch.bfloat16)
print("model built (not expected)", flush=True)
