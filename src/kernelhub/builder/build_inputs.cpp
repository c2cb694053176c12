// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/builder/build_inputs.hpp>

#include <algorithm>
#include <set>
#include <system_error>
#include <variant>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/builder/build_manifest.hpp>
#include <kernelhub/builder/dev_unique_id.hpp>
#include <kernelhub/builder/git_state.hpp>
#include <kernelhub/metadata/digest.hpp>
#include <kernelhub/metadata/kernel_id.hpp>
#include <kernelhub/util/file_io.hpp>

namespace kernelhub::builder {

namespace {

namespace fs = std::filesystem;

constexpr const char* k_record = "build-inputs.json";

void add_listed(std::set<std::string>& paths, const std::optional<std::vector<std::string>>& list) {
  for (const auto& path : list.value_or(std::vector<std::string>{})) {
    paths.insert(fs::path(path).lexically_normal().generic_string());
  }
}

// Every regular file under `folder` (relative to kernel_dir), without bytecode.
void add_folder(std::set<std::string>& paths, const fs::path& kernel_dir, const fs::path& folder) {
  std::error_code error;
  if (!fs::is_directory(kernel_dir / folder, error)) {
    paths.insert(folder.lexically_normal().generic_string());
    return;
  }
  for (fs::recursive_directory_iterator it(kernel_dir / folder, error), end; !error && it != end;
       it.increment(error)) {
    const auto relative = it->path().lexically_relative(kernel_dir);
    const auto name = it->path().filename().string();
    if (name == "__pycache__" || name == ".git" || name == "build") {
      it.disable_recursion_pending();
      continue;
    }
    if (it->is_regular_file(error) && it->path().extension() != ".pyc") {
      paths.insert(relative.generic_string());
    }
  }
}

std::set<std::string> input_paths(const fs::path& kernel_dir, const config::BuildConfig& config) {
  std::set<std::string> paths{"build.toml"};
  std::vector<std::string> include_folders;
  if (const auto* torch = std::get_if<config::Torch>(&config.framework)) {
    add_listed(paths, torch->src);
    include_folders = torch->include.value_or(std::vector<std::string>{});
  } else if (const auto* tvm = std::get_if<config::TvmFfi>(&config.framework)) {
    add_listed(paths, tvm->src);
    include_folders = tvm->include.value_or(std::vector<std::string>{});
  }
  for (const auto& kernel : config.kernels) {
    add_listed(paths, kernel.src);
    for (const auto& include : kernel.include.value_or(std::vector<std::string>{})) {
      include_folders.push_back(include);
    }
  }
  for (const auto& include : include_folders) {
    add_folder(paths, kernel_dir, include);
  }
  add_folder(paths, kernel_dir, fs::path("torch-ext") / config.general.name.python_name());
  return paths;
}

}  // namespace

util::Expected<std::string> inputs_digest(const fs::path& kernel_dir,
                                          const config::BuildConfig& config) {
  metadata::StreamHasher hasher(metadata::DigestAlgorithm::sha256);
  for (const auto& relative : input_paths(kernel_dir, config)) {
    hasher.update(relative);
    hasher.update(std::string_view("\0", 1));
    std::error_code error;
    if (!fs::is_regular_file(kernel_dir / relative, error)) {
      hasher.update("missing");
      hasher.update(std::string_view("\0", 1));
      continue;
    }
    const auto text = KH_TRY(util::read_file(kernel_dir / relative));
    hasher.update(fmt::format("{}", text.size()));
    hasher.update(std::string_view("\0", 1));
    hasher.update(text);
  }
  return hasher.finish();
}

util::Expected<void> write_build_inputs(const fs::path& build_dir, const std::string& variant,
                                        const BuildInputs& inputs) {
  const nlohmann::json record = {{"version", inputs.version},
                                 {"unique_id", inputs.unique_id},
                                 {"unique_id_given", inputs.unique_id_given},
                                 {"inputs_digest", inputs.digest}};
  const auto file = builder_folder(build_dir) / variant / k_record;
  std::error_code error;
  fs::create_directories(file.parent_path(), error);
  if (error) {
    return util::fail(fmt::format("cannot create \"{}\": {}", file.parent_path().string(),
                                  error.message()));
  }
  return util::write_file_atomic(file, record.dump(2) + "\n");
}

std::optional<BuildInputs> read_build_inputs(const fs::path& build_dir,
                                             const std::string& variant) {
  const auto text = util::read_file(builder_folder(build_dir) / variant / k_record);
  if (!text) {
    return std::nullopt;
  }
  const auto record = nlohmann::json::parse(*text, nullptr, false);
  if (!record.is_object() || !record.contains("version") ||
      !record["version"].is_number_unsigned() || !record.contains("unique_id") ||
      !record["unique_id"].is_string() || !record.contains("unique_id_given") ||
      !record["unique_id_given"].is_boolean() || !record.contains("inputs_digest") ||
      !record["inputs_digest"].is_string()) {
    return std::nullopt;
  }
  return BuildInputs{record["version"].get<std::uint64_t>(),
                     record["unique_id"].get<std::string>(),
                     record["unique_id_given"].get<bool>(),
                     record["inputs_digest"].get<std::string>()};
}

std::optional<std::string> current_unique_id(const fs::path& kernel_dir) {
  if (const auto git = read_git_state(kernel_dir)) {
    metadata::UniqueIdSource source;
    source.git_tree_id = git->tree_id;
    source.git_dirty = git->status.dirty;
    return metadata::unique_id(source, 0);
  }
  return recorded_dev_unique_id(kernel_dir);
}

std::vector<std::string> stale_reasons(const fs::path& kernel_dir,
                                       const config::BuildConfig& config,
                                       const std::string& variant,
                                       std::optional<std::uint64_t> built_version) {
  std::vector<std::string> reasons;
  const auto wanted = config.general.version;
  const auto record = read_build_inputs(kernel_dir / "build", variant);
  const auto version = record ? std::optional(record->version) : built_version;
  if (version && *version != wanted) {
    reasons.push_back(
        fmt::format("it was built as version {}; build.toml says version {}", *version, wanted));
  }
  if (!record) {
    return reasons;
  }
  if (!record->unique_id_given) {
    const auto current = current_unique_id(kernel_dir);
    if (!current) {
      reasons.push_back(fmt::format("it was built in another folder (kernel id unique part "
                                    "\"{}\"; this folder has none yet)",
                                    record->unique_id));
    } else if (*current != record->unique_id) {
      reasons.push_back(fmt::format(
          "its kernel id ends in \"{}\", a build of this folder now gets \"{}\"",
          record->unique_id, *current));
    }
  }
  const auto digest = inputs_digest(kernel_dir, config);
  if (!digest || *digest != record->digest) {
    reasons.push_back("build.toml or the kernel's sources changed since it was built");
  }
  return reasons;
}

}  // namespace kernelhub::builder
