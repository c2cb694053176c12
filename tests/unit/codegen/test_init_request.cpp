// SPDX-License-Identifier: Apache-2.0
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include <kernelhub/codegen/init_request.hpp>

namespace kernelhub::codegen {
namespace {

using types::Backend;

TEST(KernelRepoName, DerivesTheReferencesNames) {
  const auto name = KernelRepoName::parse("my-org/fused_rms-norm");
  ASSERT_TRUE(name.has_value()) << name.error().message;
  EXPECT_EQ(name->owner, "my-org");
  EXPECT_EQ(name->display_name, "fused-rms-norm");
  EXPECT_EQ(name->python_name, "fused_rms_norm");
  EXPECT_EQ(name->class_name, "FusedRmsNorm");
  EXPECT_EQ(name->repo_id, "my-org/fused-rms-norm");
}

TEST(KernelRepoName, RejectsMalformedNames) {
  for (const char* bad : {"nokernel", "/x", "owner/", "a/b/c"}) {
    const auto name = KernelRepoName::parse(bad);
    ASSERT_FALSE(name.has_value()) << bad;
    EXPECT_NE(name.error().message.find("expected OWNER/REPO"), std::string::npos) << bad;
  }
  EXPECT_NE(KernelRepoName::parse("me\"/k2").error().message.find("invalid owner"),
            std::string::npos);
  // The reference accepts these and fails only when building; init refuses them up front.
  const auto upper = KernelRepoName::parse("me/My_Kernel");
  ASSERT_FALSE(upper.has_value());
  EXPECT_NE(upper.error().message.find("invalid kernel name \"My-Kernel\""), std::string::npos);
  EXPECT_NE(upper.error().message.find("did you mean \"me/my-kernel\"?"), std::string::npos);
  EXPECT_FALSE(KernelRepoName::parse("me/9lives").has_value());
  EXPECT_FALSE(KernelRepoName::parse("me/x").has_value());
}

TEST(ResolveInitTarget, FollowsTheReferencesFolderRules) {
  const std::filesystem::path cwd = "/work/here";
  auto both = resolve_init_target("sub/dir", "me/relu", cwd);
  ASSERT_TRUE(both.has_value());
  EXPECT_EQ(both->directory, "/work/here/sub/dir");
  EXPECT_EQ(both->name.repo_id, "me/relu");

  auto absolute = resolve_init_target("/abs/place", "me/relu", cwd);
  EXPECT_EQ(absolute->directory, "/abs/place");

  auto name_only = resolve_init_target(std::nullopt, "me/my_relu", cwd);
  EXPECT_EQ(name_only->directory, "/work/here/my-relu");

  // PATH that reads owner/repo names the kernel; the folder is ./<repo>, not PATH.
  auto path_only = resolve_init_target("me/relu", std::nullopt, cwd);
  ASSERT_TRUE(path_only.has_value());
  EXPECT_EQ(path_only->directory, "/work/here/relu");
  EXPECT_EQ(path_only->name.repo_id, "me/relu");
}

TEST(ResolveInitTarget, AsksForNameWithoutAnOwner) {
  const std::filesystem::path cwd = "/w";
  for (const auto& path : std::vector<std::optional<std::string>>{std::nullopt, "relu", "./relu",
                                                                 "relu/", "a/b/c"}) {
    const auto target = resolve_init_target(path, std::nullopt, cwd);
    ASSERT_FALSE(target.has_value()) << path.value_or("(none)");
    EXPECT_NE(target.error().message.find("--name OWNER/REPO"), std::string::npos);
  }
  // A PATH that looks like owner/repo but is not a valid one explains why.
  EXPECT_NE(resolve_init_target("me/Bad_Name", std::nullopt, cwd).error().message.find(
                "invalid kernel name"),
            std::string::npos);
}

TEST(ResolveInitBackends, DefaultsAllAndDuplicates) {
  const auto none = resolve_init_backends({});
  ASSERT_TRUE(none.has_value());
#ifdef __APPLE__
  EXPECT_EQ(*none, std::vector<Backend>{Backend::metal});
#else
  EXPECT_EQ(*none, std::vector<Backend>{Backend::cuda});
#endif
  const std::vector<std::string> mixed = {"XPU", "cpu", "xpu", "CPU"};
  EXPECT_EQ(*resolve_init_backends(mixed), (std::vector<Backend>{Backend::xpu, Backend::cpu}));
  const std::vector<std::string> all = {"rocm", "All"};
  EXPECT_EQ(*resolve_init_backends(all),
            (std::vector<Backend>{Backend::rocm, Backend::cpu, Backend::cuda, Backend::metal,
                                  Backend::xpu}));
}

TEST(ResolveInitBackends, RejectsUnknownAndNoarchOnlyBackends) {
  const std::vector<std::string> typo = {"cdua"};
  EXPECT_EQ(resolve_init_backends(typo).error().message,
            "unknown backend \"cdua\"; did you mean \"cuda\"? (init knows all, cpu, cuda, metal, "
            "rocm and xpu)");
  for (const char* noarch : {"tpu", "neuron", "cann"}) {
    const std::vector<std::string> values = {"cpu", noarch};
    const auto result = resolve_init_backends(values);
    ASSERT_FALSE(result.has_value()) << noarch;
    EXPECT_NE(result.error().message.find("has no init template"), std::string::npos);
  }
}

// Issue 22 §9: `init --backends cpu acme/x` lost its path to --backends.
TEST(TakeTrailingPath, ALastValueWithASlashIsThePath) {
  std::vector<std::string> values = {"cpu", "acme/x"};
  EXPECT_EQ(take_trailing_path(values), std::optional<std::string>("acme/x"));
  EXPECT_EQ(values, (std::vector<std::string>{"cpu"}));
  std::vector<std::string> backends = {"cpu", "cuda"};
  EXPECT_EQ(take_trailing_path(backends), std::nullopt);
  EXPECT_EQ(backends.size(), 2u);
  std::vector<std::string> none;
  EXPECT_EQ(take_trailing_path(none), std::nullopt);
}

TEST(KernelRepoNameGiven, KeepsTheRepoAsTyped) {
  const auto name = KernelRepoName::parse("acme/gelu_and_mul");
  ASSERT_TRUE(name.has_value());
  EXPECT_EQ(name->given_repo, "gelu_and_mul");
  EXPECT_EQ(name->display_name, "gelu-and-mul");
}

}  // namespace
}  // namespace kernelhub::codegen
