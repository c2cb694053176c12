// SPDX-License-Identifier: Apache-2.0
// The XPU kernel (SYCL), built only where a SYCL compiler and an XPU torch are found.
#include <cstdint>

#include <sycl/sycl.hpp>

#include <torch/csrc/inductor/aoti_torch/c/shim.h>
#include <torch/csrc/inductor/aoti_torch/c/shim_xpu.h>
#include <torch/csrc/stable/tensor.h>
#include <torch/headeronly/util/Exception.h>

#include "../torch-ext/torch_binding.h"

void relu(torch::stable::Tensor out, torch::stable::Tensor input) {
  STD_TORCH_CHECK(input.scalar_type() == torch::headeronly::ScalarType::Float &&
                      out.scalar_type() == input.scalar_type() &&
                      out.numel() == input.numel() && input.is_contiguous() &&
                      out.is_contiguous(),
                  "relu: out and input must be contiguous float32 tensors of one size");
  const int64_t count = input.numel();
  void* queue = nullptr;
  TORCH_ERROR_CODE_CHECK(aoti_torch_get_current_sycl_queue(&queue));
  float* out_data = out.mutable_data_ptr<float>();
  const float* in_data = input.const_data_ptr<float>();
  static_cast<sycl::queue*>(queue)->parallel_for(sycl::range<1>(count), [=](sycl::id<1> i) {
    out_data[i] = in_data[i] > 0.0f ? in_data[i] : 0.0f;
  });
}
