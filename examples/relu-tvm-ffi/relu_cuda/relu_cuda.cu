// relu on a CUDA GPU, one thread per element, on the stream tvm-ffi has for the device (the
// caller's framework sets it, e.g. torch's current stream).
#include <cstdint>

#include <tvm/ffi/extra/c_env_api.h>

#include "../relu_common.h"

namespace {

__global__ void relu_kernel(float* out, const float* input, std::int64_t count) {
  const std::int64_t i = static_cast<std::int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < count) {
    out[i] = input[i] > 0.0f ? input[i] : 0.0f;
  }
}

}  // namespace

void relu_cuda(tvm::ffi::TensorView out, tvm::ffi::TensorView input) {
  relu_tvm_ffi::check_arguments(out, input, kDLCUDA);
  const std::int64_t count = input.numel();
  if (count == 0) {
    return;
  }
  constexpr int k_threads = 256;
  const auto blocks = static_cast<unsigned int>((count + k_threads - 1) / k_threads);
  auto stream = static_cast<cudaStream_t>(
      TVMFFIEnvGetStream(input.device().device_type, input.device().device_id));
  relu_kernel<<<blocks, k_threads, 0, stream>>>(relu_tvm_ffi::float_data(out),
                                                relu_tvm_ffi::float_data(input), count);
  const cudaError_t status = cudaGetLastError();
  if (status != cudaSuccess) {
    TVM_FFI_THROW(RuntimeError) << "relu kernel launch failed: " << cudaGetErrorString(status);
  }
}
