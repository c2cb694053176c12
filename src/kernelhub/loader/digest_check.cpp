// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/loader/digest_check.hpp>

#include <algorithm>
#include <optional>
#include <system_error>

#include <fmt/format.h>

#include <kernelhub/loader/metadata_memo.hpp>
#include <kernelhub/metadata/metadata_reader.hpp>

namespace kernelhub::loader {

namespace fs = std::filesystem;

std::string integrity_failure_text(const std::vector<metadata::DigestViolation>& violations,
                                   std::size_t limit) {
  std::string out = "kernel integrity check failed";
  const std::size_t shown = std::min(violations.size(), limit);
  for (std::size_t i = 0; i < shown; ++i) {
    out += "\n" + violations[i].to_string();
  }
  if (violations.size() > shown) {
    out += fmt::format("\n... and {} more", violations.size() - shown);
  }
  return out;
}

namespace {

// The digest a metadata.json records; nullopt when it has none or does not parse. Parsed once
// a process for a cached variant (metadata_memo.hpp): repeated loads parse it once.
std::optional<metadata::Digest> recorded_digest(const fs::path& metadata_file) {
  const auto key = content_key(metadata_file);
  std::optional<metadata::Metadata> parsed = key ? remembered_metadata(*key) : std::nullopt;
  if (!parsed) {
    auto read = metadata::read_metadata_file(metadata_file);
    if (!read) {
      return std::nullopt;
    }
    if (key) {
      remember_metadata(*key, *read);
    }
    parsed = std::move(*read);
  }
  return parsed->digest;
}

}  // namespace

util::Expected<void> check_cached_variant_digest(const fs::path& variant_dir,
                                                 const fs::path& stamp_root,
                                                 DigestCheckStats* stats) {
  std::error_code ec;
  if (!fs::is_regular_file(variant_dir / "metadata.json", ec)) {
    return {};
  }
  const auto recorded = recorded_digest(variant_dir / "metadata.json");
  if (!recorded) {
    return {};
  }
  const metadata::Digest& expected = *recorded;
  StampedHashStats ignored;
  StampedHashStats& hashes = stats != nullptr ? stats->hashes : ignored;
  if (stats != nullptr) {
    stats->checked = true;
  }
  const auto refusal = [&](const std::string& why) {
    return util::fail(fmt::format(
        "refusing to load kernel variant \"{}\": its files do not match the digest in its "
        "metadata.json: {}",
        variant_dir.string(), why));
  };
  auto actual = metadata::hash_variant_files(
      expected.algorithm, variant_dir,
      [&](metadata::DigestAlgorithm algorithm, const fs::path& file) {
        return stamped_file_hash(algorithm, file, stamp_root, &hashes);
      });
  if (!actual) {
    return refusal(actual.error().message);
  }
  for (const std::string& path : actual->uncovered) {
    if (path.ends_with('/')) {
      return refusal(fmt::format(
          "\"{}\" is a link to a folder, which the digest does not cover (nothing behind it is "
          "checked)",
          path.substr(0, path.size() - 1)));
    }
  }
  const auto violations = metadata::validate(expected, actual->digest);
  if (!violations.empty()) {
    return refusal(integrity_failure_text(violations));
  }
  return {};
}

}  // namespace kernelhub::loader
