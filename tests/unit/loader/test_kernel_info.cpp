// SPDX-License-Identifier: Apache-2.0
#include <filesystem>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../cache/fake_hub.hpp"
#include "loader_test_support.hpp"
#include <kernelhub/loader/kernel_info.hpp>

namespace kernelhub::loader {
namespace {

namespace fs = std::filesystem;
using cache::testing::FakeHub;
using cache::testing::fake_client;
using testing::metadata_json;
using testing::write;

const char* const k_cuda = "torch29-cxx11-cu128-x86_64-linux";

hub::RepoId relu() { return *hub::RepoId::parse("org/relu"); }

std::string full_metadata() {
  return R"({"name": "relu", "id": "_relu_cpu_1", "version": 2, "kernels-minver": "0.12.01",
    "license": "MIT", "upstream": "HTTPS://GitHub.com/a/b", "source": "git@github.com:a/b.git",
    "python-depends": ["einops"], "backend": {"type": "cpu"}})";
}

std::shared_ptr<FakeHub> relu_hub() {
  auto hub = std::make_shared<FakeHub>();
  hub->files = {{"README.md", "# relu\n"},
                {"build/torch-cpu/metadata.json", full_metadata()},
                {"build/torch-cpu/relu/__init__.py", "x = 1\n"},
                {std::string("build/") + k_cuda + "/relu/__init__.py", "cuda\n"},
                {"build/not a variant/x.py", "\n"}};
  hub->branches = {{"main", hub->commit}, {"v1", hub->commit}, {"v2", hub->commit}};
  return hub;
}

TEST(KernelInfo, PathsAreSpeltAsPythonsPathSpellsThem) {
  EXPECT_EQ(python_path_string("./relu/"), "relu");
  EXPECT_EQ(python_path_string("a//b/./c/"), "a/b/c");
  EXPECT_EQ(python_path_string("/abs/./p"), "/abs/p");
  EXPECT_EQ(python_path_string("."), ".");
  EXPECT_EQ(python_path_string("../x"), "../x");
}

TEST(KernelInfo, BackendsAreTheSortedSetOfTheVariantsBackends) {
  const std::vector<std::string> names = {k_cuda, "torch-universal", "torch210-cxx11-cpu-x86_64-linux",
                                          "torch-cpu", "tvm-ffi01-cu128-x86_64-linux", "junk"};
  EXPECT_EQ(variant_backends(names), (std::vector<std::string>{"cpu", "cuda", "universal"}));
}

TEST(KernelInfo, SummaryNormalisesUrlsAndTheMinimumKernelsVersion) {
  const auto summary = read_kernel_summary(full_metadata(), "metadata.json");
  ASSERT_TRUE(summary) << summary.error().message;
  EXPECT_EQ(summary->name, "relu");
  EXPECT_EQ(summary->version, 2u);
  EXPECT_EQ(summary->kernels_minver, std::optional<std::string>("0.12.1"));
  EXPECT_EQ(summary->upstream, std::optional<std::string>("https://github.com/a/b"));
  EXPECT_EQ(summary->source, std::optional<std::string>("ssh://git@github.com/a/b.git"));
  EXPECT_EQ(summary->python_depends, std::vector<std::string>{"einops"});
  // kernels wants exactly three parts and then rejects the whole file.
  auto text = full_metadata();
  text.replace(text.find("0.12.01"), 7, "0.12");
  EXPECT_FALSE(read_kernel_summary(text, "metadata.json"));
}

TEST(KernelInfo, LocalKernelReadsTheFirstVariantThatHasMetadata) {
  write(fs::path("relu/build") / k_cuda / "relu/__init__.py", "cuda\n");
  write("relu/build/torch-universal/metadata.json", metadata_json("relu", "_relu_u"));
  write("relu/build/junk/metadata.json", "not json");
  const auto info = local_kernel_info("./relu/");
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->path, std::optional<std::string>("relu"));
  EXPECT_FALSE(info->repo_id.has_value());
  ASSERT_TRUE(info->summary.has_value());
  EXPECT_EQ(info->metadata_variant, std::optional<std::string>("torch-universal"));
  EXPECT_EQ(info->summary->license, "Apache-2.0");
  EXPECT_EQ(info->backends, (std::vector<std::string>{"cuda", "universal"}));
}

