// SPDX-License-Identifier: Apache-2.0
#include <kernelhub/server/repo_id.hpp>

#include <vector>

#include <gtest/gtest.h>

namespace kernelhub::server {

TEST(RepoId, AcceptsHubNames) {
  EXPECT_TRUE(is_valid_id_part("kernels-community"));
  EXPECT_TRUE(is_valid_id_part("relu_v2.1"));
  auto id = make_repo_id(RepoType::kernel, "org", "relu");
  ASSERT_TRUE(id);
  EXPECT_EQ(id->id(), "org/relu");
}

TEST(RepoId, RefusesTraversalAndHubForbiddenForms) {
  for (const char* part : {"", "..", ".", "a..b", "a--b", "-a", "a-", ".a", "a.", "a/b", "a b",
                           "a\\b", "%2e%2e"}) {
    EXPECT_FALSE(is_valid_id_part(part)) << part;
  }
  EXPECT_FALSE(is_valid_id_part(std::string(97, 'a')));
  const auto too_long = make_repo_id(RepoType::model, std::string(50, 'a'), std::string(50, 'b'));
  ASSERT_FALSE(too_long);
  EXPECT_EQ(too_long.error().status, 400);
}

TEST(RepoId, ReservesNamespacesThatModelUrlsWouldShadow) {
  for (const char* ns : {"api", "models", "datasets", "spaces", "kernels"}) {
    const auto id = make_repo_id(RepoType::model, ns, "x");
    ASSERT_FALSE(id) << ns;
    EXPECT_NE(id.error().message.find("reserved"), std::string::npos);
  }
}

TEST(RepoId, TypesMapToApiPartsAndPrefixes) {
  EXPECT_EQ(api_part(RepoType::kernel), "kernels");
  EXPECT_EQ(url_prefix(RepoType::model), "");
  EXPECT_EQ(url_prefix(RepoType::dataset), "datasets/");
  EXPECT_EQ(repo_type_from_api_part("kernels"), RepoType::kernel);
  EXPECT_FALSE(repo_type_from_api_part("spaces"));
  EXPECT_EQ(repo_type_from_name(""), RepoType::model);
  EXPECT_EQ(repo_type_from_name("kernel"), RepoType::kernel);
  EXPECT_FALSE(repo_type_from_name("space"));
}

TEST(RepoPath, AcceptsNestedNamesWithSpaces) {
  EXPECT_TRUE(check_repo_path("build/torch-cpu/relu/__init__.py"));
  EXPECT_TRUE(check_repo_path("a b.txt"));
  EXPECT_TRUE(check_repo_path(".gitattributes"));
}

TEST(RepoPath, RefusesEscapesAndGitInternals) {
  for (const std::string& path : std::vector<std::string>{
           "", "/etc/passwd", "../x", "a/../../x", "a/./b", "a//b", "a/", ".git/config",
        "sub/.git/HEAD", std::string("a\0b", 3), "a\nb",
        // Issue 12 item 5: backslashes are separators to Windows clients and unpackers.
        "notes\\readme.txt", "..\\..\\x", "\\x"}) {
    const auto checked = check_repo_path(path);
    EXPECT_FALSE(checked) << path;
    if (!checked) {
      EXPECT_EQ(checked.error().status, 400);
    }
  }
}

TEST(Revision, RefusesControlCharactersAndOversizedNames) {
  EXPECT_TRUE(check_revision("feature/x"));
  EXPECT_FALSE(check_revision(""));
  EXPECT_FALSE(check_revision("a\nb"));
  EXPECT_FALSE(check_revision(std::string(256, 'a')));
}

}  // namespace kernelhub::server
