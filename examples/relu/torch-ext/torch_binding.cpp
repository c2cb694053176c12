// SPDX-License-Identifier: Apache-2.0
#include <torch/library.h>

#include "registration.h"

void relu(at::Tensor& out, const at::Tensor& input);

// TORCH_EXTENSION_NAME differs per build, so two builds can be loaded side by side.
TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {
  ops.def("relu(Tensor! out, Tensor input) -> ()");
#if defined(CPU_KERNEL)
  ops.impl("relu", c10::DeviceType::CPU, &relu);
#elif defined(CUDA_KERNEL)
  ops.impl("relu", c10::DeviceType::CUDA, &relu);
#endif
}

REGISTER_EXTENSION(TORCH_EXTENSION_NAME)
