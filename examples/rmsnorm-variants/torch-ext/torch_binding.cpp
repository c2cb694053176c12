// SPDX-License-Identifier: Apache-2.0
#include <string>

#include <torch/library.h>

#include "registration.h"
#include "torch_binding.h"

namespace {

// The dispatcher passes a schema `str` as std::string; the op takes a view of it.
void rms_norm_gated(at::Tensor& out, const at::Tensor& input, const at::Tensor& gate,
                    const at::Tensor& weight, double eps, const std::string& activation) {
  rms_norm_gated_cpu(out, input, gate, weight, eps, activation);
}

}  // namespace

// TORCH_EXTENSION_NAME differs per build, so two builds can be loaded side by side.
TORCH_LIBRARY_EXPAND(TORCH_EXTENSION_NAME, ops) {
  ops.def("rms_norm_gated(Tensor! out, Tensor input, Tensor gate, Tensor weight, float eps, "
          "str activation) -> ()");
  ops.def("rms_norm_zero_centered(Tensor! out, Tensor input, Tensor weight, float eps) -> ()");
  // Both variants register the CPU code (see build.toml).
  ops.impl("rms_norm_gated", c10::DeviceType::CPU, &rms_norm_gated);
  ops.impl("rms_norm_zero_centered", c10::DeviceType::CPU, &rms_norm_zero_centered_cpu);
}

REGISTER_EXTENSION(TORCH_EXTENSION_NAME)
