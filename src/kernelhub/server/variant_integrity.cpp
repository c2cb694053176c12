// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/variant_integrity.hpp>

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <mutex>
#include <unordered_map>

#include <fmt/format.h>

#include <kernelhub/metadata/digest.hpp>
#include <kernelhub/metadata/metadata_reader.hpp>
#include <kernelhub/server/lfs_object_store.hpp>
#include <kernelhub/server/repository_blob_reader.hpp>
#include <kernelhub/server/repository_reader.hpp>
#include <kernelhub/util/unique_fd.hpp>
#include <kernelhub/verify/identity_policy.hpp>
#include <kernelhub/verify/signed_variant.hpp>
#include <kernelhub/verify/trusted_root.hpp>

namespace kernelhub::server {

namespace {

// metadata.json and its bundle are a few KiB; larger ones are not checked.
constexpr std::uint64_t k_max_metadata = std::uint64_t{1} << 20;
// A variant with more files than this is not checked.
constexpr std::size_t k_max_checked_files = 10000;
// Remembered blob hashes; past this many the memory starts again empty.
constexpr std::size_t k_remembered_hashes = 100000;

tl::unexpected<HubError> stopped() { return hub_fail(503, "", "the server is stopping"); }

// A blob's hash in `algorithm`, remembered by blob id (a blob never changes under its id):
// an LFS file's object read from the store, a loose blob streamed, else read whole through
// libgit2. Fails between two blocks when `stop` is requested (a server stopping mid-way
// through a large file).
HubExpected<std::string> blob_hash(const std::shared_ptr<git_repository>& repo,
                                   const std::string& commit, const TreeItem& item,
                                   metadata::DigestAlgorithm algorithm,
                                   const std::stop_token& stop) {
  static std::mutex mutex;
  static std::unordered_map<std::string, std::string> remembered;
  const std::string key = std::string(metadata::to_string(algorithm)) + ":" + item.oid;
  {
    const std::lock_guard lock(mutex);
    if (const auto found = remembered.find(key); found != remembered.end()) {
      return found->second;
    }
  }
  metadata::StreamHasher hasher(algorithm);
  std::string buffer(std::size_t{1} << 20, '\0');
  if (item.lfs) {
    const LfsObjectStore store(repository_folder(repo.get()));
    const util::UniqueFd fd(::open(store.object_path(item.lfs->oid).c_str(), O_RDONLY | O_CLOEXEC));
    if (!fd) {
      return hub_fail(404, "", fmt::format("the LFS object of \"{}\" is not stored", item.path));
    }
    for (;;) {
      if (stop.stop_requested()) {
        return stopped();
      }
      const ssize_t got = ::read(fd.get(), buffer.data(), buffer.size());
      if (got < 0 && errno == EINTR) {
        continue;
      }
      if (got < 0) {
        return hub_fail(500, "", fmt::format("cannot read the LFS object of \"{}\"", item.path));
      }
      if (got == 0) {
        break;
      }
      hasher.update(std::string_view(buffer.data(), static_cast<std::size_t>(got)));
    }
  } else if (auto reader = open_streamed_blob(repo.get(), item.oid); !reader) {
    return tl::unexpected(reader.error());
  } else if (*reader) {
    for (;;) {
      if (stop.stop_requested()) {
        return stopped();
      }
      auto got = (*reader)->read(buffer.data(), buffer.size());
      if (!got) {
        return tl::unexpected(got.error());
      }
      if (*got == 0) {
        break;
      }
      hasher.update(std::string_view(buffer.data(), *got));
    }
  } else {
    auto file = read_file(repo, commit, item.path, Content::bytes);
    if (!file) {
      return tl::unexpected(file.error());
    }
    hasher.update(std::string_view(file->data, file->size));
  }
  std::string hash = hasher.finish();
  const std::lock_guard lock(mutex);
  if (remembered.size() >= k_remembered_hashes) {
    remembered.clear();
  }
  remembered.emplace(key, hash);
  return hash;
}

// The loader's digest leaves out bytecode and the top-level metadata files (metadata/digest.hpp).
bool outside_digest(std::string_view relative) {
  if (relative == "metadata.json" || relative == "metadata.json.sigstore" ||
      relative.ends_with(".pyc") || relative.starts_with("__pycache__/")) {
    return true;
  }
  return relative.find("/__pycache__/") != std::string_view::npos;
}

std::string first_violations(const std::vector<metadata::DigestViolation>& violations) {
  std::string out = violations.front().to_string();
  if (violations.size() > 1) {
    out += fmt::format(" (and {} more)", violations.size() - 1);
  }
  return out;
}

// False when stopped before the end.
bool check_digest(const std::shared_ptr<git_repository>& repo, const std::string& commit,
                  const std::string& folder, const metadata::Digest& expected,
                  VariantIntegrity& integrity, const std::stop_token& stop) {
  // Sizes::read also tells LFS pointers from regular files.
  auto items = list_tree(repo.get(), commit, folder, Recursive::yes, Sizes::read);
  if (!items) {
    integrity.digest_detail = "the files cannot be listed: " + items.error().message;
    return true;
  }
  if (items->size() > k_max_checked_files) {
    integrity.digest_detail = fmt::format("not checked here: more than {} files",
                                          k_max_checked_files);
    return true;
  }
  metadata::Digest actual;
  actual.algorithm = expected.algorithm;
  for (const TreeItem& item : *items) {
    const std::string_view relative = std::string_view(item.path).substr(folder.size() + 1);
    if (item.is_directory || outside_digest(relative)) {
      continue;
    }
    auto hash = blob_hash(repo, commit, item, expected.algorithm, stop);
    if (stop.stop_requested()) {
      return false;
    }
    if (!hash) {
      integrity.digest_detail = fmt::format("\"{}\" cannot be read: {}", relative,
                                            hash.error().message);
      return true;
    }
    actual.files.emplace(relative, std::move(*hash));
  }
  const auto violations = metadata::validate(expected, actual);
  integrity.digest_matches = violations.empty();
  if (!violations.empty()) {
    integrity.digest_detail = first_violations(violations);
  }
  return true;
}

// The bytes of a small file of the variant, or why they cannot be had.
HubExpected<FileContent> small_file(const std::shared_ptr<git_repository>& repo,
                                    const std::string& commit, const std::string& path) {
  auto header = read_file(repo, commit, path, Content::header);
  if (!header) {
    return tl::unexpected(header.error());
  }
  const std::string name = path.substr(path.rfind('/') + 1);
  if (header->size > k_max_metadata) {
    return hub_fail(413, "", fmt::format("{} is too large to check", name));
  }
  if (header->lfs) {
    return hub_fail(415, "", fmt::format("{} is stored through LFS, not in git", name));
  }
  return read_file(repo, commit, path, Content::bytes);
}

void check_signature(const std::shared_ptr<git_repository>& repo, const std::string& commit,
                     const std::string& folder, std::span<const verify::TrustedKey> keys,
                     const HubExpected<FileContent>& metadata_file, VariantIntegrity& integrity) {
  integrity.signature_valid.reset();
  integrity.signature_detail.clear();
  auto bundle = small_file(repo, commit, folder + "/metadata.json.sigstore");
  if (!bundle && bundle.error().status == 404) {
    integrity.signed_ = false;
    return;
  }
  integrity.signed_ = true;
  integrity.signature_valid = false;
  if (!bundle) {
    integrity.signature_detail = bundle.error().message;
    return;
  }
  if (!metadata_file) {
    integrity.signature_detail = metadata_file.error().status == 404
                                     ? "no metadata.json"
                                     : metadata_file.error().message;
    return;
  }
  const auto check = verify::verify_metadata_signature(
      std::string_view(bundle->data, bundle->size),
      std::string_view(metadata_file->data, metadata_file->size), verify::default_policies(),
      verify::production_trusted_root(), keys);
  integrity.signature_valid = check.passed();
  if (check.passed()) {
    integrity.signature_detail = check.key_hint.empty() ? "Sigstore, kernels-community workflow"
                                                        : "key " + check.key_hint;
  } else {
    integrity.signature_detail = fmt::format("{}: {}", verify::kind_name(check.status),
                                             check.reason);
  }
}

}  // namespace

std::vector<verify::TrustedKey> parse_published_keys(std::span<const PublishedKey> keys) {
  std::vector<verify::TrustedKey> parsed;
  for (const PublishedKey& published : keys) {
    // Each key parsed when the settings were read; one that no longer does is not trusted.
    if (auto some = verify::parse_trusted_keys(published.pem, published.source)) {
      parsed.insert(parsed.end(), std::make_move_iterator(some->begin()),
                    std::make_move_iterator(some->end()));
    }
  }
  return parsed;
}

std::vector<std::string> key_hints(std::span<const PublishedKey> keys) {
  std::vector<std::string> hints;
  for (const PublishedKey& key : keys) {
    hints.push_back(key.hint);
  }
  std::sort(hints.begin(), hints.end());
  hints.erase(std::unique(hints.begin(), hints.end()), hints.end());
  return hints;
}

std::optional<VariantIntegrity> check_variant_integrity(const std::shared_ptr<git_repository>& repo,
                                                        const std::string& commit,
                                                        const std::string& folder,
                                                        std::span<const verify::TrustedKey> keys,
                                                        std::stop_token stop) {
  VariantIntegrity integrity;
  const auto metadata_file = small_file(repo, commit, folder + "/metadata.json");
  if (!metadata_file) {
    integrity.digest_detail = metadata_file.error().status == 404 ? "no metadata.json"
                                                                  : metadata_file.error().message;
  } else if (auto parsed = metadata::parse_metadata(
                 std::string_view(metadata_file->data, metadata_file->size));
             !parsed) {
    integrity.digest_detail = "metadata.json does not parse: " + parsed.error().message;
  } else if (parsed->digest &&
             !check_digest(repo, commit, folder, *parsed->digest, integrity, stop)) {
    return std::nullopt;
  }
  check_signature(repo, commit, folder, keys, metadata_file, integrity);
  return integrity;
}

void check_variant_signature(const std::shared_ptr<git_repository>& repo,
                             const std::string& commit, const std::string& folder,
                             std::span<const verify::TrustedKey> keys,
                             VariantIntegrity& integrity) {
  check_signature(repo, commit, folder, keys, small_file(repo, commit, folder + "/metadata.json"),
                  integrity);
}

}  // namespace kernelhub::server
