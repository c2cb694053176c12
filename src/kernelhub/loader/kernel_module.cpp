// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/loader/kernel_module.hpp>

#include <cstdint>

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <nlohmann/json.hpp>

#include <kernelhub/loader/metadata_memo.hpp>
#include <kernelhub/metadata/metadata_reader.hpp>
#include <kernelhub/util/file_io.hpp>
#include <kernelhub/variants/variant_name.hpp>

#ifndef KERNELHUB_VERSION
#define KERNELHUB_VERSION "0"
#endif

namespace kernelhub::loader {

namespace fs = std::filesystem;

namespace {

std::string to_python_identifier(std::string_view text) {
  std::string out;
  for (const char c : text) {
    const bool word = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
    out.push_back(word ? c : '_');
  }
  if (out.empty() || (out.front() >= '0' && out.front() <= '9')) {
    out.insert(out.begin(), '_');
  }
  return out;
}

// A python name for a build with no usable metadata: the package folder of the old layout,
// else the repository folder (repo/build/<variant>), else the folder itself.
std::string guess_python_name(const fs::path& variant_path, const fs::path& package_dir) {
  if (package_dir != variant_path) {
    return to_python_identifier(package_dir.filename().string());
  }
  const bool is_variant_dir = variants::parse_variant(variant_path.filename().string()).has_value();
  if (is_variant_dir && variant_path.parent_path().filename() == "build") {
    return to_python_identifier(variant_path.parent_path().parent_path().filename().string());
  }
  return to_python_identifier(variant_path.filename().string());
}

// The only subfolder holding an __init__.py (the pre-flattening build/<variant>/<name>/).
std::optional<fs::path> single_package_dir(const fs::path& variant_path) {
  std::optional<fs::path> found;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(variant_path, error)) {
    if (entry.is_directory() && fs::exists(entry.path() / "__init__.py") &&
        entry.path().filename() != "__pycache__") {
      if (found) {
        return std::nullopt;
      }
      found = entry.path();
    }
  }
  return found;
}

}  // namespace

fs::path normal_path(const fs::path& path) {
  std::error_code error;
  fs::path result = fs::absolute(path, error).lexically_normal();
  if (!result.has_filename() && result.has_parent_path()) {
    result = result.parent_path();  // "a/b/" -> "a/b"
  }
  return result;
}

std::string legacy_module_name(std::string_view python_name, const fs::path& path) {
  std::uint64_t hash = 14695981039346656037ULL;
  for (const char c : path.string()) {
    hash = (hash ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
  }
  return fmt::format("{}_{:016x}", python_name, hash);
}

std::optional<std::string> dirty_build_warning(const metadata::Metadata& metadata,
                                               std::string_view variant) {
  if (!metadata.is_dirty()) {
    return std::nullopt;
  }
  std::vector<std::string_view> sources;
  if (metadata.provenance->kernel && metadata.provenance->kernel->dirty) {
    sources.push_back("kernel source");
  }
  const auto& builder = metadata.provenance->kernel_builder.git;
  if (builder && builder->dirty) {
    sources.push_back("kernel-builder");
  }
  return fmt::format(
      "Kernel '{}' variant '{}' was built from a dirty git tree ({} had uncommitted changes). "
      "Its recorded git revision does not fully identify the sources it was built from, so the "
      "build may not be reproducible.",
      metadata.name.str(), variant, fmt::join(sources, ", "));
}

util::Expected<KernelModule> resolve_kernel_module(const fs::path& variant_path) {
  KernelModule module;
  std::error_code error;
  // Absolute but with symlinks kept, as the reference keeps the path it was given (module
  // __file__ and the registry key show the path the caller used).
  module.variant_path = normal_path(variant_path);
  if (!fs::is_directory(module.variant_path, error)) {
    return util::fail(fmt::format("kernel variant folder \"{}\" does not exist",
                                  variant_path.string()));
  }
  const fs::path& root = module.variant_path;

  // Metadata: required by the reference; here an id-less or missing one means an older build.
  std::optional<std::string> legacy_name;
  const fs::path metadata_file = root / "metadata.json";
  const auto key = content_key(metadata_file);
  if (key) {
    // A cached variant's, parsed before by this process (the digest check, an earlier load).
    module.metadata = remembered_metadata(*key);
  }
  std::optional<std::string> text;
  if (!module.metadata) {
    // util::read_file (open and read), not an ifstream: a stream's first use in a process sets
    // up its locale facets, about a tenth of this function's cost in a warm load.
    if (auto read = util::read_file(metadata_file)) {
      text = std::move(*read);
    }
  }
  if (text) {
    auto parsed = metadata::parse_metadata(*text, metadata_file.string());
    if (parsed) {
      if (key) {
        remember_metadata(*key, *parsed);
      }
      module.metadata = std::move(*parsed);
    } else {
      const auto json = nlohmann::json::parse(*text, nullptr, false);
      if (!json.is_object() || json.contains("id")) {
        return util::fail(parsed.error().message);
      }
      if (json.contains("name") && json["name"].is_string()) {
        legacy_name = to_python_identifier(json["name"].get<std::string>());
      }
    }
  }

  if (module.metadata) {
    module.python_name = module.metadata->name.python_name();
  }
  fs::path package_dir = root;
  if (!fs::exists(root / "__init__.py")) {
    const std::string named = module.metadata ? module.python_name : legacy_name.value_or("");
    if (!named.empty() && fs::exists(root / named / "__init__.py")) {
      package_dir = root / named;
    } else if (auto only = single_package_dir(root); only && !module.metadata) {
      package_dir = *only;
    } else {
      return util::fail(fmt::format("no kernel module found at \"{}\"", root.string()));
    }
  }
  module.entry_file = package_dir / "__init__.py";

  if (module.metadata) {
    module.module_name = module.metadata->id;
    module.dirty_build = dirty_build_warning(*module.metadata, root.filename().string());
    return module;
  }
  module.python_name = legacy_name.value_or(guess_python_name(root, package_dir));
  module.module_name = legacy_module_name(module.python_name, root);
  module.warnings.push_back(fmt::format(
      "kernel at \"{}\" is an older build ({}); loading it as module \"{}\"", root.string(),
      fs::exists(metadata_file) ? "its metadata.json has no id" : "no metadata.json",
      module.module_name));
  return module;
}

util::Expected<void> check_kernels_minver(const KernelModule& module,
                                          std::string_view installed) {
  if (!module.metadata || !module.metadata->kernels_minver) {
    return {};
  }
  const auto& required = *module.metadata->kernels_minver;
  const auto compat = types::Version::parse(std::string(installed));
  if (!compat || !(*compat < required)) {
    return {};
  }
  // kernels' words up to "is installed" (the version is the kernels API kernelhub provides),
  // then what to upgrade: kernelhub, not a kernels package that may not be there at all.
  const auto needed = metadata::kernels_minver_text(required);
  return util::fail(fmt::format(
      "Kernel '{}' variant '{}' requires kernels>={}, but version {} is installed (the kernels "
      "API of kernelhub {}). Upgrade kernelhub to a release that implements kernels>={}.",
      module.metadata->name.str(), module.variant_path.filename().string(), needed, installed,
      KERNELHUB_VERSION, needed));
}

}  // namespace kernelhub::loader
