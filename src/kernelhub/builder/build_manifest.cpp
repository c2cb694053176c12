// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/builder/build_manifest.hpp>

#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/builder/step.hpp>
#include <kernelhub/util/file_io.hpp>

namespace kernelhub::builder {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view k_tag_file = "CACHEDIR.TAG";
constexpr std::string_view k_record_file = "built-files.json";

}  // namespace

fs::path builder_folder(const fs::path& build_dir) { return build_dir / ".kernelhub"; }

util::Expected<void> mark_builder_folder(const fs::path& build_dir) {
  if (is_marked_builder_folder(build_dir)) {
    return {};
  }
  std::error_code error;
  fs::create_directories(builder_folder(build_dir), error);
  if (error) {
    return util::fail(fmt::format("cannot create \"{}\": {}", builder_folder(build_dir).string(),
                                  error.message()));
  }
  return util::write_file_atomic(
      builder_folder(build_dir) / k_tag_file,
      fmt::format("{}\n# This folder holds kernel-builder's generated projects, build trees and "
                  "records;\n# `kernel-builder clean` removes it.\n",
                  k_cachedir_signature));
}

bool is_marked_builder_folder(const fs::path& build_dir) {
  return is_generated_folder(builder_folder(build_dir));
}

util::Expected<void> mark_generated_folder(const fs::path& folder) {
  return util::write_file_atomic(
      folder / k_tag_file,
      fmt::format("{}\n# kernel-builder create-project wrote this folder; `kernel-builder clean` "
                  "removes it.\n",
                  k_cachedir_signature));
}

bool is_generated_folder(const fs::path& folder) {
  const auto text = util::read_file(folder / k_tag_file);
  return text && text->starts_with(k_cachedir_signature) &&
         text->find("kernel-builder") != std::string::npos;
}

util::Expected<void> write_built_files(const fs::path& build_dir, const std::string& variant,
                                       const BuiltFiles& files) {
  KH_STEP(mark_builder_folder(build_dir));
  nlohmann::ordered_json json;
  json["algorithm"] = metadata::to_string(files.digest.algorithm);
  json["files"] = files.digest.files;
  json["metadata.json"] = files.metadata_json;
  const auto folder = builder_folder(build_dir) / variant;
  std::error_code error;
  fs::create_directories(folder, error);
  return util::write_file_atomic(folder / k_record_file, json.dump(2) + "\n");
}

std::optional<BuiltFiles> read_built_files(const fs::path& build_dir, const std::string& variant) {
  const auto text = util::read_file(builder_folder(build_dir) / variant / k_record_file);
  if (!text) {
    return std::nullopt;
  }
  const auto json = nlohmann::json::parse(*text, nullptr, /*allow_exceptions=*/false);
  if (!json.is_object() || !json.contains("files") || !json["files"].is_object() ||
      !json.contains("metadata.json") || !json["metadata.json"].is_string() ||
      !json.contains("algorithm") || !json["algorithm"].is_string()) {
    return std::nullopt;
  }
  const auto algorithm = metadata::digest_algorithm_from_name(json["algorithm"].get<std::string>());
  if (!algorithm) {
    return std::nullopt;
  }
  BuiltFiles files;
  files.digest.algorithm = *algorithm;
  for (const auto& [path, hash] : json["files"].items()) {
    if (!hash.is_string()) {
      return std::nullopt;
    }
    files.digest.files[path] = hash.get<std::string>();
  }
  files.metadata_json = json["metadata.json"].get<std::string>();
  return files;
}

}  // namespace kernelhub::builder
