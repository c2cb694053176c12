// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>

#include <kernelhub/util/expected.hpp>

namespace kernelhub::types {

// A git remote URL with one of the schemes git understands over a network
// (https, http, git, ssh, git+ssh, git+https, git+http), or scp-like `user@host:path`, which is
// normalised to `ssh://user@host/path`. The original spelling is kept for writing back.
class GitUrl {
 public:
  static util::Expected<GitUrl> parse(std::string_view text);

  const std::string& original() const { return m_original; }
  const std::string& normalized() const { return m_normalized; }
  const std::string& scheme() const { return m_scheme; }

  friend bool operator==(const GitUrl&, const GitUrl&) = default;

 private:
  std::string m_original;
  std::string m_normalized;
  std::string m_scheme;
};

}  // namespace kernelhub::types
