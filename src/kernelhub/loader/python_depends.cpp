// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/loader/python_depends.hpp>

#include <fmt/format.h>

namespace kernelhub::loader {

util::Expected<std::vector<RequiredImport>> required_imports(
    const std::string& python_name, const std::vector<std::string>& python_depends,
    types::Backend detected, const config::PythonDependencies& table) {
  std::vector<RequiredImport> imports;
  for (const auto& name : python_depends) {
    const auto* packages = table.find(std::nullopt, name);
    if (packages == nullptr) {
      packages = table.find(detected, name);
    }
    if (packages == nullptr) {
      return util::fail(fmt::format("Kernel module `{}` uses unsupported kernel dependency: {}",
                                    python_name, name));
    }
    for (const auto& package : *packages) {
      if (package.import_name) {
        imports.push_back({package.package, *package.import_name});
      }
    }
  }
  return imports;
}

std::string missing_import_message(const std::string& python_name, const RequiredImport& import) {
  return fmt::format(
      "Kernel module `{}` requires Python dependency `{}`. Please install with: pip install {}",
      python_name, import.package, import.package);
}

}  // namespace kernelhub::loader
