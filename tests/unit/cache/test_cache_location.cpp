// SPDX-License-Identifier: Apache-2.0
#include <map>
#include <string>

#include <gtest/gtest.h>

#include <kernelhub/cache/cache_location.hpp>

namespace kernelhub::cache {
namespace {

EnvLookup env_of(std::map<std::string, std::string> vars) {
  return [vars = std::move(vars)](std::string_view name) -> std::optional<std::string> {
    const auto found = vars.find(std::string(name));
    return found == vars.end() ? std::nullopt : std::optional<std::string>(found->second);
  };
}

TEST(CacheLocation, DefaultsToHomeCache) {
  const auto env = env_of({{"HOME", "/home/u"}});
  EXPECT_EQ(hf_home(env), "/home/u/.cache/huggingface");
  EXPECT_EQ(hub_cache_dir(env), "/home/u/.cache/huggingface/hub");
  EXPECT_EQ(kernels_cache_dir(env), "/home/u/.cache/huggingface/hub");
}

TEST(CacheLocation, XdgCacheHomeThenHfHome) {
  EXPECT_EQ(hub_cache_dir(env_of({{"HOME", "/h"}, {"XDG_CACHE_HOME", "/xdg"}})),
            "/xdg/huggingface/hub");
  EXPECT_EQ(hub_cache_dir(env_of({{"XDG_CACHE_HOME", "/xdg"}, {"HF_HOME", "/hf"}})), "/hf/hub");
}

TEST(CacheLocation, HubCacheVariablesWinInOrder) {
  EXPECT_EQ(hub_cache_dir(env_of({{"HF_HOME", "/hf"}, {"HUGGINGFACE_HUB_CACHE", "/old"}})), "/old");
  EXPECT_EQ(hub_cache_dir(env_of({{"HUGGINGFACE_HUB_CACHE", "/old"}, {"HF_HUB_CACHE", "/new"}})),
            "/new");
}

TEST(CacheLocation, EmptyValuesCountAsUnset) {
  EXPECT_EQ(hub_cache_dir(env_of({{"HF_HUB_CACHE", ""}, {"HF_HOME", "/hf"}})), "/hf/hub");
  EXPECT_EQ(kernels_cache_dir(env_of({{"KERNELS_CACHE", ""}, {"HF_HOME", "/hf"}})), "/hf/hub");
}

TEST(CacheLocation, KernelsCacheOverridesTheHubCache) {
  EXPECT_EQ(kernels_cache_dir(env_of({{"KERNELS_CACHE", "/k"}, {"HF_HUB_CACHE", "/c"}})), "/k");
}

TEST(CacheLocation, ExpandsUserAndVariablesAsPython) {
  const auto env = env_of({{"HOME", "/home/u/"}, {"SCRATCH", "/scratch"}});
  EXPECT_EQ(expand_path("~", env), "/home/u");
  EXPECT_EQ(expand_path("~/x", env), "/home/u/x");
  EXPECT_EQ(expand_path("$SCRATCH/hf", env), "/scratch/hf");
  EXPECT_EQ(expand_path("${SCRATCH}hf", env), "/scratchhf");
  EXPECT_EQ(expand_path("$UNSET/hf", env), "$UNSET/hf");
  EXPECT_EQ(expand_path("${UNCLOSED", env), "${UNCLOSED");
  EXPECT_EQ(expand_path("a~b", env), "a~b");
  EXPECT_EQ(hub_cache_dir(env_of({{"HOME", "/h"}, {"HF_HUB_CACHE", "~/c"}})), "/h/c");
}

}  // namespace
}  // namespace kernelhub::cache
