// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/abi/library_discovery.hpp>

#include <algorithm>
#include <system_error>

#include <fmt/format.h>

namespace kernelhub::abi {

namespace fs = std::filesystem;

namespace {

bool has_metadata(const fs::path& dir) {
  std::error_code ignored;
  return fs::is_regular_file(dir / "metadata.json", ignored);
}

std::vector<fs::path> variant_subdirectories(const fs::path& dir) {
  std::vector<fs::path> variants;
  std::error_code error;
  if (!fs::is_directory(dir, error)) {
    return variants;
  }
  for (const auto& entry : fs::directory_iterator(dir, error)) {
    std::error_code ignored;
    if (entry.is_directory(ignored) && has_metadata(entry.path())) {
      variants.push_back(entry.path());
    }
  }
  std::sort(variants.begin(), variants.end());
  return variants;
}

}  // namespace

util::Expected<std::vector<fs::path>> discover_variants(const fs::path& dir) {
  std::error_code error;
  if (!fs::is_directory(dir, error)) {
    return util::fail(fmt::format("\"{}\" is not a directory", dir.string()));
  }
  const std::vector<fs::path> candidates = {dir / "result", dir / "build", dir};
  for (const auto& candidate : candidates) {
    auto variants = variant_subdirectories(candidate);
    if (!variants.empty()) {
      return variants;
    }
  }
  if (has_metadata(dir)) {
    return std::vector<fs::path>{dir};
  }
  return util::fail(fmt::format("no build variants found in \"{}\", \"{}\" or \"{}\"",
                                candidates[0].string(), candidates[1].string(),
                                candidates[2].string()));
}

std::vector<fs::path> find_libraries(const fs::path& variant) {
  std::vector<fs::path> libraries;
  std::error_code error;
  for (fs::recursive_directory_iterator it(variant, fs::directory_options::skip_permission_denied,
                                           error),
       end;
       !error && it != end; it.increment(error)) {
    std::error_code ignored;
    auto extension = it->path().extension();
    if ((extension == ".so" || extension == ".pyd") && it->is_regular_file(ignored)) {
      libraries.push_back(it->path());
    }
  }
  std::sort(libraries.begin(), libraries.end());
  return libraries;
}

util::Expected<std::vector<fs::path>> libraries_to_check(const std::vector<fs::path>& arguments) {
  std::vector<fs::path> libraries;
  auto paths = arguments.empty() ? std::vector<fs::path>{"."} : arguments;
  for (const auto& path : paths) {
    std::error_code error;
    if (fs::is_directory(path, error)) {
      for (const auto& variant : KH_TRY(discover_variants(path))) {
        for (const auto& library : find_libraries(variant)) {
          // "./build/v/x.so" reads better as "build/v/x.so" when DIR defaulted to ".".
          libraries.push_back(library.lexically_normal());
        }
      }
    } else if (fs::exists(path, error)) {
      libraries.push_back(path);
    } else {
      return util::fail(fmt::format("\"{}\" does not exist", path.string()));
    }
  }
  return libraries;
}

}  // namespace kernelhub::abi
