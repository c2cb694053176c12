// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <string>
#include <string_view>

#include <kernelhub/util/expected.hpp>

namespace kernelhub::types {

// A git remote URL, validated as the reference's kernels-data `GitUrl` does:
// 1. if the text parses as a WHATWG URL (types/url.hpp), its scheme must be one of https,
//    http, git, ssh, git+ssh, git+https, git+http;
// 2. otherwise scp-like `[user@]host:path` (path not starting with `/`) is read as
//    `ssh://host/path`.
// The original spelling is what gets written back; `normalized()` is the parsed URL's
// serialisation, which the reference's Python bindings expose as `Metadata.upstream`.
class GitUrl {
 public:
  // Errors: "unsupported scheme \"ftp\" in git URL \"ftp://h/x\", expected one of: ...",
  // "invalid git URL \"x\"".
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
