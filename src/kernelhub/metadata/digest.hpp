// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <kernelhub/util/expected.hpp>

// The digest of a build variant (builder.md §9): a hash of every file, stored in metadata.json
// by `kernel-builder hash` and checked by the loader before trusting a signed variant.
namespace kernelhub::metadata {

enum class DigestAlgorithm { sha256, sha512 };

// "sha256" / "sha512", the spelling in metadata.json.
std::string_view to_string(DigestAlgorithm algorithm);
std::optional<DigestAlgorithm> digest_algorithm_from_name(std::string_view name);

struct Digest {
  DigestAlgorithm algorithm = DigestAlgorithm::sha256;
  // Variant-relative path with '/' separators -> standard base64 (padded) of the file's hash.
  // std::map orders keys bytewise, as the reference's BTreeMap<String, _> does.
  std::map<std::string, std::string> files;

  friend bool operator==(const Digest&, const Digest&) = default;
};

// Hashes every regular file under `variant_dir`, as the reference's `Digest::hash_variant`:
// directory symlinks are not entered, file symlinks are hashed through; skipped are the
// top-level metadata.json and metadata.json.sigstore (nested copies are hashed), any path with
// a `__pycache__` component and any `*.pyc`. A dangling symlink or an unreadable file fails.
util::Expected<Digest> hash_variant(DigestAlgorithm algorithm,
                                    const std::filesystem::path& variant_dir);

// One file's hash in `algorithm`, standard base64 (padded), as metadata.json spells it.
util::Expected<std::string> hash_file(DigestAlgorithm algorithm, const std::filesystem::path& file);

// A hash fed piece by piece (a blob streamed out of git), ending in hash_file's base64.
class StreamHasher {
 public:
  explicit StreamHasher(DigestAlgorithm algorithm);
  void update(std::string_view bytes);
  std::string finish();

 private:
  std::shared_ptr<void> m_context;  // the OpenSSL context, opaque here
};

// Where hash_variant_files gets a file's hash: by default `hash_file`; the loader answers from
// the stamps of the cache blobs it has checked (loader/blob_verify.hpp).
using FileHasher = std::function<util::Expected<std::string>(DigestAlgorithm algorithm,
                                                             const std::filesystem::path& file)>;

struct VariantFiles {
  Digest digest;
  // What is in the variant but outside the digest, sorted, '/'-separated: bytecode (any `*.pyc`
  // and everything under a `__pycache__` folder) and links to folders (hash_variant does not
  // enter them, so nothing behind them is covered; listed as "name/"). Anything run from there
  // would run unsigned code: kernelhub's loader never imports bytecode, and refuses a variant
  // with a link to a folder. The top-level metadata.json and metadata.json.sigstore are not
  // listed: a signature covers them.
  std::vector<std::string> uncovered;
};

// hash_variant's walk, with the hashes from `hasher` (empty: hash_file) and what it left out.
util::Expected<VariantFiles> hash_variant_files(DigestAlgorithm algorithm,
                                                const std::filesystem::path& variant_dir,
                                                const FileHasher& hasher = {});

struct DigestViolation {
  enum class Kind { algorithm_mismatch, missing_file, hash_mismatch, unknown_file };
  Kind kind = Kind::missing_file;
  std::string path;      // empty for algorithm_mismatch
  std::string expected;  // hash_mismatch: base64; algorithm_mismatch: "SHA256" / "SHA512"
  std::string got;

  // The reference's wording, e.g. "File hash mismatch for a.so: expected: x, got: y", so
  // users see the same lines from both implementations.
  std::string to_string() const;

  friend bool operator==(const DigestViolation&, const DigestViolation&) = default;
};

// Every way `actual` deviates from `reference`: the algorithm first, then missing and changed
// files in path order, then files only in `actual`. Empty when they match.
std::vector<DigestViolation> validate(const Digest& reference, const Digest& actual);

// "kernel does not match the expected digest:\n" and one line per violation.
std::string describe(const std::vector<DigestViolation>& violations);

}  // namespace kernelhub::metadata
