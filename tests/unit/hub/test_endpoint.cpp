// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/hub/endpoint.hpp>

#include <filesystem>
#include <fstream>
#include <map>

#include <gtest/gtest.h>

namespace kernelhub::hub {
namespace {

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    auto it = vars.find(std::string(name));
    return it == vars.end() ? std::nullopt : std::optional(it->second);
  };
}

TEST(Endpoint, DefaultsToHuggingFaceWithoutToken) {
  auto endpoint = endpoint_from(env_of({{"HOME", "/nonexistent-home"}}));
  EXPECT_EQ(endpoint.url, "https://huggingface.co");
  EXPECT_FALSE(endpoint.token);
  EXPECT_FALSE(endpoint.offline);
  EXPECT_NE(endpoint.user_agent.find("kernelhub/"), std::string::npos);
}

TEST(Endpoint, EnvironmentOverridesAndTrailingSlash) {
  auto endpoint = endpoint_from(env_of({{"HF_ENDPOINT", "http://127.0.0.1:8080/hf/"},
                                        {"HF_TOKEN", " hf_abc\n"},
                                        {"HF_HUB_OFFLINE", "yes"}}));
  EXPECT_EQ(endpoint.url, "http://127.0.0.1:8080/hf");
  EXPECT_EQ(endpoint.token, "hf_abc");
  EXPECT_TRUE(endpoint.offline);
}

TEST(Endpoint, TokenFileUnderHfHomeThenTokenPath) {
  std::filesystem::create_directories("home");
  std::ofstream("home/token") << "hf_from_file\n";
  std::ofstream("other-token") << "hf_other";
  const auto home = std::filesystem::absolute("home").string();
  EXPECT_EQ(endpoint_from(env_of({{"HF_HOME", home}})).token, "hf_from_file");
  EXPECT_EQ(endpoint_from(env_of({{"HF_HOME", home},
                                  {"HF_TOKEN_PATH", std::filesystem::absolute("other-token").string()}}))
                .token,
            "hf_other");
  EXPECT_EQ(endpoint_from(env_of({{"HF_HOME", home}, {"HUGGING_FACE_HUB_TOKEN", "hf_env"}})).token,
            "hf_env");
  EXPECT_FALSE(
      endpoint_from(env_of({{"HF_HOME", home}, {"HF_HUB_DISABLE_IMPLICIT_TOKEN", "1"}})).token);
}

TEST(Endpoint, HfHomeFallbacks) {
  EXPECT_EQ(hf_home(env_of({{"HF_HOME", "~/hf"}, {"HOME", "/h"}})), "/h/hf");
  EXPECT_EQ(hf_home(env_of({{"XDG_CACHE_HOME", "/x"}, {"HOME", "/h"}})), "/x/huggingface");
  EXPECT_EQ(hf_home(env_of({{"HOME", "/h"}})), "/h/.cache/huggingface");
}

TEST(Endpoint, FlagsAreCaseInsensitive) {
  for (const char* value : {"1", "on", "TRUE", "Yes"}) {
    EXPECT_TRUE(env_flag(env_of({{"F", value}}), "F")) << value;
  }
  for (const char* value : {"0", "off", "", "no"}) {
    EXPECT_FALSE(env_flag(env_of({{"F", value}}), "F")) << value;
  }
}

}  // namespace
}  // namespace kernelhub::hub