TEST(KernelInfo, LocalKernelWithoutVariantsOrWithBadMetadataIsAnError) {
  fs::create_directories("empty/build/junk");
  const auto none = local_kernel_info("empty");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error().message, "no build variants found in: empty/build");
  write("bad/build/torch-cpu/metadata.json", R"({"name": "relu"})");
  const auto bad = local_kernel_info("bad");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("id"), std::string::npos) << bad.error().message;
}

TEST(KernelInfo, RendersTheReferencesKeysAndLines) {
  KernelInfo info;
  info.repo_id = "org/relu";
  info.revision = "v1";
  info.backends = {"cpu", "cuda"};
  EXPECT_EQ(render_info_json(info).dump(),
            R"({"repo_id":"org/relu","revision":"v1","backends":["cpu","cuda"]})");
  EXPECT_EQ(render_info_text(info),
            "Repository: org/relu\nRevision: v1\nName: -\nVersion: -\nMinimum kernels version: -\n"
            "License: -\nUpstream: -\nSource: -\nPython dependencies: -\nBackends: cpu, cuda\n");
  info.summary = *read_kernel_summary(full_metadata(), "metadata.json");
  EXPECT_EQ(render_info_json(info).dump(),
            R"({"repo_id":"org/relu","revision":"v1","name":"relu","version":2,)"
            R"("kernels_minver":"0.12.1","license":"MIT","upstream":"https://github.com/a/b",)"
            R"("source":"ssh://git@github.com/a/b.git","python_depends":["einops"],)"
            R"("backends":["cpu","cuda"]})");
  EXPECT_NE(render_info_text(info).find("Python dependencies: einops\n"), std::string::npos);
}

TEST(KernelInfo, HubKernelDefaultsToTheNewestVersionThenAnswersOfflineWithNoRequest) {
  auto hub = relu_hub();
  const auto client = fake_client(hub);
  const cache::HubCache online("hub", client);
  const auto info = hub_kernel_info(online, relu(), {});
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->revision, std::optional<std::string>("v2"));
  EXPECT_EQ(info->commit, std::optional<std::string>(hub->commit));
  EXPECT_EQ(info->variants, (std::vector<std::string>{"torch-cpu", k_cuda}));
  EXPECT_EQ(info->backends, (std::vector<std::string>{"cpu", "cuda"}));
  ASSERT_TRUE(info->summary.has_value());
  EXPECT_EQ(info->summary->version, 2u);
  EXPECT_EQ(info->warnings, std::vector<std::string>{
                                "Repository org/relu (revision: v2) contains invalid build variant "
                                "variant: 'not a variant'"});

  const auto older = hub_kernel_info(online, relu(), {.version = 1, .revision = std::nullopt});
  ASSERT_TRUE(older) << older.error().message;
  EXPECT_EQ(older->revision, std::optional<std::string>("v1"));
  ASSERT_FALSE(older->warnings.empty());
  EXPECT_EQ(older->warnings[0], "You are using version 1 of 'org/relu', but version 2 is available.");

  // refs/v2, trees/<sha>.json and the one metadata.json fetched above are all it takes.
  auto offline_hub = relu_hub();
  const auto offline_client = fake_client(offline_hub, /*offline=*/true);
  const cache::HubCache offline("hub", offline_client);
  const auto cached = hub_kernel_info(offline, relu(), {});
  ASSERT_TRUE(cached) << cached.error().message;
  EXPECT_TRUE(offline_hub->requests().empty());
  EXPECT_EQ(cached->revision, std::optional<std::string>("v2"));
  EXPECT_EQ(cached->variants, info->variants);
  EXPECT_EQ(cached->metadata_variant, std::optional<std::string>("torch-cpu"));
  EXPECT_EQ(cached->summary, info->summary);
}

