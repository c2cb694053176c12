// SPDX-License-Identifier: Apache-2.0
#include <ATen/Dispatch.h>
#include <ATen/core/Tensor.h>

void relu(at::Tensor& out, const at::Tensor& input) {
  TORCH_CHECK(input.device().is_cpu(), "relu: input must be a CPU tensor");
  TORCH_CHECK(out.sizes() == input.sizes() && out.scalar_type() == input.scalar_type(),
              "relu: out must match input in shape and dtype");
  TORCH_CHECK(input.is_contiguous() && out.is_contiguous(), "relu: tensors must be contiguous");
  AT_DISPATCH_FLOATING_TYPES(input.scalar_type(), "relu_cpu", [&] {
    const auto* in = input.const_data_ptr<scalar_t>();
    auto* result = out.data_ptr<scalar_t>();
    for (int64_t i = 0; i < input.numel(); ++i) {
      result[i] = in[i] > scalar_t(0) ? in[i] : scalar_t(0);
    }
  });
}
