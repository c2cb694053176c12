#include <algorithm>
#include <cstdint>

#include <ATen/Dispatch.h>
#include <ATen/core/Tensor.h>
#include <ATen/cuda/CUDAContext.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>

// The dtypes every backend of this kernel supports; others fail with a clear message.
#define DISPATCH_SUPPORTED_TYPES(TYPE, NAME, ...)              \
  AT_DISPATCH_SWITCH(TYPE, NAME,                               \
      AT_DISPATCH_CASE(at::ScalarType::Float, __VA_ARGS__)     \
      AT_DISPATCH_CASE(at::ScalarType::Half, __VA_ARGS__)      \
      AT_DISPATCH_CASE(at::ScalarType::BFloat16, __VA_ARGS__))

namespace {

constexpr int k_threads_per_block = 256;
// Enough blocks to fill any current GPU; the grid-stride loop covers larger inputs.
constexpr int64_t k_max_blocks = 4096;

template <typename scalar_t>
__global__ void silu_kernel(scalar_t *__restrict__ out, scalar_t const *__restrict__ input,
                            int64_t count) {
  const int64_t stride = static_cast<int64_t>(blockDim.x) * gridDim.x;
  for (int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x; i < count;
       i += stride) {
    // Half-precision inputs are computed in float, as PyTorch's own kernels do.
    const float x = static_cast<float>(input[i]);
    out[i] = static_cast<scalar_t>(x / (1.0f + expf(-x)));
  }
}

}  // namespace

void {{ kernel_name_normalized }}(at::Tensor &out, at::Tensor const &input) {
  TORCH_CHECK(input.device().is_cuda(), "{{ kernel_name_normalized }}: input must be a CUDA tensor, got ",
              input.device());
  TORCH_CHECK(out.device() == input.device(), "{{ kernel_name_normalized }}: out is on ", out.device(),
              " but input is on ", input.device());
  TORCH_CHECK(out.scalar_type() == input.scalar_type(), "{{ kernel_name_normalized }}: out has dtype ",
              out.scalar_type(), " but input has ", input.scalar_type());
  TORCH_CHECK(out.sizes() == input.sizes(), "{{ kernel_name_normalized }}: out has shape ", out.sizes(),
              " but input has ", input.sizes());
  TORCH_CHECK(input.is_contiguous() && out.is_contiguous(),
              "{{ kernel_name_normalized }}: input and out must be contiguous");

  const int64_t count = input.numel();
  if (count == 0) {
    return;
  }
  // Launch on the input's device and PyTorch's current stream, so the kernel is ordered with
  // the surrounding PyTorch work.
  const c10::cuda::OptionalCUDAGuard device_guard(input.device());
  const cudaStream_t stream = at::cuda::getCurrentCUDAStream();
  const int64_t blocks =
      std::min<int64_t>((count + k_threads_per_block - 1) / k_threads_per_block, k_max_blocks);

  DISPATCH_SUPPORTED_TYPES(input.scalar_type(), "{{ kernel_name_normalized }}_cuda", [&] {
    silu_kernel<scalar_t><<<static_cast<unsigned int>(blocks), k_threads_per_block, 0, stream>>>(
        out.data_ptr<scalar_t>(), input.const_data_ptr<scalar_t>(), count);
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}
