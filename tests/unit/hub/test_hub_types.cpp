// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/hub/hub_types.hpp>

#include <gtest/gtest.h>

namespace kernelhub::hub {
namespace {

TEST(RepoId, AcceptsNameAndNamespacedName) {
  auto id = RepoId::parse("kernels-community/activation");
  ASSERT_TRUE(id);
  EXPECT_EQ(id->owner(), "kernels-community");
  EXPECT_EQ(id->name(), "activation");
  EXPECT_EQ(id->folder_part(), "kernels-community--activation");
  auto single = RepoId::parse("gpt2");
  ASSERT_TRUE(single);
  EXPECT_EQ(single->owner(), "");
  EXPECT_EQ(single->name(), "gpt2");
}

TEST(RepoId, RefusesWhatTheReferenceRefuses) {
  for (std::string_view bad : {"", "a/b/c", "-a/b", "a/b.", "a--b", "a..b", "a b", "../x", "a/",
                               "/a"}) {
    auto id = RepoId::parse(bad);
    EXPECT_FALSE(id) << bad;
    if (!id) {
      EXPECT_NE(id.error().message.find("invalid repo id"), std::string::npos);
    }
  }
  EXPECT_FALSE(RepoId::parse("o/" + std::string(97, 'a')));
  EXPECT_TRUE(RepoId::parse("o/" + std::string(96, 'a')));
}

TEST(RepoType, NamesAndParts) {
  EXPECT_EQ(repo_type_api_part(RepoType::kernel), "kernels");
  EXPECT_EQ(repo_type_url_prefix(RepoType::model), "");
  EXPECT_EQ(repo_type_url_prefix(RepoType::space), "spaces/");
  EXPECT_EQ(parse_repo_type("dataset"), RepoType::dataset);
  EXPECT_EQ(parse_repo_type("kernels"), RepoType::kernel);
  EXPECT_EQ(parse_repo_type("nope"), std::nullopt);
}

TEST(Revision, CommitShaIsFortyLowercaseHex) {
  EXPECT_TRUE(is_commit_sha(std::string(40, 'a')));
  EXPECT_FALSE(is_commit_sha(std::string(40, 'A')));
  EXPECT_FALSE(is_commit_sha(std::string(39, 'a')));
  EXPECT_FALSE(is_commit_sha("main"));
}

}  // namespace
}  // namespace kernelhub::hub
