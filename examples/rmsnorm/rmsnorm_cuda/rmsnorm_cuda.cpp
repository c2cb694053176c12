// SPDX-License-Identifier: Apache-2.0
// The torch side of the CUDA ops: argument checks, the device guard and the stream, then the
// launchers of rmsnorm_kernels.cu.
#include <limits>

#include <ATen/core/Tensor.h>
#include <c10/cuda/CUDAException.h>
#include <c10/cuda/CUDAGuard.h>
#include <c10/cuda/CUDAStream.h>

#include "../torch-ext/torch_binding.h"
#include "rmsnorm_kernels.h"

namespace {

rmsnorm::ElementType element_type(const at::Tensor& tensor, const char* op) {
  switch (tensor.scalar_type()) {
    case at::kFloat:
      return rmsnorm::ElementType::float32;
    case at::kDouble:
      return rmsnorm::ElementType::float64;
    case at::kHalf:
      return rmsnorm::ElementType::float16;
    case at::kBFloat16:
      return rmsnorm::ElementType::bfloat16;
    default:
      TORCH_CHECK(false, op, ": unsupported dtype ", tensor.scalar_type());
  }
}

}  // namespace

void rms_norm_cuda(at::Tensor& out, const at::Tensor& input, const at::Tensor& weight,
                   double eps) {
  TORCH_CHECK(input.is_cuda(), "rms_norm: input must be a CUDA tensor");
  check_rms_norm_arguments(out, input, weight);
  const auto type = element_type(input, "rms_norm");
  const int64_t hidden = input.size(-1);
  if (input.numel() == 0) {
    return;
  }
  const int64_t rows = input.numel() / hidden;
  // One block per row: the grid's x dimension bounds the row count.
  TORCH_CHECK(rows <= std::numeric_limits<int32_t>::max(), "rms_norm: too many rows (", rows, ")");
  const c10::cuda::OptionalCUDAGuard guard(input.device());
  C10_CUDA_CHECK(rmsnorm::launch_rms_norm(type, out.data_ptr(), input.const_data_ptr(),
                                          weight.const_data_ptr(), rows, hidden, eps,
                                          c10::cuda::getCurrentCUDAStream()));
}

void silu_cuda(at::Tensor& out, const at::Tensor& input) {
  TORCH_CHECK(input.is_cuda(), "silu: input must be a CUDA tensor");
  check_silu_arguments(out, input);
  const auto type = element_type(input, "silu");
  if (input.numel() == 0) {
    return;
  }
  const c10::cuda::OptionalCUDAGuard guard(input.device());
  C10_CUDA_CHECK(rmsnorm::launch_silu(type, out.data_ptr(), input.const_data_ptr(),
                                      input.numel(), c10::cuda::getCurrentCUDAStream()));
}
