// SPDX-License-Identifier: Apache-2.0
// Built for CUDA and, as HIP, for ROCm. Includes torch/csrc/stable/tensor.h, whose shim
// lookup calls dlsym: a build on a new glibc needs the glibc pins on this file's compile line.
#include <cstdint>

#include <torch/csrc/inductor/aoti_torch/c/shim.h>
#include <torch/csrc/stable/tensor.h>
#include <torch/headeronly/util/Exception.h>

#include "../torch-ext/torch_binding.h"

#if defined(ROCM_KERNEL)
#include <hip/hip_runtime.h>
using stream_t = hipStream_t;
#else
#include <cuda_runtime.h>
using stream_t = cudaStream_t;
#endif

namespace {

__global__ void relu_kernel(float* out, const float* in, int64_t count) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) {
    out[i] = in[i] > 0.0f ? in[i] : 0.0f;
  }
}

}  // namespace

void relu(torch::stable::Tensor out, torch::stable::Tensor input) {
  STD_TORCH_CHECK(input.is_cuda() && out.is_cuda(), "relu: tensors must be on a GPU");
  STD_TORCH_CHECK(input.scalar_type() == out.scalar_type() && input.numel() == out.numel(),
                  "relu: out must match input in size and dtype");
  STD_TORCH_CHECK(input.is_contiguous() && out.is_contiguous(),
                  "relu: tensors must be contiguous");
  STD_TORCH_CHECK(input.scalar_type() == torch::headeronly::ScalarType::Float,
                  "relu: only float32 tensors are supported");
  const int64_t count = input.numel();
  if (count == 0) {
    return;
  }
  void* stream = nullptr;
  TORCH_ERROR_CODE_CHECK(aoti_torch_get_current_cuda_stream(input.get_device_index(), &stream));
  constexpr int k_threads = 256;
  const auto blocks = static_cast<unsigned>((count + k_threads - 1) / k_threads);
  relu_kernel<<<blocks, k_threads, 0, static_cast<stream_t>(stream)>>>(
      out.mutable_data_ptr<float>(), input.const_data_ptr<float>(), count);
}
