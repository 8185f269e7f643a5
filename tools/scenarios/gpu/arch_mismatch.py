"""A CUDA extension built for another GPU architecture (TORCH_CUDA_ARCH_LIST=8.0, no PTX) run on this one: what a
flash-attn, vLLM or apex wheel built without this GPU's sm prints at its first kernel. The extension is compiled
here with torch.utils.cpp_extension.load_inline (nvcc, ninja)."""
import os

os.environ["TORCH_CUDA_ARCH_LIST"] = os.environ.get("ARCH", "8.0")
import torch
from torch.utils.cpp_extension import load_inline

cuda_src = r"""
#include <c10/cuda/CUDAException.h>
__global__ void add_one(float* x, int n) { int i = blockIdx.x * blockDim.x + threadIdx.x; if (i < n) x[i] += 1.0f; }
torch::Tensor add_one_(torch::Tensor x) {
  int n = x.numel();
  add_one<<<(n + 255) / 256, 256>>>(x.data_ptr<float>(), n);
  C10_CUDA_KERNEL_LAUNCH_CHECK();
  return x;
}
"""
cpp_src = "torch::Tensor add_one_(torch::Tensor x);"
ext = load_inline("fused_add_sm80", cpp_sources=cpp_src, cuda_sources=cuda_src, functions=["add_one_"],
                  extra_include_paths=[], verbose=False)
print(f"built for sm_{os.environ['TORCH_CUDA_ARCH_LIST'].replace('.', '')}, running on "
      f"{torch.cuda.get_device_name(0)} (sm_{''.join(map(str, torch.cuda.get_device_capability(0)))})", flush=True)
x = torch.zeros(1024, device="cuda")
ext.add_one_(x)
torch.cuda.synchronize()
print(f"sum {x.sum().item()} (not expected)", flush=True)