TEST(KernelInfo, HubMetadataThatCannotBeReadLeavesTheFieldsEmpty) {
  auto hub = relu_hub();
  hub->files.erase("build/torch-cpu/metadata.json");
  const auto client = fake_client(hub);
  const cache::HubCache online("hub", client);
  const auto info = hub_kernel_info(online, relu(), {.version = std::nullopt, .revision = "main"});
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->revision, std::optional<std::string>("main"));
  EXPECT_FALSE(info->summary.has_value());
  EXPECT_EQ(info->warnings.size(), 2u);
  EXPECT_EQ(info->backends, (std::vector<std::string>{"cpu", "cuda"}));
}

TEST(KernelInfo, OfflineWithoutACachedTreeTheSnapshotsVariantsAreListed) {
  auto hub = relu_hub();
  const fs::path snapshot = fs::path("hub/kernels--org--relu/snapshots") / hub->commit;
  write("hub/kernels--org--relu/refs/v1", hub->commit);
  write(snapshot / "build/torch-universal/metadata.json", metadata_json("relu", "_relu_u"));
  const auto client = fake_client(hub, /*offline=*/true);
  const cache::HubCache offline("hub", client);
  const auto info = hub_kernel_info(offline, relu(), {});
  ASSERT_TRUE(info) << info.error().message;
  EXPECT_EQ(info->revision, std::optional<std::string>("v1"));
  EXPECT_EQ(info->variants, std::vector<std::string>{"torch-universal"});
  EXPECT_EQ(info->backends, std::vector<std::string>{"universal"});
  ASSERT_TRUE(info->summary.has_value());
  EXPECT_EQ(info->summary->license, "Apache-2.0");
  EXPECT_TRUE(hub->requests().empty());
}

TEST(KernelInfo, OfflineMissesNameTheRepositoryRevisionAndCacheFolder) {
  auto offline_hub = relu_hub();
  const auto client = fake_client(offline_hub, /*offline=*/true);
  const cache::HubCache offline("hub", client);
  const auto missing = hub_kernel_info(offline, relu(), {.version = std::nullopt, .revision = "main"});
  ASSERT_FALSE(missing);
  EXPECT_NE(missing.error().message.find("org/relu"), std::string::npos) << missing.error().message;
  EXPECT_NE(missing.error().message.find("main"), std::string::npos);
  EXPECT_NE(missing.error().message.find("hub"), std::string::npos);

  // Versions and the tree are cached, but no variant's metadata.json is.
  const auto online_client = fake_client(relu_hub());
  const cache::HubCache online("hub", online_client);
  ASSERT_TRUE(hub_kernel_info(online, relu(), {.version = 2, .revision = std::nullopt}));
  fs::remove_all("hub/kernels--org--relu/snapshots");
  const auto no_metadata = hub_kernel_info(offline, relu(), {});
  ASSERT_FALSE(no_metadata);
  EXPECT_NE(no_metadata.error().message.find("kernels--org--relu"), std::string::npos)
      << no_metadata.error().message;
  EXPECT_NE(no_metadata.error().message.find("revision v2"), std::string::npos);
  EXPECT_TRUE(offline_hub->requests().empty());
}

TEST(KernelInfo, VersionAndRevisionTogetherAreRefused) {
  auto hub = relu_hub();
  const auto client = fake_client(hub);
  const cache::HubCache online("hub", client);
  const auto both = hub_kernel_info(online, relu(), {.version = 1, .revision = "main"});
  ASSERT_FALSE(both);
  EXPECT_EQ(both.error().message, "only one of --revision or --version can be specified");
  EXPECT_TRUE(hub->requests().empty());
}

}  // namespace
}  // namespace kernelhub::loader
