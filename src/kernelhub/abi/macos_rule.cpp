// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <kernelhub/abi/rules.hpp>

namespace kernelhub::abi {

std::string version_text(const types::Version& version) {
  auto text = version.to_string();
  return version.components().size() < 2 ? text + ".0" : text;
}

void check_macos(const MachOFile& file, const types::Version& target, std::string_view library,
                 ViolationSink& sink) {
  for (std::size_t i = 0; i < file.images.size(); ++i) {
    const auto& image = file.images[i];
    // Name the image only when a universal binary has several.
    auto where = file.images.size() > 1
                     ? fmt::format(" (image {} of {}, cpu type {:#x})", i + 1, file.images.size(),
                                   image.cpu_type)
                     : std::string();
    if (!image.min_macos) {
      sink.report(Violation{
          std::string(library), Rule::macos, {}, {}, {},
          fmt::format("records no minimum macOS version{}", where),
          "link with -mmacosx-version-min (or MACOSX_DEPLOYMENT_TARGET) so LC_BUILD_VERSION is "
          "written"});
      continue;
    }
    const auto& minos = *image.min_macos;
    types::Version version({minos.major(), minos.minor(), minos.patch()});
    if (version > target) {
      sink.report(Violation{
          std::string(library), Rule::macos, {}, {}, minos.to_string(),
          fmt::format("requires macOS {}, newer than the target {}{}", minos.to_string(),
                      version_text(target), where),
          fmt::format("build with MACOSX_DEPLOYMENT_TARGET={}", version_text(target))});
    }
  }
}

}  // namespace kernelhub::abi
