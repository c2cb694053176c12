// SPDX-License-Identifier: Apache-2.0
#include <torch/library.h>

#include "registration.h"

std::vector<std::string> format_floats(const at::Tensor& input);

TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {
  ops.def("format_floats(Tensor input) -> str[]");
#if defined(CPU_KERNEL)
  ops.impl("format_floats", c10::DeviceType::CPU, &format_floats);
#endif
}

REGISTER_EXTENSION(TORCH_EXTENSION_NAME)
