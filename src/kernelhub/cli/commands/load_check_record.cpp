// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/cli/commands/load_check_record.hpp>

#include <algorithm>
#include <system_error>

#include <nlohmann/json.hpp>

#include <kernelhub/hub/content_hash.hpp>
#include <kernelhub/util/file_io.hpp>

namespace kernelhub::cli::commands {

namespace {

namespace fs = std::filesystem;

constexpr std::string_view k_record_file = "load-check.json";
constexpr std::string_view k_failed_folder = "failed";

std::string_view outcome_name(LoadCheckOutcome outcome) {
  switch (outcome) {
    case LoadCheckOutcome::passed: return "passed";
    case LoadCheckOutcome::failed: return "failed";
    case LoadCheckOutcome::not_checked: return "not-checked";
  }
  return "not-checked";
}

std::optional<LoadCheckRecord> parse_record(const std::string& text) {
  const auto json = nlohmann::json::parse(text, nullptr, false);
  if (!json.is_object()) {
    return std::nullopt;
  }
  LoadCheckRecord record;
  const auto outcome = json.value("outcome", std::string());
  if (outcome == "passed") {
    record.outcome = LoadCheckOutcome::passed;
  } else if (outcome == "failed") {
    record.outcome = LoadCheckOutcome::failed;
  } else if (outcome == "not-checked") {
    record.outcome = LoadCheckOutcome::not_checked;
  } else {
    return std::nullopt;
  }
  record.key = json.value("key", std::string());
  record.metadata_sha256 = json.value("metadata-sha256", std::string());
  record.message = json.value("message", std::string());
  return record;
}

}  // namespace

fs::path load_check_folder(const fs::path& variant) {
  const auto normal = variant.lexically_normal();
  const auto name = normal.has_filename() ? normal.filename() : normal.parent_path().filename();
  const auto root = normal.has_filename() ? normal.parent_path()
                                          : normal.parent_path().parent_path();
  return root / ".kernelhub" / name;
}

std::string metadata_sha256(const fs::path& variant) {
  const auto text = util::read_file(variant / "metadata.json");
  return text ? hub::sha256_hex(*text) : std::string();
}

std::optional<LoadCheckRecord> read_load_check_record(const fs::path& variant) {
  const auto text = util::read_file(load_check_folder(variant) / k_record_file);
  return text ? parse_record(*text) : std::nullopt;
}

std::optional<LoadCheckRecord> current_load_check_record(const fs::path& variant) {
  auto record = read_load_check_record(variant);
  const auto current = metadata_sha256(variant);
  if (!record || current.empty() || record->metadata_sha256 != current) {
    return std::nullopt;
  }
  return record;
}

void write_load_check_record(const fs::path& variant, const LoadCheckRecord& record) {
  const nlohmann::ordered_json json = {{"outcome", outcome_name(record.outcome)},
                                       {"key", record.key},
                                       {"metadata-sha256", record.metadata_sha256},
                                       {"message", record.message}};
  std::error_code error;
  const auto folder = load_check_folder(variant);
  fs::create_directories(folder, error);
  (void)util::write_file_atomic(folder / k_record_file, json.dump(2) + "\n");
}

void forget_load_check(const fs::path& variant) {
  std::error_code error;
  const auto folder = load_check_folder(variant);
  fs::remove(folder / k_record_file, error);
  fs::remove_all(folder / k_failed_folder, error);
  fs::remove(folder / "load-check-passed", error);  // the stamp of earlier builders
}

std::optional<fs::path> set_aside_failed_variant(const fs::path& variant) {
  std::error_code error;
  const auto target = load_check_folder(variant) / k_failed_folder;
  fs::remove_all(target, error);
  fs::create_directories(target.parent_path(), error);
  fs::rename(variant, target, error);
  if (error) {
    return std::nullopt;
  }
  return target;
}

std::vector<SetAsideVariant> set_aside_variants(const fs::path& build_root) {
  std::vector<SetAsideVariant> found;
  std::error_code error;
  for (const auto& entry : fs::directory_iterator(build_root / ".kernelhub", error)) {
    const auto failed = entry.path() / k_failed_folder;
    std::error_code ignored;
    if (!fs::is_directory(failed, ignored)) {
      continue;
    }
    SetAsideVariant variant{entry.path().filename().string(), failed, {}};
    if (const auto text = util::read_file(entry.path() / k_record_file)) {
      if (const auto record = parse_record(*text)) {
        variant.message = record->message;
      }
    }
    found.push_back(std::move(variant));
  }
  std::sort(found.begin(), found.end(),
            [](const auto& a, const auto& b) { return a.name < b.name; });
  return found;
}

}  // namespace kernelhub::cli::commands
