// SPDX-License-Identifier: Apache-2.0
#include <torch/library.h>

#include "registration.h"
#include "torch_binding.h"

// TORCH_EXTENSION_NAME differs per build, so two builds can be loaded side by side.
TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {
  ops.def("gelu(Tensor! out, Tensor input) -> ()");
  ops.def("gelu_tanh(Tensor! out, Tensor input) -> ()");
  ops.def("quick_gelu(Tensor! out, Tensor input) -> ()");
  ops.def("silu(Tensor! out, Tensor input) -> ()");
  // Both variants register the CPU code (see build.toml).
  ops.impl("gelu", c10::DeviceType::CPU, &gelu_cpu);
  ops.impl("gelu_tanh", c10::DeviceType::CPU, &gelu_tanh_cpu);
  ops.impl("quick_gelu", c10::DeviceType::CPU, &quick_gelu_cpu);
  ops.impl("silu", c10::DeviceType::CPU, &silu_cpu);
}

REGISTER_EXTENSION(TORCH_EXTENSION_NAME)
