// SPDX-License-Identifier: Apache-2.0
#include "relu.h"

#include <cstdint>

#include <torch/headeronly/util/Exception.h>

namespace {

template <typename T>
void relu_contiguous(T* out, const T* in, int64_t count) {
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
  switch (input.scalar_type()) {
    case torch::headeronly::ScalarType::Float:
      relu_contiguous(out.mutable_data_ptr<float>(), input.const_data_ptr<float>(),
                      input.numel());
      break;
    case torch::headeronly::ScalarType::Double:
      relu_contiguous(out.mutable_data_ptr<double>(), input.const_data_ptr<double>(),
                      input.numel());
      break;
    default:
      STD_TORCH_CHECK(false, "relu: only float32 and float64 tensors are supported");
  }
}
