"""A kernel writing through a bad pointer (cupy raw kernel, in torch's CUDA context): torch reports
'an illegal memory access was encountered' at its next call."""
import cupy
import torch

x = torch.ones(1024, device="cuda")
bad = cupy.RawKernel(r'''extern "C" __global__ void bad(float* p) { p[(size_t)1 << 40] = 1.0f; }''', "bad")
bad((1,), (1,), (cupy.asarray(x),))
print("kernel launched", flush=True)
y = x * 2
torch.cuda.synchronize()
print(y.sum().item())
