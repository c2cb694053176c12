// SPDX-License-Identifier: Apache-2.0
// relu on the CPU: a plain loop, which the compiler vectorises for the target's SIMD.
#include <cstdint>

#include "../util.hh"

void relu_cpu(tvm::ffi::TensorView out, tvm::ffi::TensorView input) {
  relu_tvm_ffi::check_arguments(out, input, kDLCPU);
  const float* source = relu_tvm_ffi::first_float(input);
  float* target = relu_tvm_ffi::first_float(out);
  const std::int64_t count = input.numel();
  for (std::int64_t i = 0; i < count; ++i) {
    target[i] = source[i] > 0.0f ? source[i] : 0.0f;
  }
}
