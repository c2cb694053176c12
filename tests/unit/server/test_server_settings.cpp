// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/server_settings.hpp>

#include <filesystem>
#include <fstream>
#include <string>

#include <gtest/gtest.h>

namespace kernelhub::server {

TEST(ServerSettings, ReadsOrganizationsFromConfigToml) {
  const auto root = std::filesystem::current_path();
  std::ofstream(root / "config.toml") << "[organizations.acme]\ntrustedKernelPublisher = true\n";
  const auto organizations = read_organization_settings(root);
  ASSERT_TRUE(organizations) << organizations.error().message;
  EXPECT_TRUE(organizations->at("acme").trusted_kernel_publisher);
}

TEST(ServerSettings, AnOverDeepDottedKeyIsRefusedWithItsLocation) {
  // Issue 12 item 12: one dotted key of 50,000 parts crashed `kernelhub serve` in toml++.
  const auto root = std::filesystem::current_path();
  std::string key = "k";
  for (int i = 1; i < 50000; ++i) {
    key += ".k";
  }
  std::ofstream(root / "config.toml") << "[organizations.acme]\n" << key << " = 1\n";
  const auto organizations = read_organization_settings(root);
  ASSERT_FALSE(organizations);
  EXPECT_NE(organizations.error().message.find("config.toml:2:"), std::string::npos)
      << organizations.error().message;
}

}  // namespace kernelhub::server
