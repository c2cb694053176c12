// SPDX-License-Identifier: Apache-2.0
#include <torch/library.h>

#include "registration.h"
#include "../state/state.h"

// The ops take no tensors, so they are registered for every dispatch key (no device impl).
TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {
  ops.def("set_values(int global_value, int local_value, int member_value) -> ()",
          &same_globals::set_values);
  ops.def("get_values() -> int[]", &same_globals::get_values);
}

REGISTER_EXTENSION(TORCH_EXTENSION_NAME)
