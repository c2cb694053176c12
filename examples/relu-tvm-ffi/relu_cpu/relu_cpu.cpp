// relu on the CPU: a plain loop the compiler vectorises.
#include <cstdint>

#include "../relu_common.h"

void relu_cpu(tvm::ffi::TensorView out, tvm::ffi::TensorView input) {
  relu_tvm_ffi::check_arguments(out, input, kDLCPU);
  const float* in = relu_tvm_ffi::float_data(input);
  float* result = relu_tvm_ffi::float_data(out);
  const std::int64_t count = input.numel();
  for (std::int64_t i = 0; i < count; ++i) {
    result[i] = in[i] > 0.0f ? in[i] : 0.0f;
  }
}
