// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <string>

#include <kernelhub/util/file_io.hpp>
#include <kernelhub/verify/identity_policy.hpp>

// Shared by the verify layer's tests: the vendored sigstore-conformance cases
// (tests/data/sigstore-conformance, README there) and the identity that signed them.
namespace kernelhub::verify::test {

inline std::filesystem::path conformance_dir() {
  return std::filesystem::path(KERNELHUB_SOURCE_DIR) / "tests/data/sigstore-conformance/bundle-verify";
}

inline std::string conformance_file(const std::string& relative) {
  auto text = util::read_file(conformance_dir() / relative);
  if (!text) {
    throw std::runtime_error(text.error().message);
  }
  return *text;
}

// The conformance suite's default signer: a GitHub Actions workflow of its beacon repository.
inline GitHubWorkflowPolicy conformance_policy() {
  return {"sigstore-conformance/extremely-dangerous-public-oidc-beacon",
          {"https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/"
           ".github/workflows/extremely-dangerous-oidc-beacon.yml@refs/heads/main"}};
}

}  // namespace kernelhub::verify::test
