// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/loader/variant_verify.hpp>

#include <algorithm>
#include <system_error>

#include <fmt/format.h>

#include <kernelhub/metadata/metadata_reader.hpp>
#include <kernelhub/util/file_io.hpp>
#include <kernelhub/variants/variant_name.hpp>

namespace kernelhub::loader {

namespace fs = std::filesystem;

namespace {

std::vector<fs::path> variant_children(const fs::path& dir) {
  std::vector<fs::path> found;
  std::error_code ec;
  for (const auto& entry : fs::directory_iterator(dir, ec)) {
    if (entry.is_directory(ec) && variants::parse_variant(entry.path().filename().string())) {
      found.push_back(entry.path());
    }
  }
  std::sort(found.begin(), found.end());
  return found;
}

bool is_file(const fs::path& path) {
  std::error_code ec;
  return fs::is_regular_file(path, ec);
}

}  // namespace

std::string_view to_string(VerifyStatus status) {
  switch (status) {
    case VerifyStatus::ok:
      return "ok";
    case VerifyStatus::metadata_missing:
      return "metadata-missing";
    case VerifyStatus::metadata_invalid:
      return "metadata-invalid";
    case VerifyStatus::digest_missing:
      return "digest-missing";
    case VerifyStatus::digest_mismatch:
      return "digest-mismatch";
    case VerifyStatus::unreadable:
      return "unreadable";
    case VerifyStatus::uncovered_files:
      return "uncovered-files";
  }
  return "unknown";
}

std::string_view violation_kind_name(metadata::DigestViolation::Kind kind) {
  using Kind = metadata::DigestViolation::Kind;
  switch (kind) {
    case Kind::missing_file:
      return "MissingFile";
    case Kind::unknown_file:
      return "UnknownFile";
    case Kind::hash_mismatch:
      return "HashMismatch";
    case Kind::algorithm_mismatch:
      return "AlgorithmMismatch";
  }
  return "Unknown";
}

VariantCheck verify_variant_digest(const fs::path& variant_dir) {
  VariantCheck check;
  check.path = variant_dir;
  check.variant = variant_dir.filename().string();
  const auto metadata_path = variant_dir / "metadata.json";
  if (!is_file(metadata_path)) {
    check.status = VerifyStatus::metadata_missing;
    return check;
  }
  auto metadata = metadata::read_metadata_file(metadata_path);
  if (!metadata) {
    check.status = VerifyStatus::metadata_invalid;
    check.detail = metadata.error().message;
    return check;
  }
  if (!metadata->digest) {
    check.status = VerifyStatus::digest_missing;
    return check;
  }
  const auto& expected = *metadata->digest;
  check.files = expected.files.size();
  // Rehashed with the recorded algorithm, as the reference does, so a digest in the other
  // algorithm shows up as changed files rather than only as an algorithm mismatch.
  auto actual = metadata::hash_variant_files(expected.algorithm, variant_dir);
  if (!actual) {
    check.status = VerifyStatus::unreadable;
    check.detail = actual.error().message;
    return check;
  }
  check.violations = metadata::validate(expected, actual->digest);
  check.uncovered = std::move(actual->uncovered);
  check.status = !check.violations.empty() ? VerifyStatus::digest_mismatch
                 : check.uncovered.empty() ? VerifyStatus::ok
                                           : VerifyStatus::uncovered_files;
  return check;
}

util::Expected<std::vector<fs::path>> local_variant_dirs(const fs::path& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) {
    return util::fail(fmt::format("\"{}\" is not a directory", path.string()));
  }
  if (is_file(path / "metadata.json")) {
    return std::vector<fs::path>{path};
  }
  if (auto in_build = variant_children(path / "build"); !in_build.empty()) {
    return in_build;
  }
  if (auto here = variant_children(path); !here.empty()) {
    return here;
  }
  return util::fail(fmt::format(
      "no build variants found in \"{}\": neither a metadata.json nor variant folders in it or "
      "in its build/",
      path.string()));
}

util::Expected<InstalledVariants> installed_variants(const cache::HubCache& cache,
                                                     const hub::RepoId& repo,
                                                     const InstalledRequest& request) {
  InstalledVariants result;
  result.revision = KH_TRY(resolve_info_revision(cache, repo, request.revision));
  const hub::RepoRef ref{repo, hub::RepoType::kernel};
  const auto folder = cache.repo(ref);
  const auto dirs = variant_children(folder.snapshot_dir(result.revision.commit) / "build");
  const auto hint = [&] {
    return fmt::format("run `kernelhub download {} --revision {}{}` first", repo.str(),
                       result.revision.label, request.all_variants ? " --all-variants" : "");
  };
  if (dirs.empty()) {
    return util::fail(fmt::format("no variant of {} at revision {} ({}) is in the cache ({}); {}",
                                  repo.str(), result.revision.label, result.revision.commit,
                                  folder.folder().string(), hint()));
  }
  if (request.all_variants) {
    result.dirs = dirs;
    return result;
  }
  if (!request.system) {
    return util::fail("choosing the variant to verify needs the system it is for");
  }
  std::vector<std::string> names;
  for (const auto& dir : dirs) {
    names.push_back(dir.filename().string());
  }
  result.resolution = variants::resolve_variant_names(*request.system, names);
  const auto* best = result.resolution->best();
  if (best == nullptr) {
    return util::fail(fmt::format(
        "none of the cached variants of {} at revision {} fits this system; {} or pass "
        "--all-variants:\n\n{}",
        repo.str(), result.revision.label, hint(), variants::render_trace(result.resolution->trace)));
  }
  for (const auto& dir : dirs) {
    if (auto parsed = variants::parse_variant(dir.filename().string()); parsed && *parsed == *best) {
      result.dirs.push_back(dir);
      break;
    }
  }
  return result;
}

}  // namespace kernelhub::loader
