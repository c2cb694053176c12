// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/hub/content_hash.hpp>

#include <array>
#include <fstream>
#include <memory>

#include <fmt/format.h>
#include <openssl/evp.h>

namespace kernelhub::hub {

namespace {

struct DigestDeleter {
  void operator()(EVP_MD_CTX* ctx) const { EVP_MD_CTX_free(ctx); }
};

class Hasher {
public:
  explicit Hasher(const EVP_MD* md) : m_ctx(EVP_MD_CTX_new()) { EVP_DigestInit_ex(m_ctx.get(), md, nullptr); }
  void update(std::string_view bytes) { EVP_DigestUpdate(m_ctx.get(), bytes.data(), bytes.size()); }
  std::string hex() {
    std::array<unsigned char, EVP_MAX_MD_SIZE> digest{};
    unsigned int length = 0;
    EVP_DigestFinal_ex(m_ctx.get(), digest.data(), &length);
    std::string text;
    for (unsigned int i = 0; i < length; ++i) {
      text += fmt::format("{:02x}", digest[i]);
    }
    return text;
  }

private:
  std::unique_ptr<EVP_MD_CTX, DigestDeleter> m_ctx;
};

// Feeds a file to `hasher` in 1 MiB pieces.
util::Expected<void> hash_file(const std::filesystem::path& path, Hasher& hasher) {
  std::ifstream in(path, std::ios::binary);
  if (!in) {
    return util::fail(fmt::format("cannot read \"{}\"", path.string()));
  }
  std::string buffer(1 << 20, '\0');
  while (in) {
    in.read(buffer.data(), static_cast<std::streamsize>(buffer.size()));
    hasher.update(std::string_view(buffer.data(), static_cast<std::size_t>(in.gcount())));
  }
  if (in.bad()) {
    return util::fail(fmt::format("cannot read \"{}\"", path.string()));
  }
  return {};
}

std::string blob_header(std::uintmax_t size) {
  std::string header = fmt::format("blob {}", size);
  header.push_back('\0');
  return header;
}

}  // namespace

std::string git_blob_sha1(std::string_view content) {
  Hasher hasher(EVP_sha1());
  hasher.update(blob_header(content.size()));
  hasher.update(content);
  return hasher.hex();
}

std::string sha256_hex(std::string_view content) {
  Hasher hasher(EVP_sha256());
  hasher.update(content);
  return hasher.hex();
}

util::Expected<std::string> git_blob_sha1_of_file(const std::filesystem::path& path) {
  std::error_code ec;
  const auto size = std::filesystem::file_size(path, ec);
  if (ec) {
    return util::fail(fmt::format("cannot read \"{}\": {}", path.string(), ec.message()));
  }
  Hasher hasher(EVP_sha1());
  hasher.update(blob_header(size));
  if (auto read = hash_file(path, hasher); !read) {
    return tl::unexpected(read.error());
  }
  return hasher.hex();
}

util::Expected<std::string> sha256_of_file(const std::filesystem::path& path) {
  Hasher hasher(EVP_sha256());
  if (auto read = hash_file(path, hasher); !read) {
    return tl::unexpected(read.error());
  }
  return hasher.hex();
}

struct StreamingHash::Context {
  explicit Context(const EVP_MD* md) : hasher(md) {}
  Hasher hasher;
};

StreamingHash::StreamingHash(Kind kind, std::uint64_t size)
    : m_context(std::make_unique<Context>(kind == Kind::sha256 ? EVP_sha256() : EVP_sha1())) {
  if (kind == Kind::git_blob_sha1) {
    m_context->hasher.update(blob_header(size));
  }
}

StreamingHash::~StreamingHash() = default;
StreamingHash::StreamingHash(StreamingHash&&) noexcept = default;
StreamingHash& StreamingHash::operator=(StreamingHash&&) noexcept = default;

void StreamingHash::update(std::string_view bytes) { m_context->hasher.update(bytes); }

std::string StreamingHash::hex() { return m_context->hasher.hex(); }

std::optional<StreamingHash::Kind> StreamingHash::kind_of_etag(std::string_view etag) {
  const bool hex = etag.find_first_not_of("0123456789abcdef") == std::string_view::npos;
  if (hex && etag.size() == 40) {
    return Kind::git_blob_sha1;
  }
  if (hex && etag.size() == 64) {
    return Kind::sha256;
  }
  return std::nullopt;
}

std::string base64_encode(std::string_view bytes) {
  // EVP_EncodeBlock takes an int length: encode in pieces of a multiple of 3 bytes so files
  // over 2 GiB encode too and every piece joins without padding in between.
  constexpr std::size_t k_piece = 3 * (1 << 20);
  std::string out;
  out.reserve(4 * ((bytes.size() + 2) / 3));
  std::string buffer(4 * (k_piece / 3) + 1, '\0');
  for (std::size_t offset = 0; offset < bytes.size(); offset += k_piece) {
    const auto piece = bytes.substr(offset, k_piece);
    const int length = EVP_EncodeBlock(reinterpret_cast<unsigned char*>(buffer.data()),
                                       reinterpret_cast<const unsigned char*>(piece.data()),
                                       static_cast<int>(piece.size()));
    out.append(buffer.data(), static_cast<std::size_t>(length));
  }
  return out;
}

}  // namespace kernelhub::hub
