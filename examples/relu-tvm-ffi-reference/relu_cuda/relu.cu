// SPDX-License-Identifier: Apache-2.0
// relu on a CUDA GPU, a grid-stride loop on the stream the caller's framework set for the
// device in tvm-ffi (torch's current stream, say).
#include <cstdint>

#include <tvm/ffi/extra/c_env_api.h>

#include "../util.hh"

namespace {

__global__ void relu_kernel(float* target, const float* source, std::int64_t count) {
  const std::int64_t stride = static_cast<std::int64_t>(gridDim.x) * blockDim.x;
  for (std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
       i < count; i += stride) {
    target[i] = source[i] > 0.0f ? source[i] : 0.0f;
  }
}

}  // namespace

void relu_cuda(tvm::ffi::TensorView out, tvm::ffi::TensorView input) {
  relu_tvm_ffi::check_arguments(out, input, kDLCUDA);
  const std::int64_t count = input.numel();
  if (count == 0) {
    return;
  }
  constexpr std::int64_t k_threads = 256;
  constexpr std::int64_t k_max_blocks = 65535;
  const auto blocks = static_cast<unsigned int>(
      count / k_threads + 1 < k_max_blocks ? count / k_threads + 1 : k_max_blocks);
  auto stream = static_cast<cudaStream_t>(
      TVMFFIEnvGetStream(input.device().device_type, input.device().device_id));
  relu_kernel<<<blocks, k_threads, 0, stream>>>(relu_tvm_ffi::first_float(out),
                                                relu_tvm_ffi::first_float(input), count);
  if (const cudaError_t status = cudaGetLastError(); status != cudaSuccess) {
    TVM_FFI_THROW(RuntimeError) << "relu: kernel launch failed: " << cudaGetErrorString(status);
  }
}
