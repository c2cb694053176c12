// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/metadata/digest.hpp>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstring>
#include <fstream>
#include <memory>
#include <system_error>

#include <fmt/format.h>
#include <openssl/evp.h>
#include <sys/stat.h>

#include <kernelhub/util/file_io.hpp>

namespace kernelhub::metadata {

namespace fs = std::filesystem;

namespace {

// The reference prints algorithms with Rust's Debug formatting in violations.
std::string_view debug_name(DigestAlgorithm algorithm) {
  return algorithm == DigestAlgorithm::sha256 ? "SHA256" : "SHA512";
}

std::string base64(const unsigned char* data, std::size_t size) {
  std::string out(4 * ((size + 2) / 3), '\0');
  const int written = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(out.data()), data,
                                      static_cast<int>(size));
  out.resize(static_cast<std::size_t>(written));
  return out;
}

// The reference looks at the components of the whole walked path, the root's included.
bool is_bytecode(const fs::path& path) {
  for (const auto& component : path) {
    if (component == "__pycache__") {
      return true;
    }
  }
  return path.extension() == ".pyc";
}

bool is_signed_metadata(const fs::path& relative) {
  const auto first = relative.begin();
  const bool top_level = first != relative.end() && std::next(first) == relative.end();
  return top_level && (relative == "metadata.json" || relative == "metadata.json.sigstore");
}

bool is_link(const fs::path& path) {
  std::error_code error;
  return fs::is_symlink(fs::symlink_status(path, error));
}

// Adds `path` to `files` if it resolves to a regular file that is not excluded. Folders are
// walked, not hashed; any other kind of file (a FIFO, a device, a socket) is an error naming
// it: leaving it out would give a digest that silently does not cover it, and reading it could
// block for ever or never end. Excluded bytecode and links to folders go to `uncovered`.
util::Expected<void> add_entry(VariantFiles& files, const fs::path& path, const fs::path& relative,
                               const FileHasher& hasher) {
  // stat(2) follows links itself: one call where resolving the path first costs a readlink
  // per component, which the digest check of every load would pay for every file.
  struct stat info {};
  if (::stat(path.c_str(), &info) != 0) {
    const int saved = errno;
    return util::fail(fmt::format("cannot resolve \"{}\": {}", path.string(),
                                  std::strerror(saved)));
  }
  auto key = relative.generic_string();
  if (key == ".") {
    key.clear();
  }
  if (S_ISDIR(info.st_mode)) {
    if (is_link(path) && !key.empty()) {
      files.uncovered.push_back(key + "/");
    }
    return {};
  }
  if (is_bytecode(path)) {
    files.uncovered.push_back(key);
    return {};
  }
  if (is_signed_metadata(relative)) {
    return {};
  }
  if (!S_ISREG(info.st_mode)) {
    return util::fail(fmt::format("cannot hash \"{}\": it is {}, not a regular file or folder",
                                  path.string(), util::describe_file_type(info.st_mode)));
  }
  Digest& digest = files.digest;
  digest.files[key] = KH_TRY(hasher ? hasher(digest.algorithm, path)
                                    : hash_file(digest.algorithm, path));
  return {};
}

}  // namespace

std::string_view to_string(DigestAlgorithm algorithm) {
  return algorithm == DigestAlgorithm::sha256 ? "sha256" : "sha512";
}

std::optional<DigestAlgorithm> digest_algorithm_from_name(std::string_view name) {
  if (name == "sha256") {
    return DigestAlgorithm::sha256;
  }
  if (name == "sha512") {
    return DigestAlgorithm::sha512;
  }
  return std::nullopt;
}

util::Expected<std::string> hash_file(DigestAlgorithm algorithm, const fs::path& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return util::fail(fmt::format("cannot read \"{}\" for hashing", path.string()));
  }
  const std::unique_ptr<EVP_MD_CTX, decltype(&EVP_MD_CTX_free)> context(EVP_MD_CTX_new(),
                                                                        &EVP_MD_CTX_free);
  const EVP_MD* md = algorithm == DigestAlgorithm::sha256 ? EVP_sha256() : EVP_sha512();
  if (!context || EVP_DigestInit_ex(context.get(), md, nullptr) != 1) {
    return util::fail("cannot initialise the OpenSSL digest");
  }
  std::array<char, 1 << 16> buffer{};
  while (in) {
    in.read(buffer.data(), buffer.size());
    if (in.gcount() > 0) {
      EVP_DigestUpdate(context.get(), buffer.data(), static_cast<std::size_t>(in.gcount()));
    }
  }
  if (in.bad()) {
    return util::fail(fmt::format("cannot read \"{}\" for hashing", path.string()));
  }
  std::array<unsigned char, EVP_MAX_MD_SIZE> hash{};
  unsigned int size = 0;
  EVP_DigestFinal_ex(context.get(), hash.data(), &size);
  return base64(hash.data(), size);
}

