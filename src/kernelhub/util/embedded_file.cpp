// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/util/embedded_file.hpp>

namespace kernelhub::util {

const EmbeddedFile* find_embedded(std::span<const EmbeddedFile> files, std::string_view path) {
  for (const auto& file : files) {
    if (file.path == path) {
      return &file;
    }
  }
  return nullptr;
}

}  // namespace kernelhub::util
