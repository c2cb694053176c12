// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <functional>
#include <optional>
#include <string>

#include <kernelhub/hub/endpoint.hpp>

namespace kernelhub::hub {

// Where TLS peers' certificates are checked from when libcurl has no bundle compiled in (the
// wheel's static curl: the path differs between distributions, docs/wheels.md).
struct CaBundleInputs {
  EnvLookup env;                                   // CURL_CA_BUNDLE, SSL_CERT_FILE
  bool library_has_default = false;                // libcurl was built with a CA path
  std::function<bool(const std::string&)> exists;  // a readable file
};

// CURL_CA_BUNDLE, then SSL_CERT_FILE, when set; else nothing when the library has its own
// default; else the first of the distributions' usual bundles that exists; else nothing
// (libcurl then fails TLS with its own message).
std::optional<std::string> choose_ca_bundle(const CaBundleInputs& inputs);

// choose_ca_bundle() for this process and its libcurl, computed once.
const std::optional<std::string>& ca_bundle();

}  // namespace kernelhub::hub
