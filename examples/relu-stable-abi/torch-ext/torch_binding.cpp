// SPDX-License-Identifier: Apache-2.0
// Registers the ops through the stable library API: no libtorch C++ symbol is referenced, so
// the module keeps working when torch's C++ ABI changes.
#include <torch/csrc/stable/library.h>

#include "registration.h"
#include "relu.h"

// TORCH_EXTENSION_NAME differs per build, so two builds can be loaded side by side.
STABLE_TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {
  ops.def("relu(Tensor! out, Tensor input) -> ()");
}

STABLE_TORCH_LIBRARY_IMPL_EXPAND(TORCH_EXTENSION_NAME, CPU, ops) {
  ops.impl("relu", TORCH_BOX(&relu));
}

REGISTER_EXTENSION(TORCH_EXTENSION_NAME)
