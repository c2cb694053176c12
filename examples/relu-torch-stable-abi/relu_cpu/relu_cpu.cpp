// SPDX-License-Identifier: Apache-2.0
#include <cstdint>

#include <torch/headeronly/util/Exception.h>

#include "../torch-ext/torch_binding.h"

namespace {

template <typename T>
void relu_loop(T* out, const T* in, int64_t count) {
  for (int64_t i = 0; i < count; ++i) {
    out[i] = in[i] > T(0) ? in[i] : T(0);
  }
}

}  // namespace

void relu(torch::stable::Tensor out, torch::stable::Tensor input) {
  STD_TORCH_CHECK(input.is_cpu() && out.is_cpu(), "relu: tensors must be on the CPU");
  STD_TORCH_CHECK(input.scalar_type() == out.scalar_type() && input.numel() == out.numel(),
                  "relu: out must match input in size and dtype");
  STD_TORCH_CHECK(input.is_contiguous() && out.is_contiguous(),
                  "relu: tensors must be contiguous");
  STD_TORCH_CHECK(input.scalar_type() == torch::headeronly::ScalarType::Float,
                  "relu: only float32 tensors are supported");
  relu_loop(out.mutable_data_ptr<float>(), input.const_data_ptr<float>(), input.numel());
}
