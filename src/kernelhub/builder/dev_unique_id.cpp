// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/builder/dev_unique_id.hpp>

#include <system_error>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include <kernelhub/metadata/kernel_id.hpp>
#include <kernelhub/util/file_io.hpp>

namespace kernelhub::builder {

namespace fs = std::filesystem;

namespace {

// The folder as recorded: absolute, normal, without a trailing '/' ("dir/." and "dir" agree).
std::string folder_key(const fs::path& kernel_dir) {
  auto normal = fs::absolute(kernel_dir).lexically_normal();
  if (!normal.has_filename() && normal.has_parent_path() && normal != normal.root_path()) {
    normal = normal.parent_path();
  }
  return normal.generic_string();
}

}  // namespace

fs::path dev_unique_id_file(const fs::path& kernel_dir) {
  return kernel_dir / "build" / ".kernelhub" / "dev-id.json";
}

std::optional<std::string> recorded_dev_unique_id(const fs::path& kernel_dir) {
  const auto text = util::read_file(dev_unique_id_file(kernel_dir));
  if (!text) {
    return std::nullopt;
  }
  const auto record = nlohmann::json::parse(*text, nullptr, false);
  if (!record.is_object() || !record.contains("folder") || !record["folder"].is_string() ||
      !record.contains("unique_id") || !record["unique_id"].is_string()) {
    return std::nullopt;
  }
  const auto folder = record["folder"].get<std::string>();
  const auto unique = record["unique_id"].get<std::string>();
  std::error_code error;
  // The same folder by another spelling (a link on the way) is the same folder.
  const bool same = folder == folder_key(kernel_dir) || fs::equivalent(folder, kernel_dir, error);
  if (!same || !metadata::is_dev_unique_id(unique)) {
    return std::nullopt;
  }
  return unique;
}

util::Expected<std::string> dev_unique_id_for(const fs::path& kernel_dir) {
  if (auto recorded = recorded_dev_unique_id(kernel_dir)) {
    return *recorded;
  }
  const auto unique = metadata::dev_unique_id(metadata::random_id_value());
  const nlohmann::json record = {{"folder", folder_key(kernel_dir)},
                                 {"unique_id", unique}};
  const auto file = dev_unique_id_file(kernel_dir);
  std::error_code error;
  fs::create_directories(file.parent_path(), error);
  if (error) {
    return util::fail(fmt::format("cannot create \"{}\": {}", file.parent_path().string(),
                                  error.message()));
  }
  if (auto written = util::write_file_atomic(file, record.dump(2) + "\n"); !written) {
    return tl::unexpected(std::move(written).error());
  }
  return unique;
}

}  // namespace kernelhub::builder
