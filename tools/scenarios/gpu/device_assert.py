"""A token id past the embedding table (a tokenizer/model vocab mismatch): the kernel's assert, then
torch's 'device-side assert triggered' at the next synchronising call."""
import torch

emb = torch.nn.Embedding(32000, 1024).cuda()
ids = torch.tensor([[1, 2, 151643, 4]], device="cuda")  # a Qwen2 token id in a 32k-vocab table
print("forward with vocab_size 32000", flush=True)
out = emb(ids)
print(out.sum().item())
