// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>

#include <kernelhub/util/expected.hpp>

namespace kernelhub::types {

// A full git object id: 40 (SHA-1) or 64 (SHA-256) hex digits, kept lowercase. Abbreviated
// ids are rejected, as by the reference's kernels-data `Oid`.
class GitOid {
 public:
  // Error: "invalid git object id \"x\": expected 40 or 64 hexadecimal digits".
  static util::Expected<GitOid> parse(std::string_view text);

  const std::string& str() const { return m_hex; }

  friend auto operator<=>(const GitOid&, const GitOid&) = default;

 private:
  explicit GitOid(std::string hex) : m_hex(std::move(hex)) {}
  std::string m_hex;
};

}  // namespace kernelhub::types