StreamHasher::StreamHasher(DigestAlgorithm algorithm)
    : m_context(EVP_MD_CTX_new(), [](void* context) {
        EVP_MD_CTX_free(static_cast<EVP_MD_CTX*>(context));
      }) {
  EVP_DigestInit_ex(static_cast<EVP_MD_CTX*>(m_context.get()),
                    algorithm == DigestAlgorithm::sha256 ? EVP_sha256() : EVP_sha512(), nullptr);
}

void StreamHasher::update(std::string_view bytes) {
  EVP_DigestUpdate(static_cast<EVP_MD_CTX*>(m_context.get()), bytes.data(), bytes.size());
}

std::string StreamHasher::finish() {
  std::array<unsigned char, EVP_MAX_MD_SIZE> hash{};
  unsigned int size = 0;
  EVP_DigestFinal_ex(static_cast<EVP_MD_CTX*>(m_context.get()), hash.data(), &size);
  return base64(hash.data(), size);
}

util::Expected<Digest> hash_variant(DigestAlgorithm algorithm, const fs::path& variant_dir) {
  return KH_TRY(hash_variant_files(algorithm, variant_dir)).digest;
}

util::Expected<VariantFiles> hash_variant_files(DigestAlgorithm algorithm,
                                                const fs::path& variant_dir,
                                                const FileHasher& hasher) {
  VariantFiles files;
  files.digest.algorithm = algorithm;
  std::error_code error;
  if (!fs::exists(variant_dir, error)) {
    return util::fail(fmt::format("cannot hash \"{}\": no such directory", variant_dir.string()));
  }
  // The walk's root is an entry too: a file given as the variant is hashed under "".
  if (!fs::is_directory(variant_dir, error)) {
    if (auto added = add_entry(files, variant_dir, ".", hasher); !added) {
      return tl::unexpected(added.error());
    }
    return files;
  }
  fs::recursive_directory_iterator it(variant_dir, error);
  for (; !error && it != fs::recursive_directory_iterator(); it.increment(error)) {
    if (auto added =
            add_entry(files, it->path(), it->path().lexically_relative(variant_dir), hasher);
        !added) {
      return tl::unexpected(added.error());
    }
  }
  if (error) {
    return util::fail(fmt::format("cannot walk \"{}\" for hashing: {}", variant_dir.string(),
                                  error.message()));
  }
  std::sort(files.uncovered.begin(), files.uncovered.end());
  return files;
}

std::string DigestViolation::to_string() const {
  switch (kind) {
    case Kind::algorithm_mismatch:
      return fmt::format("Algorithm mismatch: expected: {}, got: {}", expected, got);
    case Kind::missing_file:
      return fmt::format("Missing file: {}", path);
    case Kind::hash_mismatch:
      return fmt::format("File hash mismatch for {}: expected: {}, got: {}", path, expected, got);
    case Kind::unknown_file:
      return fmt::format("Unknown file: {}", path);
  }
  return {};
}

std::vector<DigestViolation> validate(const Digest& reference, const Digest& actual) {
  using Kind = DigestViolation::Kind;
  std::vector<DigestViolation> violations;
  if (reference.algorithm != actual.algorithm) {
    violations.push_back({Kind::algorithm_mismatch, "", std::string(debug_name(reference.algorithm)),
                          std::string(debug_name(actual.algorithm))});
  }
  for (const auto& [path, expected] : reference.files) {
    const auto found = actual.files.find(path);
    if (found == actual.files.end()) {
      violations.push_back({Kind::missing_file, path, "", ""});
    } else if (found->second != expected) {
      violations.push_back({Kind::hash_mismatch, path, expected, found->second});
    }
  }
  for (const auto& [path, got] : actual.files) {
    if (!reference.files.contains(path)) {
      violations.push_back({Kind::unknown_file, path, "", ""});
    }
  }
  return violations;
}

std::string describe(const std::vector<DigestViolation>& violations) {
  std::string out = "kernel does not match the expected digest:";
  for (const auto& violation : violations) {
    out += "\n" + violation.to_string();
  }
  return out;
}

}  // namespace kernelhub::metadata
