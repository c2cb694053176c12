// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/loader/trusted_keys.hpp>

#include <cstdlib>
#include <filesystem>
#include <memory>
#include <optional>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "../hub/fake_transport.hpp"
#include "loader_test_support.hpp"
#include <kernelhub/loader/signature_requirement.hpp>
#include <kernelhub/metadata/digest.hpp>
#include <kernelhub/metadata/metadata.hpp>
#include <kernelhub/metadata/metadata_reader.hpp>
#include <kernelhub/util/file_io.hpp>
#include <kernelhub/verify/crypto.hpp>
#include <kernelhub/verify/keyed_bundle.hpp>
#include <kernelhub/verify/signing_key.hpp>

using namespace kernelhub;
using namespace kernelhub::loader;
namespace fs = std::filesystem;
using hub::testing::FakeTransport;
using loader::testing::metadata_json;
using loader::testing::write;

namespace {

class ScopedKeysVariable {
 public:
  explicit ScopedKeysVariable(const char* value) {
    if (const char* old = std::getenv(k_name)) {
      m_old = old;
    }
    value == nullptr ? unsetenv(k_name) : setenv(k_name, value, 1);
  }
  ~ScopedKeysVariable() { m_old ? setenv(k_name, m_old->c_str(), 1) : unsetenv(k_name); }

 private:
  static constexpr const char* k_name = "KERNELHUB_TRUSTED_KEYS";
  std::optional<std::string> m_old;
};

verify::SigningKey new_key() { return *verify::generate_signing_key(verify::KeyAlgorithm::ecdsa_p256); }

std::string published(const std::vector<verify::SigningKey>& keys) {
  nlohmann::json list = nlohmann::json::array();
  for (const auto& key : keys) {
    list.push_back({{"hint", key.hint()}, {"algorithm", "ECDSA P-256"}, {"pem", key.public_pem()}});
  }
  return nlohmann::json{{"keys", list}}.dump();
}

HubKeySource hub_source(std::shared_ptr<FakeTransport> transport, bool offline = false) {
  HubKeySource source;
  source.endpoint.url = "http://127.0.0.1:1";
  source.endpoint.offline = offline;
  source.key_dir = fs::current_path() / "state" / "kernelhub" / "trusted-keys";
  source.transport = std::move(transport);
  return source;
}

}  // namespace

TEST(TrustedKeys, LocalKeysWinAndTheHubIsNotAsked) {
  ScopedKeysVariable unset(nullptr);
  const auto mine = new_key();
  write("keys/mine.pub", mine.public_pem());
  auto transport = std::make_shared<FakeTransport>();
  const auto keys = resolve_trusted_keys({{"keys/mine.pub"}, hub_source(transport)});
  ASSERT_TRUE(keys) << keys.error().message;
  ASSERT_EQ(keys->size(), 1u);
  EXPECT_EQ((*keys)[0].hint, mine.hint());
  EXPECT_TRUE(transport->requests().empty());

  const auto other = new_key();
  write("keys/other.pub", other.public_pem());
  ScopedKeysVariable both(":keys/mine.pub::keys/other.pub");
  const auto from_env = resolve_trusted_keys({{}, hub_source(transport)});
  ASSERT_TRUE(from_env) << from_env.error().message;
  ASSERT_EQ(from_env->size(), 2u);
  EXPECT_EQ((*from_env)[1].hint, other.hint());
  EXPECT_TRUE(transport->requests().empty());

  ScopedKeysVariable missing("keys/absent.pub");
  const auto error = resolve_trusted_keys({});
  ASSERT_FALSE(error);
  EXPECT_NE(error.error().message.find("KERNELHUB_TRUSTED_KEYS"), std::string::npos);
}

TEST(TrustedKeys, HubKeysAreFetchedCachedAndUsedOffline) {
  ScopedKeysVariable unset(nullptr);
  const auto team = new_key();
  auto transport = std::make_shared<FakeTransport>();
  transport->push(200, {{"Content-Type", "application/json"}}, published({team}));
  const auto online = resolve_trusted_keys({{}, hub_source(transport)});
  ASSERT_TRUE(online) << online.error().message;
  ASSERT_EQ(online->size(), 1u);
  EXPECT_EQ((*online)[0].hint, team.hint());
  ASSERT_EQ(transport->requests().size(), 1u);
  EXPECT_EQ(transport->requests()[0].url, "http://127.0.0.1:1/api/kernelhub/trusted-keys");
  const fs::path kept = trusted_keys_file("state/kernelhub/trusted-keys", "http://127.0.0.1:1");
  EXPECT_TRUE(fs::is_regular_file(kept));
  EXPECT_EQ(fs::status(kept).permissions() & fs::perms::all,
            fs::perms::owner_read | fs::perms::owner_write);

  // Offline: no request, the cached list.
  auto silent = std::make_shared<FakeTransport>();
  const auto offline = resolve_trusted_keys({{}, hub_source(silent, /*offline=*/true)});
  ASSERT_TRUE(offline) << offline.error().message;
  EXPECT_EQ((*offline)[0].hint, team.hint());
  EXPECT_TRUE(silent->requests().empty());

  // A hub that cannot be reached: the cached list too.
  auto down = std::make_shared<FakeTransport>();
  hub::testing::FakeReply refused;
  refused.fail = true;
  refused.transient = false;
  down->push(refused);
  const auto unreachable = resolve_trusted_keys({{}, hub_source(down)});
  ASSERT_TRUE(unreachable) << unreachable.error().message;
  EXPECT_EQ((*unreachable)[0].hint, team.hint());
}

