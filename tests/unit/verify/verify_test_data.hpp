// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <filesystem>
#include <string>

#include <kernelhub/util/file_io.hpp>
#include <kernelhub/verify/identity_policy.hpp>

#include "../source_dir.hpp"

// Shared by the verify layer's tests: the vendored sigstore-conformance cases
// (tests/data/sigstore-conformance, README there), ours, and the identity that signed them.
namespace kernelhub::verify::test {

inline std::filesystem::path conformance_dir() {
  return kernelhub::unit_tests::source_dir() / "tests/data/sigstore-conformance/bundle-verify";
}

inline std::string source_file(const std::filesystem::path& path) {
  auto text = util::read_file(path);
  if (!text) {
    throw std::runtime_error(text.error().message);
  }
  return *text;
}

inline std::string conformance_file(const std::string& relative) {
  return source_file(conformance_dir() / relative);
}

// Our own cases in the conformance layout (tests/data/sigstore-kernelhub, README there).
inline std::filesystem::path kernelhub_cases_dir() {
  return kernelhub::unit_tests::source_dir() / "tests/data/sigstore-kernelhub/bundle-verify";
}

// The production trusted root as a JSON document, to change one field of.
inline std::string production_root_json() {
  return source_file(kernelhub::unit_tests::source_dir() / "data/sigstore/trusted_root.json");
}

// The conformance suite's default signer: a GitHub Actions workflow of its beacon repository.
inline GitHubWorkflowPolicy conformance_policy() {
  return {"sigstore-conformance/extremely-dangerous-public-oidc-beacon",
          {"https://github.com/sigstore-conformance/extremely-dangerous-public-oidc-beacon/"
           ".github/workflows/extremely-dangerous-oidc-beacon.yml@refs/heads/main"}};
}

}  // namespace kernelhub::verify::test
