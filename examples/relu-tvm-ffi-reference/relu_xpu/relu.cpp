// SPDX-License-Identifier: Apache-2.0
// relu on an Intel GPU (SYCL), built only where a SYCL compiler is found. tvm-ffi hands out
// no SYCL queue, so the kernel runs on a queue of its own and waits for it.
#include <cstdint>

#include <sycl/sycl.hpp>

#include "../util.hh"

void relu_xpu(tvm::ffi::TensorView out, tvm::ffi::TensorView input) {
  relu_tvm_ffi::check_arguments(out, input, kDLOneAPI);
  const std::int64_t count = input.numel();
  if (count == 0) {
    return;
  }
  const float* source = relu_tvm_ffi::first_float(input);
  float* target = relu_tvm_ffi::first_float(out);
  sycl::queue queue{sycl::gpu_selector_v};
  queue
      .parallel_for(sycl::range<1>(static_cast<std::size_t>(count)),
                    [=](sycl::id<1> i) { target[i] = source[i] > 0.0f ? source[i] : 0.0f; })
      .wait();
}
