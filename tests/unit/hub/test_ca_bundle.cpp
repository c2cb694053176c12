// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/hub/ca_bundle.hpp>

#include <map>
#include <set>

#include <gtest/gtest.h>

namespace kernelhub::hub {
namespace {

CaBundleInputs inputs(std::map<std::string, std::string> env, bool library_default,
                      std::set<std::string> files) {
  CaBundleInputs in;
  in.env = [env = std::move(env)](std::string_view name) -> std::optional<std::string> {
    auto it = env.find(std::string(name));
    return it == env.end() ? std::nullopt : std::optional(it->second);
  };
  in.library_has_default = library_default;
  in.exists = [files = std::move(files)](const std::string& path) { return files.contains(path); };
  return in;
}

TEST(CaBundle, EnvironmentWinsInOrder) {
  EXPECT_EQ(choose_ca_bundle(inputs({{"CURL_CA_BUNDLE", "/a.pem"}, {"SSL_CERT_FILE", "/b.pem"}},
                                    true, {})),
            "/a.pem");
  EXPECT_EQ(choose_ca_bundle(inputs({{"SSL_CERT_FILE", "/b.pem"}}, true, {})), "/b.pem");
  // An empty value is unset, as for curl's own tool.
  EXPECT_EQ(choose_ca_bundle(inputs({{"CURL_CA_BUNDLE", ""}, {"SSL_CERT_FILE", "/b.pem"}}, true, {})),
            "/b.pem");
}

TEST(CaBundle, LibraryDefaultIsKept) {
  EXPECT_EQ(choose_ca_bundle(inputs({}, true, {"/etc/pki/tls/certs/ca-bundle.crt"})), std::nullopt);
}

TEST(CaBundle, FirstDistributionBundleThatExists) {
  EXPECT_EQ(choose_ca_bundle(inputs({}, false, {"/etc/pki/tls/certs/ca-bundle.crt", "/etc/ssl/cert.pem"})),
            "/etc/pki/tls/certs/ca-bundle.crt");
  EXPECT_EQ(choose_ca_bundle(inputs({}, false, {"/etc/ssl/cert.pem"})), "/etc/ssl/cert.pem");
  EXPECT_EQ(choose_ca_bundle(inputs({}, false, {})), std::nullopt);
}

}  // namespace
}  // namespace kernelhub::hub
