"""Rollout that does not fit: a small random Llama generating for a batch far too large (the prefill's
embeddings alone need more than the GPU has): the OOM comes inside transformers' generate()."""
import torch
from transformers import LlamaConfig, LlamaForCausalLM

config = LlamaConfig(hidden_size=1024, intermediate_size=2816, num_hidden_layers=4,
                     num_attention_heads=16, num_key_value_heads=4, vocab_size=128256)
model = LlamaForCausalLM(config).cuda().to(torch.bfloat16).eval()
prompts = torch.randint(0, config.vocab_size, (16384, 4096), device="cuda")
print(f"rollout: batch {prompts.shape[0]} prompts of {prompts.shape[1]} tokens, max_new_tokens 512", flush=True)
with torch.no_grad():
    out = model.generate(prompts, attention_mask=torch.ones_like(prompts), max_new_tokens=512, do_sample=True)
print(out.shape)
