// SPDX-License-Identifier: Apache-2.0
#include <torch/library.h>

#include "registration.h"
#include "torch_binding.h"

// TORCH_EXTENSION_NAME differs per build, so two builds can be loaded side by side.
TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {
  ops.def("rms_norm(Tensor! out, Tensor input, Tensor weight, float eps) -> ()");
  ops.def("silu(Tensor! out, Tensor input) -> ()");
  // Both variants serve CPU tensors: a CUDA torch loads the cuda variant even on a machine
  // without a GPU, where a kernelized model runs on the CPU.
  ops.impl("rms_norm", c10::DeviceType::CPU, &rms_norm_cpu);
  ops.impl("silu", c10::DeviceType::CPU, &silu_cpu);
#if defined(CUDA_KERNEL)
  ops.impl("rms_norm", c10::DeviceType::CUDA, &rms_norm_cuda);
  ops.impl("silu", c10::DeviceType::CUDA, &silu_cuda);
#endif
}

REGISTER_EXTENSION(TORCH_EXTENSION_NAME)
