"""A model built straight on the GPU that is bigger than the GPU: the OOM comes while the model is
built (transformers' LlamaForCausalLM.__init__), before any batch exists."""
import torch
from transformers import LlamaConfig, LlamaForCausalLM

config = LlamaConfig(hidden_size=16384, intermediate_size=53248, num_hidden_layers=126,
                     num_attention_heads=128, num_key_value_heads=8, vocab_size=128256)
print(f"building LlamaForCausalLM: {config.num_hidden_layers} layers, hidden {config.hidden_size}", flush=True)
with torch.device("cuda"):
    model = LlamaForCausalLM(config).to(torch.bfloat16)
print("model built", flush=True)
