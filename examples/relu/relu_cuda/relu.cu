// SPDX-License-Identifier: Apache-2.0
#include <ATen/Dispatch.h>
#include <ATen/core/Tensor.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

namespace {

template <typename scalar_t>
__global__ void relu_kernel(scalar_t* __restrict__ out, const scalar_t* __restrict__ in,
                            int64_t n) {
  const int64_t i = static_cast<int64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
  if (i < n) {
    out[i] = in[i] > scalar_t(0) ? in[i] : scalar_t(0);
  }
}

}  // namespace

void relu(at::Tensor& out, const at::Tensor& input) {
  TORCH_CHECK(input.is_cuda(), "relu: input must be a CUDA tensor");
  TORCH_CHECK(out.device() == input.device(), "relu: out must be on the input's device");
  TORCH_CHECK(out.sizes() == input.sizes() && out.scalar_type() == input.scalar_type(),
              "relu: out must match input in shape and dtype");
  TORCH_CHECK(input.is_contiguous() && out.is_contiguous(), "relu: tensors must be contiguous");
  const int64_t n = input.numel();
  if (n == 0) {
    return;
  }
  const c10::cuda::OptionalCUDAGuard guard(input.device());
  const auto stream = c10::cuda::getCurrentCUDAStream();
  constexpr int threads = 256;
  const auto blocks = static_cast<unsigned>((n + threads - 1) / threads);
  AT_DISPATCH_FLOATING_TYPES(input.scalar_type(), "relu_cuda", [&] {
    relu_kernel<scalar_t><<<blocks, threads, 0, stream>>>(out.data_ptr<scalar_t>(),
                                                         input.const_data_ptr<scalar_t>(), n);
  });
  C10_CUDA_KERNEL_LAUNCH_CHECK();
}
