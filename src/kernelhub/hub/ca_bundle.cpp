// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/hub/ca_bundle.hpp>

#include <array>

#include <unistd.h>

#include <curl/curl.h>

namespace kernelhub::hub {

namespace {

// Debian, Ubuntu, Arch, Gentoo; Fedora and RHEL; the same through the ca-trust layout;
// openSUSE; Alpine.
constexpr std::array<const char*, 5> kDistributionBundles = {
    "/etc/ssl/certs/ca-certificates.crt",
    "/etc/pki/tls/certs/ca-bundle.crt",
    "/etc/pki/ca-trust/extracted/pem/tls-ca-bundle.pem",
    "/etc/ssl/ca-bundle.pem",
    "/etc/ssl/cert.pem",
};

}  // namespace

std::optional<std::string> choose_ca_bundle(const CaBundleInputs& inputs) {
  for (const char* variable : {"CURL_CA_BUNDLE", "SSL_CERT_FILE"}) {
    if (auto value = inputs.env(variable); value && !value->empty()) {
      return value;
    }
  }
  if (inputs.library_has_default) {
    return std::nullopt;
  }
  for (const char* path : kDistributionBundles) {
    if (inputs.exists(path)) {
      return std::string(path);
    }
  }
  return std::nullopt;
}

const std::optional<std::string>& ca_bundle() {
  static const std::optional<std::string> chosen = [] {
    const curl_version_info_data* info = curl_version_info(CURLVERSION_NOW);
    CaBundleInputs inputs;
    inputs.env = process_environment();
    inputs.library_has_default =
        info != nullptr && (info->cainfo != nullptr || info->capath != nullptr);
    inputs.exists = [](const std::string& path) { return ::access(path.c_str(), R_OK) == 0; };
    return choose_ca_bundle(inputs);
  }();
  return chosen;
}

}  // namespace kernelhub::hub
