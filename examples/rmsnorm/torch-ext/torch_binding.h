// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <ATen/core/Tensor.h>
#include <c10/util/Exception.h>

// out = weight * (input / sqrt(mean(input^2 over the last dimension) + eps)), as transformers'
// LlamaRMSNorm computes it: statistics in float (double for double), the normalized value
// rounded to the input's dtype before the weight multiplies it.
void rms_norm_cpu(at::Tensor& out, const at::Tensor& input, const at::Tensor& weight,
                  double eps);
// out = input * sigmoid(input).
void silu_cpu(at::Tensor& out, const at::Tensor& input);

#if defined(CUDA_KERNEL)
void rms_norm_cuda(at::Tensor& out, const at::Tensor& input, const at::Tensor& weight,
                   double eps);
void silu_cuda(at::Tensor& out, const at::Tensor& input);
#endif

// The checks both backends share; the kernels index flat, contiguous rows.
inline void check_rms_norm_arguments(const at::Tensor& out, const at::Tensor& input,
                                     const at::Tensor& weight) {
  TORCH_CHECK(input.dim() >= 1, "rms_norm: input must have at least one dimension");
  TORCH_CHECK(weight.dim() == 1 && weight.size(0) == input.size(-1),
              "rms_norm: weight must be 1-d with the size of the input's last dimension (",
              input.size(-1), "), got shape ", weight.sizes());
  TORCH_CHECK(out.sizes() == input.sizes(), "rms_norm: out must have the input's shape");
  TORCH_CHECK(out.scalar_type() == input.scalar_type() &&
                  weight.scalar_type() == input.scalar_type(),
              "rms_norm: out, input and weight must have one dtype, got ", out.scalar_type(),
              ", ", input.scalar_type(), " and ", weight.scalar_type());
  TORCH_CHECK(out.device() == input.device() && weight.device() == input.device(),
              "rms_norm: out, input and weight must be on one device");
  TORCH_CHECK(out.is_contiguous() && input.is_contiguous() && weight.is_contiguous(),
              "rms_norm: tensors must be contiguous");
}

inline void check_silu_arguments(const at::Tensor& out, const at::Tensor& input) {
  TORCH_CHECK(out.sizes() == input.sizes() && out.scalar_type() == input.scalar_type(),
              "silu: out must match input in shape and dtype");
  TORCH_CHECK(out.device() == input.device(), "silu: out must be on the input's device");
  TORCH_CHECK(out.is_contiguous() && input.is_contiguous(), "silu: tensors must be contiguous");
}
