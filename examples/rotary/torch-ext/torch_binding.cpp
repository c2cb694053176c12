// SPDX-License-Identifier: Apache-2.0
#include <torch/library.h>

#include "registration.h"
#include "torch_binding.h"

// TORCH_EXTENSION_NAME differs per build, so two builds can be loaded side by side.
TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {
  ops.def("apply_rotary(Tensor! out, Tensor x, Tensor cos, Tensor sin, bool interleaved, "
          "bool reverse) -> ()");
  // Both variants register the CPU code (see build.toml).
  ops.impl("apply_rotary", c10::DeviceType::CPU, &apply_rotary_cpu);
}

REGISTER_EXTENSION(TORCH_EXTENSION_NAME)
