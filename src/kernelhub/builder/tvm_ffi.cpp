// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/builder/tvm_ffi.hpp>

#include <fmt/format.h>

namespace kernelhub::builder {

std::string tvm_ffi_skip_reason(types::Backend backend, const HostTools& host) {
  (void)host;
  switch (backend) {
    case types::Backend::cpu:
    case types::Backend::cuda:
    case types::Backend::xpu:
      // apache-tvm-ffi itself installs from PyPI; what is missing is our side.
      return "kernel-builder build has no tvm-ffi project template yet, so [tvm-ffi] kernels "
             "(tvm-ffi<version>-<compute>-<system> variants) are not built; build them with the "
             "reference's Nix builder";
    default:
      return fmt::format("tvm-ffi kernels build only for cpu, cuda and xpu (the reference's "
                         "tvm-ffi CMake preamble has no {} path)",
                         types::to_string(backend));
  }
}

}  // namespace kernelhub::builder
