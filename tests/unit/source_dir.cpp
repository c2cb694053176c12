// SPDX-License-Identifier: Apache-2.0
#include "source_dir.hpp"

namespace kernelhub::unit_tests {

std::filesystem::path source_dir() { return KERNELHUB_SOURCE_DIR; }

}  // namespace kernelhub::unit_tests
