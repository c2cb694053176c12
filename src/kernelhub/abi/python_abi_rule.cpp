// SPDX-License-Identifier: Apache-2.0
#include <fmt/format.h>

#include <kernelhub/abi/rules.hpp>

namespace kernelhub::abi {

bool is_single_cpython_extension(std::string_view library) {
  const auto slash = library.rfind('/');
  const std::string_view name = slash == std::string_view::npos ? library : library.substr(slash + 1);
  const auto tag = name.find(".cpython-");
  if (tag == std::string_view::npos || !name.ends_with(".so")) {
    return false;
  }
  const std::string_view digits = name.substr(tag + 9);
  return digits.size() > 2 && digits[0] >= '0' && digits[0] <= '9' && digits[1] >= '0' &&
         digits[1] <= '9';
}

void check_python_abi(const std::vector<std::string>& undefined, const VersionTable& stable_abi,
                      const types::Version& target, std::string_view library,
                      ViolationSink& sink) {
  for (const auto& name : undefined) {
    if (const auto* added = stable_abi.find(name)) {
      if (*added > target) {
        sink.report(Violation{
            std::string(library), Rule::python_abi, name, {}, version_text(*added),
            fmt::format("symbol \"{}\" is in the Python stable ABI only since {}, newer than the "
                        "target {}",
                        name, version_text(*added), version_text(target)),
            fmt::format("raise --python-abi to {} or avoid the function", version_text(*added))});
      }
      continue;
    }
    if (name.starts_with("Py") || name.starts_with("_Py")) {
      sink.report(Violation{
          std::string(library), Rule::python_abi, name, {}, {},
          fmt::format("symbol \"{}\" is not part of the Python stable ABI (abi3)", name),
          "use only the limited API (define Py_LIMITED_API) so the library loads on every "
          "Python from the target on"});
    }
  }
}

}  // namespace kernelhub::abi
