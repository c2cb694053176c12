// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/types/kernel_dependency.hpp>

namespace kernelhub::types {

util::Expected<void> KernelDependency::check() const {
  if (version && revision) {
    return util::fail("\"version\" and \"revision\" are mutually exclusive");
  }
  if (!version && !revision) {
    return util::fail("either \"version\" or \"revision\" must be specified");
  }
  return {};
}

}  // namespace kernelhub::types
