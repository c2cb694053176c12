// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/server_settings.hpp>

#include <filesystem>
#include <fstream>
#include <set>
#include <string>

#include <gtest/gtest.h>

#include <kernelhub/verify/signing_key.hpp>

namespace kernelhub::server {

TEST(ServerSettings, ReadsOrganizationsFromConfigToml) {
  const auto root = std::filesystem::current_path();
  std::ofstream(root / "config.toml") << "[organizations.acme]\ntrustedKernelPublisher = true\n";
  const auto config = read_config_file(root);
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_TRUE(config->organizations.at("acme").trusted_kernel_publisher);
  EXPECT_TRUE(config->trusted_keys.empty());
}

TEST(ServerSettings, StorageSetsTheLfsRuleAndRefusesBadValuesWithTheirLocation) {
  const auto root = std::filesystem::current_path();
  {
    const auto defaults = read_config_file(root);
    ASSERT_TRUE(defaults);
    EXPECT_EQ(defaults->storage.lfs_threshold, std::uint64_t{10} << 20);
    EXPECT_EQ(defaults->storage.binary_lfs_threshold, 0u);
  }
  std::ofstream(root / "config.toml")
      << "[storage]\nlfs-threshold = 1000\nbinary-lfs-threshold = 10\nmultipart-chunk-size = 99\n";
  auto config = read_config_file(root);
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->storage.lfs_threshold, 1000u);
  EXPECT_EQ(config->storage.binary_lfs_threshold, 10u);
  EXPECT_EQ(config->storage.multipart_chunk_size, 99u);
  std::ofstream(root / "config.toml") << "[storage]\nlfs-threshold = false\n";
  config = read_config_file(root);
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_FALSE(config->storage.lfs_threshold);
  for (const char* bad : {"lfs-threshold = -1", "lfs-threshold = true", "multipart-chunk-size = 0",
                          "lfs-treshold = 5", "binary-lfs-threshold = \"1MB\""}) {
    std::ofstream(root / "config.toml") << "[storage]\n" << bad << "\n";
    const auto refused = read_config_file(root);
    ASSERT_FALSE(refused) << bad;
    EXPECT_NE(refused.error().message.find("config.toml:2:"), std::string::npos)
        << refused.error().message;
  }
}

TEST(ServerSettings, HttpSetsTheBranchMaxAgeAndRefusesBadValuesWithTheirLocation) {
  const auto root = std::filesystem::current_path();
  {
    const auto defaults = read_config_file(root);
    ASSERT_TRUE(defaults);
    EXPECT_EQ(defaults->http.branch_max_age, std::chrono::seconds(5));
  }
  std::ofstream(root / "config.toml") << "[http]\nbranch-max-age = 0\n";
  auto config = read_config_file(root);
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->http.branch_max_age, std::chrono::seconds(0));
  ServerSettings base;
  base.root = root;
  const auto reread = reread_settings(base);
  ASSERT_TRUE(reread) << reread.error().message;
  EXPECT_EQ(reread->http.branch_max_age, std::chrono::seconds(0));
  for (const char* bad : {"branch-max-age = -1", "branch-max-age = 86401",
                          "branch-max-age = \"5s\"", "branch-max-age = 1.5", "max-age = 5"}) {
    std::ofstream(root / "config.toml") << "[http]\n" << bad << "\n";
    const auto refused = read_config_file(root);
    ASSERT_FALSE(refused) << bad;
    EXPECT_NE(refused.error().message.find("config.toml:2:"), std::string::npos)
        << refused.error().message;
  }
  std::ofstream(root / "config.toml") << "http = 5\n";
  EXPECT_FALSE(read_config_file(root));
}

TEST(ServerSettings, AnOverDeepDottedKeyIsRefusedWithItsLocation) {
  // Issue 12 item 12: one dotted key of 50,000 parts crashed `kernelhub serve` in toml++.
  const auto root = std::filesystem::current_path();
  std::string key = "k";
  for (int i = 1; i < 50000; ++i) {
    key += ".k";
  }
  std::ofstream(root / "config.toml") << "[organizations.acme]\n" << key << " = 1\n";
  const auto config = read_config_file(root);
  ASSERT_FALSE(config);
  EXPECT_NE(config.error().message.find("config.toml:2:"), std::string::npos)
      << config.error().message;
}