// Issue 20 item 3: offline, the keys used to come from <cache>/.kernelhub/trusted-keys, which
// whoever can write the cache could append a key to. They are kept outside the cache now, and a
// kept list that others may write is refused.
TEST(TrustedKeys, OfflineKeysComeFromThisUsersStateFolderNotTheCache) {
  ScopedKeysVariable unset(nullptr);
  const auto team = new_key();
  auto transport = std::make_shared<FakeTransport>();
  transport->push(200, {{"Content-Type", "application/json"}}, published({team}));
  ASSERT_TRUE(resolve_trusted_keys({{}, hub_source(transport)}));

  // What a cache writer could do before: a key list of its own where the cache kept the hub's.
  const auto intruder = new_key();
  const std::string name = verify::hex_lower(verify::sha256("http://127.0.0.1:1")).substr(0, 32);
  write("cache/.kernelhub/trusted-keys/" + name + ".pem",
        team.public_pem() + intruder.public_pem());
  auto silent = std::make_shared<FakeTransport>();
  const auto offline = resolve_trusted_keys({{}, hub_source(silent, /*offline=*/true)});
  ASSERT_TRUE(offline) << offline.error().message;
  ASSERT_EQ(offline->size(), 1u);
  EXPECT_EQ((*offline)[0].hint, team.hint());

  // The kept list itself, once others may write it, decides nothing.
  const fs::path kept = trusted_keys_file("state/kernelhub/trusted-keys", "http://127.0.0.1:1");
  fs::permissions(kept, fs::perms::group_write, fs::perm_options::add);
  const auto shared = resolve_trusted_keys({{}, hub_source(silent, /*offline=*/true)});
  ASSERT_FALSE(shared);
  EXPECT_NE(shared.error().message.find("may be written by others"), std::string::npos)
      << shared.error().message;
  fs::permissions(kept, fs::perms::group_write, fs::perm_options::remove);
  fs::permissions(kept.parent_path(), fs::perms::others_write, fs::perm_options::add);
  EXPECT_FALSE(resolve_trusted_keys({{}, hub_source(silent, /*offline=*/true)}));
  EXPECT_TRUE(silent->requests().empty());
}

TEST(TrustedKeys, TheStateFolderFollowsXdgStateHomeThenHome) {
  const char* old_state = std::getenv("XDG_STATE_HOME");
  const char* old_home = std::getenv("HOME");
  const std::optional<std::string> saved_state =
      old_state ? std::optional<std::string>(old_state) : std::nullopt;
  const std::optional<std::string> saved_home =
      old_home ? std::optional<std::string>(old_home) : std::nullopt;
  setenv("XDG_STATE_HOME", "/x/state", 1);
  setenv("HOME", "/h", 1);
  EXPECT_EQ(hub_key_dir_from_environment(), fs::path("/x/state/kernelhub/trusted-keys"));
  setenv("XDG_STATE_HOME", "relative", 1);  // the XDG spec: a relative value is ignored
  EXPECT_EQ(hub_key_dir_from_environment(), fs::path("/h/.local/state/kernelhub/trusted-keys"));
  unsetenv("XDG_STATE_HOME");
  unsetenv("HOME");
  EXPECT_EQ(hub_key_dir_from_environment(), fs::path());
  saved_state ? setenv("XDG_STATE_HOME", saved_state->c_str(), 1) : unsetenv("XDG_STATE_HOME");
  saved_home ? setenv("HOME", saved_home->c_str(), 1) : unsetenv("HOME");
}

TEST(TrustedKeys, AHubWithoutTheEndpointHasNoKeysAndOfflineWithoutCacheIsAnError) {
  ScopedKeysVariable unset(nullptr);
  auto transport = std::make_shared<FakeTransport>();
  transport->push(404, {}, "Not Found");
  const auto none = resolve_trusted_keys({{}, hub_source(transport)});
  ASSERT_TRUE(none) << none.error().message;
  EXPECT_TRUE(none->empty());

  const auto offline = resolve_trusted_keys({{}, hub_source(transport, /*offline=*/true)});
  ASSERT_FALSE(offline);
  EXPECT_NE(offline.error().message.find("offline"), std::string::npos);
}

TEST(TrustedKeys, RequireSignedVariantUsesThemForKeyedBundlesOnly) {
  ScopedKeysVariable unset(nullptr);
  write("v/relu/__init__.py", "x = 1\n");
  auto meta = *metadata::parse_metadata(metadata_json("relu", "_relu_cpu_1"));
  meta.digest = *metadata::hash_variant(metadata::DigestAlgorithm::sha256, "v");
  ASSERT_TRUE(metadata::write_metadata_file("v/metadata.json", meta));
  const auto team = new_key();
  write("v/metadata.json.sigstore",
                 *verify::write_keyed_bundle(*util::read_file("v/metadata.json"), team));
  write("keys/team.pub", team.public_pem());
  const auto stranger = new_key();
  write("keys/stranger.pub", stranger.public_pem());

  EXPECT_TRUE(require_signed_variant("v", {{"keys/team.pub"}, std::nullopt}));
  const auto refused = require_signed_variant("v", {{"keys/stranger.pub"}, std::nullopt});
  ASSERT_FALSE(refused);
  EXPECT_NE(refused.error().message.find("not a trusted key"), std::string::npos)
      << refused.error().message;
  const auto no_keys = require_signed_variant("v", {});
  ASSERT_FALSE(no_keys);
  EXPECT_NE(no_keys.error().message.find("no key is trusted"), std::string::npos);

  // An unsigned variant never reaches the key lookup (an unreachable hub is not asked).
  fs::remove("v/metadata.json.sigstore");
  auto transport = std::make_shared<FakeTransport>();
  const auto unsigned_variant = require_signed_variant("v", {{}, hub_source(transport)});
  ASSERT_FALSE(unsigned_variant);
  EXPECT_TRUE(transport->requests().empty());
}
