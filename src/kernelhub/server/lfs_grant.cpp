// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/lfs_grant.hpp>

#include <array>
#include <charconv>
#include <chrono>

#include <fmt/format.h>
#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>

namespace kernelhub::server {

namespace {

constexpr std::size_t k_key_bytes = 32;

std::string_view action_name(LfsGrant::Action action) {
  switch (action) {
    case LfsGrant::Action::upload:
      return "upload";
    case LfsGrant::Action::upload_part:
      return "part";
    case LfsGrant::Action::complete:
      return "complete";
    case LfsGrant::Action::verify:
      return "verify";
    case LfsGrant::Action::download:
      return "download";
  }
  return "";
}

// Every field, in one order, each on its own line: no value can run into the next.
std::string grant_message(const LfsGrant& grant) {
  return fmt::format("kernelhub-lfs-v1\n{}\n{}\n{}\n{}\n{}\n{}\n{}\n{}",
                     action_name(grant.action), grant.repo, grant.oid, grant.size,
                     grant.chunk_size, grant.part, grant.expires, grant.commit);
}

template <typename Number>
std::optional<Number> number_param(const RequestTarget& target, std::string_view name) {
  const auto text = target.param(name);
  if (!text) {
    return Number{0};
  }
  Number value{};
  const auto [end, error] = std::from_chars(text->data(), text->data() + text->size(), value);
  if (text->empty() || error != std::errc() || end != text->data() + text->size()) {
    return std::nullopt;
  }
  return value;
}

}  // namespace

UrlSigner::UrlSigner() : m_key(k_key_bytes, '\0') {
  if (RAND_bytes(reinterpret_cast<unsigned char*>(m_key.data()), static_cast<int>(m_key.size())) !=
      1) {
    // Without randomness no URL can be trusted: refuse every one rather than sign with a
    // guessable key.
    m_key.clear();
  }
}

UrlSigner::UrlSigner(std::string key) : m_key(std::move(key)) {}

std::string UrlSigner::sign(std::string_view message) const {
  if (m_key.empty()) {
    return {};
  }
  std::array<unsigned char, EVP_MAX_MD_SIZE> mac{};
  unsigned int length = 0;
  HMAC(EVP_sha256(), m_key.data(), static_cast<int>(m_key.size()),
       reinterpret_cast<const unsigned char*>(message.data()), message.size(), mac.data(),
       &length);
  std::string hex;
  for (unsigned int i = 0; i < length; ++i) {
    hex += fmt::format("{:02x}", mac[i]);
  }
  return hex;
}

bool UrlSigner::verify(std::string_view message, std::string_view signature) const {
  const std::string expected = sign(message);
  return !expected.empty() && signature.size() == expected.size() &&
         CRYPTO_memcmp(expected.data(), signature.data(), expected.size()) == 0;
}

std::string grant_query(const UrlSigner& signer, const LfsGrant& grant) {
  std::string query = fmt::format("size={}", grant.size);
  if (grant.chunk_size != 0) {
    query += fmt::format("&chunk={}", grant.chunk_size);
  }
  if (!grant.commit.empty()) {
    query += fmt::format("&commit={}", grant.commit);
  }
  query += fmt::format("&expires={}&signature={}", grant.expires, signer.sign(grant_message(grant)));
  return query;
}

HubExpected<LfsGrant> check_grant(const UrlSigner& signer, LfsGrant::Action action,
                                  const std::string& repo, const std::string& oid,
                                  std::uint64_t part, const RequestTarget& target,
                                  std::int64_t now) {
  const auto size = number_param<std::uint64_t>(target, "size");
  const auto chunk = number_param<std::uint64_t>(target, "chunk");
  const auto expires = number_param<std::int64_t>(target, "expires");
  const auto signature = target.param("signature");
  if (!size || !chunk || !expires || !signature) {
    return hub_fail(403, "", "this URL is not signed by this server: ask the LFS batch API "
                             "for a new one");
  }
  const std::string commit(target.param("commit").value_or(""));
  // Hex only: it goes into a header as it is.
  if (commit.find_first_not_of("0123456789abcdef") != std::string::npos) {
    return hub_fail(403, "", "this URL's commit is malformed");
  }
  const LfsGrant grant{action, repo, oid, *size, *chunk, part, *expires, commit};
  if (!signer.verify(grant_message(grant), *signature)) {
    return hub_fail(403, "", "this URL's signature does not match: ask the LFS batch API for "
                             "a new one");
  }
  if (now > grant.expires) {
    return hub_fail(403, "", "this URL has expired: ask the LFS batch API for a new one");
  }
  return grant;
}

std::int64_t unix_now() {
  return std::chrono::duration_cast<std::chrono::seconds>(
             std::chrono::system_clock::now().time_since_epoch())
      .count();
}

}  // namespace kernelhub::server