TEST(ServerSettings, TrustedKeysComeFromFilesAndInlinePem) {
  const auto root = std::filesystem::current_path();
  const auto file_key = *verify::generate_signing_key(verify::KeyAlgorithm::ecdsa_p256);
  const auto inline_key = *verify::generate_signing_key(verify::KeyAlgorithm::ed25519);
  std::filesystem::create_directories(root / "keys");
  std::ofstream(root / "keys" / "team.pub") << file_key.public_pem();
  std::ofstream(root / "config.toml") << "[signing]\ntrusted-keys = [\"keys/team.pub\", '''\n"
                                      << inline_key.public_pem() << "''']\n";
  const auto config = read_config_file(root);
  ASSERT_TRUE(config) << config.error().message;
  ASSERT_EQ(config->trusted_keys.size(), 2u);
  EXPECT_EQ(config->trusted_keys[0].hint, file_key.hint());
  EXPECT_EQ(config->trusted_keys[0].algorithm, "ECDSA P-256");
  EXPECT_EQ(config->trusted_keys[0].source, "keys/team.pub");
  EXPECT_EQ(config->trusted_keys[1].hint, inline_key.hint());
  EXPECT_EQ(config->trusted_keys[1].algorithm, "Ed25519");
}

TEST(ServerSettings, AKeyThatDoesNotLoadFailsTheConfigWithItsLocation) {
  const auto root = std::filesystem::current_path();
  std::ofstream(root / "config.toml") << "[signing]\ntrusted-keys = [\"keys/missing.pub\"]\n";
  const auto missing = read_config_file(root);
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("config.toml:2:"), std::string::npos)
      << missing.error().message;
  EXPECT_NE(missing.error().message.find("missing.pub"), std::string::npos);

  std::ofstream(root / "config.toml") << "[signing]\ntrusted-keys = \"keys/team.pub\"\n";
  EXPECT_FALSE(read_config_file(root));
}

// Issue 20 item 4: emptying or deleting the token file is how an operator revokes every token.
TEST(ServerSettings, AnEmptyCommentOnlyOrMissingTokenFileHoldsNoToken) {
  const auto file = std::filesystem::current_path() / "tokens";
  EXPECT_EQ(read_token_file(file).value(), std::set<std::string>{});  // missing
  std::ofstream(file) << "";
  EXPECT_EQ(read_token_file(file).value(), std::set<std::string>{});
  std::ofstream(file) << "# revoked: all of them\n\n   \n";
  EXPECT_EQ(read_token_file(file).value(), std::set<std::string>{});
  std::ofstream(file) << "# the team\n  kh-one \r\nkh-two\n";
  EXPECT_EQ(read_token_file(file).value(), (std::set<std::string>{"kh-one", "kh-two"}));
}

TEST(ServerSettings, ATokenFileThatIsNoListOfTokensIsAnErrorWithItsLine) {
  const auto file = std::filesystem::current_path() / "tokens";
  std::ofstream(file) << "kh-one\nkh-two kh-three\n";
  const auto spaced = read_token_file(file);
  ASSERT_FALSE(spaced);
  EXPECT_EQ(spaced.error().message,
            file.string() + ":2: a token is printable ASCII without blanks; this line has byte "
                            "0x20 at column 7");
  std::ofstream(file) << std::string("kh-\0one\n", 8);
  EXPECT_FALSE(read_token_file(file));
  // A folder where the file should be cannot be read: an error, not "no token".
  std::filesystem::remove(file);
  std::filesystem::create_directory(file);
  EXPECT_FALSE(read_token_file(file));
}

TEST(ServerSettings, MirrorReadsTheUpstreamItsTokenAndRefreshAndLocatesBadValues) {
  const auto root = std::filesystem::current_path();
  {
    const auto defaults = read_config_file(root);
    ASSERT_TRUE(defaults);
    EXPECT_FALSE(defaults->mirror.enabled());
  }
  std::ofstream(root / "upstream.token") << "# the mirror's token upstream\nhf_abc\n";
  std::ofstream(root / "config.toml") << "[mirror]\nupstream = \"https://huggingface.co/\"\n"
                                         "token-file = \"upstream.token\"\nrefresh = 60\n";
  auto config = read_config_file(root);
  ASSERT_TRUE(config) << config.error().message;
  EXPECT_EQ(config->mirror.upstream, "https://huggingface.co");
  EXPECT_EQ(config->mirror.token, "hf_abc");
  EXPECT_EQ(config->mirror.refresh, std::chrono::seconds(60));
  for (const char* bad : {"upstream = \"ftp://host\"", "upstream = \"http://\"", "refresh = -1",
                          "refresh = \"1m\"", "upstream = 5", "token-file = \"missing\"",
                          "upstrem = \"http://h\""}) {
    std::ofstream(root / "config.toml") << "[mirror]\n" << bad << "\n";
    const auto refused = read_config_file(root);
    ASSERT_FALSE(refused) << bad;
    EXPECT_NE(refused.error().message.find("config.toml:"), std::string::npos)
        << refused.error().message;
  }
  // Two tokens: which one would be sent is not for the mirror to guess.
  std::ofstream(root / "upstream.token") << "one\ntwo\n";
  std::ofstream(root / "config.toml") << "[mirror]\ntoken-file = \"upstream.token\"\n";
  const auto two = read_config_file(root);
  ASSERT_FALSE(two);
  EXPECT_NE(two.error().message.find("one token, not 2"), std::string::npos) << two.error().message;
}

}  // namespace kernelhub::server